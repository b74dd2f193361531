import type { WindowRequest, WindowResult } from '../../src/store/window-store.js';

/** A one-window request of the batching store's tests: 10 a minute on `key`. */
export const tenAMinute = (key: string): WindowRequest => ({
  key,
  limit: 10,
  periodMs: 60_000,
  enforce: true,
  cacheWhenSpent: false,
});

/** An inner store's answer to such a request: allowed, at `count`. */
export const allowedAt = (count: number): WindowResult => ({ count, limit: 10, resetAtMs: 1, allowed: true });
