// Envoy's descriptors → tollgate's limiters and keys (compiled at config time), and the answer built
// from the store's results: pure logic, no socket.
import { pino } from 'pino';
import { describe, expect, test } from 'vitest';
import { loadConfigText } from '../../src/rules/load.js';
import { decideDescriptors, unitOf } from '../../src/envoy/answer.js';
import { descriptorWindowKey, planDescriptors } from '../../src/envoy/descriptor-table.js';
import { hashPart } from '../../src/identity/hash.js';
import { shouldRateLimit } from '../../src/envoy/service.js';
import { GatewayMetrics } from '../../src/metrics/gateway-metrics.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { WindowResult } from '../../src/store/window-store.js';
import { configErrorOf } from '../helpers/config-errors.js';

const config = (limiters: string, routes = '') => `listeners: [{ port: 0 }]
rateLimitService: { port: 0 }
upstreams:
  app: { url: "http://127.0.0.1:9" }
limiters:
${limiters}
routes:
  - name: all
    paths: ["/*"]
    upstream: app
${routes}
`;

const LIMITERS = `
  per-ip:
    descriptors:
      - domain: edge
        entries: [{ key: remote_address }]
    windows: [{ limit: 10, period: 1m }]
  login:
    descriptors:
      - domain: edge
        entries: [{ key: path, value: /login }, { key: remote_address }]
      - domain: edge
        entries: [{ key: path, value: /signup }, { key: remote_address }]
    windows: [{ limit: 5, period: 1m }, { limit: 20, period: 1h }]
  login-shadow:
    shadow: true
    descriptors:
      - domain: edge
        entries: [{ key: path, value: /login }, { key: remote_address }, { key: user }]
    windows: [{ limit: 1, period: 10s }]
  everyone:
    descriptors:
      - domain: other
        entries: [{ key: generic_key, value: all }]
    windows: [{ limit: 100, period: 1s }]
`;

const table = loadConfigText(config(LIMITERS), 'conf.yaml', {}).descriptors;
const e = (key: string, value: string) => ({ key, value });
const tagOf = (...counted: string[]) => hashPart(`descriptor\0${counted.join('\0')}`);

describe('matching descriptors to limiters', () => {
  test('an any-value entry matches every value, and each value is a budget of its own', () => {
    const a = table.match('edge', [e('remote_address', '10.0.0.1')]);
    const b = table.match('edge', [e('remote_address', '10.0.0.2')]);
    expect(a?.limiter.name).toBe('per-ip');
    expect(a?.tag).toBe(tagOf('remote_address=10.0.0.1'));
    expect(b?.tag).toBe(tagOf('remote_address=10.0.0.2'));
    expect(a?.tag).not.toBe(b?.tag);
  });

  test('fixed values must be equal; the keys must be exactly the pattern’s, in order', () => {
    expect(table.match('edge', [e('path', '/login'), e('remote_address', '1.2.3.4')])?.limiter.name).toBe(
      'login',
    );
    expect(table.match('edge', [e('path', '/signup'), e('remote_address', '1.2.3.4')])?.limiter.name).toBe(
      'login',
    );
    expect(table.match('edge', [e('path', '/other'), e('remote_address', '1.2.3.4')])).toBeUndefined();
    expect(table.match('edge', [e('remote_address', '1.2.3.4'), e('path', '/login')])).toBeUndefined();
    expect(table.match('edge', [e('path', '/login')])).toBeUndefined();
    expect(table.match('edge', [])).toBeUndefined();
  });

  test('the domain must be the pattern’s', () => {
    expect(table.match('other', [e('generic_key', 'all')])?.limiter.name).toBe('everyone');
    expect(table.match('edge', [e('generic_key', 'all')])).toBeUndefined();
    expect(table.match('nope', [e('remote_address', '1.2.3.4')])).toBeUndefined();
  });

  test("one limiter's patterns share the budget of a value; fixed entries are not part of the key", () => {
    const login = table.match('edge', [e('path', '/login'), e('remote_address', '1.2.3.4')]);
    const signup = table.match('edge', [e('path', '/signup'), e('remote_address', '1.2.3.4')]);
    expect(login?.tag).toBe(signup?.tag);
    expect(table.match('other', [e('generic_key', 'all')])?.tag).toBe(tagOf());
  });

  test('values holding a NUL never run into the next entry: two tuples, two budgets', () => {
    const path = e('path', '/login');
    const a = table.match('edge', [path, e('remote_address', 'a\0user=b'), e('user', 'c')]);
    const b = table.match('edge', [path, e('remote_address', 'a'), e('user', 'b\0user=c')]);
    expect(a?.limiter.name).toBe('login-shadow');
    expect(b?.limiter.name).toBe('login-shadow');
    expect(a?.tag).not.toBe(b?.tag);
    expect(b?.tag).toBe(tagOf('remote_address=a', 'user=b\\0user=c'));
  });

  test('raw values never reach the store key', () => {
    const match = table.match('edge', [e('path', '/login'), e('remote_address', '203.0.113.9')])!;
    const key = descriptorWindowKey('tg:', match, 1);
    expect(key).toBe(`tg:{${tagOf('remote_address=203.0.113.9')}}:login:3600000:descriptor`);
    expect(key).not.toContain('203.0.113.9');
  });
});

describe('the config', () => {
  test('a window without key parts is allowed only for a limiter that answers descriptors, off routes', () => {
    expect(configErrorOf(config('  l:\n    windows: [{ limit: 1, period: 1m }]'))).toContain(
      "limiters.l.windows[0].key: required (or descriptors, for Envoy's rate-limit service)",
    );
    const onRoute = config(
      '  l:\n    descriptors: [{ domain: d, entries: [{ key: k }] }]\n    windows: [{ limit: 1, period: 1m }]',
      '    limiters: [l]',
    );
    expect(configErrorOf(onRoute)).toContain(
      'limiters.l.windows[0].key: required: route "all" uses this limiter',
    );
    expect(
      configErrorOf(config('  {}', '    limiters: [{ windows: [{ limit: 1, period: 1m }] }]')),
    ).toContain("routes[0].limiters[0].windows[0].key: required on a route's limiter");
  });

  test('a descriptor limiter with two windows of one period is refused: they would share a counter', () => {
    const twice =
      '  l:\n    descriptors: [{ domain: d, entries: [{ key: k }] }]\n' +
      '    windows: [{ limit: 1, period: 1m }, { limit: 2, period: 60s, key: [ip] }]';
    expect(configErrorOf(config(twice))).toContain(
      'limiter "l" answers descriptors, so its windows need different periods',
    );
  });

  test('a descriptor two limiters claim is refused', () => {
    const both =
      '  a:\n    descriptors: [{ domain: d, entries: [{ key: k }] }]\n    windows: [{ limit: 1, period: 1m }]\n' +
      '  b:\n    descriptors: [{ domain: d, entries: [{ key: k }] }]\n    windows: [{ limit: 1, period: 1m }]';
    expect(configErrorOf(config(both))).toContain(
      'limiters.b.descriptors[0]: limiter "a" already answers this descriptor',
    );
  });
});

describe('planning and answering a request', () => {
  const now = 1_000_000_000_000;
  const ip = [e('remote_address', '1.2.3.4')];
  const login = [e('path', '/login'), ...ip];

  test('every window of every matched descriptor, each costing hits_addend; unmatched ones plan nothing', () => {
    const matches = [table.match('edge', ip), undefined, table.match('edge', login)];
    const plan = planDescriptors(matches, 3, 'tg:');
    expect(plan.requests.map((r) => [r.limit, r.periodMs, r.cost, r.enforce])).toEqual([
      [10, 60_000, 3, true],
      [5, 60_000, 3, true],
      [20, 3_600_000, 3, true],
    ]);
    expect(plan.descriptors.map((d) => d?.map((w) => w.request))).toEqual([[0], undefined, [1, 2]]);
  });

  test('two descriptors spending one budget are one store request with both costs', () => {
    const signup = [e('path', '/signup'), ...ip];
    const plan = planDescriptors([table.match('edge', login), table.match('edge', signup)], 2, 'tg:');
    expect(plan.requests.map((r) => r.cost)).toEqual([4, 4]);
    expect(plan.descriptors.map((d) => d?.map((w) => w.request))).toEqual([
      [0, 1],
      [0, 1],
    ]);
  });

  const result = (count: number, limit: number, ttlMs: number, allowed = true): WindowResult => ({
    count,
    limit,
    resetAtMs: now + ttlMs,
    allowed,
  });

  test('allowed: each status reports its own window with the fewest left; headers as over HTTP', () => {
    const plan = planDescriptors([table.match('edge', ip), undefined, table.match('edge', login)], 1, 'tg:');
    const { answer } = decideDescriptors(
      plan,
      [result(4, 10, 60_000), result(5, 5, 30_500), result(6, 20, 3_000_000)],
      now,
    );
    expect(answer).toEqual({
      overallCode: 'OK',
      statuses: [
        {
          code: 'OK',
          currentLimit: { name: 'per-ip.0', requestsPerUnit: 10, unit: 'MINUTE' },
          limitRemaining: 6,
          durationUntilReset: { seconds: 60 },
        },
        { code: 'OK', limitRemaining: 0 },
        {
          code: 'OK',
          currentLimit: { name: 'login.0', requestsPerUnit: 5, unit: 'MINUTE' },
          limitRemaining: 0,
          durationUntilReset: { seconds: 31 },
        },
      ],
      responseHeadersToAdd: [
        { key: 'x-ratelimit-limit', value: '5' },
        { key: 'x-ratelimit-remaining', value: '0' },
        { key: 'x-ratelimit-reset', value: String(Math.ceil((now + 30_500) / 1000)) },
      ],
      requestHeadersToAdd: [],
    });
  });

  test('over the limit: that descriptor is OVER_LIMIT, the others OK, and Retry-After is added', () => {
    const plan = planDescriptors([table.match('edge', ip), table.match('edge', login)], 1, 'tg:');
    const { answer } = decideDescriptors(
      plan,
      [result(4, 10, 60_000), result(5, 5, 12_000, false), result(6, 20, 3_000_000)],
      now,
    );
    expect(answer.overallCode).toBe('OVER_LIMIT');
    expect(answer.statuses.map((s) => [s.code, s.limitRemaining, s.durationUntilReset?.seconds])).toEqual([
      ['OK', 6, 60],
      ['OVER_LIMIT', 0, 12],
    ]);
    expect(answer.responseHeadersToAdd).toEqual([
      { key: 'x-ratelimit-limit', value: '5' },
      { key: 'x-ratelimit-remaining', value: '0' },
      { key: 'x-ratelimit-reset', value: String(Math.ceil((now + 12_000) / 1000)) },
      { key: 'retry-after', value: '12' },
    ]);
  });

  test('a shadow limiter never refuses and reports nothing', () => {
    const shadowed = [e('path', '/login'), ...ip, e('user', 'u1')];
    const plan = planDescriptors([table.match('edge', shadowed)], 1, 'tg:');
    expect(plan.requests[0]!.enforce).toBe(false);
    const { answer } = decideDescriptors(plan, [result(2, 1, 5_000, false)], now);
    expect(answer).toEqual({
      overallCode: 'OK',
      statuses: [{ code: 'OK', limitRemaining: 0 }],
      responseHeadersToAdd: [],
      requestHeadersToAdd: [],
    });
  });

  test("Envoy's units: a period of one second, minute, hour or day; any other is UNKNOWN", () => {
    expect([1000, 60_000, 3_600_000, 86_400_000, 10_000, 300_000].map(unitOf)).toEqual([
      'SECOND',
      'MINUTE',
      'HOUR',
      'DAY',
      'UNKNOWN',
      'UNKNOWN',
    ]);
  });
});

describe('the limiter metric of a call', () => {
  test('a shadow limiter whose window is spent counts as shadow_limited, as over HTTP', async () => {
    const table = loadConfigText(config(LIMITERS), 'conf.yaml', {});
    const store = new MemoryStore({ maxKeys: 100, sweepIntervalMs: 60_000 });
    const metrics = new GatewayMetrics();
    const ctx = {
      current: () => ({ table, keyPrefix: 'tg:' }),
      store,
      logger: pino({ level: 'silent' }),
      metrics,
    };
    const request = {
      domain: 'edge',
      descriptors: [{ entries: [e('path', '/login'), e('remote_address', '10.9.9.9'), e('user', 'u')] }],
      hitsAddend: 0,
    };
    for (let i = 0; i < 2; i++) expect((await shouldRateLimit(ctx, request)).overallCode).toBe('OK');
    await store.close();
    const text = await metrics.registry.getSingleMetricAsString('tollgate_requests_total');
    expect(text).toContain('tollgate_requests_total{limiter="login-shadow",decision="allowed"} 1');
    expect(text).toContain('tollgate_requests_total{limiter="login-shadow",decision="shadow_limited"} 1');
  });
});
