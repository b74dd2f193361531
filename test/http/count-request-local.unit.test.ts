// countRequest when the store fails, on a route whose limiters fail locally, open and closed:
// the local limiters' windows are counted in process (at their share), the open ones are not,
// and a closed one still answers 503.
import { describe, expect, test } from 'vitest';
import { countRequest, type CountedRequest } from '../../src/http/count-request.js';
import { recordDecisions } from '../../src/http/verdicts.js';
import { describePeer } from '../../src/identity/peer.js';
import { GatewayMetrics } from '../../src/metrics/gateway-metrics.js';
import { loadConfigText } from '../../src/rules/load.js';
import { buildState } from '../../src/runtime/build-state.js';
import { LocalFallback } from '../../src/store/local-fallback.js';
import { StoreUnavailableError, type WindowStore } from '../../src/store/window-store.js';

const YAML = `
listeners: [{ host: 127.0.0.1, port: 0 }]
upstreams: { app: { url: "http://127.0.0.1:9" } }
limiters:
  near: { onStoreError: local, message: Near., windows: [{ limit: 4, period: 1m, key: [ip] }] }
  loose: { onStoreError: open, windows: [{ limit: 1, period: 1m, key: [ip] }] }
  strict: { onStoreError: closed, windows: [{ limit: 1, period: 1m, key: [ip] }] }
routes:
  - { name: mixed, paths: ["/m"], upstream: app, limiters: [near, loose] }
  - { name: closed, paths: ["/c"], upstream: app, limiters: [near, strict] }
`;

const failing: WindowStore = {
  hit: () => Promise.reject(new StoreUnavailableError('redis: Connection is closed.')),
  connect: () => Promise.resolve(false),
  readiness: () => Promise.resolve({ ready: false, reason: 'down' }),
  close: () => Promise.resolve(),
};

async function setUp(instances: number) {
  const table = loadConfigText(YAML, 'test.yaml', {});
  const state = await buildState(table);
  const metrics = new GatewayMetrics({ processMetrics: false });
  const fallback = new LocalFallback({
    maxKeys: 100,
    sweepIntervalMs: 60_000,
    observer: metrics,
    beat: () => Promise.resolve(instances),
  });
  fallback.start(() => true);
  await fallback.beat(); // skipped: the start's beat is in flight
  await new Promise<void>((resolve) => setImmediate(resolve));
  const limiting = { store: failing, metrics, ietfHeaders: false, warnStore: () => undefined, fallback };
  const request = (path: string): CountedRequest => ({
    limiting,
    state,
    route: table.router.matchPath('app.test', 'GET', path)!,
    peer: describePeer('127.0.0.1', state.identity),
    req: { headers: { host: 'app.test' } },
    requestId: 'r',
  });
  return { request, metrics, fallback };
}

const value = async (metrics: GatewayMetrics, name: string) =>
  (await metrics.registry.getSingleMetric(name)!.get()).values.map((v) => [v.labels, v.value]);

describe('countRequest with onStoreError: local', () => {
  test('the local limiter counts its share (4 ÷ 2), the open one nothing', async () => {
    const { request, metrics, fallback } = await setUp(2);
    expect(fallback.instances).toBe(2);
    const counted = [];
    for (let i = 0; i < 3; i++) counted.push(await countRequest(request('/m')));
    expect(counted.map((c) => [c.outcome, c.report?.limit, c.report?.remaining, c.refusal?.status])).toEqual([
      ['allowed', 2, 1, undefined],
      ['allowed', 2, 0, undefined],
      ['limited', 2, 0, 429],
    ]);
    expect(counted[2]!.refusal).toMatchObject({ code: 'rate_limited', message: 'Near.' });
    // The request path counts each verdict once the request's fate is known (settle).
    const route = request('/m').route;
    for (const c of counted) recordDecisions(metrics, route, c.verdicts, undefined);
    const byLabels = (a: unknown[], b: unknown[]) => JSON.stringify(a[0]).localeCompare(JSON.stringify(b[0]));
    expect((await value(metrics, 'tollgate_requests_total')).sort(byLabels)).toEqual([
      [{ limiter: 'loose', decision: 'store_error' }, 3],
      [{ limiter: 'near', decision: 'allowed' }, 2],
      [{ limiter: 'near', decision: 'limited' }, 1],
    ]);
    expect(await value(metrics, 'tollgate_local_decisions_total')).toEqual([
      [{ limiter: 'near', decision: 'allowed' }, 2],
      [{ limiter: 'near', decision: 'limited' }, 1],
    ]);
    expect(await value(metrics, 'tollgate_store_uncounted_total')).toEqual([[{}, 0]]);
    expect(await value(metrics, 'tollgate_store_fallback_active')).toEqual([[{}, 1]]);
    await fallback.close();
  });

  test('a closed limiter on the route wins: 503, nothing counted locally', async () => {
    const { request, metrics, fallback } = await setUp(1);
    const counted = await countRequest(request('/c'));
    expect([counted.outcome, counted.report, counted.refusal?.status]).toEqual([
      'store_error',
      undefined,
      503,
    ]);
    expect(fallback.size).toBe(0);
    expect(fallback.active).toBe(false);
    expect(await value(metrics, 'tollgate_local_decisions_total')).toEqual([]);
    await fallback.close();
  });
});
