// The Redis script and the in-process store agree with a reference model of fixed windows.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MemoryStore } from '../src/store/memory-store.js';
import { RedisStore } from '../src/store/redis-store.js';
import type { WindowRequest, WindowStore } from '../src/store/window-store.js';
import { RedisServer } from './helpers/redis-server.js';

let redis: RedisServer;
let redisStore: RedisStore;

beforeAll(async () => {
  redis = await RedisServer.start();
  redisStore = new RedisStore({ url: redis.url, commandTimeoutMs: 1000, connectTimeoutMs: 1000 });
  expect(await redisStore.connect()).toBe(true);
});
afterAll(async () => {
  await redisStore?.close();
  await redis?.kill();
});

/** Reference: counts per key; a request passes when every enforced window has room, then counts everywhere. */
function model(batches: readonly WindowRequest[][]): { allowed: boolean[]; counts: number[][] } {
  const counts = new Map<string, number>();
  const out = { allowed: [] as boolean[], counts: [] as number[][] };
  for (const batch of batches) {
    const blocked = batch.some((w) => w.enforce && (counts.get(w.key) ?? 0) >= w.limit);
    if (!blocked) for (const w of batch) counts.set(w.key, (counts.get(w.key) ?? 0) + 1);
    out.allowed.push(!blocked);
    out.counts.push(batch.map((w) => counts.get(w.key) ?? 0));
  }
  return out;
}

// Windows over a handful of keys with small limits, so limits are reached often. Periods are long: no expiry here.
const windowArb = fc.record({
  key: fc.constantFrom('a', 'b', 'c', 'd'),
  limit: fc.integer({ min: 1, max: 4 }),
  periodMs: fc.constant(600_000),
  enforce: fc.boolean(),
  cacheWhenSpent: fc.constant(false),
});

async function replay(store: WindowStore, batches: WindowRequest[][]) {
  const allowed: boolean[] = [];
  const counts: number[][] = [];
  for (const batch of batches) {
    const results = await store.hit(batch);
    const enforcedSpent = results.some((r, i) => batch[i]!.enforce && !r.allowed);
    allowed.push(!enforcedSpent);
    counts.push(results.map((r) => r.count));
    for (const r of results) {
      expect(r.resetAtMs).toBeGreaterThan(Date.now() + 500_000);
    }
  }
  return { allowed, counts };
}

let run = 0;
const scenario = () => {
  // The same key always carries the same limit within a scenario, as it does in a config.
  return fc
    .array(fc.uniqueArray(windowArb, { minLength: 1, maxLength: 3, selector: (w) => w.key }), {
      minLength: 1,
      maxLength: 25,
    })
    .map((batches) => {
      const limits = new Map<string, number>();
      return batches.map((b) =>
        b.map((w) => {
          if (!limits.has(w.key)) limits.set(w.key, w.limit);
          return { ...w, limit: limits.get(w.key)! };
        }),
      );
    });
};

describe('fixed-window stores against the model', () => {
  test('Redis (one Lua script per request)', async () => {
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

  test('memory', async () => {
    await fc.assert(
      fc.asyncProperty(scenario(), async (batches) => {
        const store = new MemoryStore({ maxKeys: 1000, sweepIntervalMs: 60_000 });
        try {
          expect(await replay(store, batches)).toEqual(model(batches));
        } finally {
          await store.close();
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('memory store bounds', () => {
  test('expired windows are swept and the key count never exceeds maxKeys', async () => {
    let now = 1_000_000;
    const store = new MemoryStore({ maxKeys: 100, sweepIntervalMs: 60_000, now: () => now });
    for (let i = 0; i < 1000; i++) {
      await store.hit([{ key: `k${i}`, limit: 5, periodMs: 1000, enforce: true, cacheWhenSpent: false }]);
      expect(store.size).toBeLessThanOrEqual(100);
    }
    now += 1001;
    store.sweep();
    expect(store.size).toBe(0);
    const [fresh] = await store.hit([
      { key: 'k999', limit: 5, periodMs: 1000, enforce: true, cacheWhenSpent: false },
    ]);
    expect(fresh).toEqual({ count: 1, limit: 5, resetAtMs: now + 1000, allowed: true });
    await store.close();
  });
});

describe('memory store eviction', () => {
  const req = (key: string, periodMs: number) => ({
    key,
    limit: 5,
    periodMs,
    enforce: true,
    cacheWhenSpent: false,
  });

  test('when full, the window that resets soonest goes, never a long window first or one of the request', async () => {
    let now = 1_000_000;
    const store = new MemoryStore({ maxKeys: 3, sweepIntervalMs: 60_000, now: () => now });
    await store.hit([req('hour', 3_600_000)]);
    await store.hit([req('minute-1', 60_000)]);
    now += 1000;
    await store.hit([req('minute-2', 60_000)]);
    // Full: a new key evicts minute-1 (the soonest reset), not the older hour window.
    await store.hit([req('minute-3', 60_000)]);
    expect(store.size).toBe(3);
    expect((await store.hit([req('hour', 3_600_000)]))[0]!.count).toBe(2);
    expect((await store.hit([req('minute-2', 60_000)]))[0]!.count).toBe(2);
    // A request's own windows are never evicted to make room for each other.
    const both = await store.hit([req('minute-2', 60_000), req('new-hour', 3_600_000)]);
    expect(both.map((r) => r.count)).toEqual([3, 1]);
    expect((await store.hit([req('minute-2', 60_000)]))[0]!.count).toBe(4);
    await store.close();
  });
});
