/** What replay's store (replay-store.ts) keeps per window of a key, and the results it reuses. */
import type { SlidingCounts } from '../../limits/window-maths/sliding.js';
import type { Bucket } from '../../limits/window-maths/token-bucket.js';
import type { WindowRequest, WindowResult } from '../../store/window-store.js';

/** One window of one key: a fixed window's count, or a sliding window's counts, or a bucket's TAT. */
export class Slot implements SlidingCounts, Bucket {
  count = 0;
  /** When the slot holds nothing any more (0: never counted). */
  resetAtMs = 0;
  /** Sliding and token bucket: counted at least once (else the maths starts from nothing). */
  held = false;
  window = 0;
  current = 0;
  previous = 0;
  tat = 0;
  frac = 0;
  /** Swept or evicted: whoever holds it looks the key up again. */
  gone = false;

  constructor(
    readonly key: string,
    readonly group: Map<string, Slot>,
  ) {}
}

/** A result decideNow writes again on its next call (no retryAtMs, no ban fields). */
export class Reused implements WindowResult {
  count = 0;
  limit = 0;
  resetAtMs = 0;
  allowed = false;
}

/** `out` with a decision's fields. */
export function set(out: Reused, count: number, limit: number, resetAtMs: number, allowed: boolean): Reused {
  out.count = count;
  out.limit = limit;
  out.resetAtMs = resetAtMs;
  out.allowed = allowed;
  return out;
}

/** Group names, made once each (a string made per hit would be hashed afresh every time). */
const groupNames = { sliding: new Map<number, string>(), 'token-bucket': new Map<number, string>() };

/** The group a window's slot is in: the memory store's (fixed: the period or calendar boundary). */
export function groupOf(r: WindowRequest): number | string {
  if (r.algorithm === undefined) return r.endsAtMs === undefined ? r.periodMs : `@${r.endsAtMs}`;
  const names = groupNames[r.algorithm];
  let name = names.get(r.periodMs);
  if (name === undefined) names.set(r.periodMs, (name = `${r.algorithm}:${r.periodMs}`));
  return name;
}
