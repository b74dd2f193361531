/**
 * Leases (config `lease`, docs/limiting.md#leases): an instance takes a slice of a fixed window's
 * remaining budget from the store and spends it in process. The store counts the slice when it
 * grants it, so the instances together never admit more than the limit. The slice shrinks with
 * what remains: at most 1 ÷ (spread × instances) of it, at most `max`; a slice smaller than
 * max(2, the asking request's cost) is not worth a lease, and that request is counted exactly.
 * The lease script (store/lease-script.ts) does the same sum in Lua. Pure: no clock, no I/O.
 */

/** The smallest slice worth a round trip: a slice of 1 is an exact hit. */
export const MIN_SLICE = 2;

/** The slice a lease grants when `remaining` is left and `divisor` = spread × instances: 0 when none. */
export function leaseSlice(remaining: number, divisor: number, max: number, need = MIN_SLICE): number {
  const slice = Math.min(max, Math.floor(remaining / divisor));
  return slice >= Math.max(MIN_SLICE, need) ? slice : 0;
}

/**
 * The most the instances hold unspent of one window, so the most it can under-admit: a request is
 * refused only when admitted + unspent + cost > limit. An instance leases again only when what it
 * holds cannot pay a request (less than its cost), so after a grant it holds less than max + that
 * cost: at most max + largest cost − 1 per instance. Requests whose other windows the store refuses
 * put their held-out cost back, which may add to that until spent (see docs/limiting.md#leases).
 */
export const underAdmissionBound = (instances: number, max: number, largestCost = 1): number =>
  instances * (max + largestCost - 1);
