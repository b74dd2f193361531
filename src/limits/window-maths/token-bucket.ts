/**
 * The token bucket as GCRA (the generic cell rate algorithm): one theoretical arrival time (TAT)
 * per key. Tokens come back at `rate` per `period`, one every period ÷ rate ms; the bucket holds
 * `burst`. A request of cost c passes when max(TAT, now) + c × period ÷ rate − now ≤ burst ×
 * period ÷ rate, and then moves the TAT by c × period ÷ rate. The TAT is kept exactly, as whole
 * milliseconds plus a remainder in rate-ths of a millisecond, so every decision is in integers.
 * The Redis script (store/batch-window-script.ts) does the same sums in Lua. Pure: no clock, no I/O.
 */

/** The theoretical arrival time: `tat` + `frac` ÷ rate milliseconds (0 ≤ frac < rate). */
export interface Bucket {
  readonly tat: number;
  readonly frac: number;
}

/** The bucket at `nowMs`: a TAT in the past counts from now (a full bucket). */
export function bucketRoll(stored: Bucket | undefined, nowMs: number): Bucket {
  if (stored && (stored.tat > nowMs || (stored.tat === nowMs && stored.frac > 0))) return stored;
  return { tat: nowMs, frac: 0 };
}

/** Tokens spent now (burst − tokens left, tokens rounded down): a request of cost c passes when used + c ≤ burst. */
export function bucketUsed(b: Bucket, nowMs: number, periodMs: number, rate: number, burst: number): number {
  const debt = (b.tat - nowMs) * rate + b.frac; // in rate-ths of a ms, ≥ 0 once rolled
  return burst - Math.floor((burst * periodMs - debt) / periodMs);
}

/** The bucket after spending `cost` tokens. */
export function bucketSpend(b: Bucket, periodMs: number, rate: number, cost: number): Bucket {
  const frac = b.frac + cost * periodMs;
  return { tat: b.tat + Math.floor(frac / rate), frac: frac % rate };
}

/** When the bucket is full again: the TAT, rounded up to a whole millisecond. */
export function bucketResetAt(b: Bucket, nowMs: number): number {
  return Math.max(nowMs, b.frac > 0 ? b.tat + 1 : b.tat);
}

/** The first moment (≥ now) a request of `cost` passes; a cost above the burst never does: then the reset. */
export function bucketRetryAt(
  b: Bucket,
  nowMs: number,
  periodMs: number,
  rate: number,
  burst: number,
  cost: number,
): number {
  if (cost > burst) return bucketResetAt(b, nowMs);
  // (TAT − t) × rate ≤ (burst − cost) × period
  return Math.max(nowMs, b.tat + Math.ceil((b.frac - (burst - cost) * periodMs) / rate));
}
