import type { CompiledLimiter, RouteWindow } from '../rules/model.js';
import type { WindowResult } from '../store/window-store.js';

/** The window a response reports in its X-RateLimit-* headers. */
export interface RateLimitReport {
  readonly limit: number;
  readonly remaining: number;
  /** Unix time in whole seconds at which the window's budget is restored (rounded up). */
  readonly resetSec: number;
  /** Whole seconds from now until then (the IETF RateLimit header's t). */
  readonly resetInSec: number;
  /** The window's name in the IETF RateLimit headers. */
  readonly policyName: string;
}

export interface Decision {
  readonly allowed: boolean;
  /** Absent when no enforcing limiter applies (shadow limiters send no headers). */
  readonly report: RateLimitReport | undefined;
  /** Whole seconds (≥ 1) until every spent window has reset; only when refused. */
  readonly retryAfterSec: number | undefined;
  readonly blockedBy: CompiledLimiter | undefined;
  /** A shadow limiter would have refused this request. */
  readonly shadowLimited: boolean;
  /** When refused: the policy names of every spent enforced window (problem+json's violated-policies). */
  readonly violatedPolicies?: readonly string[];
}

export const resetSeconds = (resetAtMs: number): number => Math.ceil(resetAtMs / 1000);

export function retryAfterSeconds(resetAtMs: number, nowMs: number): number {
  return Math.max(1, Math.ceil((resetAtMs - nowMs) / 1000));
}

/** When a retry of a refused window's request can pass: its reset for a fixed window. */
const retryAt = (r: WindowResult): number => r.retryAtMs ?? r.resetAtMs;

/**
 * Turns the store's answer into a decision. Refused when any enforced window was spent; the headers
 * then describe the spent window whose retry passes last (the earliest moment a retry can pass:
 * Retry-After). Allowed requests report the window with the fewest remaining hits, ties going to
 * the later reset.
 */
export function decide(
  windows: readonly RouteWindow[],
  results: readonly WindowResult[],
  nowMs: number,
): Decision {
  let spent = -1;
  let lowest = -1;
  let lowestRemaining = Infinity;
  let shadowLimited = false;
  for (let i = 0; i < results.length; i++) {
    const r = results[i]!;
    if (windows[i]!.limiter.shadow) {
      if (!r.allowed) shadowLimited = true;
      continue;
    }
    if (!r.allowed && (spent === -1 || retryAt(r) > retryAt(results[spent]!))) spent = i;
    const remaining = Math.max(0, r.limit - r.count);
    if (
      remaining < lowestRemaining ||
      (remaining === lowestRemaining && r.resetAtMs > results[lowest]!.resetAtMs)
    ) {
      lowest = i;
      lowestRemaining = remaining;
    }
  }
  if (spent !== -1) {
    const r = results[spent]!;
    return {
      allowed: false,
      report: report(windows[spent]!, r, 0, nowMs),
      retryAfterSec: retryAfterSeconds(retryAt(r), nowMs),
      blockedBy: windows[spent]!.limiter,
      shadowLimited,
      violatedPolicies: spentPolicies(windows, results),
    };
  }
  return {
    allowed: true,
    report: lowest === -1 ? undefined : report(windows[lowest]!, results[lowest]!, lowestRemaining, nowMs),
    retryAfterSec: undefined,
    blockedBy: undefined,
    shadowLimited,
  };
}

function report(w: RouteWindow, r: WindowResult, remaining: number, nowMs: number): RateLimitReport {
  return {
    limit: r.limit,
    remaining,
    resetSec: resetSeconds(r.resetAtMs),
    resetInSec: Math.max(0, Math.ceil((r.resetAtMs - nowMs) / 1000)),
    policyName: w.policyName,
  };
}

/** A window's name alone, as a refusal's violated policies: one shared array per window. */
const onlyPolicy = new WeakMap<RouteWindow, readonly string[]>();

function spentPolicies(windows: readonly RouteWindow[], results: readonly WindowResult[]): readonly string[] {
  if (windows.length === 1) {
    const w = windows[0]!;
    let names = onlyPolicy.get(w);
    if (!names) onlyPolicy.set(w, (names = Object.freeze([w.policyName])));
    return names;
  }
  const names: string[] = [];
  for (let i = 0; i < results.length; i++) {
    if (!windows[i]!.limiter.shadow && !results[i]!.allowed) names.push(windows[i]!.policyName);
  }
  return names;
}
