// One batch in flight at a time (maxInFlight: 1, the single Redis store's setting), against the
// reference model on a real redis-server: the turns that wait behind a call join one batch, and
// every request is still decided in arrival order, each all-or-nothing, counted exactly once.
import fc from 'fast-check';
import { describe, expect } from 'vitest';
import { BatchingStore, type BatchWindowStore } from '../../src/store/batching-store.js';
import type { WindowRequest, WindowResult } from '../../src/store/window-store.js';
import { decideBatch, redisStoreTest } from '../helpers/redis-store.js';
import { scriptCalls } from '../helpers/redis-server.js';
import { scenario, WindowModel } from '../helpers/window-model.js';

const test = redisStoreTest((store) =>
  decideBatch(store, [[{ key: 'warm', limit: 1, periodMs: 60_000, enforce: true, cacheWhenSpent: false }]]),
);

/**
 * The Redis store, its answers handed on only when the test opens the gate: so the turns issued
 * meanwhile wait behind the call in flight, whatever Redis' speed.
 */
function gated(inner: BatchWindowStore) {
  let held: (() => void)[] | undefined = [];
  const store: BatchWindowStore = {
    hitBatch: (batch, settle) =>
      inner.hitBatch(batch, (i, outcome) =>
        held ? held.push(() => settle(i, outcome)) : settle(i, outcome),
      ),
    connect: () => inner.connect(),
    readiness: () => inner.readiness(),
    close: async () => undefined,
  };
  /** Hands on what Redis answered so far; `open`: and everything from now on. */
  const release = (open: boolean) => {
    const answers = held ?? [];
    held = open ? undefined : [];
    for (const answer of answers) answer();
  };
  return { store, release };
}

const turn = () => new Promise<void>((r) => setImmediate(r));
const roundTrip = () => new Promise<void>((r) => setTimeout(r, 2));

let run = 0;

describe('maxInFlight: 1 against the model', () => {
  test('requests of many turns, each turn asked while calls are out: the answers a request at a time gives', async ({
    redisStore,
    redisClient: inspect,
  }) => {
    await fc.assert(
      fc.asyncProperty(
        scenario(),
        fc.array(fc.constantFrom('same', 'turn', 'answer', 'wait'), { minLength: 25, maxLength: 25 }),
        async (requests, steps) => {
          const prefix = `in-flight-${run++}:`;
          const asked = requests.map((windows) => windows.map((w) => ({ ...w, key: prefix + w.key })));
          const { store: inner, release } = gated(redisStore);
          const batching = new BatchingStore(inner, { timeoutMs: 5000, maxInFlight: 1 });
          const before = await scriptCalls(inspect);
          const answers: Promise<WindowResult[]>[] = [];
          let turns = 1;
          // After each request: the next one in the same turn, or the next turn, with Redis'
          // answers so far handed on first ('answer'), after waiting for Redis ('wait'), or not.
          for (const [r, windows] of asked.entries()) {
            answers.push(batching.hit(windows));
            const step = steps[r]!;
            if (step === 'same') continue;
            if (step === 'wait') await roundTrip();
            if (step !== 'turn') release(false);
            await turn();
            turns++;
          }
          release(true);
          const results = await Promise.all(answers);
          const model = new WindowModel();
          asked.forEach((windows: WindowRequest[], r) => {
            const expected = model.decide(windows);
            expect(results[r]!.map((w) => ({ count: w.count, allowed: w.allowed }))).toEqual(
              expected.windows,
            );
          });
          // At most a call per turn.
          expect((await scriptCalls(inspect)) - before).toBeLessThanOrEqual(turns);
        },
      ),
      { numRuns: 60 },
    );
  });
});
