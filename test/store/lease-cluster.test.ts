// Leases on a real Redis Cluster (3 masters): two instances spend slices of hot keys in several
// slots, each lease and give-back run on its key's master. Never over the limit, the count exact
// (admitted plus the slices held), and exactly what was admitted once both stop.
import { Redis } from 'ioredis';
import { expect } from 'vitest';
import calculateSlot from 'cluster-key-slot';
import { BatchingStore } from '../../src/store/batching-store.js';
import { LeasingStore } from '../../src/store/leasing-store.js';
import { RedisClusterStore } from '../../src/store/redis-cluster-store.js';
import type { WindowRequest } from '../../src/store/window-store.js';
import { clusterTest } from '../helpers/redis-cluster.js';

const test = clusterTest;

async function instance(seeds: string[]) {
  const store = new RedisClusterStore({ nodes: seeds, probeKey: 'tg:probe', connectTimeoutMs: 5000 });
  const leasing = new LeasingStore(new BatchingStore(store, { timeoutMs: 5000 }), store, {
    timeoutMs: 5000,
    instances: () => 2,
  });
  expect(await leasing.connect()).toBe(true);
  return leasing;
}

test('two instances lease hot keys in several slots: never over, exact after the give-back', async ({
  cluster,
}) => {
  const stores = [await instance(cluster.seeds), await instance(cluster.seeds)];
  const keys = ['{a}:hot', '{b}:hot', '{c}:hot', '{d}:hot'];
  expect(new Set(keys.map((k) => calculateSlot(k))).size).toBe(4);
  const LIMIT = 120;
  const window = (key: string): WindowRequest => ({
    key,
    limit: LIMIT,
    periodMs: 600_000,
    enforce: true,
    cacheWhenSpent: false,
    lease: { max: 10, spread: 1 },
  });
  const admitted = new Map(keys.map((k) => [k, 0]));
  for (let round = 0; round < 10; round++) {
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => {
        const key = keys[i % keys.length]!;
        return stores[i % 2]!.hit([window(key)]).then(([r]) => ({ key, allowed: r!.allowed }));
      }),
    );
    for (const a of answers) if (a.allowed) admitted.set(a.key, admitted.get(a.key)! + 1);
  }
  const count = async (key: string) => {
    const port = await cluster.nodeForSlot(calculateSlot(key));
    const node = new Redis({ host: '127.0.0.1', port });
    try {
      return Number((await node.get(key)) ?? 0);
    } finally {
      node.disconnect();
    }
  };
  for (const key of keys) {
    expect(admitted.get(key)).toBeLessThanOrEqual(LIMIT);
    // 100 requests a key: all admitted but what the other instance's slice holds.
    expect(admitted.get(key)).toBeGreaterThanOrEqual(100 - 2 * 10);
    const held = stores[0]!.unspentOf(key) + stores[1]!.unspentOf(key);
    expect(await count(key)).toBe(admitted.get(key)! + held);
  }
  expect(stores[0]!.stats.localHits + stores[1]!.stats.localHits).toBeGreaterThan(0);
  await Promise.all(stores.map((s) => s.close()));
  for (const key of keys) expect(await count(key)).toBe(admitted.get(key));
});
