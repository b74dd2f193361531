// Envoy's rate-limit service (envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit) on a real
// gateway counting in a real Redis: the calls Envoy's ratelimit filter makes, and the exact replies.
import { status as grpcStatus } from '@grpc/grpc-js';
import { describe, expect } from 'vitest';
import type { Gateway } from '../../src/runtime/gateway.js';
import { loadConfigText } from '../../src/rules/load.js';
import { hashPart } from '../../src/identity/hash.js';
import { gatewayTest, test as base } from '../helpers/fixtures.js';
import { gatewayYaml, REDIS_STORE, send } from '../helpers/gateway.js';
import { freePort } from '../helpers/ports.js';
import {
  bytesField,
  readFields,
  RlsClient,
  rlsClient,
  UNMATCHED,
  varintField,
  type RlsRequest,
  type RlsResponse,
} from '../helpers/rls-client.js';

const LIMITERS = `
limiters:
  per-ip:
    descriptors:
      - domain: edge
        entries: [{ key: remote_address }]
    windows: [{ limit: 3, period: 1m }]
  batch:
    descriptors:
      - domain: edge
        entries: [{ key: generic_key, value: batch }, { key: client_id }]
    windows: [{ limit: 10, period: 1m }, { limit: 100, period: 1h }]
  login:
    descriptors:
      - domain: edge
        entries: [{ key: path, value: /login }, { key: remote_address }]
    windows: [{ limit: 1, period: 1m }]
  closed:
    onStoreError: closed
    descriptors:
      - domain: strict
        entries: [{ key: remote_address }]
    windows: [{ limit: 5, period: 1m }]
  http-ip:
    windows: [{ limit: 5, period: 1m, key: [ip] }]
`;

const config = (store: string) =>
  gatewayYaml(`
rateLimitService: { host: 127.0.0.1, port: 0 }
${store}
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
${LIMITERS}
routes:
  - name: all
    paths: ['/*']
    upstream: app
    limiters: [http-ip]
`);

const test = gatewayTest({ config: config(REDIS_STORE) }).extend('rls', { scope: 'file' }, rlsClient);

const d = (...pairs: [string, string][]) => ({ entries: pairs.map(([key, value]) => ({ key, value })) });
const ok = (name: string, limit: number, remaining: number, unit = 'MINUTE') => ({
  code: 'OK',
  currentLimit: { name, requestsPerUnit: limit, unit },
  limitRemaining: remaining,
  durationUntilReset: expect.anything(),
});

/** A call, with the wall clock before and after it, to bound the reset times it reports. */
async function call(rls: RlsClient, request: RlsRequest) {
  const sentAt = Date.now();
  const response = await rls.shouldRateLimit(request);
  return { response, sentAt, receivedAt: Date.now() };
}

/** The headers Envoy is told to add, as a map, with X-RateLimit-Reset checked against the window and dropped. */
function headersOf({ response, sentAt, receivedAt }: Awaited<ReturnType<typeof call>>, periodMs: number) {
  const headers = Object.fromEntries(response.responseHeadersToAdd.map((h) => [h.key, h.value]));
  const reset = Number(headers['x-ratelimit-reset']) * 1000;
  // The window started at the first hit, at most this long before: reset ≤ received + period (+ rounding up).
  expect(reset).toBeLessThan(receivedAt + periodMs + 1000);
  expect(reset).toBeGreaterThan(sentAt - 5000);
  return headers;
}

let n = 0;
const ip = () => `198.51.100.${++n}`;

describe('ShouldRateLimit', () => {
  test('one descriptor: OK with the limit, what is left and the headers, then OVER_LIMIT with Retry-After', async ({
    rls,
  }) => {
    const addr = ip();
    const request = { domain: 'edge', descriptors: [d(['remote_address', addr])] };
    const first = await call(rls, request);
    expect(first.response).toEqual({
      overallCode: 'OK',
      statuses: [{ ...ok('per-ip.0', 3, 2), durationUntilReset: { seconds: 60, nanos: 0 } }],
      responseHeadersToAdd: [
        { key: 'x-ratelimit-limit', value: '3' },
        { key: 'x-ratelimit-remaining', value: '2' },
        { key: 'x-ratelimit-reset', value: expect.stringMatching(/^\d{10}$/) },
      ],
      requestHeadersToAdd: [],
    } satisfies RlsResponse);
    expect(headersOf(first, 60_000)).toEqual({
      'x-ratelimit-limit': '3',
      'x-ratelimit-remaining': '2',
      'x-ratelimit-reset': first.response.responseHeadersToAdd[2]!.value,
    });
    const reset = first.response.responseHeadersToAdd[2]!.value;

    for (const left of [1, 0]) {
      const next = await call(rls, request);
      expect(next.response.overallCode).toBe('OK');
      expect(next.response.statuses).toEqual([ok('per-ip.0', 3, left)]);
      expect(next.response.responseHeadersToAdd.map((h) => [h.key, h.value])).toEqual([
        ['x-ratelimit-limit', '3'],
        ['x-ratelimit-remaining', String(left)],
        ['x-ratelimit-reset', expect.stringMatching(/^\d{10}$/)],
      ]);
    }

    const over = await call(rls, request);
    const status = over.response.statuses[0]!;
    expect(over.response.overallCode).toBe('OVER_LIMIT');
    expect(status).toEqual({ ...ok('per-ip.0', 3, 0), code: 'OVER_LIMIT' });
    const seconds = status.durationUntilReset!.seconds;
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(60);
    const headers = headersOf(over, 60_000);
    expect(headers).toEqual({
      'x-ratelimit-limit': '3',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': expect.stringMatching(/^\d{10}$/),
      // As over HTTP: whole seconds until the window resets, at least 1.
      'retry-after': String(seconds),
    });
    // The same window throughout: its reset moves by at most the rounding of the clock between calls.
    expect(Math.abs(Number(headers['x-ratelimit-reset']) - Number(reset))).toBeLessThanOrEqual(1);
    expect(over.response.responseHeadersToAdd.map((h) => h.key)).toEqual([
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
      'retry-after',
    ]);
  });

  test('counts go to the same Redis as HTTP requests, under a key of the descriptor’s hashed value', async ({
    rls,
    redisClient,
    gateway,
  }) => {
    const addr = ip();
    await rls.shouldRateLimit({ domain: 'edge', descriptors: [d(['remote_address', addr])] });
    await rls.shouldRateLimit({ domain: 'edge', descriptors: [d(['remote_address', addr])] });
    const tag = hashPart(`descriptor\0remote_address=${addr}`);
    expect(await redisClient.get(`tg:{${tag}}:per-ip:60000:descriptor`)).toBe('2');
    expect(await redisClient.pttl(`tg:{${tag}}:per-ip:60000:descriptor`)).toBeGreaterThan(50_000);
    // An HTTP request through the same gateway counts in the same Redis.
    const reply = await send(`${gateway.url()}/x`);
    expect(reply.status).toBe(200);
    expect(reply.headers['x-ratelimit-remaining']).toBe('4');
    expect((await redisClient.keys('tg:*:http-ip:60000:ip')).length).toBe(1);
  });

  test('several descriptors: each gets its status, unmatched ones OK without a limit, the headers the tightest', async ({
    rls,
  }) => {
    const client = `c${++n}`;
    const { response } = await call(rls, {
      domain: 'edge',
      descriptors: [
        d(['generic_key', 'batch'], ['client_id', client]),
        d(['generic_key', 'other'], ['client_id', client]), // no limiter names it
        d(['remote_address', ip()]),
      ],
    });
    expect(response).toEqual({
      overallCode: 'OK',
      statuses: [ok('batch.0', 10, 9), UNMATCHED, ok('per-ip.0', 3, 2)],
      responseHeadersToAdd: [
        { key: 'x-ratelimit-limit', value: '3' },
        { key: 'x-ratelimit-remaining', value: '2' },
        { key: 'x-ratelimit-reset', value: expect.stringMatching(/^\d{10}$/) },
      ],
      requestHeadersToAdd: [],
    });
  });

  test('an unknown domain or descriptor is OK, with no limit, and counts nothing', async ({
    rls,
    redisClient,
  }) => {
    const before = await redisClient.dbsize();
    expect(
      await rls.shouldRateLimit({ domain: 'nobody', descriptors: [d(['remote_address', ip()])] }),
    ).toEqual({
      overallCode: 'OK',
      statuses: [UNMATCHED],
      responseHeadersToAdd: [],
      requestHeadersToAdd: [],
    });
    expect(
      await rls.shouldRateLimit({ domain: 'edge', descriptors: [d(['path', '/login']), d(['user', 'x'])] }),
    ).toEqual({
      overallCode: 'OK',
      statuses: [UNMATCHED, UNMATCHED],
      responseHeadersToAdd: [],
      requestHeadersToAdd: [],
    });
    expect(await redisClient.dbsize()).toBe(before);
  });

  test('hits_addend counts that many hits; a request with more hits than are left is refused and counts none', async ({
    rls,
    redisClient,
  }) => {
    const client = `c${++n}`;
    const request = (hitsAddend: number) => ({
      domain: 'edge',
      descriptors: [d(['generic_key', 'batch'], ['client_id', client])],
      hitsAddend,
    });
    expect((await rls.shouldRateLimit(request(4))).statuses).toEqual([ok('batch.0', 10, 6)]);
    expect((await rls.shouldRateLimit(request(4))).statuses).toEqual([ok('batch.0', 10, 2)]);
    const refused = await rls.shouldRateLimit(request(3));
    expect(refused.overallCode).toBe('OVER_LIMIT');
    expect(refused.statuses).toEqual([{ ...ok('batch.0', 10, 0), code: 'OVER_LIMIT' }]);
    // Nothing was counted: the two hits left are still there.
    expect((await rls.shouldRateLimit(request(2))).statuses).toEqual([ok('batch.0', 10, 0)]);
    // (Unset, hits_addend is 0, which is one hit, as in Envoy's API: the other tests' calls.)
    // The hour window counted exactly the 10 hits that passed.
    const tag = hashPart(`descriptor\0client_id=${client}`);
    expect(await redisClient.get(`tg:{${tag}}:batch:3600000:descriptor`)).toBe('10');
  });

  test('all or nothing, as a route’s limiters: when one descriptor is over its limit, none is counted', async ({
    rls,
  }) => {
    const addr = ip();
    const login = d(['path', '/login'], ['remote_address', addr]);
    expect((await rls.shouldRateLimit({ domain: 'edge', descriptors: [login] })).overallCode).toBe('OK');
    const both = await rls.shouldRateLimit({
      domain: 'edge',
      descriptors: [d(['remote_address', addr]), login],
    });
    expect(both.overallCode).toBe('OVER_LIMIT');
    expect(both.statuses.map((s) => [s.code, s.limitRemaining])).toEqual([
      ['OK', 3], // per-ip had room, but was not counted
      ['OVER_LIMIT', 0],
    ]);
    expect(both.responseHeadersToAdd.map((h) => h.key)).toEqual([
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
      'retry-after',
    ]);
    const alone = await rls.shouldRateLimit({ domain: 'edge', descriptors: [d(['remote_address', addr])] });
    expect(alone.statuses).toEqual([ok('per-ip.0', 3, 2)]);
  });

  test('a request without a domain or without descriptors is INVALID_ARGUMENT', async ({ rls }) => {
    await expect(
      rls.shouldRateLimit({ domain: '', descriptors: [d(['remote_address', ip()])] }),
    ).rejects.toMatchObject({ code: grpcStatus.INVALID_ARGUMENT, details: 'domain must not be empty' });
    await expect(rls.shouldRateLimit({ domain: 'edge', descriptors: [] })).rejects.toMatchObject({
      code: grpcStatus.INVALID_ARGUMENT,
      details: 'descriptors must not be empty',
    });
  });

  test("on the wire: Envoy's field numbers (request 1 domain, 2 descriptors, 3 hits_addend; response 1 overall_code, 2 statuses, 3 response_headers_to_add)", async ({
    rls,
  }) => {
    const client = `c${++n}`;
    // RateLimitDescriptor: 1 entries (Entry: 1 key, 2 value).
    const entry = (key: string, value: string) =>
      bytesField(1, Buffer.concat([bytesField(1, key), bytesField(2, value)]));
    const descriptor = Buffer.concat([entry('generic_key', 'batch'), entry('client_id', client)]);
    const request = Buffer.concat([bytesField(1, 'edge'), bytesField(2, descriptor), varintField(3, 3)]);
    const reply = readFields(await rls.raw(request));
    expect(reply.map((f) => f.field)).toEqual([1, 2, 3, 3, 3]);
    expect(reply[0]!.value).toBe(1); // OK
    // DescriptorStatus: 1 code, 2 current_limit (RateLimit: 1 requests_per_unit, 2 unit, 3 name),
    // 3 limit_remaining, 4 duration_until_reset (Duration: 1 seconds).
    const status = readFields(reply[1]!.value as Buffer);
    expect(status.map((f) => f.field)).toEqual([1, 2, 3, 4]);
    expect(status[0]!.value).toBe(1);
    const limit = readFields(status[1]!.value as Buffer);
    expect(limit.map((f) => [f.field, Buffer.isBuffer(f.value) ? f.value.toString() : f.value])).toEqual([
      [1, 10],
      [2, 2], // MINUTE
      [3, 'batch.0'],
    ]);
    expect(status[2]!.value).toBe(7); // 10 - 3 hits
    expect(readFields(status[3]!.value as Buffer)).toEqual([{ field: 1, value: 60 }]);
    // HeaderValue: 1 key, 2 value.
    const header = readFields(reply[2]!.value as Buffer).map((f) => (f.value as Buffer).toString());
    expect(header).toEqual(['x-ratelimit-limit', '10']);
  });
});

/** A gateway whose Redis is not there: every store call fails. */
const failing = base.extend('down', { scope: 'file' }, async ({ upstream, gateways }, { onCleanup }) => {
  const port = await freePort(); // nothing listens there
  const gateway: Gateway = await gateways.start(
    config(
      `store: { redis: { url: 'redis://127.0.0.1:${port}', connectTimeout: 100ms, commandTimeout: 100ms } }`,
    ),
    { UPSTREAM_URL: upstream.url },
  );
  return rlsClient({ gateway }, { onCleanup });
});

describe('reload', () => {
  test('a reload swaps the descriptor mapping; a changed limit applies to the running counter', async ({
    gatewayEnv,
    gateways,
  }) => {
    const yaml = (limit: number, extra = '') =>
      gatewayYaml(`
rateLimitService: { host: 127.0.0.1, port: 0 }
${REDIS_STORE}
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  reloaded:
    descriptors:
      - { domain: reload, entries: [{ key: remote_address }] }${extra}
    windows: [{ limit: ${limit}, period: 1m }]
routes:
  - name: all
    paths: ['/*']
    upstream: app
`);
    const gateway = await gateways.start(yaml(3), gatewayEnv);
    const client = new RlsClient(gateway.rateLimitServiceAddress!);
    try {
      const addr = ip();
      const byAddress = { domain: 'reload', descriptors: [d(['remote_address', addr])] };
      const byUser = { domain: 'reload', descriptors: [d(['user', 'u1'])] };
      expect((await client.shouldRateLimit(byAddress)).statuses).toEqual([ok('reloaded.0', 3, 2)]);
      expect((await client.shouldRateLimit(byUser)).statuses).toEqual([UNMATCHED]);
      await gateway.reload(
        loadConfigText(
          yaml(5, '\n      - { domain: reload, entries: [{ key: user }] }'),
          'test.yaml',
          gatewayEnv,
        ),
      );
      expect((await client.shouldRateLimit(byAddress)).statuses).toEqual([ok('reloaded.0', 5, 3)]);
      expect((await client.shouldRateLimit(byUser)).statuses).toEqual([ok('reloaded.0', 5, 4)]);
    } finally {
      client.close();
    }
  });
});

describe('when the store fails', () => {
  failing('limiters that fail open answer OK, without a limit or headers', async ({ down }) => {
    expect(
      await down.shouldRateLimit({ domain: 'edge', descriptors: [d(['remote_address', ip()])] }),
    ).toEqual({
      overallCode: 'OK',
      statuses: [UNMATCHED],
      responseHeadersToAdd: [],
      requestHeadersToAdd: [],
    });
  });

  failing(
    'a limiter that fails closed makes the call UNAVAILABLE (Envoy then applies failure_mode_deny)',
    async ({ down }) => {
      await expect(
        down.shouldRateLimit({ domain: 'strict', descriptors: [d(['remote_address', ip()])] }),
      ).rejects.toMatchObject({
        code: grpcStatus.UNAVAILABLE,
        details: expect.stringMatching(/^rate-limit store failed: /),
      });
    },
  );
});
