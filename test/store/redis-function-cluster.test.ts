// The batch library on a real Redis Cluster (3 masters, 3 replicas): loaded on every master when a
// master answers that it lacks it (a cluster started empty, FUNCTION FLUSH, a master of its own
// that lost it), each batch counted once, and replicated to the replicas by Redis itself.
import calculateSlot from 'cluster-key-slot';
import { expect } from 'vitest';
import { RedisClusterStore } from '../../src/store/redis-cluster-store.js';
import { BATCH_FUNCTION, BATCH_LIBRARY_NAME } from '../../src/store/redis-function.js';
import type { WindowRequest } from '../../src/store/window-store.js';
import { clusterTest, type RedisCluster } from '../helpers/redis-cluster.js';
import { waitFor } from '../helpers/wait.js';

const test = clusterTest.extend('store', { scope: 'file' }, async ({ cluster }, { onCleanup }) => {
  const store = new RedisClusterStore({
    nodes: cluster.seeds,
    probeKey: 'tg:readiness-probe',
    connectTimeoutMs: 5000,
  });
  onCleanup(() => store.close());
  expect(await store.connect()).toBe(true);
  return store;
});

const window = (key: string): WindowRequest => ({
  key,
  limit: 100,
  periodMs: 60_000,
  enforce: true,
  cacheWhenSpent: false,
});

/** One hash tag per master: `{t<i>}` for the first i whose slot each master serves. */
async function tagPerMaster(cluster: RedisCluster): Promise<Map<number, string>> {
  const masters = await cluster.masters();
  const tags = new Map<number, string>();
  for (let i = 0; tags.size < masters.length; i++) {
    const port = await cluster.nodeForSlot(calculateSlot(`t${i}`));
    if (!tags.has(port)) tags.set(port, `t${i}`);
  }
  return tags;
}

/** Whether the node holds this version's library with its function. */
async function holds(cluster: RedisCluster, port: number): Promise<boolean> {
  const list = JSON.stringify(
    await cluster.call(port, 'FUNCTION', 'LIST', 'LIBRARYNAME', BATCH_LIBRARY_NAME),
  );
  return list.includes(`"${BATCH_LIBRARY_NAME}"`) && list.includes(`"${BATCH_FUNCTION}"`);
}

test('a cluster without the library: each master gets it at its first call, each batch counted once', async ({
  cluster,
  store,
}) => {
  const tags = await tagPerMaster(cluster);
  for (const port of tags.keys()) expect(await holds(cluster, port)).toBe(false);
  // One batch per turn, a key on every master's slots: the masters answer in parallel.
  const keys = [...tags.values()].map((tag) => `fresh:{${tag}}`);
  for (const expected of [1, 2]) {
    const results = await Promise.all(keys.map((key) => store.hit([window(key)])));
    expect(results.map((r) => r[0]!.count)).toEqual(keys.map(() => expected));
  }
  for (const port of tags.keys()) expect(await holds(cluster, port)).toBe(true);
  // Redis replicates a library like a write: every replica holds it too.
  for (const port of await cluster.replicas())
    await waitFor(() => holds(cluster, port), Boolean, {
      timeoutMs: 10_000,
      what: `library on replica ${port}`,
    });
});

test('FUNCTION FLUSH on every master, then on one: loaded again where missing, nothing counted twice', async ({
  cluster,
  store,
}) => {
  const tags = await tagPerMaster(cluster);
  const keys = [...tags.values()].map((tag) => `flushed:{${tag}}`);
  const hitAll = async () =>
    (await Promise.all(keys.map((key) => store.hit([window(key)])))).map((r) => r[0]!.count);
  expect(await hitAll()).toEqual([1, 1, 1]);
  for (const port of tags.keys()) await cluster.call(port, 'FUNCTION', 'FLUSH');
  expect(await hitAll()).toEqual([2, 2, 2]);
  const [lonely] = tags.keys();
  await cluster.call(lonely!, 'FUNCTION', 'FLUSH');
  expect(await holds(cluster, lonely!)).toBe(false);
  expect(await hitAll()).toEqual([3, 3, 3]);
  for (const port of tags.keys()) expect(await holds(cluster, port)).toBe(true);
  for (const [port, tag] of tags) expect(await cluster.call(port, 'GET', `flushed:{${tag}}`)).toBe('3');
  expect(await store.readiness()).toEqual({ ready: true });
});
