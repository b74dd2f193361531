// Large batches whose requests share a few keys, on a real redis-server, against the reference
// models: the script reads each key once per call, applies the requests to it in memory in order
// and writes it once, so these hold it to what deciding request by request gives. Mixed
// algorithms, refusals among passes, costs of 0 (check-only) to more than a limit, shadow windows,
// and bans whose strikes and starts fall inside one batch.
import fc from 'fast-check';
import { expect } from 'vitest';
import { batchScriptArgs, parseBatchReply } from '../../src/store/batch-window-script.js';
import type { RedisStore } from '../../src/store/redis-store.js';
import type { WindowResult } from '../../src/store/window-store.js';
import { banScenario, model as banModel, requestsOf } from '../helpers/ban-model.js';
import { decideBatch, redisStoreTest } from '../helpers/redis-store.js';
import { AlgorithmModel, requestFor } from '../limits/window-maths/reference-model.js';

import { HOUR, KEYS, pauseArb, requestWindowsArb, specArb } from '../helpers/batch-arbitraries.js';

const test = redisStoreTest();

const scenarioArb = fc.record({
  specs: fc.tuple(specArb, specArb, specArb),
  turns: fc.array(
    fc.record({
      pauseMs: pauseArb,
      // Up to 40 requests of one to three windows on three keys: most requests share keys.
      requests: fc.array(requestWindowsArb, {
        minLength: 1,
        maxLength: 40,
      }),
    }),
    { minLength: 1, maxLength: 8 },
  ),
});

const shape = (r: WindowResult, fixed: boolean) =>
  fixed
    ? { count: r.count, allowed: r.allowed }
    : { count: r.count, allowed: r.allowed, resetAtMs: r.resetAtMs, retryAtMs: r.retryAtMs };

/** Calls of each command Redis has run so far. */
async function commandCalls(store: RedisStore): Promise<Map<string, number>> {
  const info = await store.client.info('commandstats');
  return new Map([...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((m) => [m[1]!, Number(m[2])]));
}

let run = 0;

test('batches of many requests on few keys, mixed algorithms: every answer as the model says, one read of each key', async ({
  redisStore: store,
}) => {
  await fc.assert(
    fc.asyncProperty(scenarioArb, async (scenario) => {
      const prefix = `shared${run++}:`;
      let now = Date.now(); // the replayed clock runs ahead of Redis' own
      const model = new AlgorithmModel();
      for (const turn of scenario.turns) {
        now += turn.pauseMs;
        const windows = turn.requests.map((request) =>
          request.map((w) => {
            const spec = scenario.specs[KEYS.indexOf(w.key)]!;
            return { request: requestFor(prefix + w.key, spec, w.enforce, w.cost), spec };
          }),
        );
        const batch = windows.map((ws) => ws.map((w) => w.request));
        const before = await commandCalls(store);
        const results = parseBatchReply(batch, await store.runScript(batchScriptArgs(batch, now)), now);
        const after = await commandCalls(store);
        windows.forEach((ws, r) => {
          const expected = model.decide(now, ws);
          const fixed = (i: number) => ws[i]!.spec.algorithm === 'fixed';
          expect(results[r]!.map((res, i) => shape(res, fixed(i)))).toEqual(
            expected.map((e, i) => (fixed(i) ? { count: e.count, allowed: e.allowed } : e)),
          );
        });
        // One GET per key of the call, one PTTL per fixed key, at most one write per key.
        const keys = new Set(batch.flat().map((w) => w.key));
        const fixedKeys = new Set(
          batch
            .flat()
            .filter((w) => w.algorithm === undefined)
            .map((w) => w.key),
        );
        const ran = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
        expect(ran('get')).toBe(keys.size);
        expect(ran('pttl')).toBe(fixedKeys.size);
        expect(ran('incrby') + ran('set')).toBeLessThanOrEqual(keys.size);
      }
    }),
    { numRuns: 60 },
  );
});

test('the same many requests on one key: each sees the ones before it, and the key is written once', async ({
  redisStore: store,
  redisClient,
}) => {
  const key = `one-key:${run++}`;
  const window = { key, limit: 10, periodMs: HOUR, enforce: true, cacheWhenSpent: false };
  // 12 hits of 1 then a hit of 3 (refused at 10) and a check-only hit of 0 (room: 10 + 0 ≤ 10).
  const batch = [
    ...Array.from({ length: 12 }, () => [window]),
    [{ ...window, cost: 3 }],
    [{ ...window, cost: 0 }],
  ];
  const before = await commandCalls(store);
  const results = await decideBatch(store, batch);
  const after = await commandCalls(store);
  expect(results.map((r) => [r[0]!.count, r[0]!.allowed])).toEqual([
    ...Array.from({ length: 10 }, (_, i) => [i + 1, true]),
    [10, false],
    [10, false],
    [10, false],
    [10, true],
  ]);
  expect(await redisClient.get(key)).toBe('10');
  const pttl = await redisClient.pttl(key);
  expect(pttl).toBeGreaterThan(HOUR - 60_000);
  expect(pttl).toBeLessThanOrEqual(HOUR);
  const ran = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
  expect(['get', 'pttl', 'incrby', 'pexpire'].map(ran)).toEqual([1, 1, 1, 1]);
});

test('bans in batches: strikes and bans that start within a batch count for the requests after them', async ({
  redisStore: store,
}) => {
  await fc.assert(
    fc.asyncProperty(
      banScenario(false),
      fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 10 }),
      async ({ specs, steps }, cuts) => {
        const prefix = `banbatch${run++}:`; // fresh keys for every run and shrink step
        const expected = banModel(specs, steps);
        // The steps cut into batches of the given sizes, each decided by one script call.
        const got = [];
        for (let at = 0, c = 0; at < steps.length; c++) {
          const size = cuts[c % cuts.length]!;
          const part = steps.slice(at, at + size);
          at += size;
          const results = await decideBatch(
            store,
            part.map((step) => requestsOf(prefix, specs, step)),
          );
          for (const r of results)
            got.push({
              banned: r.some((w) => w.bannedUntilMs !== undefined),
              allowed: r.map((w) => w.allowed),
              counts: r.map((w) => w.count),
              banStarted: r.map((w) => w.banStarted === true),
            });
        }
        expect(got).toEqual(expected);
      },
    ),
    { numRuns: 60 },
  );
});
