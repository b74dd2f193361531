// Sliding windows and token buckets on a real Redis Cluster: the script on each slot's master,
// against the reference model on a replayed clock; and through the cluster store on Redis' own
// clock, a batch spread over slots, every slot deciding its requests in order.
import calculateSlot from 'cluster-key-slot';
import fc from 'fast-check';
import { expect } from 'vitest';
import { batchScriptArgs, parseBatchReply } from '../../src/store/batch-window-script.js';
import { BatchingStore } from '../../src/store/batching-store.js';
import { RedisClusterStore } from '../../src/store/redis-cluster-store.js';
import { BATCH_FUNCTION, BATCH_LIBRARY } from '../../src/store/redis-function.js';
import type { WindowRequest } from '../../src/store/window-store.js';
import { clusterTest } from '../helpers/redis-cluster.js';
import { WindowModel } from '../helpers/window-model.js';
import { AlgorithmModel, requestFor, scenarioArb, specOf } from '../limits/window-maths/reference-model.js';

const test = clusterTest.extend('batching', { scope: 'file' }, async ({ cluster }, { onCleanup }) => {
  const store = new RedisClusterStore({
    nodes: cluster.seeds,
    probeKey: 'tg:readiness-probe',
    connectTimeoutMs: 5000,
  });
  const batching = new BatchingStore(store, { timeoutMs: 5000 });
  onCleanup(() => batching.close());
  expect(await batching.connect()).toBe(true);
  return batching;
});

const HOUR = 3_600_000;
const TAGS = ['l0', 'l1', 'l2', 'l3', 'l4', 'l5'] as const;
let run = 0;

test("each slot's master runs the script as the model says (a limiter's windows share a tag)", async ({
  cluster,
}) => {
  for (const port of await cluster.masters())
    await cluster.call(port, 'FUNCTION', 'LOAD', 'REPLACE', BATCH_LIBRARY);
  await fc.assert(
    fc.asyncProperty(scenarioArb(HOUR), fc.constantFrom(...TAGS), async (scenario, tag) => {
      const prefix = `c${run++}:{${tag}}:`;
      const port = await cluster.nodeForSlot(calculateSlot(prefix));
      let now = Date.now();
      const model = new AlgorithmModel();
      for (const turn of scenario.turns) {
        now += turn.pauseMs;
        const windows = turn.requests.map((request) =>
          request.map((w) => {
            const spec = specOf(scenario, w.key);
            return { request: requestFor(prefix + w.key, spec, w.enforce, w.cost), spec };
          }),
        );
        const batch = windows.map((ws) => ws.map((w) => w.request));
        const reply = (await cluster.call(
          port,
          'FCALL',
          BATCH_FUNCTION,
          ...batchScriptArgs(batch, now),
        )) as unknown[];
        const results = parseBatchReply(batch, reply, now);
        windows.forEach((ws, r) => {
          const expected = model.decide(now, ws);
          results[r]!.forEach((res, i) => {
            const e = expected[i]!;
            if (ws[i]!.spec.algorithm === 'fixed')
              expect([res.count, res.allowed]).toEqual([e.count, e.allowed]);
            else expect({ ...res, limit: undefined }).toEqual({ ...e, limit: undefined });
          });
        });
      }
    }),
    { numRuns: 40 },
  );
});

const ALGORITHMS = ['fixed', 'sliding', 'token-bucket'] as const;
const LIMITS = [1, 2, 3, 2, 1, 4];

test("through the cluster store on Redis' clock: mixed algorithms over slots, batches in order", async ({
  batching,
}) => {
  // Long windows (a token back every hour's fraction, sliding by the day), so within a scenario
  // every algorithm counts hit by hit, as the counting model does.
  const requestArb = fc.uniqueArray(
    fc.record({
      tag: fc.integer({ min: 0, max: TAGS.length - 1 }),
      algorithm: fc.constantFrom(...ALGORITHMS),
      enforce: fc.boolean(),
    }),
    { minLength: 1, maxLength: 3, selector: (l) => `${l.tag}` },
  );
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.array(requestArb, { minLength: 1, maxLength: 8 }), { maxLength: 4 }),
      async (turns) => {
        const prefix = `s${run++}`;
        const model = new WindowModel();
        for (const turn of turns) {
          const requests: WindowRequest[][] = turn.map((limiters) =>
            limiters.map(({ tag, algorithm, enforce }) => {
              const key = `${prefix}:{${TAGS[tag]}}:${algorithm}`;
              const limit = LIMITS[tag]!;
              const base = { key, limit, enforce, cacheWhenSpent: false };
              if (algorithm === 'fixed') return { ...base, periodMs: HOUR };
              if (algorithm === 'sliding') return { ...base, periodMs: 86_400_000, algorithm };
              return { ...base, periodMs: 24 * HOUR, algorithm, rate: limit };
            }),
          );
          // Each request's windows here share one tag per limiter; a request may span slots.
          const results = await Promise.all(requests.map((r) => batching.hit(r)));
          requests.forEach((windows, r) => {
            const bySlot = new Map<number, number[]>();
            windows.forEach((w, i) => {
              const slot = calculateSlot(w.key);
              bySlot.set(slot, [...(bySlot.get(slot) ?? []), i]);
            });
            // Every slot decides alone: the model, slot part by slot part.
            for (const indexes of bySlot.values()) {
              const expected = model.decide(indexes.map((i) => windows[i]!));
              expect(
                indexes.map((i) => ({ count: results[r]![i]!.count, allowed: results[r]![i]!.allowed })),
              ).toEqual(expected.windows);
            }
          });
        }
      },
    ),
    { numRuns: 40 },
  );
});
