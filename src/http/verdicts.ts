import type { CompiledLimiter, CompiledRoute, RouteWindow } from '../rules/compile.js';
import type { Screening } from '../limits/exemption.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import type { LimiterDecision } from '../metrics/outcomes.js';
import type { WindowResult } from '../store/window-store.js';

/**
 * Each limiter's verdict on a counted request (count-request.ts), and their count in the metrics
 * once the request's fate is known. Verdicts are only read: the common ones are shared arrays.
 */

/** What a limiter's windows said of a request, before anything that follows counting. */
export type WindowVerdict = Extract<
  LimiterDecision,
  | 'allowed'
  | 'limited'
  | 'shadow_limited'
  | 'store_error'
  | 'exempt'
  | 'denied'
  | 'banned'
  | 'length_required'
>;

/** What the allow and deny lists said of a request (exemption.ts); none for a route without lists. */
export type Lists = Pick<Screening, 'exempt' | 'shadowDenied'>;
export const NO_LISTS: Lists = { exempt: [], shadowDenied: [] };

/**
 * Each of the route's limiters' verdict over the windows counted: exempt (its allow list named the
 * request), limited (it refused), shadow_limited (a shadow limiter's window was spent, or its deny
 * list named the request), or allowed; store_error for a limiter outside `counted`.
 */
export function verdictsOf(
  route: CompiledRoute,
  windows: readonly RouteWindow[],
  results: readonly WindowResult[],
  blockedBy: CompiledLimiter | undefined,
  lists: Lists,
  counted: readonly CompiledLimiter[] = route.limiters,
): readonly WindowVerdict[] {
  // The common cases, with no array or closure made per request: every limiter allowed it, or
  // one refused it and the others allowed it (a 429).
  if (lists === NO_LISTS && counted === route.limiters && !hasShadow(route))
    return blockedBy === undefined ? allAllowed(route.limiters.length) : limitedBy(route.limiters, blockedBy);
  return route.limiters.map((limiter) => {
    if (lists.exempt.includes(limiter)) return 'exempt';
    if (!counted.includes(limiter)) return 'store_error';
    if (limiter === blockedBy) return 'limited';
    if (!limiter.shadow) return 'allowed';
    if (lists.shadowDenied.includes(limiter)) return 'shadow_limited';
    return windows.some((w, i) => w.limiter === limiter && !results[i]!.allowed)
      ? 'shadow_limited'
      : 'allowed';
  });
}

/** Shared, frozen: verdicts are only read (settle, recordDecisions). */
const ALL_ALLOWED: (readonly WindowVerdict[])[] = [];
const allAllowed = (n: number): readonly WindowVerdict[] =>
  (ALL_ALLOWED[n] ??= Object.freeze(new Array<WindowVerdict>(n).fill('allowed')));

/** Shared, frozen, per route's limiters: 'limited' for `blockedBy`, 'allowed' for the others. */
const LIMITED_BY = new WeakMap<readonly CompiledLimiter[], Map<CompiledLimiter, readonly WindowVerdict[]>>();
function limitedBy(
  limiters: readonly CompiledLimiter[],
  blockedBy: CompiledLimiter,
): readonly WindowVerdict[] {
  let byLimiter = LIMITED_BY.get(limiters);
  if (!byLimiter) LIMITED_BY.set(limiters, (byLimiter = new Map()));
  let verdicts = byLimiter.get(blockedBy);
  if (!verdicts) {
    const each = limiters.map((l): WindowVerdict => (l === blockedBy ? 'limited' : 'allowed'));
    byLimiter.set(blockedBy, (verdicts = Object.freeze(each)));
  }
  return verdicts;
}

function hasShadow(route: CompiledRoute): boolean {
  for (const limiter of route.limiters) if (limiter.shadow) return true;
  return false;
}

/**
 * Counts the request under each of its limiters, once its fate is known: under `refused` (a
 * refusal that followed counting) for every limiter that counted it, else under each limiter's own
 * verdict. An exempt limiter stays exempt; a limiter that never saw the request is left out.
 */
export function recordDecisions(
  metrics: GatewayMetrics,
  route: CompiledRoute,
  verdicts: readonly (LimiterDecision | undefined)[],
  refused: LimiterDecision | undefined,
): void {
  let logged = false; // one recent refusal per request (a 429's is logged with its key when counted)
  for (let i = 0; i < route.limiters.length; i++) {
    const verdict = verdicts[i];
    if (verdict === undefined) continue;
    const name = route.limiters[i]!.name;
    metrics.limiterDecision(name, refused && verdict !== 'exempt' ? refused : verdict);
    if (logged || !(refused ? verdict !== 'exempt' : verdict === 'banned' || verdict === 'denied')) continue;
    metrics.nearLimit.refusal(route.name, name, refused ?? verdict);
    logged = true;
  }
}
