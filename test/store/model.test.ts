// The Redis batch script (the only one: RedisStore.hit runs a batch of one) agrees with a reference
// model of fixed windows (the in-process store: test/store/memory-store.unit.test.ts).
import fc from 'fast-check';
import { describe, expect } from 'vitest';
import { RedisStore } from '../../src/store/redis-store.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { model, replay, scenario } from '../helpers/window-model.js';

/** `redisStore`: the Redis store on the file's redis-server, connected. */
const test = serversTest.extend('redisStore', { scope: 'file' }, async ({ redis }, { onCleanup }) => {
  const store = new RedisStore({ url: redis.url, probeKey: 'tg:readiness-probe', connectTimeoutMs: 1000 });
  onCleanup(() => store.close());
  expect(await store.connect()).toBe(true);
  return store;
});

let run = 0;

describe('fixed-window stores against the model', () => {
  test('Redis (the batch script, one request per run)', async ({ redisStore }) => {
    await fc.assert(
      fc.asyncProperty(scenario(), async (generated) => {
        // Fresh keys for every run (and every shrink step): Redis keeps state between them.
        const prefix = `run${run++}:`;
        const batches = generated.map((b) => b.map((w) => ({ ...w, key: prefix + w.key })));
        expect(await replay(redisStore, batches)).toEqual(model(batches));
      }),
      { numRuns: 60 },
    );
  });
});
