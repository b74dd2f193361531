/**
 * What a leasing store (leasing-store.ts) holds of each leased window, and how a request spends it:
 * from the slice held, exactly (the inner store), or after a lease. No clock, no I/O: the store passes
 * the time and its own store call in.
 */
import { leaseSlice } from '../limits/window-maths/lease.js';
import { SAME_WINDOW_MS, type LeaseGrant } from './lease-script.js';
import type { WindowRequest, WindowResult } from './window-store.js';

/** What this instance holds of one window's budget. */
export interface Held {
  /** Leased and not yet spent (requests awaiting the store's verdict on their other windows hold theirs out). */
  left: number;
  /** The limit the slices were granted under: a request checked against another limit is counted exactly. */
  limit: number;
  /** The store's count at the last grant (every slice granted until then included). */
  count: number;
  /** When the slices stop being spent, in this clock: never later than the store's window end. */
  resetAtMs: number;
  /** The window's end in the store's clock (names the window to give back to). */
  endsAt: number;
  /** The remaining budget is too small for a slice: requests are counted exactly until resetAtMs. */
  exact: boolean;
  /** The lease in flight (one at a time per window, so what is held stays bounded). */
  pending: Promise<void> | undefined;
}

/** How a request spends a leased window (wayOf). */
export const LOCAL = 0;
export const EXACT = 1;
export const LEASE = 2;
export type Way = typeof LOCAL | typeof EXACT | typeof LEASE;

/** A window held before its first grant: nothing to spend, no window named yet. */
export const unheld = (limit: number): Held => ({
  left: 0,
  limit,
  count: 0,
  resetAtMs: 0,
  endsAt: 0,
  exact: false,
  pending: undefined,
});

/**
 * What is held of a window whose Redis came back without it (restarted empty): the slice was
 * counted in data that is gone, so it is neither spent nor given back; the window leases afresh.
 * A lease in flight keeps its holder, and its grant starts the window anew (no window named).
 */
export function forget(h: Held): void {
  h.left = 0;
  h.count = 0;
  h.resetAtMs = 0;
  h.endsAt = 0;
  h.exact = false;
}

/** Only fixed windows lease; a window carrying a ban is checked where the ban is. */
const leases = (w: WindowRequest): boolean =>
  w.lease !== undefined && w.algorithm === undefined && w.ban === undefined;

/** How a request spends a leased window: from the slice, exactly (the store), or after a lease. */
export function wayOf(w: WindowRequest, h: Held | undefined, now: number): Way {
  if (!leases(w)) return EXACT;
  if (!h || h.resetAtMs <= now) return LEASE;
  if (h.limit !== w.limit) return EXACT; // a lease in flight under another limit
  if (h.left >= (w.cost ?? 1)) return LOCAL;
  return h.exact ? EXACT : LEASE;
}

/**
 * A window spent from a slice: its count is the store's at the last grant less what this instance
 * holds unspent, so Remaining (limit − count) is what the store had left before this instance's
 * last slice, less what this instance admitted since. Other instances' slices count as spent.
 */
export function heldResult(w: WindowRequest, h: Held): WindowResult {
  return { count: h.count - h.left, limit: w.limit, resetAtMs: h.resetAtMs, allowed: true };
}

/**
 * A grant (asked when `w` came, answered with `resetAtMs` in this clock) into what is held: added
 * to the slice of the same window, or starting anew (what was held of an ended window is lost with it).
 */
export function mergeGrant(
  h: Held,
  w: WindowRequest,
  grant: LeaseGrant,
  resetAtMs: number,
  divisor: number,
): void {
  // The same window when it ends at the same moment (as the give-back judges it); 0: no window yet.
  if (h.endsAt !== 0 && Math.abs(h.endsAt - grant.endsAt) <= SAME_WINDOW_MS) {
    h.left += grant.slice;
    h.resetAtMs = Math.max(h.resetAtMs, resetAtMs);
  } else {
    h.left = grant.slice;
    h.resetAtMs = resetAtMs;
    h.endsAt = grant.endsAt;
  }
  h.limit = w.limit;
  h.count = grant.count;
  h.exact = grant.slice === 0 && leaseSlice(w.limit - grant.count, divisor, w.lease!.max) === 0;
  h.pending = undefined;
}

/**
 * A request with some windows spent from slices (`local[i]`) and the rest asked of the store by
 * `ask`: the held ones are taken out now and put back when the store refuses (a refused request
 * spends nothing) or fails, and only into the window they were taken from (a slice of a later
 * window was counted without them).
 */
export function spendAround(
  windows: readonly WindowRequest[],
  local: readonly (Held | undefined)[],
  ask: (rest: readonly WindowRequest[]) => Promise<WindowResult[]>,
): Promise<WindowResult[]> {
  const n = windows.length;
  const rest: WindowRequest[] = [];
  const heldIn = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const w = windows[i]!;
    const h = local[i];
    if (h) {
      h.left -= w.cost ?? 1;
      heldIn[i] = h.endsAt;
    } else rest.push(w);
  }
  const putBack = () => {
    for (let i = 0; i < n; i++) {
      const h = local[i];
      if (h && h.endsAt === heldIn[i]) h.left += windows[i]!.cost ?? 1;
    }
  };
  return ask(rest).then(
    (answered) => {
      if (answered.some((r, j) => rest[j]!.enforce && !r.allowed)) putBack();
      const results = new Array<WindowResult>(n);
      let j = 0;
      for (let i = 0; i < n; i++) {
        const h = local[i];
        results[i] = h ? heldResult(windows[i]!, h) : answered[j++]!;
      }
      return results;
    },
    (err: unknown) => {
      putBack();
      throw err;
    },
  );
}
