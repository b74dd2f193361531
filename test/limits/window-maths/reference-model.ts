// A reference model of the three algorithms, written from their definitions (docs/limiting.md) in
// exact BigInt sums and searches, not from src/limits/window-maths/: the stores are held against it.
import fc from 'fast-check';
import type { WindowRequest } from '../../../src/store/window-store.js';

type Algo = 'fixed' | 'sliding' | 'token-bucket';

/** One key's window as a config gives it: the same for every request on that key. */
export interface KeySpec {
  readonly algorithm: Algo;
  readonly limit: number;
  readonly periodMs: number;
  readonly burst: number;
}

export interface ModelResult {
  readonly count: number;
  readonly allowed: boolean;
  /** Fixed: the window's end; others: when it holds nothing. */
  readonly resetAtMs: number;
  /** Others only: the first moment a request of this cost passes. */
  readonly retryAtMs: number | undefined;
}

const B = BigInt;
const ceilDiv = (a: bigint, b: bigint) => (a >= 0n ? (a + b - 1n) / b : -(-a / b));
const floorDiv = (a: bigint, b: bigint) => -ceilDiv(-a, b);

/** The first t in [from, to] where ok(t) holds (ok monotone: false then true); to when none before. */
function firstTrue(from: number, to: number, ok: (t: number) => boolean): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (ok(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

class FixedKey {
  start = -1;
  count = 0;
  constructor(readonly spec: KeySpec) {}
  live(t: number) {
    return this.start >= 0 && t < this.start + this.spec.periodMs;
  }
  used(t: number) {
    return this.live(t) ? this.count : 0;
  }
  add(t: number, c: number) {
    if (!this.live(t)) {
      this.start = t;
      this.count = 0;
    }
    this.count += c;
  }
  result(t: number, allowed: boolean): ModelResult {
    return {
      count: this.used(t),
      allowed,
      resetAtMs: this.live(t) ? this.start + this.spec.periodMs : t + this.spec.periodMs,
      retryAtMs: undefined,
    };
  }
}

/** Every counted hit, by time; the estimate recomputed from them. */
class SlidingKey {
  readonly hits: { t: number; c: number }[] = [];
  constructor(readonly spec: KeySpec) {}
  /** previous × (P − elapsed) + current × P, exactly (in hits × ms). */
  weighted(t: number, extra = 0): bigint {
    const P = this.spec.periodMs;
    const w = Math.floor(t / P);
    let cur = extra;
    let prev = 0;
    for (const h of this.hits) {
      const hw = Math.floor(h.t / P);
      if (hw === w) cur += h.c;
      else if (hw === w - 1) prev += h.c;
    }
    return B(prev) * B(P - (t - w * P)) + B(cur) * B(P);
  }
  used(t: number) {
    return Number(ceilDiv(this.weighted(t), B(this.spec.periodMs)));
  }
  passes(t: number, c: number) {
    return this.weighted(t, c) <= B(this.spec.limit) * B(this.spec.periodMs);
  }
  add(t: number, c: number) {
    this.hits.push({ t, c });
  }
  result(t: number, allowed: boolean, c: number): ModelResult {
    const horizon = (Math.floor(t / this.spec.periodMs) + 2) * this.spec.periodMs;
    const resetAtMs = firstTrue(t, horizon, (x) => this.weighted(x) === 0n);
    const retryAtMs = c > this.spec.limit ? resetAtMs : firstTrue(t, horizon, (x) => this.passes(x, c));
    return { count: this.used(t), allowed, resetAtMs, retryAtMs };
  }
}

/** GCRA with the TAT in rate-ths of a millisecond. */
class BucketKey {
  tat = 0n; // × rate
  constructor(readonly spec: KeySpec) {}
  debt(t: number): bigint {
    const now = B(t) * B(this.spec.limit);
    return this.tat > now ? this.tat - now : 0n;
  }
  passes(t: number, c: number) {
    return this.debt(t) + B(c) * B(this.spec.periodMs) <= B(this.spec.burst) * B(this.spec.periodMs);
  }
  used(t: number) {
    const P = B(this.spec.periodMs);
    const tokens = floorDiv(B(this.spec.burst) * P - this.debt(t), P); // below 0 once a shadow window overspent
    return this.spec.burst - Number(tokens);
  }
  add(t: number, c: number) {
    const now = B(t) * B(this.spec.limit);
    this.tat = (this.tat > now ? this.tat : now) + B(c) * B(this.spec.periodMs);
  }
  result(t: number, allowed: boolean, c: number): ModelResult {
    const rate = B(this.spec.limit);
    const full = Number(ceilDiv(this.tat, rate));
    const resetAtMs = Math.max(t, full);
    const retryAtMs =
      c > this.spec.burst ? resetAtMs : firstTrue(t, Math.max(t, full), (x) => this.passes(x, c));
    return { count: this.used(t), allowed, resetAtMs, retryAtMs };
  }
}

type AnyKey = FixedKey | SlidingKey | BucketKey;

/** The keys' states; `decide` answers one request of windows at time t, all-or-nothing. */
export class AlgorithmModel {
  readonly #keys = new Map<string, AnyKey>();

  #key(w: WindowRequest, spec: KeySpec): AnyKey {
    let k = this.#keys.get(w.key);
    if (!k) {
      k =
        spec.algorithm === 'fixed'
          ? new FixedKey(spec)
          : spec.algorithm === 'sliding'
            ? new SlidingKey(spec)
            : new BucketKey(spec);
      this.#keys.set(w.key, k);
    }
    return k;
  }

  decide(t: number, windows: readonly { request: WindowRequest; spec: KeySpec }[]): ModelResult[] {
    const keys = windows.map((w) => this.#key(w.request, w.spec));
    const room = windows.map((w, i) => {
      const c = w.request.cost ?? 1;
      const k = keys[i]!;
      return k instanceof SlidingKey || k instanceof BucketKey
        ? k.passes(t, c)
        : k.used(t) + c <= w.spec.limit;
    });
    const blocked = windows.some((w, i) => w.request.enforce && !room[i]);
    if (!blocked) windows.forEach((w, i) => keys[i]!.add(t, w.request.cost ?? 1));
    return windows.map((w, i) => keys[i]!.result(t, room[i]!, w.request.cost ?? 1));
  }
}

/** The WindowRequest a store takes for a key of `spec`. */
export function requestFor(
  key: string,
  spec: KeySpec,
  enforce: boolean,
  cost: number | undefined,
): WindowRequest {
  const base = {
    key,
    periodMs: spec.periodMs,
    enforce,
    cacheWhenSpent: false,
    ...(cost === undefined ? {} : { cost }),
  };
  if (spec.algorithm === 'fixed') return { ...base, limit: spec.limit };
  if (spec.algorithm === 'sliding') return { ...base, limit: spec.limit, algorithm: 'sliding' };
  return { ...base, limit: spec.burst, algorithm: 'token-bucket', rate: spec.limit };
}

const NAMES = ['a', 'b', 'c', 'd'] as const;

/**
 * A scenario: a spec per key (mixed algorithms; small limits and periods so windows fill, slide and
 * refill), then turns, each after a pause, each a batch of requests of 1 to 3 windows on distinct keys.
 * `fixedPeriodMs`: the period of fixed keys (long where expiry is Redis' own clock).
 */
export const scenarioArb = (fixedPeriodMs?: number) =>
  fc.record({
    specs: fc.tuple(
      ...NAMES.map(() =>
        fc
          .record({
            algorithm: fc.constantFrom<Algo>('fixed', 'sliding', 'token-bucket'),
            limit: fc.integer({ min: 1, max: 5 }),
            periodMs: fc.constantFrom(1000, 1500, 7000),
            extra: fc.integer({ min: 0, max: 3 }),
          })
          .map((s): KeySpec => ({
            algorithm: s.algorithm,
            limit: s.limit,
            periodMs: s.algorithm === 'fixed' && fixedPeriodMs ? fixedPeriodMs : s.periodMs,
            burst: s.algorithm === 'token-bucket' ? Math.max(1, s.limit + s.extra - 1) : s.limit,
          })),
      ),
    ),
    turns: fc.array(
      fc.record({
        pauseMs: fc.oneof(
          fc.constant(0),
          fc.integer({ min: 1, max: 400 }),
          fc.integer({ min: 400, max: 4000 }),
        ),
        requests: fc.array(
          fc.uniqueArray(
            fc.record({
              key: fc.constantFrom(...NAMES),
              enforce: fc.constantFrom(true, true, true, false), // mostly enforced, some shadow
              cost: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined, freq: 4 }),
            }),
            { minLength: 1, maxLength: 3, selector: (w) => w.key },
          ),
          { minLength: 1, maxLength: 5 },
        ),
      }),
      { minLength: 1, maxLength: 30 },
    ),
  });

export type Scenario = ReturnType<typeof scenarioArb> extends fc.Arbitrary<infer S> ? S : never;

export const specOf = (s: Scenario, key: string): KeySpec =>
  s.specs[NAMES.indexOf(key as (typeof NAMES)[number])]!;
