// The batch script's sliding windows and token buckets, mixed with fixed windows, on a real
// redis-server against the reference model: the script is given the replayed clock (ARGV[2]), and
// each turn's requests go in one script call, in order, each all-or-nothing.
import fc from 'fast-check';
import { expect } from 'vitest';
import { batchScriptArgs, parseBatchReply } from '../../src/store/batch-window-script.js';
import { RedisStore } from '../../src/store/redis-store.js';
import type { WindowRequest, WindowResult } from '../../src/store/window-store.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { AlgorithmModel, requestFor, scenarioArb, specOf } from '../limits/window-maths/reference-model.js';

const test = serversTest.extend('store', { scope: 'file' }, async ({ redis }, { onCleanup }) => {
  const store = new RedisStore({ url: redis.url, probeKey: 'tg:readiness-probe', connectTimeoutMs: 1000 });
  onCleanup(() => store.close());
  expect(await store.connect()).toBe(true);
  return store;
});

/** Fixed windows expire by Redis' own clock: an hour, longer than any replayed scenario. */
const HOUR = 3_600_000;

const shape = (r: WindowResult, fixed: boolean) =>
  fixed
    ? { count: r.count, allowed: r.allowed }
    : { count: r.count, allowed: r.allowed, resetAtMs: r.resetAtMs, retryAtMs: r.retryAtMs };

let run = 0;

test('turns of mixed windows: counts, room, reset and retry times as the model says', async ({ store }) => {
  await fc.assert(
    fc.asyncProperty(scenarioArb(HOUR), async (scenario) => {
      const prefix = `alg${run++}:`;
      // The replayed clock runs ahead of Redis' (so a key's PX never ends before the model's expiry).
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
        const batch: WindowRequest[][] = windows.map((ws) => ws.map((w) => w.request));
        const reply = await store.runScript(batchScriptArgs(batch, now));
        const results = parseBatchReply(batch, reply, now);
        windows.forEach((ws, r) => {
          const expected = model.decide(now, ws);
          expect(results[r]!.map((res, i) => shape(res, ws[i]!.spec.algorithm === 'fixed'))).toEqual(
            expected.map((e, i) =>
              ws[i]!.spec.algorithm === 'fixed' ? { count: e.count, allowed: e.allowed } : e,
            ),
          );
        });
      }
    }),
    { numRuns: 150 },
  );
});

test('the same scenarios give the memory store and the script the same answers', async ({ store }) => {
  const { MemoryStore } = await import('../../src/store/memory-store.js');
  await fc.assert(
    fc.asyncProperty(scenarioArb(HOUR), async (scenario) => {
      const prefix = `same${run++}:`;
      let now = Date.now();
      const memory = new MemoryStore({ maxKeys: 1000, sweepIntervalMs: 60_000, now: () => now });
      try {
        for (const turn of scenario.turns) {
          now += turn.pauseMs;
          const batch = turn.requests.map((request) =>
            request.map((w) => requestFor(prefix + w.key, specOf(scenario, w.key), w.enforce, w.cost)),
          );
          const results = parseBatchReply(batch, await store.runScript(batchScriptArgs(batch, now)), now);
          for (const [r, windows] of batch.entries()) {
            const local = await memory.hit(windows);
            expect(results[r]!.map((x) => shape(x, x.retryAtMs === undefined))).toEqual(
              local.map((x) => shape(x, x.retryAtMs === undefined)),
            );
          }
        }
      } finally {
        await memory.close();
      }
    }),
    { numRuns: 100 },
  );
});

test("on Redis' own clock: a fresh token bucket and sliding window count hit by hit", async ({ store }) => {
  const bucket: WindowRequest = {
    key: 'own:{t}:bucket',
    limit: 3,
    periodMs: HOUR,
    enforce: true,
    cacheWhenSpent: false,
    algorithm: 'token-bucket',
    rate: 3,
  };
  // A day: this window rolls over only at midnight UTC.
  const sliding: WindowRequest = {
    key: 'own:{t}:sliding',
    limit: 2,
    periodMs: 86_400_000,
    enforce: true,
    cacheWhenSpent: false,
    algorithm: 'sliding',
  };
  const seen: [number, number, boolean][] = [];
  for (let i = 0; i < 4; i++) {
    const [b, s] = await store.hit([bucket, sliding]);
    seen.push([b!.count, s!.count, b!.allowed && s!.allowed]);
  }
  // Within an hour's third (a token's time), the bucket holds whole tokens only.
  expect(seen).toEqual([
    [1, 1, true],
    [2, 2, true],
    [2, 2, false],
    [2, 2, false],
  ]);
});
