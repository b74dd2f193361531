import type { CompiledLimiter, RouteWindow } from '../config/rule-table.js';
import type { KeyPart } from '../config/schema.js';
import type { WindowRequest } from '../store/window-store.js';

/** The hashed value of each key part for one request (credential parts already replaced by their fallback). */
export type PartValues = (part: KeyPart) => string;

/**
 * The store key of one window: `<prefix>{<tag>}:<limiter>:<period>:<parts>:<other values>`.
 * The tag (in braces, a Redis Cluster hash tag) is the part every window of the limiter shares,
 * so one limiter's windows always land in one slot. The limit is not in the key: changing a
 * limit applies at once to the running counters.
 */
export function windowKey(
  prefix: string,
  limiter: CompiledLimiter,
  windowIndex: number,
  values: PartValues,
): string {
  const w = limiter.windows[windowIndex]!;
  // A route's limiters always name key parts (the config loader refuses others on a route).
  let key = `${prefix}{${values(limiter.tagPart!)}}${w.keyStem}`;
  for (const part of w.otherParts) key += `:${values(part)}`;
  return key;
}

/** Every window of every limiter on a route, keyed for this request, ready for one store round trip. */
export function planWindows(
  windows: readonly RouteWindow[],
  values: PartValues,
  prefix: string,
): WindowRequest[] {
  return windows.map(({ limiter, index, window }) => ({
    key: windowKey(prefix, limiter, index, values),
    limit: window.limit,
    periodMs: window.periodMs,
    enforce: !limiter.shadow,
    cacheWhenSpent: !limiter.shadow && limiter.overLimitCache,
  }));
}
