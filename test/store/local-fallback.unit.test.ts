// onStoreError: local: each instance's share of a limit, the bound it keeps across instances,
// and the fallback's outage state (instances learnt, kept through the outage, logged once).
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { LocalFallback } from '../../src/store/local-fallback.js';
import { localBound, localRequest, localShare } from '../../src/store/local-fallback-share.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { WindowRequest } from '../../src/store/window-store.js';
import { capturingLogger } from '../helpers/log-capture.js';

const fixed = (key: string, limit: number): WindowRequest => ({
  key,
  limit,
  periodMs: 60_000,
  enforce: true,
  cacheWhenSpent: true,
});

describe('localShare and localBound', () => {
  test('examples: floor, never below 1', () => {
    expect([localShare(10, 1), localShare(10, 2), localShare(10, 3), localShare(10, 4)]).toEqual([
      10, 5, 3, 2,
    ]);
    expect([localShare(1, 3), localShare(2, 3), localShare(7, 0)]).toEqual([1, 1, 7]);
    expect([localBound(10, 3), localBound(10, 4), localBound(2, 3), localBound(10, 2)]).toEqual([
      9, 8, 3, 10,
    ]);
  });

  test('the instances together stay within max(limit, instances), and each share is the largest that does', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 1, max: 500 }), (limit, n) => {
        const share = localShare(limit, n);
        expect(share).toBeGreaterThanOrEqual(1);
        expect(localBound(limit, n)).toBe(n * share);
        expect(n * share).toBeLessThanOrEqual(Math.max(limit, n));
        // One more each would pass the limit (unless the share is the floor of 1).
        if (limit >= n) expect(n * (share + 1)).toBeGreaterThan(limit);
        else expect(share).toBe(1);
      }),
      { numRuns: 1000 },
    );
  });

  test('a token bucket shares its burst and its refill rate', () => {
    const bucket: WindowRequest = { ...fixed('k', 9), algorithm: 'token-bucket', rate: 4 };
    expect(localRequest(bucket, 2)).toEqual({ ...bucket, limit: 4, rate: 2 });
    expect(localRequest(fixed('k', 9), 4)).toEqual(fixed('k', 2));
    expect(localRequest(fixed('k', 9), 1)).toEqual(fixed('k', 9));
  });

  test('N instances, each counting its own memory store, admit exactly localBound against the model', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.nat(5), { minLength: 0, maxLength: 120 }),
        async (limit, n, arrivals) => {
          const stores = Array.from(
            { length: n },
            () => new MemoryStore({ maxKeys: 10, sweepIntervalMs: 60_000, now: () => 1000 }),
          );
          try {
            let admitted = 0;
            const perInstance = new Array<number>(n).fill(0);
            for (const a of arrivals) {
              const i = a % n;
              const [r] = await stores[i]!.hit([localRequest(fixed('k', limit), n)]);
              if (r!.allowed) {
                admitted++;
                perInstance[i]!++;
              }
            }
            // The model: each instance admits its first min(arrivals, share) requests.
            const share = localShare(limit, n);
            const expected = Array.from({ length: n }, (_, i) =>
              Math.min(share, arrivals.filter((a) => a % n === i).length),
            );
            expect(perInstance).toEqual(expected);
            expect(admitted).toBeLessThanOrEqual(localBound(limit, n));
          } finally {
            await Promise.all(stores.map((s) => s.close()));
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('LocalFallback', () => {
  function observed() {
    const events: string[] = [];
    return {
      events,
      observer: {
        fallbackActive: (on: boolean) => events.push(`active ${on}`),
        liveInstances: (n: number) => events.push(`instances ${n}`),
      },
    };
  }

  test('never learnt: one instance, the whole limit', async () => {
    const fallback = new LocalFallback({ maxKeys: 10, sweepIntervalMs: 60_000 });
    const results = await Promise.all([1, 2, 3].map(() => fallback.hit([fixed('k', 2)])));
    expect(results.map(([r]) => [r!.allowed, r!.limit, r!.count])).toEqual([
      [true, 2, 1],
      [true, 2, 2],
      [false, 2, 2],
    ]);
    expect(fallback.instances).toBe(1);
    await fallback.close();
  });

  test('learns the instances from the heartbeat, keeps them when it fails, logs each outage once', async () => {
    const { logger, lines } = capturingLogger();
    const { events, observer } = observed();
    const beats: (number | Error)[] = [3, new Error('connection closed')];
    const fallback = new LocalFallback({
      maxKeys: 10,
      sweepIntervalMs: 60_000,
      logger,
      observer,
      beat: () => {
        const next = beats.shift()!;
        return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
      },
      intervalMs: 3_600_000, // beats below are called by hand
    });
    fallback.start(() => true);
    await fallback.beat(); // the start's beat is in flight: skipped
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(fallback.instances).toBe(3);
    await fallback.beat(); // fails: the count is kept
    expect(fallback.instances).toBe(3);
    expect(lines.filter((l) => l.msg === 'store heartbeat failed')).toMatchObject([
      { level: 40, err: 'connection closed', instances: 3 },
    ]);
    // Limit 10 over 3 instances: 3 here.
    const admitted = [];
    for (let i = 0; i < 5; i++) admitted.push((await fallback.hit([fixed('k', 10)]))[0]!.allowed);
    expect(admitted).toEqual([true, true, true, false, false]);
    expect(fallback.active).toBe(true);
    fallback.storeAnswered();
    fallback.storeAnswered();
    expect(fallback.active).toBe(false);
    await fallback.hit([fixed('other', 10)]);
    const msgs = lines.filter((l) => l.msg !== 'store heartbeat failed').map((l) => [l.level, l.msg]);
    expect(msgs).toEqual([
      [
        40,
        'rate-limit store lost: limiting locally, each onStoreError: local limit divided by the live instances',
      ],
      [30, 'rate-limit store back: limiting in the store again'],
      [
        40,
        'rate-limit store lost: limiting locally, each onStoreError: local limit divided by the live instances',
      ],
    ]);
    expect(events).toEqual([
      'instances 1',
      'active false',
      'instances 3',
      'active true',
      'active false',
      'active true',
    ]);
    await fallback.close();
  });

  test('no heartbeat while no limiter wants it; the local windows stay within maxKeys', async () => {
    let beats = 0;
    const fallback = new LocalFallback({
      maxKeys: 5,
      sweepIntervalMs: 60_000,
      beat: () => Promise.resolve(++beats),
      intervalMs: 3_600_000,
    });
    fallback.start(() => false);
    await fallback.beat();
    expect(beats).toBe(0);
    for (let i = 0; i < 50; i++) await fallback.hit([fixed(`k${i}`, 3)]);
    expect(fallback.size).toBe(5);
    await fallback.close();
  });
});
