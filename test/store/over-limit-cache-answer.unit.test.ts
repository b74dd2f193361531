// The over-limit cache answers a cached refusal exactly as the store answered it (a fixed window's
// without retryAtMs, a sliding window's and token bucket's with it), for one window or several,
// and every hit gets an array of its own (later stores, the ban book, write into it).
import { describe, expect, test } from 'vitest';
import { OverLimitCache, refusedNow } from '../../src/store/over-limit-cache.js';
import type { WindowRequest, WindowResult, WindowStore } from '../../src/store/window-store.js';

const fixed: WindowRequest = { key: 'f', limit: 2, periodMs: 60_000, enforce: true, cacheWhenSpent: true };
const sliding: WindowRequest = { ...fixed, key: 's', algorithm: 'sliding' };
const bucket: WindowRequest = { ...fixed, key: 'b', algorithm: 'token-bucket', rate: 2 };

/** Every window answered spent; sliding and token bucket pass again at 7,000. */
function spentStore(): { store: WindowStore; calls: number[] } {
  const calls: number[] = [];
  const store = {
    hit(windows: readonly WindowRequest[]) {
      calls.push(windows.length);
      return Promise.resolve(
        windows.map((w): WindowResult =>
          w.algorithm === undefined
            ? { count: w.limit, limit: w.limit, resetAtMs: 60_000, allowed: false }
            : { count: w.limit, limit: w.limit, resetAtMs: 9_000, allowed: false, retryAtMs: 7_000 },
        ),
      );
    },
    connect: async () => true,
    readiness: async () => ({ ready: true }),
    close: async () => undefined,
  } as WindowStore;
  return { store, calls };
}

describe("a cached refusal is the store's answer", () => {
  test.each([
    ['fixed', fixed, { count: 2, limit: 2, resetAtMs: 60_000, allowed: false }],
    ['sliding', sliding, { count: 2, limit: 2, resetAtMs: 9_000, allowed: false, retryAtMs: 7_000 }],
    ['token bucket', bucket, { count: 2, limit: 2, resetAtMs: 9_000, allowed: false, retryAtMs: 7_000 }],
  ])('%s, one window: the same fields, an array per hit, no second store call', async (_n, w, expected) => {
    const { store, calls } = spentStore();
    const cache = new OverLimitCache(store, 10, () => 1_000);
    const fromStore = await cache.hit([w]);
    const first = await cache.hit([w]);
    const second = await cache.hit([w]);
    expect(fromStore).toStrictEqual([expected]);
    expect(first).toStrictEqual([expected]);
    expect(second).toStrictEqual([expected]);
    expect(first).not.toBe(second);
    expect(calls).toStrictEqual([1]);
  });

  test('two windows, one cached: the cached one refused, the other reported untouched', async () => {
    const { store, calls } = spentStore();
    const cache = new OverLimitCache(store, 10, () => 1_000);
    await cache.hit([fixed]);
    const other: WindowRequest = { ...fixed, key: 'g', limit: 5, periodMs: 3_000 };
    expect(await cache.hit([other, fixed])).toStrictEqual([
      { count: 0, limit: 5, resetAtMs: 4_000, allowed: true },
      { count: 2, limit: 2, resetAtMs: 60_000, allowed: false },
    ]);
    expect(calls).toStrictEqual([1]);
  });

  test('a sliding window is refused from the cache only until its retry time', async () => {
    let now = 1_000;
    const { store, calls } = spentStore();
    const cache = new OverLimitCache(store, 10, () => now);
    await cache.hit([sliding]);
    now = 6_999;
    await cache.hit([sliding]);
    expect(calls).toStrictEqual([1]);
    now = 7_000;
    await cache.hit([sliding]);
    expect(calls).toStrictEqual([1, 1]);
  });

  test("a sliding refusal of a request of cost 2 is not cached (its retry time is not a cost-1 request's)", async () => {
    const { store, calls } = spentStore();
    const cache = new OverLimitCache(store, 10, () => 1_000);
    await cache.hit([{ ...sliding, cost: 2 }]);
    await cache.hit([sliding]);
    expect(calls).toStrictEqual([1, 1]);
  });
});

// refusedNow: a one-window request's cached refusal at once (counting takes it without an await).
describe("refusedNow is hit()'s cached answer, synchronously", () => {
  test.each([
    ['fixed', fixed],
    ['sliding', sliding],
    ['token bucket', bucket],
  ])('%s: what hit() answers, one frozen array per entry, no store call', async (_n, w) => {
    const { store, calls } = spentStore();
    const cache = new OverLimitCache(store, 10, () => 1_000);
    expect(refusedNow(cache, [w])).toBeUndefined(); // nothing cached yet
    const fromStore = await cache.hit([w]);
    const now = refusedNow(cache, [w]);
    expect(now).toStrictEqual(fromStore);
    expect(now).toStrictEqual(await cache.hit([w]));
    expect(refusedNow(cache, [w])).toBe(now);
    expect(Object.isFrozen(now)).toBe(true);
    expect(calls).toStrictEqual([1]);
  });

  test('undefined where hit() must be asked: two windows, another limit, past the retry time, another store', async () => {
    let now = 1_000;
    const { store } = spentStore();
    const cache = new OverLimitCache(store, 10, () => now);
    await cache.hit([fixed, sliding]);
    expect(refusedNow(cache, [fixed])).toBeDefined();
    expect(refusedNow(cache, [fixed, sliding])).toBeUndefined();
    expect(refusedNow(cache, [{ ...fixed, limit: 3 }])).toBeUndefined();
    expect(refusedNow(cache, [{ ...fixed, cacheWhenSpent: false }])).toBeUndefined();
    now = 7_000;
    expect(refusedNow(cache, [sliding])).toBeUndefined();
    expect(refusedNow(cache, [fixed])).toBeDefined();
    expect(refusedNow(store, [fixed])).toBeUndefined();
  });
});
