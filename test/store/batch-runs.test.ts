// Runs of identical requests (src/store/batch-window-runs.ts), on a real redis-server: the same
// turns decided with runs and request by request (noRuns), each on keys of its own, both against
// the reference models, hit by hit. Mixed algorithms, multi-window requests (all-or-nothing),
// refusals inside a run, costs of 0 and above a limit, shadow windows, and requests alone between
// runs on the same keys.
import fc from 'fast-check';
import { expect } from 'vitest';
import { batchScriptArgs, parseBatchReply } from '../../src/store/batch-window-script.js';
import { noRuns, RUN_MARK, runLengths } from '../../src/store/batch-window-runs.js';
import type { RedisStore } from '../../src/store/redis-store.js';
import type { WindowRequest, WindowResult } from '../../src/store/window-store.js';
import { redisStoreTest } from '../helpers/redis-store.js';
import { AlgorithmModel, requestFor } from '../limits/window-maths/reference-model.js';

import { HOUR, KEYS, pauseArb, requestWindowsArb, specArb } from '../helpers/batch-arbitraries.js';

const test = redisStoreTest();

// A turn: requests each repeated 1 to 12 times in a row (a run when more than once).
const scenarioArb = fc.record({
  specs: fc.tuple(specArb, specArb, specArb),
  turns: fc.array(
    fc.record({
      pauseMs: pauseArb,
      requests: fc.array(
        fc.record({
          windows: requestWindowsArb,
          times: fc.integer({ min: 1, max: 12 }),
          copies: fc.boolean(), // equal window objects, or the very same ones
        }),
        { minLength: 1, maxLength: 6 },
      ),
    }),
    { minLength: 1, maxLength: 8 },
  ),
});

/** What both ways must agree on: all of a result but a fixed window's reset (Redis' own clock). */
const shape = (r: WindowResult, fixed: boolean) =>
  fixed
    ? { count: r.count, allowed: r.allowed }
    : { count: r.count, allowed: r.allowed, resetAtMs: r.resetAtMs, retryAtMs: r.retryAtMs };

async function decide(
  store: RedisStore,
  batch: readonly (readonly WindowRequest[])[],
  now: number,
  runs: readonly number[],
): Promise<WindowResult[][]> {
  const reply = await store.runScript(batchScriptArgs(batch, now, runs));
  return parseBatchReply(batch, reply, now, runs);
}

let run = 0;

test('runs of identical requests answer as the same requests decided one by one, and as the model', async ({
  redisStore: store,
}) => {
  let runsSeen = 0;
  await fc.assert(
    fc.asyncProperty(scenarioArb, async (scenario) => {
      const prefix = `runs${run++}:`;
      let now = Date.now(); // the replayed clock runs ahead of Redis' own
      const model = new AlgorithmModel();
      for (const turn of scenario.turns) {
        now += turn.pauseMs;
        const windowsOf = (way: string) =>
          turn.requests.flatMap(({ windows, times, copies }) => {
            const request = windows.map((w) => {
              const spec = scenario.specs[KEYS.indexOf(w.key)]!;
              return { request: requestFor(`${prefix}${way}:${w.key}`, spec, w.enforce, w.cost), spec };
            });
            return Array.from({ length: times }, () =>
              copies ? request.map((w) => ({ ...w, request: { ...w.request } })) : request,
            );
          });
        const grouped = windowsOf('g');
        const alone = windowsOf('u');
        const batchG = grouped.map((ws) => ws.map((w) => w.request));
        const batchU = alone.map((ws) => ws.map((w) => w.request));
        const runs = runLengths(batchG);
        runsSeen += runs.filter((n) => n > 1).length;
        const got = await decide(store, batchG, now, runs);
        const one = await decide(store, batchU, now, noRuns(batchU));
        grouped.forEach((ws, r) => {
          const fixed = (i: number) => ws[i]!.spec.algorithm === 'fixed';
          const expected = model.decide(now, ws);
          const asModel = expected.map((e, i) => (fixed(i) ? { count: e.count, allowed: e.allowed } : e));
          expect(got[r]!.map((res, i) => shape(res, fixed(i)))).toEqual(asModel);
          expect(one[r]!.map((res, i) => shape(res, fixed(i)))).toEqual(asModel);
        });
      }
    }),
    { numRuns: 60 },
  );
  expect(runsSeen).toBeGreaterThan(0);
});

test('32 identical requests on one key go as one run: one spec, "*32", and a reply of four values', async ({
  redisStore: store,
  redisClient,
}) => {
  const key = `one-run:${run++}`;
  const window: WindowRequest = { key, limit: 20, periodMs: HOUR, enforce: true, cacheWhenSpent: false };
  const batch = Array.from({ length: 32 }, () => [window]);
  const args = batchScriptArgs(batch);
  expect(args).toEqual([1, key, 1, '', -1, 20, HOUR, '1', 1, RUN_MARK + 32, 1]);
  const reply = await store.runScript(args);
  // Counted 20; the time (not read: fixed windows only); the key's count and PTTL before.
  expect(reply).toEqual([20, 0, 0, -2]);
  const results = parseBatchReply(batch, reply, 1_000);
  expect(results.map((r) => [r[0]!.count, r[0]!.allowed, r[0]!.resetAtMs])).toEqual([
    ...Array.from({ length: 20 }, (_, i) => [i + 1, true, 1_000 + HOUR]),
    ...Array.from({ length: 12 }, () => [20, false, 1_000 + HOUR]),
  ]);
  expect(await redisClient.get(key)).toBe('20');
  const pttl = await redisClient.pttl(key);
  expect(pttl).toBeGreaterThan(HOUR - 60_000);
  expect(pttl).toBeLessThanOrEqual(HOUR);
});

test('a run on a window its shadow twin filled past the limit: none counted, whatever the cost', async ({
  redisStore: store,
}) => {
  const key = `over:${run++}`;
  const window: WindowRequest = { key, limit: 3, periodMs: HOUR, enforce: true, cacheWhenSpent: false };
  const shadow = { ...window, enforce: false };
  const batch = [
    ...Array.from({ length: 5 }, () => [shadow]), // counted past the limit: 5 of 3
    ...Array.from({ length: 2 }, () => [window]),
    ...Array.from({ length: 2 }, () => [{ ...window, cost: 0 }]),
  ];
  expect(runLengths(batch)).toEqual([5, 2, 2]);
  const results = parseBatchReply(batch, await store.runScript(batchScriptArgs(batch)), 0);
  expect(results.map((r) => [r[0]!.count, r[0]!.allowed])).toEqual([
    [1, true],
    [2, true],
    [3, true],
    [4, false],
    [5, false],
    [5, false],
    [5, false],
    [5, false],
    [5, false],
  ]);
});
