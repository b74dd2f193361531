import type { CompiledLimiter } from '../config/rule-table.js';
import type { KeyPart } from '../config/schema.js';
import type { WindowRequest } from '../store/window-store.js';

/** The hashed value of each key part for one request (credential parts already replaced by their fallback). */
export type PartValues = (part: KeyPart) => string;

export interface WindowPlan {
  readonly requests: WindowRequest[];
  /** The limiter each request belongs to, index for index. */
  readonly owners: CompiledLimiter[];
}

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
  let key = `${prefix}{${values(limiter.tagPart)}}:${limiter.name}:${w.periodMs}:${w.parts.join('+')}`;
  for (const part of w.parts) if (part !== limiter.tagPart) key += `:${values(part)}`;
  return key;
}

/** Every window of every limiter that applies to a request, ready for one store round trip. */
export function planWindows(
  limiters: readonly CompiledLimiter[],
  values: PartValues,
  prefix: string,
): WindowPlan {
  const requests: WindowRequest[] = [];
  const owners: CompiledLimiter[] = [];
  for (const limiter of limiters) {
    limiter.windows.forEach((w, i) => {
      requests.push({
        key: windowKey(prefix, limiter, i, values),
        limit: w.limit,
        periodMs: w.periodMs,
        enforce: !limiter.shadow,
      });
      owners.push(limiter);
    });
  }
  return { requests, owners };
}
