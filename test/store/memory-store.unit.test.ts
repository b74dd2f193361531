// The in-process store agrees with a reference model of fixed windows, and stays within its bounds.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { MemoryStore } from '../../src/store/memory-store.js';
import { model, replay, scenario } from '../helpers/window-model.js';

describe('fixed-window stores against the model', () => {
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
