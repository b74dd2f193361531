// The arbitraries of the batched-script property tests (shared keys, runs): window specs of every
// algorithm on three keys, and windows that are mostly enforced and of cost 1, so many requests
// share one spec; sometimes a shadow window, a check-only cost of 0 or a cost above the limit.
import fc from 'fast-check';
import type { KeySpec } from '../limits/window-maths/reference-model.js';

/** Fixed windows expire by Redis' own clock: an hour, longer than any replayed scenario. */
export const HOUR = 3_600_000;
export const KEYS = ['a', 'b', 'c'] as const;

export const specArb = fc
  .record({
    algorithm: fc.constantFrom<KeySpec['algorithm']>('fixed', 'sliding', 'token-bucket'),
    limit: fc.integer({ min: 1, max: 12 }),
    periodMs: fc.constantFrom(1000, 7000),
    extra: fc.integer({ min: 0, max: 4 }),
  })
  .map((s): KeySpec => ({
    algorithm: s.algorithm,
    limit: s.limit,
    periodMs: s.algorithm === 'fixed' ? HOUR : s.periodMs,
    burst: s.algorithm === 'token-bucket' ? s.limit + s.extra : s.limit,
  }));

export const windowArb = fc.record({
  key: fc.constantFrom(...KEYS),
  enforce: fc.constantFrom(true, true, true, false),
  cost: fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 6 },
    { arbitrary: fc.constant(0), weight: 1 },
    { arbitrary: fc.integer({ min: 1, max: 14 }), weight: 2 },
  ),
});

/** A request's windows: one to three, each on a key of its own. */
export const requestWindowsArb = fc.uniqueArray(windowArb, {
  minLength: 1,
  maxLength: 3,
  selector: (w) => w.key,
});

/** The replayed clock's step between turns: none, or up to 3 s. */
export const pauseArb = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3000 }));
