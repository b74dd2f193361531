// The over-limit cache learns spent windows the same way whether its inner store shows it each
// answer (the batching store's ResultTap: no then() per request) or it chains on the promise.
import { describe, expect, test } from 'vitest';
import { BatchingStore, type BatchWindowStore } from '../../src/store/batching-store.js';
import { OverLimitCache } from '../../src/store/over-limit-cache.js';
import type { WindowRequest, WindowResult, WindowStore } from '../../src/store/window-store.js';

/** Every window answered spent (count = limit); a sliding one passes again at `retryAtMs`. */
const spent = (w: WindowRequest, retryAtMs: number): WindowResult =>
  w.algorithm === undefined
    ? { count: w.limit, limit: w.limit, resetAtMs: 10_000, allowed: false }
    : { count: w.limit, limit: w.limit, resetAtMs: 10_000, allowed: false, retryAtMs };

function batched(retryAtMs: number) {
  const keys: string[] = [];
  const inner: BatchWindowStore = {
    hitBatch(batch, settle) {
      for (const windows of batch) keys.push(...windows.map((w) => w.key));
      queueMicrotask(() =>
        batch.forEach((windows, i) =>
          settle(
            i,
            windows.map((w) => spent(w, retryAtMs)),
          ),
        ),
      );
    },
    connect: async () => true,
    readiness: async () => ({ ready: true }),
    close: async () => undefined,
  };
  return { store: new BatchingStore(inner, { timeoutMs: 60_000 }), keys };
}

function plain(retryAtMs: number) {
  const keys: string[] = [];
  const store = {
    hit(windows: readonly WindowRequest[]) {
      keys.push(...windows.map((w) => w.key));
      return Promise.resolve(windows.map((w) => spent(w, retryAtMs)));
    },
    connect: async () => true,
    readiness: async () => ({ ready: true }),
    close: async () => undefined,
  } as WindowStore;
  return { store, keys };
}

const fixed: WindowRequest = { key: 'f', limit: 1, periodMs: 60_000, enforce: true, cacheWhenSpent: true };
const sliding: WindowRequest = { ...fixed, key: 's', algorithm: 'sliding' };

describe.each([
  ['tapped (batching store)', batched],
  ['chained (a plain store)', plain],
])('over-limit cache, %s', (_name, make) => {
  test('a spent fixed window is refused from the cache until it resets', async () => {
    let now = 1_000;
    const { store, keys } = make(5_000);
    const cache = new OverLimitCache(store, 100, () => now);
    expect((await cache.hit([fixed]))[0]!.allowed).toBe(false);
    expect(await cache.hit([fixed])).toEqual([{ count: 1, limit: 1, resetAtMs: 10_000, allowed: false }]);
    expect(keys).toEqual(['f']);
    now = 10_000;
    await cache.hit([fixed]);
    expect(keys).toEqual(['f', 'f']);
  });

  test('a spent sliding window is refused from the cache until its retry time', async () => {
    let now = 1_000;
    const { store, keys } = make(5_000);
    const cache = new OverLimitCache(store, 100, () => now);
    await cache.hit([sliding]);
    expect(await cache.hit([sliding])).toEqual([
      { count: 1, limit: 1, resetAtMs: 10_000, allowed: false, retryAtMs: 5_000 },
    ]);
    expect(keys).toEqual(['s']);
    now = 5_000;
    await cache.hit([sliding]);
    expect(keys).toEqual(['s', 's']);
  });
});
