// Bans on a real Redis Cluster: through the cluster store (a request's limiters over several slots,
// each slot deciding its own) against the reference model; listing scans every master; lifting.
import calculateSlot from 'cluster-key-slot';
import fc from 'fast-check';
import { expect } from 'vitest';
import { banKeys } from '../../src/limits/keys.js';
import { BatchingStore } from '../../src/store/batching-store.js';
import { RedisClusterStore } from '../../src/store/redis-cluster-store.js';
import { clusterTest } from '../helpers/redis-cluster.js';
import { banScenario, model, replay } from '../helpers/ban-model.js';

const test = clusterTest.extend('store', { scope: 'file' }, async ({ cluster }, { onCleanup }) => {
  const inner = new RedisClusterStore({
    nodes: cluster.seeds,
    probeKey: 'tg:readiness-probe',
    connectTimeoutMs: 5000,
  });
  const store = new BatchingStore(inner, { timeoutMs: 5000 });
  onCleanup(() => store.close());
  expect(await store.connect()).toBe(true);
  return store;
});

let run = 0;

test('the cluster store bans as the model does', async ({ store }) => {
  await fc.assert(
    fc.asyncProperty(banScenario(false), async ({ specs, steps }) => {
      const prefix = `cl${run++}:`;
      expect(await replay(store, prefix, specs, steps)).toEqual(model(specs, steps));
    }),
    { numRuns: 30 },
  );
});

test('bans on every master are listed, and one is lifted', async ({ cluster, store }) => {
  // Tags until every master holds one.
  const masters = await cluster.masters();
  const byMaster = new Map<number, string>();
  for (let i = 0; byMaster.size < masters.length; i++) {
    const tag = `t${i}`;
    const port = await cluster.nodeForSlot(calculateSlot(`{${tag}}`));
    if (!byMaster.has(port)) byMaster.set(port, tag);
  }
  const tags = [...byMaster.values()];
  for (const tag of tags) {
    const keys = banKeys('bl:', 'l', tag);
    const ban = { ...keys, after: 1, withinMs: 60_000, forMs: 60_000, span: 1 };
    const w = {
      key: `bl:{${tag}}:l:60000:ip`,
      limit: 1,
      periodMs: 60_000,
      enforce: true,
      cacheWhenSpent: false,
      ban,
    };
    await store.hit([w]);
    expect((await store.hit([w]))[0]!.banStarted).toBe(true);
  }
  const listed = await store.listBans('bl:', 100);
  expect(listed.truncated).toBe(false);
  expect(listed.bans.map((b) => b.key).sort()).toEqual(tags.map((t) => `bl:{${t}}:l:ban`).sort());
  const first = banKeys('bl:', 'l', tags[0]!);
  expect(await store.liftBan(first.key, first.strikesKey)).toBe(true);
  expect((await store.listBans('bl:', 100)).bans).toHaveLength(tags.length - 1);
});
