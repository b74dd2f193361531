// The leasing store's concurrency, against a backend that counts its calls (the store's maths
// is the lease script's, in process): requests waiting for one window's slice share one lease; a
// request refused for another window spends nothing; exhausted windows are counted exactly; close
// gives unspent slices back; a lease that times out fails its requests and still lands.
import { describe, expect, test, vi } from 'vitest';
import { leaseSlice } from '../../src/limits/window-maths/lease.js';
import type { LeaseAsk, LeaseBackend, LeaseGrant } from '../../src/store/lease-script.js';
import { LeasingStore } from '../../src/store/leasing-store.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import {
  StoreUnavailableError,
  type StoreObserver,
  type WindowRequest,
} from '../../src/store/window-store.js';

const PERIOD = 60_000;

/** The lease scripts over the memory store's counters: the inner store of the test shares them. */
class Backend implements LeaseBackend {
  leases = 0;
  returns: number[] = [];
  /** Set: leases wait for it. */
  gate: Promise<void> | undefined;
  /** The window's time to live each lease replies. */
  ttlMs = PERIOD;
  constructor(private readonly counts: MemoryStore) {}

  async lease(a: LeaseAsk): Promise<LeaseGrant> {
    this.leases++;
    await this.gate;
    const [probe] = await this.counts.hit([
      { key: a.key, limit: a.limit, periodMs: a.periodMs, enforce: false, cacheWhenSpent: false, cost: 0 },
    ]);
    const slice = leaseSlice(a.limit - probe!.count, a.divisor, a.max, a.need);
    if (slice > 0)
      await this.counts.hit([
        {
          key: a.key,
          limit: a.limit,
          periodMs: a.periodMs,
          enforce: false,
          cacheWhenSpent: false,
          cost: slice,
        },
      ]);
    return { slice, count: probe!.count + slice, ttlMs: this.ttlMs, endsAt: 1_000_000 };
  }

  async returnLease(key: string, unspent: number): Promise<number> {
    this.returns.push(unspent);
    await this.counts.hit([
      { key, limit: 1, periodMs: PERIOD, enforce: false, cacheWhenSpent: false, cost: -unspent },
    ]);
    return unspent;
  }
}

function setup(instances = 1, maxKeys?: number) {
  const counts = new MemoryStore({ maxKeys: 100, sweepIntervalMs: 60_000 });
  const backend = new Backend(counts);
  const store = new LeasingStore(counts, backend, { timeoutMs: 5000, instances: () => instances, maxKeys });
  const count = async (key: string) =>
    (
      await counts.hit([{ key, limit: 1, periodMs: PERIOD, enforce: false, cacheWhenSpent: false, cost: 0 }])
    )[0]!.count;
  return { counts, backend, store, count };
}

const hot = (limit: number, max = 10): WindowRequest => ({
  key: 'hot',
  limit,
  periodMs: PERIOD,
  enforce: true,
  cacheWhenSpent: false,
  lease: { max, spread: 1 },
});
const exact = (limit: number): WindowRequest => ({
  key: 'ip',
  limit,
  periodMs: PERIOD,
  enforce: true,
  cacheWhenSpent: false,
});

describe('LeasingStore', () => {
  test('requests waiting for a slice share one lease; the rest are spent in process', async () => {
    const { backend, store, count } = setup();
    let open!: () => void;
    backend.gate = new Promise((resolve) => (open = resolve));
    const waiting = Array.from({ length: 8 }, () => store.hit([hot(1000)]));
    open();
    const results = await Promise.all(waiting);
    expect(backend.leases).toBe(1);
    expect(results.every(([r]) => r!.allowed)).toBe(true);
    // Remaining falls by one per request: the count is the store's less what is held unspent.
    expect(results.map(([r]) => r!.count)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(await count('hot')).toBe(10);
    await store.close();
    expect(backend.returns).toEqual([2]);
  });

  test('a request refused for another window spends nothing of the slice', async () => {
    const { backend, store, count } = setup();
    expect((await store.hit([hot(1000), exact(1)])).map((r) => r.allowed)).toEqual([true, true]);
    expect(store.unspentOf('hot')).toBe(9);
    const refused = await store.hit([hot(1000), exact(1)]);
    expect(refused.map((r) => r.allowed)).toEqual([true, false]);
    expect(store.unspentOf('hot')).toBe(9);
    expect(await count('ip')).toBe(1);
    expect(await count('hot')).toBe(10);
    await store.close();
    expect(backend.returns).toEqual([9]);
  });

  test('a small remaining budget is counted exactly, and refused at the limit', async () => {
    const { backend, store, count } = setup(2);
    // limit 5, divisor 2: a slice of 2, then none (3 left ÷ 2 < 2): counted exactly from then on.
    const answers = [];
    for (let i = 0; i < 7; i++) answers.push((await store.hit([hot(5)]))[0]!.allowed);
    expect(answers).toEqual([true, true, true, true, true, false, false]);
    expect(await count('hot')).toBe(5);
    expect(backend.leases).toBe(2);
  });

  test('the windows held are bounded: beyond maxKeys, a new key is counted exactly', async () => {
    const { backend, store, count } = setup(1, 2);
    const at = (key: string): WindowRequest => ({ ...hot(1000), key });
    for (const key of ['a', 'b', 'c', 'c']) expect((await store.hit([at(key)]))[0]!.allowed).toBe(true);
    expect(backend.leases).toBe(2);
    expect([store.unspentOf('a'), store.unspentOf('b'), store.unspentOf('c')]).toEqual([9, 9, 0]);
    // The third key went to the store request by request: its count is exact, nothing held.
    expect(await count('c')).toBe(2);
    await store.close();
  });

  test('a lease that times out fails its requests; its slice still lands', async () => {
    const counts = new MemoryStore({ maxKeys: 100, sweepIntervalMs: 60_000 });
    const backend = new Backend(counts);
    let open!: () => void;
    backend.gate = new Promise((resolve) => (open = resolve));
    const store = new LeasingStore(counts, backend, { timeoutMs: 20, instances: () => 1 });
    await expect(store.hit([hot(1000)])).rejects.toBeInstanceOf(StoreUnavailableError);
    open();
    await new Promise((resolve) => setImmediate(resolve)); // the gated lease answers (microtasks)
    expect(store.unspentOf('hot')).toBe(10);
    expect((await store.hit([hot(1000)]))[0]!.allowed).toBe(true);
    expect(backend.leases).toBe(1);
  });

  test('the over-limit cache is shown what the store answers, by the inner store when it can', async () => {
    const { store } = setup();
    const seen: number[] = [];
    store.tapResults((_, results) => seen.push(...results.map((r) => r.count)));
    await store.hit([hot(1000)]); // from a slice: not shown
    await store.hit([exact(5)]);
    expect(seen).toEqual([1]);
    const forwarded: unknown[] = [];
    const inner = { tapResults: (t: unknown) => forwarded.push(t) };
    const leasing = new LeasingStore(
      inner as unknown as MemoryStore,
      new Backend(new MemoryStore({ maxKeys: 1, sweepIntervalMs: 60_000 })),
      { timeoutMs: 5000, instances: () => 1 },
    );
    const tap = () => undefined;
    leasing.tapResults(tap);
    expect(forwarded).toEqual([tap]);
  });

  test('a reload that changes the limit gives the slice back and leases afresh under the new one', async () => {
    const { backend, store, count } = setup();
    expect((await store.hit([hot(1000)]))[0]!.allowed).toBe(true);
    expect(store.unspentOf('hot')).toBe(9);
    // Lowered to 6: the 9 held under 1000 go back (count 1), then a slice of min(10, 6 − 1) = 5.
    const answers = [];
    for (let i = 0; i < 7; i++) answers.push((await store.hit([hot(6)]))[0]!.allowed);
    expect(answers).toEqual([true, true, true, true, true, false, false]);
    expect(backend.returns).toEqual([9]);
    expect(backend.leases).toBe(3); // the third finds nothing left: counted exactly since
    expect(await count('hot')).toBe(6);
    expect(store.unspentOf('hot')).toBe(0);
  });

  test('a reload that takes lease off gives the slice back; the window is counted exactly', async () => {
    const { backend, store, count } = setup();
    await store.hit([hot(1000)]);
    const { lease: _, ...unleased } = hot(1000);
    for (let i = 0; i < 3; i++) expect((await store.hit([unleased]))[0]!.count).toBe(2 + i);
    expect(backend.returns).toEqual([9]);
    expect(store.windows).toBe(0);
    expect(await count('hot')).toBe(4);
    await store.close();
    expect(backend.returns).toEqual([9]);
  });

  test('leases and give-backs feed the store metrics: round trips, answers, errors and timeouts', async () => {
    const seen = { roundTrips: 0, errors: 0, answered: 0 };
    const observer: StoreObserver = {
      storeRoundTrip: () => seen.roundTrips++,
      storeError: () => seen.errors++,
      storeAnswered: () => seen.answered++,
    };
    const counts = new MemoryStore({ maxKeys: 100, sweepIntervalMs: 60_000 });
    const backend = new Backend(counts);
    const store = new LeasingStore(counts, backend, { timeoutMs: 20, instances: () => 1, observer });
    for (let i = 0; i < 3; i++) await store.hit([hot(1000)]); // one lease, two requests from its slice
    expect(seen).toEqual({ roundTrips: 1, errors: 0, answered: 1 });
    // A lease unanswered at the timeout: one error then, and its round trip once it lands.
    let open!: () => void;
    backend.gate = new Promise((resolve) => (open = resolve));
    await expect(store.hit([{ ...hot(1000), key: 'late' }])).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(seen).toEqual({ roundTrips: 1, errors: 1, answered: 1 });
    open();
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual({ roundTrips: 2, errors: 1, answered: 2 });
    // A lease that fails: an error and a round trip.
    backend.lease = () => Promise.reject(new Error('connection lost'));
    await expect(store.hit([{ ...hot(1000), key: 'lost' }])).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(seen).toEqual({ roundTrips: 3, errors: 2, answered: 2 });
    await store.close(); // two give-backs ('hot' and 'late'): two round trips more
    expect(seen).toEqual({ roundTrips: 5, errors: 2, answered: 4 });
  });

  test('setting the system clock back does not stretch a slice past its window', async () => {
    vi.useFakeTimers({ toFake: ['Date'] }); // Date only: timers and the monotonic clock run on
    try {
      const { backend, store } = setup();
      backend.ttlMs = 30;
      await store.hit([hot(1000)]);
      expect(store.unspentOf('hot')).toBe(9);
      vi.setSystemTime(Date.now() - 3_600_000); // set back an hour
      await new Promise((resolve) => setTimeout(resolve, 60)); // the 30 ms window ends
      expect(store.unspentOf('hot')).toBe(0);
      await store.hit([hot(1000)]);
      expect(backend.leases).toBe(2); // the next window's slice, not the old one
    } finally {
      vi.useRealTimers();
    }
  });
});
