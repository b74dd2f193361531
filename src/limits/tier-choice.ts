/**
 * A request's tier, and the windows it is counted against. Pure: the credentials were verified
 * before (src/identity/tier-credentials.ts), the overrides compiled (overrides.ts).
 */
import type { CompiledWindow, RouteWindow } from '../rules/model.js';
import type { OverrideMatch } from './overrides.js';
import { sfString } from './rate-limit-headers.js';

export type TierSource = 'override' | 'jwt' | 'plan' | 'default';

export interface TierChoice {
  /** The tier named; one that no window names leaves every window at its own limit. */
  readonly tier: string | undefined;
  readonly source: TierSource;
  /** The override that applied, if any (it may set unlimited or a limit instead of a tier). */
  readonly override: OverrideMatch | undefined;
}

export const DEFAULT_TIER: TierChoice = { tier: undefined, source: 'default', override: undefined };

/** An override wins, then the JWT's claim, then the workspace token's plan, then the default. */
export function chooseTier(
  override: OverrideMatch | undefined,
  jwtTier: string | undefined,
  planTier: string | undefined,
): TierChoice {
  if (override) {
    const tier = 'tier' in override.action ? override.action.tier : undefined;
    return { tier, source: 'override', override };
  }
  if (jwtTier !== undefined) return { tier: jwtTier, source: 'jwt', override: undefined };
  if (planTier !== undefined) return { tier: planTier, source: 'plan', override: undefined };
  return DEFAULT_TIER;
}

/** The window as a limit of `limit` (and a token bucket's `burst`, else the limit) sees it. */
export function windowWithLimit(window: CompiledWindow, limit: number, burst?: number): CompiledWindow {
  const { tiers: _tiers, ...rest } = window;
  return { ...rest, limit, burst: window.algorithm === 'token-bucket' ? (burst ?? limit) : limit };
}

/** A route's window with the route-window variant of each of its window's tiers (made once per config). */
export function tieredRouteWindow(rw: RouteWindow): RouteWindow {
  const tiers = rw.window.tiers;
  if (!tiers) return rw;
  const variants = new Map<string, RouteWindow>();
  for (const [name, window] of tiers) variants.set(name, { ...rw, window });
  return { ...rw, tiers: variants };
}

const NONE: readonly RouteWindow[] = [];

/**
 * The route's windows as the choice sees them: each window's variant of the tier (its own limit when
 * it names no such tier: never unlimited), none for `unlimited`, or each at an override's limit.
 */
export function windowsFor(windows: readonly RouteWindow[], choice: TierChoice): readonly RouteWindow[] {
  const action = choice.override?.action;
  if (action && 'unlimited' in action) return NONE;
  if (action && 'limit' in action) {
    // Made once per route and override: the override's action object lives as long as its table.
    let perRoute = byLimit.get(action);
    if (!perRoute) byLimit.set(action, (perRoute = new WeakMap()));
    let out = perRoute.get(windows);
    if (!out) {
      out = windows.map((w) => ({ ...w, window: windowWithLimit(w.window, action.limit, action.burst) }));
      perRoute.set(windows, out);
    }
    return out;
  }
  const tier = choice.tier;
  if (tier === undefined) return windows;
  let perTier = byTier.get(windows);
  if (!perTier) byTier.set(windows, (perTier = new Map()));
  let atTier = perTier.get(tier);
  if (!atTier) {
    atTier = tierWindows(windows, tier);
    // Kept only for the config's own tier names: a claim may name any tier, and the map stays bounded.
    if (atTier !== windows) perTier.set(tier, atTier);
  }
  return atTier;
}

/** A route's windows at a tier, made once per route and tier (see windowsFor). */
const byTier = new WeakMap<readonly RouteWindow[], Map<string, readonly RouteWindow[]>>();
const byLimit = new WeakMap<object, WeakMap<readonly RouteWindow[], readonly RouteWindow[]>>();

function tierWindows(windows: readonly RouteWindow[], tier: string): readonly RouteWindow[] {
  let out: RouteWindow[] | undefined;
  for (let i = 0; i < windows.length; i++) {
    const variant = windows[i]!.tiers?.get(tier);
    if (variant === undefined) continue;
    out ??= windows.slice();
    out[i] = variant;
  }
  return out ?? windows;
}

/** The RateLimit-Policy value of windows: `"<limiter>.<index>";q=<limit>;w=<seconds>` of each enforced one. */
export const ietfPolicyOf = (windows: readonly RouteWindow[]): string =>
  windows
    .filter((w) => !w.limiter.shadow)
    .map((w) => `${sfString(w.policyName)};q=${w.window.limit};w=${Math.round(w.window.periodMs / 1000)}`)
    .join(', ');
