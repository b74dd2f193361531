/**
 * The tier of one Envoy rate-limit request, as the HTTP path chooses one (src/http/request-tier.ts)
 * but from the descriptors: Envoy sends no credential, only entry values, so the tier comes from an
 * override keyed by an entry's value (rateLimitService.overrideKeys says which entry key is which
 * kind), else the default. The lookup, the choice and the windows at the tier are src/limits'.
 */
import { routeWindow } from '../limits/keys.js';
import type { OverrideKind, OverrideSubject, OverrideTable } from '../limits/overrides.js';
import {
  chooseTier,
  DEFAULT_TIER,
  tieredRouteWindow,
  windowsFor,
  type TierChoice,
} from '../limits/tier-choice.js';
import type { CompiledLimiter, DescriptorEntry, RouteWindow } from '../rules/model.js';

/** A limiter's windows as route windows with their tier variants: made once per limiter (per config). */
const byLimiter = new WeakMap<CompiledLimiter, readonly RouteWindow[]>();

export function limiterWindows(limiter: CompiledLimiter): readonly RouteWindow[] {
  let windows = byLimiter.get(limiter);
  if (!windows) {
    windows = limiter.windows.map((w, i) => tieredRouteWindow(routeWindow(limiter, i, w)));
    byLimiter.set(limiter, windows);
  }
  return windows;
}

/**
 * The override subject of a request's descriptors: for each kind, the value of the first entry (of
 * any descriptor, matched or not) whose key `overrideKeys` maps to it.
 */
export function descriptorSubject(
  descriptors: readonly { readonly entries: readonly DescriptorEntry[] }[],
  overrideKeys: Readonly<Record<string, OverrideKind>>,
): OverrideSubject {
  const subject: { -readonly [K in OverrideKind]?: string } = {};
  for (const d of descriptors)
    for (const e of d.entries) {
      const kind = Object.hasOwn(overrideKeys, e.key) ? overrideKeys[e.key] : undefined;
      if (kind !== undefined && subject[kind] === undefined && e.value !== '') subject[kind] = e.value;
    }
  return subject;
}

/** The request's tier: its override's, else the default (an unknown tier leaves each window at its own limit). */
export function descriptorTier(
  table: OverrideTable,
  descriptors: readonly { readonly entries: readonly DescriptorEntry[] }[],
  overrideKeys: Readonly<Record<string, OverrideKind>>,
): TierChoice {
  if (table.empty) return DEFAULT_TIER;
  const override = table.lookup(descriptorSubject(descriptors, overrideKeys));
  return override ? chooseTier(override, undefined, undefined) : DEFAULT_TIER;
}

/** A limiter's windows at the tier: none for `unlimited`, each at an override's limit, or the tier's variants. */
export const windowsAtTier = (limiter: CompiledLimiter, choice: TierChoice): readonly RouteWindow[] =>
  choice === DEFAULT_TIER ? limiterWindows(limiter) : windowsFor(limiterWindows(limiter), choice);
