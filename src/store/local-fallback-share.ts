import type { WindowRequest } from './window-store.js';

/**
 * An instance's share of a limit while the store is lost: floor(limit / instances), at least 1.
 * Floor so that the instances together stay within the limit; at least 1 so that a limit smaller
 * than the number of instances still lets something through. So the instances together admit at
 * most max(limit, instances) per window (see localBound).
 */
export function localShare(limit: number, instances: number): number {
  const n = Math.max(1, Math.floor(instances));
  return Math.max(1, Math.floor(limit / n));
}

/** What `instances` instances, each counting its share alone, admit together per window at most. */
export const localBound = (limit: number, instances: number): number =>
  Math.max(1, Math.floor(instances)) * localShare(limit, instances);

/**
 * The request an instance counts in process for a window of the store: the same key, algorithm and
 * period, its share of the limit (a token bucket's burst and refill rate both shared).
 */
export function localRequest(r: WindowRequest, instances: number): WindowRequest {
  const limit = localShare(r.limit, instances);
  if (r.algorithm === 'token-bucket') return { ...r, limit, rate: localShare(r.rate!, instances) };
  return { ...r, limit };
}
