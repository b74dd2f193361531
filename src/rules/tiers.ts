/**
 * Tiers, compiled: a window's limit (and burst) per named tier, as window variants made once per
 * config. A variant shares its window's store key: a request's tier changes the limit it is checked
 * against, never the counter it spends (docs/limiting.md#tiers-and-overrides).
 */
import { windowWithLimit } from '../limits/tier-choice.js';
import type { CompiledWindow } from './model.js';

/** A window with its tiers' variants. */
export function withTiers(
  window: CompiledWindow,
  tiers: Readonly<Record<string, { readonly limit: number; readonly burst?: number | undefined }>>,
): CompiledWindow {
  const variants = new Map<string, CompiledWindow>();
  for (const [name, t] of Object.entries(tiers))
    variants.set(name, windowWithLimit(window, t.limit, t.burst));
  return { ...window, tiers: variants };
}
