// The memory store's entries and the pure reading of them: which Map a window lives in, and a
// sliding window's or token bucket's state at a given time.
import {
  slidingResetAt,
  slidingRoll,
  slidingUsed,
  type SlidingCounts,
} from '../limits/window-maths/sliding.js';
import { bucketResetAt, bucketRoll, bucketUsed, type Bucket } from '../limits/window-maths/token-bucket.js';
import type { WindowRequest } from './window-store.js';

export interface Window {
  count: number;
  /** When the entry holds nothing any more (fixed: the window's reset). */
  resetAtMs: number;
  /** A sliding window's counts, or a token bucket's TAT. */
  state?: SlidingCounts | Bucket;
  /** Sliding and token bucket: when the entry was last put at the back of its Map. */
  placedAtMs?: number;
}

/** A sliding or token-bucket window's state at now, before this request is counted. */
export interface Peeked {
  readonly state: SlidingCounts | Bucket;
  readonly used: number;
  /** The entry read, if live (updated in place when placed recently enough). */
  readonly entry: Window | undefined;
}

/**
 * A sliding or token-bucket entry is moved to the back of its Map (a delete and a set) when it was
 * put there more than this share of its period ago; otherwise it is updated where it is. So the
 * Map's order is last-hit order to within an eighth of a period, and a hot key costs no Map
 * writes between moves.
 */
export const REPLACE_AFTER = 1 / 8;

/** The Map a fixed window lives in: its period, or a calendar window's boundary (all expire together). */
export const fixedGroup = (r: WindowRequest): number | string =>
  r.endsAtMs === undefined ? r.periodMs : `@${r.endsAtMs}`;
/** Group names, made once each: a Map lookup by a string made per hit would hash it afresh every time. */
const groupNames = { sliding: new Map<number, string>(), 'token-bucket': new Map<number, string>() };

/** The Map a non-fixed window lives in: its algorithm and period (fixed windows: the period alone). */
export function groupOf(r: WindowRequest): string {
  const names = groupNames[r.algorithm!];
  let name = names.get(r.periodMs);
  if (name === undefined) names.set(r.periodMs, (name = `${r.algorithm}:${r.periodMs}`));
  return name;
}

/** A sliding window's or token bucket's state at `now` and what it holds, before this request. */
export function peek(r: WindowRequest, stored: Window | undefined, now: number): Peeked {
  // Only a live entry is updated in place: an expired one may be swept before this request counts.
  const entry = stored !== undefined && stored.resetAtMs > now ? stored : undefined;
  if (r.algorithm === 'sliding') {
    const state = slidingRoll(stored?.state as SlidingCounts | undefined, now, r.periodMs);
    return { state, used: slidingUsed(state, now, r.periodMs), entry };
  }
  const state = bucketRoll(stored?.state as Bucket | undefined, now);
  return { state, used: bucketUsed(state, now, r.periodMs, r.rate!, r.limit), entry };
}

/** When the entry holds nothing any more. */
export function resetAt(r: WindowRequest, state: SlidingCounts | Bucket, now: number): number {
  return r.algorithm === 'sliding'
    ? slidingResetAt(state as SlidingCounts, now, r.periodMs)
    : bucketResetAt(state as Bucket, now);
}
