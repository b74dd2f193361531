// The memory store's sliding windows and token buckets, mixed with fixed windows on one request,
// against the reference model, on a replayed clock: counts, room, reset and retry times.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { MemoryStore } from '../../../src/store/memory-store.js';
import { OverLimitCache } from '../../../src/store/over-limit-cache.js';
import { AlgorithmModel, requestFor, scenarioArb, specOf } from './reference-model.js';

const START = 1_800_000_000_123;

describe('the memory store against the reference model', () => {
  test('mixed algorithms, pauses across window boundaries, shadow windows and costs', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb(), async (scenario) => {
        let now = START;
        const store = new MemoryStore({ maxKeys: 1000, sweepIntervalMs: 60_000, now: () => now });
        const model = new AlgorithmModel();
        try {
          for (const turn of scenario.turns) {
            now += turn.pauseMs;
            for (const request of turn.requests) {
              const windows = request.map((w) => {
                const spec = specOf(scenario, w.key);
                return { request: requestFor(w.key, spec, w.enforce, w.cost), spec };
              });
              const results = await store.hit(windows.map((w) => w.request));
              const expected = model.decide(now, windows);
              expect(
                results.map((r) => ({
                  count: r.count,
                  allowed: r.allowed,
                  resetAtMs: r.resetAtMs,
                  retryAtMs: r.retryAtMs,
                })),
              ).toEqual(expected);
            }
          }
        } finally {
          await store.close();
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('the over-limit cache in front of sliding windows and token buckets', () => {
  test('refuses from the cache exactly until the next request would pass, then asks the store', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb(), async (scenario) => {
        let now = START;
        const plain = new MemoryStore({ maxKeys: 1000, sweepIntervalMs: 60_000, now: () => now });
        const inner = new MemoryStore({ maxKeys: 1000, sweepIntervalMs: 60_000, now: () => now });
        const cached = new OverLimitCache(inner, 1000, () => now);
        try {
          for (const turn of scenario.turns) {
            now += turn.pauseMs;
            for (const request of turn.requests) {
              // Enforced, cost 1, cacheable: the HTTP path's windows.
              const windows = request.map((w) => ({
                ...requestFor(w.key, specOf(scenario, w.key), true, undefined),
                cacheWhenSpent: true,
              }));
              const a = await plain.hit(windows);
              const b = await cached.hit(windows);
              // The same verdict, the same Retry-After moment; nothing the cache refuses is counted.
              expect(b.every((r) => r.allowed)).toBe(a.every((r) => r.allowed));
              const retry = (rs: typeof a) =>
                Math.max(...rs.filter((r) => !r.allowed).map((r) => r.retryAtMs ?? r.resetAtMs));
              if (!a.every((r) => r.allowed)) expect(retry(b)).toBe(retry(a));
            }
          }
        } finally {
          await plain.close();
          await cached.close();
        }
      }),
      { numRuns: 200 },
    );
  });
});
