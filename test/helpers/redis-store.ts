import { expect } from 'vitest';
import type { BatchWindowStore } from '../../src/store/batching-store.js';
import type { BatchedRequest } from '../../src/store/batch-window-script.js';
import { RedisStore } from '../../src/store/redis-store.js';
import type { WindowResult } from '../../src/store/window-store.js';
import { test } from './fixtures.js';

/**
 * `test` with `redisStore`: the Redis store on the file's redis-server, connected, then handed to
 * `prepare` (a warm-up call, say) before any test reads it; closed after the file's last test.
 */
export function redisStoreTest(prepare?: (store: RedisStore) => Promise<unknown>) {
  return test.extend('redisStore', { scope: 'file' }, async ({ redis }, { onCleanup }) => {
    const store = new RedisStore({ url: redis.url, probeKey: 'tg:readiness-probe', connectTimeoutMs: 1000 });
    onCleanup(() => store.close());
    expect(await store.connect()).toBe(true);
    await prepare?.(store);
    return store;
  });
}

/** Every request's results of one batch call, or its first failure. */
export function decideBatch(
  store: BatchWindowStore,
  batch: readonly BatchedRequest[],
): Promise<WindowResult[][]> {
  return new Promise((resolve, reject) => {
    const results: WindowResult[][] = [];
    let left = batch.length;
    store.hitBatch(batch, (i, outcome) => {
      if (outcome instanceof Error) return reject(outcome);
      results[i] = outcome;
      if (--left === 0) resolve(results);
    });
  });
}
