// Envoy's rate-limit service with onStoreError: local, its Redis never there: the local limiter's
// descriptors are counted in process (one instance: the whole limit), an open one's answer OK.
import { describe, expect } from 'vitest';
import type { Gateway } from '../../src/runtime/gateway.js';
import { test as base } from '../helpers/fixtures.js';
import { gatewayYaml } from '../helpers/gateway.js';
import { freePort } from '../helpers/ports.js';
import { rlsClient, UNMATCHED } from '../helpers/rls-client.js';

const test = base.extend('down', { scope: 'file' }, async ({ upstream, gateways }, { onCleanup }) => {
  const port = await freePort(); // nothing listens there
  const gateway: Gateway = await gateways.start(
    gatewayYaml(`
rateLimitService: { host: 127.0.0.1, port: 0 }
store: { redis: { url: 'redis://127.0.0.1:${port}', connectTimeout: 100ms, commandTimeout: 100ms } }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  near:
    onStoreError: local
    descriptors: [{ domain: edge, entries: [{ key: remote_address }] }]
    windows: [{ limit: 2, period: 1m }]
  loose:
    descriptors: [{ domain: edge, entries: [{ key: user }] }]
    windows: [{ limit: 1, period: 1m }]
routes: [{ name: all, paths: ['/*'], upstream: app }]
`),
    { UPSTREAM_URL: upstream.url },
  );
  return { gateway, client: rlsClient({ gateway }, { onCleanup }) };
});

const d = (key: string, value: string) => ({ entries: [{ key, value }] });

describe('onStoreError: local on the rate-limit service', () => {
  test('counted in process: OK twice, then OVER_LIMIT; the open limiter answers OK uncounted', async ({
    down: { gateway, client },
  }) => {
    const request = { domain: 'edge', descriptors: [d('remote_address', '192.0.2.1'), d('user', 'u')] };
    const codes = [];
    for (let i = 0; i < 3; i++) {
      const r = await client.shouldRateLimit(request);
      codes.push([r.overallCode, r.statuses[0]!.code, r.statuses[0]!.limitRemaining, r.statuses[1]]);
    }
    expect(codes).toEqual([
      ['OK', 'OK', 1, UNMATCHED],
      ['OK', 'OK', 0, UNMATCHED],
      ['OVER_LIMIT', 'OVER_LIMIT', 0, UNMATCHED],
    ]);
    const local = await gateway.metrics.registry.getSingleMetric('tollgate_local_decisions_total')!.get();
    expect(local.values.map((v) => [v.labels, v.value])).toEqual([
      [{ limiter: 'near', decision: 'allowed' }, 2],
      [{ limiter: 'near', decision: 'limited' }, 1],
    ]);
    const active = await gateway.metrics.registry.getSingleMetric('tollgate_store_fallback_active')!.get();
    expect(active.values[0]!.value).toBe(1);
    // The two calls answered OK let the open limiter's descriptor through uncounted (the self-audit).
    const over = await gateway.metrics.registry.getSingleMetric('tollgate_admitted_over_limit_total')!.get();
    expect(over.values.map((v) => [v.labels, v.value])).toEqual([
      [{ limiter: 'near' }, 0],
      [{ limiter: 'loose' }, 2],
    ]);
  });
});
