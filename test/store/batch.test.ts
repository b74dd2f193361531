// The batch script and the batching store, against the reference model, on a real redis-server:
// the requests of one event-loop turn are decided in order, each all-or-nothing, in one script call.
import fc from 'fast-check';
import { describe, expect, vi } from 'vitest';
import { BatchingStore } from '../../src/store/batching-store.js';
import { RedisStore } from '../../src/store/redis-store.js';
import {
  StoreUnavailableError,
  type WindowRequest,
  type WindowResult,
} from '../../src/store/window-store.js';
import { decideBatch, redisStoreTest } from '../helpers/redis-store.js';
import { RedisServer, scriptCalls } from '../helpers/redis-server.js';
import { WindowModel } from '../helpers/window-model.js';

/**
 * `redisStore`: the Redis store on the file's redis-server, connected, with the batch script loaded
 * (so every call counted below is one FCALL: a first call adds one refused and FUNCTION LOAD);
 * `batching`: the batching store in front of it, as the gateway builds it.
 */
const test = redisStoreTest((store) => decideBatch(store, [[window('warm', 1, 60_000)]])).extend(
  'batching',
  { scope: 'file' },
  ({ redisStore }) => new BatchingStore(redisStore, { timeoutMs: 2000 }),
);

function window(key: string, limit: number, periodMs: number, enforce = true, cost?: number): WindowRequest {
  return { key, limit, periodMs, enforce, cacheWhenSpent: false, ...(cost === undefined ? {} : { cost }) };
}

const MINUTE = 60_000;
const HOUR = 3_600_000;

/** Each key has one limit and one period, as in a config; shadow (enforce) varies per request. */
const KEYS = {
  a: { limit: 1, periodMs: MINUTE },
  b: { limit: 2, periodMs: HOUR },
  c: { limit: 3, periodMs: 10 * MINUTE },
  d: { limit: 4, periodMs: MINUTE },
} as const;
type Key = keyof typeof KEYS;

// Mostly one hit per window; sometimes several at once (Envoy's hits_addend), up to more than a limit.
const requestArb = fc.uniqueArray(
  fc.record({
    key: fc.constantFrom<Key>('a', 'b', 'c', 'd'),
    enforce: fc.boolean(),
    cost: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
  }),
  { minLength: 1, maxLength: 3, selector: (w) => w.key },
);
/** Turns of requests: each turn is one batch. Small limits, so refusals mix with passes in a turn. */
const scenarioArb = fc.array(fc.array(requestArb, { minLength: 1, maxLength: 8 }), {
  minLength: 1,
  maxLength: 6,
});

let run = 0;
function materialise(
  turns: { key: Key; enforce: boolean; cost: number | undefined }[][][],
): WindowRequest[][][] {
  const prefix = `batch-run${run++}:`;
  return turns.map((turn) =>
    turn.map((request) =>
      request.map(({ key, enforce, cost }) =>
        window(prefix + key, KEYS[key].limit, KEYS[key].periodMs, enforce, cost),
      ),
    ),
  );
}

/** Every result against the model: counts, per-window room, and a reset one period after the first hit. */
function expectModel(
  model: WindowModel,
  turn: readonly WindowRequest[][],
  results: WindowResult[][],
  sentAt: number,
) {
  turn.forEach((windows, r) => {
    const expected = model.decide(windows);
    expect(results[r]!.map((w) => ({ count: w.count, allowed: w.allowed }))).toEqual(expected.windows);
    windows.forEach((w, i) => {
      const result = results[r]![i]!;
      expect(result.limit).toBe(w.limit);
      // Counted from the key's first hit, earlier in this scenario: at most a few seconds ago.
      expect(result.resetAtMs).toBeGreaterThan(sentAt + w.periodMs - 10_000);
      expect(result.resetAtMs).toBeLessThanOrEqual(Date.now() + w.periodMs);
    });
  });
}

describe('the batch script against the model', () => {
  test('turns of requests mixing passes, refusals and shadow windows on the same keys', async ({
    redisStore,
  }) => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (generated) => {
        const model = new WindowModel();
        for (const turn of materialise(generated)) {
          const sentAt = Date.now();
          const results = await decideBatch(redisStore, turn);
          expectModel(model, turn, results, sentAt);
        }
      }),
      { numRuns: 80 },
    );
  });

  test('through the batching store: one script call per turn, the same answers', async ({
    batching,
    redisClient: inspect,
  }) => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (generated) => {
        const model = new WindowModel();
        const turns = materialise(generated);
        const before = await scriptCalls(inspect);
        for (const turn of turns) {
          const sentAt = Date.now();
          // All hits of the turn are asked for synchronously, as requests of one event-loop turn are.
          const results = await Promise.all(turn.map((windows) => batching.hit(windows)));
          expectModel(model, turn, results, sentAt);
        }
        expect((await scriptCalls(inspect)) - before).toBe(turns.length);
      }),
      { numRuns: 40 },
    );
  });

  test('a worked batch: four requests on a limit of 2, the last two refused and not counted', async ({
    batching,
    redisClient: inspect,
  }) => {
    const key = `worked:${run++}`;
    const shadow = `worked-shadow:${run++}`;
    const other = `worked-other:${run++}`;
    const results = await Promise.all([
      batching.hit([window(key, 2, MINUTE), window(other, 10, HOUR)]),
      batching.hit([window(key, 2, MINUTE)]),
      batching.hit([window(key, 2, MINUTE), window(other, 10, HOUR)]),
      // A spent shadow window never blocks: counted past its limit.
      batching.hit([window(shadow, 0, MINUTE, false), window(other, 10, HOUR)]),
    ]);
    expect(results.map((r) => r.map((w) => [w.count, w.allowed]))).toEqual([
      [
        [1, true],
        [1, true],
      ],
      [[2, true]],
      [
        [2, false],
        [1, true], // refused by the first window: the hour window is not counted either
      ],
      [
        [1, false],
        [2, true],
      ],
    ]);
    expect(await inspect.get(key)).toBe('2');
    expect(await inspect.get(other)).toBe('2');
    expect(await inspect.get(shadow)).toBe('1');
    // Expiry lives in Redis, set at the first hit.
    for (const [k, period] of [
      [key, MINUTE],
      [other, HOUR],
      [shadow, MINUTE],
    ] as const) {
      const pttl = await inspect.pttl(k);
      expect(pttl).toBeGreaterThan(period - 10_000);
      expect(pttl).toBeLessThanOrEqual(period);
    }
  });
});

describe('batch bounds', () => {
  test('600 hits of one turn go as three calls of at most 256 requests, each counted exactly once', async ({
    batching,
    redisClient: inspect,
  }) => {
    const key = `bounded:${run++}`;
    const before = await scriptCalls(inspect);
    const results = await Promise.all(
      Array.from({ length: 600 }, () => batching.hit([window(key, 1000, MINUTE)])),
    );
    expect(await scriptCalls(inspect)).toBe(before + 3);
    // Arrival order is kept across the split calls: the n-th hit sees count n.
    expect(results.map((r) => r[0]!.count)).toEqual(Array.from({ length: 600 }, (_, i) => i + 1));
    expect(await inspect.get(key)).toBe('600');
  });

  test('a window bound splits a batch by keys; a request larger than the bound still goes alone', async ({
    redisStore,
    redisClient: inspect,
  }) => {
    const store = new BatchingStore(redisStore, { timeoutMs: 2000, maxWindows: 4 });
    const k = (i: number) => `window-bound:${run}:${i}`;
    run++;
    const before = await scriptCalls(inspect);
    const results = await Promise.all([
      store.hit([window(k(1), 5, MINUTE), window(k(2), 5, MINUTE)]),
      store.hit([window(k(1), 5, MINUTE), window(k(3), 5, MINUTE)]),
      // Would make 6 keys: a new call.
      store.hit([window(k(1), 5, MINUTE), window(k(4), 5, MINUTE)]),
      // Alone: 5 keys.
      store.hit([1, 2, 3, 4, 5].map((i) => window(k(i), 5, MINUTE))),
    ]);
    expect(await scriptCalls(inspect)).toBe(before + 3);
    expect(results.map((r) => r.map((w) => w.count))).toEqual([
      [1, 1],
      [2, 1],
      [3, 1],
      [4, 2, 2, 2, 1],
    ]);
  });

  test('a batch window gathers the hits of several turns into one call, each counted exactly once', async ({
    redisStore,
    redisClient: inspect,
  }) => {
    // Only setTimeout is faked: the window ends when the test says, so the count of calls is exact.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const store = new BatchingStore(redisStore, { timeoutMs: 2000, windowMs: 10 });
      const key = `batch-window:${run++}`;
      const before = await scriptCalls(inspect);
      const answers: Promise<WindowResult[]>[] = [];
      for (let i = 0; i < 30; i++) {
        answers.push(store.hit([window(key, 20, MINUTE)]));
        await new Promise((r) => setImmediate(r));
      }
      vi.advanceTimersByTime(10);
      const results = await Promise.all(answers);
      expect(await scriptCalls(inspect)).toBe(before + 1);
      expect(results.map((r) => [r[0]!.count, r[0]!.allowed])).toEqual(
        Array.from({ length: 30 }, (_, i) => (i < 20 ? [i + 1, true] : [20, false])),
      );
      expect(await inspect.get(key)).toBe('20');
    } finally {
      vi.useRealTimers();
    }
  });

  test('a request with no windows is answered without a call', async ({ batching, redisClient: inspect }) => {
    const before = await scriptCalls(inspect);
    expect(await batching.hit([])).toEqual([]);
    expect(await scriptCalls(inspect)).toBe(before);
  });
});

describe('a batch that fails', () => {
  test('a stopped Redis fails every request of a batch, each within the timeout of its own call', async ({
    redisStore,
    redis,
  }) => {
    const timeoutMs = 300;
    const store = new BatchingStore(redisStore, { timeoutMs });
    const key = `frozen:${run++}`;
    const frozen = redis.freeze();
    const outcomes: Promise<{ err: unknown; ms: number }>[] = [];
    const ask = () => {
      const started = performance.now();
      outcomes.push(
        store.hit([window(key, 10, MINUTE)]).then(
          () => ({ err: undefined, ms: performance.now() - started }),
          (err: unknown) => ({ err, ms: performance.now() - started }),
        ),
      );
    };
    try {
      for (let i = 0; i < 20; i++) ask();
      // A second turn, while the first batch is still unanswered: its own batch and deadline.
      await new Promise((r) => setTimeout(r, timeoutMs / 3));
      for (let i = 0; i < 20; i++) ask();
      const settled = await Promise.all(outcomes);
      for (const { err, ms } of settled) {
        expect(err).toBeInstanceOf(StoreUnavailableError);
        expect((err as Error).message).toBe(`no reply within ${timeoutMs}ms`);
        expect(ms).toBeGreaterThanOrEqual(timeoutMs - 5);
        expect(ms).toBeLessThan(timeoutMs + 150); // slack for a loaded machine; never the doubled wait
      }
    } finally {
      frozen.thaw();
    }
  });

  test('a disconnected Redis fails every request of the batch at once with StoreUnavailableError', async () => {
    const other = await RedisServer.start();
    const store = new RedisStore({ url: other.url, probeKey: 'tg:readiness-probe', connectTimeoutMs: 1000 });
    const front = new BatchingStore(store, { timeoutMs: 1000 });
    try {
      expect(await front.connect()).toBe(true);
      await other.kill();
      const settled = await Promise.allSettled(
        Array.from({ length: 5 }, (_, i) => front.hit([window(`gone:${i}`, 10, MINUTE)])),
      );
      for (const s of settled) {
        expect(s.status).toBe('rejected');
        const reason = (s as PromiseRejectedResult).reason as Error;
        expect(reason).toBeInstanceOf(StoreUnavailableError);
        expect(reason.message).toMatch(/^redis: /);
      }
    } finally {
      await front.close();
      await other.kill();
    }
  });
});
