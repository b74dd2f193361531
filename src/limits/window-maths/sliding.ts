/**
 * The sliding-window counter (as Cloudflare describes it): windows of `period` aligned on the clock
 * (multiples of the period since the epoch), the current window's count plus the previous window's
 * count weighted by how much of the previous window the sliding window still overlaps. All in
 * integers: a request of cost c passes when previous × (period − elapsed) + (current + c) × period
 * ≤ limit × period, which is the same as used + c ≤ limit with used as below. The Redis script
 * (store/batch-window-script.ts) does the same sums in Lua. Pure: no clock, no I/O.
 */

/** A key's counts: its window's index (now ÷ period, rounded down), its count and the previous one's. */
export interface SlidingCounts {
  readonly window: number;
  readonly current: number;
  readonly previous: number;
}

/** The counts as they stand at `nowMs`: a later window rolls the current count into the previous. */
export function slidingRoll(
  stored: SlidingCounts | undefined,
  nowMs: number,
  periodMs: number,
): SlidingCounts {
  const window = Math.floor(nowMs / periodMs);
  if (stored?.window === window) return stored;
  const previous = stored?.window === window - 1 ? stored.current : 0;
  return { window, current: 0, previous };
}

/** The hits the window holds now: ⌈previous × (period − elapsed) ÷ period⌉ + current. */
export function slidingUsed(s: SlidingCounts, nowMs: number, periodMs: number): number {
  const elapsed = nowMs - s.window * periodMs;
  return Math.ceil((s.previous * (periodMs - elapsed)) / periodMs) + s.current;
}

/** When the window is empty again (its whole budget back): the counted hits have all slid out. */
export function slidingResetAt(s: SlidingCounts, nowMs: number, periodMs: number): number {
  if (s.current > 0) return (s.window + 2) * periodMs;
  if (s.previous > 0) return (s.window + 1) * periodMs;
  return nowMs;
}

/**
 * The first moment (≥ now) a request of `cost` passes if nothing else is counted: later in this
 * window as the previous window's weight falls, or in the next one (whose previous is this one).
 * A cost above the limit never passes: then the reset.
 */
export function slidingRetryAt(
  s: SlidingCounts,
  nowMs: number,
  periodMs: number,
  limit: number,
  cost: number,
): number {
  if (cost > limit) return slidingResetAt(s, nowMs, periodMs);
  if (slidingUsed(s, nowMs, periodMs) + cost <= limit) return nowMs;
  const start = s.window * periodMs;
  if (s.current + cost <= limit) {
    // previous × (period − e) ≤ (limit − current − cost) × period; s.previous > 0 here.
    return start + periodMs - Math.floor(((limit - s.current - cost) * periodMs) / s.previous);
  }
  // Next window: current becomes the previous, weighted from there.
  return start + 2 * periodMs - Math.floor(((limit - cost) * periodMs) / s.current);
}
