/** What a replay's simulation counts per route, per limiter and per key of a limiter. */
import type { CompiledLimiter, CompiledRoute } from '../../rules/compile.js';
import type { KeyPart, RouteWindow } from '../../rules/model.js';
import type { WindowResult } from '../../store/window-store.js';

/** One key of one limiter: its requests, refusals and peak use of the limit (0..1, counted requests). */
export interface KeyStats {
  requests: number;
  refused: number;
  peak: number;
}

export interface LimiterStats {
  readonly limiter: CompiledLimiter;
  /** The key parts (keys are their hashed values, in this order, separated by spaces) that tell its keys apart: every part of every window, in order. */
  readonly parts: readonly KeyPart[];
  /** Requests counted in its windows. */
  requests: number;
  /** Requests one of its windows was spent for: a 429 (a shadow limiter's: once enforced). */
  refused: number;
  /** Requests its allow list (or an override of `unlimited`) let by uncounted. */
  exempt: number;
  /** Requests its deny list answered 403 (a shadow limiter's: would have). */
  denied: number;
  /** Requests its ban answered 429, and the bans its refusals started. */
  banned: number;
  bansStarted: number;
  readonly keys: Map<string, KeyStats>;
}

export interface RouteStats {
  readonly route: CompiledRoute;
  requests: number;
  /** Requests the gateway would refuse with 429 for a spent window. */
  refused: number;
  /** Requests only a shadow limiter would refuse. */
  shadowRefused: number;
  /** 429 for a ban, 403 for a deny list, 411 for a body-priced request of unknown size. */
  banned: number;
  denied: number;
  lengthRequired: number;
  /** Requests by tier (on a route whose tier is chosen): "default", "pro (jwt)", "unlimited (override)". */
  readonly tiers: Map<string, number>;
}

export const routeStats = (route: CompiledRoute): RouteStats => ({
  route,
  requests: 0,
  refused: 0,
  shadowRefused: 0,
  banned: 0,
  denied: 0,
  lengthRequired: 0,
  tiers: new Map(),
});

export const limiterStats = (limiter: CompiledLimiter): LimiterStats => ({
  limiter,
  parts: [...new Set(limiter.windows.flatMap((w) => w.parts))],
  requests: 0,
  refused: 0,
  exempt: 0,
  denied: 0,
  banned: 0,
  bansStarted: 0,
  keys: new Map(),
});

/** A client's keys in its route's limiters' statistics: each key, and its entry once found. */
export interface StatKeys {
  /** Per limiter of the route (in route order). */
  readonly statKeys: readonly string[];
  readonly keyStats: (KeyStats | undefined)[];
}

/**
 * Each limiter's statistics for a request its windows counted (or refused): `stats` and
 * `keys` per limiter of the route, `windows` and `results` the request's (exempt limiters left out).
 */
export function countRequest(
  route: CompiledRoute,
  stats: readonly LimiterStats[],
  keys: StatKeys,
  windows: readonly RouteWindow[],
  results: readonly WindowResult[],
  exempt: readonly CompiledLimiter[],
): void {
  // A limiter's windows are adjacent in the route's windows (and in a tier's, or a list's subset).
  let i = 0;
  for (let l = 0; l < route.limiters.length; l++) {
    const limiter = route.limiters[l]!;
    if (exempt.length > 0 && exempt.includes(limiter)) continue;
    let spent = false;
    let peak = 0;
    for (; i < windows.length && windows[i]!.limiter === limiter; i++) {
      const r = results[i]!;
      if (!r.allowed) spent = true;
      else if (r.count / r.limit > peak) peak = r.count / r.limit;
    }
    const s = stats[l]!;
    let k = keys.keyStats[l];
    if (!k) {
      const key = keys.statKeys[l]!;
      k = s.keys.get(key);
      if (!k) s.keys.set(key, (k = { requests: 0, refused: 0, peak: 0 }));
      keys.keyStats[l] = k;
    }
    s.requests++;
    k.requests++;
    if (spent) {
      s.refused++;
      k.refused++;
    } else if (peak > k.peak) k.peak = peak;
  }
}
