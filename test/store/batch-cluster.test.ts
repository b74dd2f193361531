// The batching store on a real Redis Cluster (3 masters, 3 replicas): a batch goes as one script
// call per slot, each slot deciding its requests in arrival order, as the reference model does.
import calculateSlot from 'cluster-key-slot';
import fc from 'fast-check';
import { test as base, expect } from 'vitest';
import { BatchingStore } from '../../src/store/batching-store.js';
import { RedisClusterStore } from '../../src/store/redis-cluster-store.js';
import { BATCH_LIBRARY } from '../../src/store/redis-function.js';
import type { WindowRequest } from '../../src/store/window-store.js';
import { RedisCluster } from '../helpers/redis-cluster.js';
import { scriptCallsIn } from '../helpers/redis-server.js';
import { WindowModel } from '../helpers/window-model.js';

/**
 * `cluster`: a 3-master, 3-replica Redis Cluster of the file's own, the batch library loaded on
 * every master (so every call counted below is one FCALL: a first call adds one refused and FUNCTION LOAD);
 * `batching`: the batching store in front of the cluster store, as the gateway builds it.
 */
const test = base
  .extend('cluster', { scope: 'file' }, async ({}, { onCleanup }) => {
    const cluster = await RedisCluster.start();
    onCleanup(() => cluster.stop());
    for (const port of await cluster.masters()) await cluster.call(port, 'FUNCTION', 'LOAD', BATCH_LIBRARY);
    return cluster;
  })
  .extend('batching', { scope: 'file' }, async ({ cluster }, { onCleanup }) => {
    const store = new RedisClusterStore({
      nodes: cluster.seeds,
      probeKey: 'tg:readiness-probe',
      connectTimeoutMs: 5000,
    });
    const batching = new BatchingStore(store, { timeoutMs: 2000 });
    onCleanup(() => batching.close());
    expect(await batching.connect()).toBe(true);
    return batching;
  });

/** Script calls on all masters so far. */
async function clusterScriptCalls(cluster: RedisCluster): Promise<number> {
  const masters = await cluster.masters();
  const infos = await Promise.all(masters.map((p) => cluster.call(p, 'INFO', 'commandstats')));
  return infos.reduce<number>((sum, info) => sum + scriptCallsIn(String(info)), 0);
}

// One hash tag per limiter, as the gateway's keys have; each tag in a slot of its own.
const TAGS = ['l0', 'l1', 'l2', 'l3', 'l4', 'l5'] as const;
const LIMITS = [1, 2, 3, 2, 1, 4];
type Tag = (typeof TAGS)[number];

test('a request without windows is answered at once by the cluster store itself', async ({ cluster }) => {
  const store = new RedisClusterStore({
    nodes: cluster.seeds,
    probeKey: 'tg:readiness-probe',
    connectTimeoutMs: 5000,
  });
  try {
    expect(await store.connect()).toBe(true);
    expect(await store.hit([])).toEqual([]);
    const settled: [number, unknown][] = [];
    await new Promise<void>((done) =>
      store.hitBatch(
        [[], [{ key: '{l0}:empty', limit: 5, periodMs: 60_000, enforce: true, cacheWhenSpent: false }]],
        (i, outcome) => {
          settled.push([
            i,
            outcome instanceof Error ? outcome : (outcome as { count: number }[]).map((r) => r.count),
          ]);
          if (settled.length === 2) done();
        },
      ),
    );
    expect(settled.sort((a, b) => a[0] - b[0])).toEqual([
      [0, []],
      [1, [1]],
    ]);
  } finally {
    await store.close();
  }
});

test('the tags lie in six different slots, spread over the masters', async ({ cluster }) => {
  expect(new Set(TAGS.map((t) => calculateSlot(`{${t}}`))).size).toBe(TAGS.length);
  const owners = await Promise.all(TAGS.map((t) => cluster.nodeForSlot(calculateSlot(`{${t}}`))));
  expect(new Set(owners).size).toBeGreaterThan(1);
});

/**
 * A request: one or two limiters (tags), each with one or two windows (a minute and an hour), and
 * mostly one hit, sometimes several (Envoy's hits_addend), the same for all its windows.
 */
const requestArb = fc.uniqueArray(
  fc.record({
    tag: fc.constantFrom<Tag>(...TAGS),
    hour: fc.boolean(),
    enforce: fc.boolean(),
    cost: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
  }),
  { minLength: 1, maxLength: 2, selector: (l) => l.tag },
);
const scenarioArb = fc.array(fc.array(requestArb, { minLength: 1, maxLength: 10 }), {
  minLength: 1,
  maxLength: 5,
});

let run = 0;

test('batches against the model: per slot, in order, all-or-nothing; one script call per slot', async ({
  cluster,
  batching,
}) => {
  await fc.assert(
    fc.asyncProperty(scenarioArb, async (generated) => {
      const prefix = `run${run++}`;
      const model = new WindowModel();
      for (const turn of generated) {
        // A request's windows, limiter by limiter; the limit of a window depends on its key only.
        const requests: WindowRequest[][] = turn.map((limiters) =>
          limiters.flatMap(({ tag, hour, enforce, cost }) => {
            const limit = LIMITS[TAGS.indexOf(tag)]!;
            const costs = cost === undefined ? {} : { cost };
            const minute = {
              key: `${prefix}:{${tag}}:m`,
              limit,
              periodMs: 60_000,
              enforce,
              cacheWhenSpent: false,
              ...costs,
            };
            const hourly = {
              key: `${prefix}:{${tag}}:h`,
              limit: limit + 1,
              periodMs: 3_600_000,
              enforce,
              cacheWhenSpent: false,
              ...costs,
            };
            return hour ? [minute, hourly] : [minute];
          }),
        );
        const slots = new Set(requests.flatMap((r) => r.map((w) => calculateSlot(w.key))));
        const before = await clusterScriptCalls(cluster);
        const results = await Promise.all(requests.map((r) => batching.hit(r)));
        expect((await clusterScriptCalls(cluster)) - before).toBe(slots.size);
        // Limiters in different slots decide alone: the model decides each limiter's part in turn.
        requests.forEach((windows, r) => {
          const tags = [...new Set(windows.map((w) => w.key.split(':')[1]))];
          for (const tag of tags) {
            const part = windows.filter((w) => w.key.split(':')[1] === tag);
            const expected = model.decide(part).windows;
            const got = results[r]!.filter((_, i) => windows[i]!.key.split(':')[1] === tag);
            expect(got.map((w) => ({ count: w.count, allowed: w.allowed }))).toEqual(expected);
          }
        });
      }
    }),
    { numRuns: 40 },
  );
}, 120_000);
