/**
 * What replay reads of the gateway's decision (src/limits/decision.ts's decide): refused, let on
 * with only a shadow limiter's refusal, or let on. Without the headers' report that decide builds
 * for every request (replay sends no headers). Pure; a property test holds it to decide.
 */
import type { RouteWindow } from '../../rules/model.js';
import type { WindowResult } from '../../store/window-store.js';

/** decide's `allowed` (false: refused) and, when allowed, its `shadowLimited` (shadow-refused). */
export type Verdict = 'allowed' | 'shadow-refused' | 'refused';

export function verdict(windows: readonly RouteWindow[], results: readonly WindowResult[]): Verdict {
  let shadow = false;
  for (let i = 0; i < results.length; i++) {
    if (results[i]!.allowed) continue;
    if (!windows[i]!.limiter.shadow) return 'refused';
    shadow = true;
  }
  return shadow ? 'shadow-refused' : 'allowed';
}
