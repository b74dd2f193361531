// onStoreError: local on Redis Cluster: two gateways learn of each other from the heartbeat key
// (one slot), and when the slot of a window is lost (its master and replica killed) each counts
// that window in process at its share: both together admit exactly the limit.
import calculateSlot from 'cluster-key-slot';
import { describe, expect } from 'vitest';
import type { Gateway } from '../../src/runtime/gateway.js';
import { clusterPairTest } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';

const CONFIG = gatewayYaml(`
shutdown:
  drainTimeout: 1s
store:
  redis: { cluster: '\${REDIS_CLUSTER_NODES}', commandTimeout: 2s, connectTimeout: 5s }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  shared:
    onStoreError: local
    windows: [{ limit: 10, period: 1h, key: [ip] }]
routes:
  - { name: a, paths: ['/a/*'], upstream: app, limiters: [shared] }
`);

const test = clusterPairTest(CONFIG);

async function metric(g: Gateway, name: string, labels: Record<string, string> = {}): Promise<number> {
  const m = await g.metrics.registry.getSingleMetric(name)!.get();
  const v = m.values.find((x) => Object.entries(labels).every(([k, val]) => x.labels[k] === val));
  return v?.value ?? 0;
}

describe('Redis Cluster', () => {
  test('heartbeats in one slot, then a lost slot counted locally at half the limit on each', async ({
    cluster,
    pair,
    upstream,
  }) => {
    for (const g of pair) {
      await waitFor(
        () => metric(g, 'tollgate_store_live_instances'),
        (n) => n === 2,
        { what: 'both instances to count 2 live instances' },
      );
    }
    const heartbeats = await cluster.nodeForSlot(calculateSlot('tg:{instances}'));
    expect(await cluster.call(heartbeats, 'ZCARD', 'tg:{instances}')).toBe(2);

    const first = await send(`${pair[0].url()}/a/1`);
    expect(first.headers['x-ratelimit-remaining']).toBe('9');
    const keys = (
      await Promise.all((await cluster.masters()).map((p) => cluster.call(p, 'KEYS', 'tg:{*}:shared:*')))
    ).flat() as string[];
    expect(keys).toHaveLength(1);
    const slot = calculateSlot(keys[0]!);
    const range = (await cluster.slots()).find((r) => r.from <= slot && slot <= r.to)!;
    await Promise.all([range.master, ...range.replicas].map((port) => cluster.kill(port)));

    const seen = upstream.seen.length;
    for (const g of pair) {
      const replies = [];
      for (let i = 0; i < 7; i++) replies.push(await send(`${g.url()}/a/down`));
      expect(
        replies.map((r) => [r.status, r.headers['x-ratelimit-limit'], r.headers['x-ratelimit-remaining']]),
      ).toEqual([
        [200, '5', '4'],
        [200, '5', '3'],
        [200, '5', '2'],
        [200, '5', '1'],
        [200, '5', '0'],
        [429, '5', '0'],
        [429, '5', '0'],
      ]);
      expect(await metric(g, 'tollgate_store_fallback_active')).toBe(1);
      expect(
        await metric(g, 'tollgate_local_decisions_total', { limiter: 'shared', decision: 'allowed' }),
      ).toBe(5);
    }
    expect(upstream.seen.length - seen).toBe(10);
  }, 120_000);
});
