// countRequest reads one context and writes nothing of it: what counting came to is returned (the
// outcome, the identity, the window to report, the refusal) for the listener to keep and answer.
import { describe, expect, test } from 'vitest';
import { describePeer } from '../../src/identity/peer.js';
import { countRequest, type CountedRequest } from '../../src/http/count-request.js';
import { buildState, closeState } from '../../src/runtime/build-state.js';
import { GatewayMetrics } from '../../src/metrics/gateway-metrics.js';
import { loadConfigText } from '../../src/rules/load.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { OverLimitCache } from '../../src/store/over-limit-cache.js';
import type { WindowRequest, WindowStore } from '../../src/store/window-store.js';

const YAML = `
listeners: [{ host: 127.0.0.1, port: 0 }]
identity: { trustedProxies: 127.0.0.1 }
upstreams: { app: { url: "http://127.0.0.1:9" } }
limiters:
  two:
    message: Two a minute.
    windows: [{ limit: 2, period: 1m, key: [ip] }]
routes: [{ name: r, paths: ["/*"], upstream: app, limiters: [two] }]
`;

/** Freezes `value` and every object under it: a write to any of them throws (ESM is strict). */
function deepFreeze<T>(value: T, seen = new Set<unknown>()): T {
  if (value === null || typeof value !== 'object' || seen.has(value)) return value;
  seen.add(value);
  for (const inner of Object.values(value)) deepFreeze(inner, seen);
  return Object.freeze(value);
}

async function setUp(yaml = YAML) {
  const table = loadConfigText(yaml, 'test.yaml', {});
  const state = await buildState(table);
  const route = table.router.matchPath('app.test', 'GET', '/x')!;
  const warnings: object[] = [];
  const limiting = {
    store: new MemoryStore({ maxKeys: 100, sweepIntervalMs: 60_000 }),
    metrics: new GatewayMetrics({ processMetrics: false }),
    ietfHeaders: true,
    warnStore: (fields: object) => warnings.push(fields),
  };
  // Asked by a trusted proxy for 203.0.113.5: the limiter counts that client.
  const request = (id: string): CountedRequest => ({
    limiting,
    state,
    route,
    peer: describePeer('127.0.0.1', state.identity),
    req: deepFreeze({ headers: { host: 'app.test', 'x-forwarded-for': '203.0.113.5' } }),
    requestId: id,
  });
  return { state, route, request, warnings };
}

describe('countRequest', () => {
  test('returns each count, allowed then limited, and leaves its context as it was', async () => {
    const { state, route, request, warnings } = await setUp();
    const contexts = ['a', 'b', 'c'].map(request);
    const snapshots = contexts.map((c) => ({ ...c, req: { headers: { ...c.req.headers } } }));
    const counted = [];
    for (const c of contexts) counted.push(await countRequest(Object.freeze(c)));
    const report = (remaining: number) => ({
      limit: 2,
      remaining,
      resetSec: expect.any(Number),
      resetInSec: expect.any(Number),
      policyName: route.windows[0]!.policyName,
    });
    const identity = expect.objectContaining({ clientIp: '203.0.113.5' });
    expect(counted).toEqual([
      { identity, outcome: 'allowed', report: report(1), refusal: undefined, verdicts: ['allowed'] },
      { identity, outcome: 'allowed', report: report(0), refusal: undefined, verdicts: ['allowed'] },
      {
        identity,
        outcome: 'limited',
        report: report(0),
        verdicts: ['limited'],
        refusal: {
          status: 429,
          code: 'rate_limited',
          decision: 'limited',
          message: 'Two a minute.',
          retryAfterSec: expect.any(Number),
          limiter: route.limiters[0],
          violatedPolicies: [route.windows[0]!.policyName],
        },
      },
    ]);
    const retryAfter = counted[2]!.refusal!.retryAfterSec!;
    expect(retryAfter >= 1 && retryAfter <= 60).toBe(true);
    expect(contexts).toEqual(snapshots);
    expect(warnings).toEqual([]);
    await closeState(state);
  });

  // Each limiter's verdict, the shared all-allowed answer included: a shadow limiter's spent
  // window still reads shadow_limited, and the enforcing ones allowed.
  test('verdicts per limiter: all allowed, then a spent shadow limiter, then a refusal', async () => {
    const { state, request } = await setUp(`
listeners: [{ host: 127.0.0.1, port: 0 }]
identity: { trustedProxies: 127.0.0.1 }
upstreams: { app: { url: "http://127.0.0.1:9" } }
limiters:
  three: { windows: [{ limit: 3, period: 1m, key: [ip] }] }
  watch: { shadow: true, windows: [{ limit: 1, period: 1m, key: [ip] }] }
  five: { windows: [{ limit: 5, period: 1m, key: [ip] }] }
routes: [{ name: r, paths: ["/*"], upstream: app, limiters: [three, watch, five] }]
`);
    const seen = [];
    for (const id of ['a', 'b', 'c', 'd']) {
      const { outcome, verdicts } = await countRequest(request(id));
      seen.push({ outcome, verdicts });
    }
    expect(seen).toEqual([
      { outcome: 'allowed', verdicts: ['allowed', 'allowed', 'allowed'] },
      { outcome: 'shadow_limited', verdicts: ['allowed', 'shadow_limited', 'allowed'] },
      { outcome: 'shadow_limited', verdicts: ['allowed', 'shadow_limited', 'allowed'] },
      { outcome: 'limited', verdicts: ['limited', 'shadow_limited', 'allowed'] },
    ]);
    await closeState(state);
  });

  // The shared verdicts of a refusal (no lists, no shadow limiter): each route's own, by the
  // limiter that refused, and the over-limit cache's refusal taken without a store call.
  test('verdicts of a refusal name the limiter that refused, per route, from the cache too', async () => {
    const { state, request } = await setUp(`
listeners: [{ host: 127.0.0.1, port: 0 }]
identity: { trustedProxies: 127.0.0.1 }
upstreams: { app: { url: "http://127.0.0.1:9" } }
limiters:
  five: { windows: [{ limit: 5, period: 1m, key: [ip] }] }
  one: { windows: [{ limit: 1, period: 1m, key: [ip] }] }
routes:
  - { name: a, paths: ["/a"], upstream: app, limiters: [five, one] }
  - { name: b, paths: ["/b"], upstream: app, limiters: [one, five] }
  - { name: c, paths: ["/c"], upstream: app, limiters: [one] }
`);
    const inner = new MemoryStore({ maxKeys: 100, sweepIntervalMs: 60_000 });
    let calls = 0;
    const counting = {
      hit: (requests: readonly WindowRequest[]) => (calls++, inner.hit(requests)),
      close: () => inner.close(),
    } as WindowStore;
    const store = new OverLimitCache(counting, 100);
    const on = (path: string, id: string): CountedRequest => {
      const c = request(id);
      const route = state.table.router.matchPath('app.test', 'GET', path)!;
      return { ...c, route, limiting: { ...c.limiting, store } };
    };
    const seen = [];
    for (const [path, id] of [
      ['/a', '1'],
      ['/a', '2'],
      ['/b', '3'],
      ['/c', '4'],
      ['/c', '5'],
    ] as const) {
      const answer = countRequest(on(path, id));
      const { outcome, verdicts } = await answer;
      seen.push({ outcome, verdicts, now: !(answer instanceof Promise) });
    }
    // One-window refusals of the cache come at once (no promise, no turn of the handler's); the rest later.
    expect(seen.map(({ now }) => now)).toEqual([false, false, false, true, true]);
    expect(seen.map(({ outcome, verdicts }) => ({ outcome, verdicts }))).toEqual([
      { outcome: 'allowed', verdicts: ['allowed', 'allowed'] },
      { outcome: 'limited', verdicts: ['allowed', 'limited'] },
      { outcome: 'limited', verdicts: ['limited', 'allowed'] },
      { outcome: 'limited', verdicts: ['limited'] },
      { outcome: 'limited', verdicts: ['limited'] },
    ]);
    // The first request spent `one`: every refusal after it was the cache's, the store asked once.
    expect(calls).toBe(1);
    await store.close();
    await closeState(state);
  });

  // A store that throws as it is called, rather than rejecting, is a store failure all the same.
  test('a store call that throws is counted as a failed store call', async () => {
    const { state, request, warnings } = await setUp();
    const c = request('t');
    const throwing = {
      hit: () => {
        throw new Error('down');
      },
      close: async () => {},
    } as unknown as WindowStore;
    const { outcome, verdicts, refusal } = await countRequest({
      ...c,
      limiting: { ...c.limiting, store: throwing },
    });
    expect({ outcome, verdicts, refusal }).toEqual({
      outcome: 'store_error',
      verdicts: ['store_error'],
      refusal: undefined,
    });
    expect(warnings).toEqual([{ reqId: 't', err: 'down' }]);
    await closeState(state);
  });
});
