import type { CompiledLimiter, RouteWindow } from '../rules/model.js';
import { addRateLimitHeaders } from '../limits/rate-limit-headers.js';
import { decide, type Decision } from '../limits/decision.js';
import type { WindowResult } from '../store/window-store.js';
import type { DescriptorPlan } from './descriptor-table.js';

export type Code = 'OK' | 'OVER_LIMIT';
export type Unit = 'UNKNOWN' | 'SECOND' | 'MINUTE' | 'HOUR' | 'DAY';

/** RateLimitResponse.DescriptorStatus, as proto-loader takes it (camelCase fields, enums by name). */
export interface DescriptorStatus {
  readonly code: Code;
  readonly currentLimit?: { readonly name: string; readonly requestsPerUnit: number; readonly unit: Unit };
  readonly limitRemaining: number;
  readonly durationUntilReset?: { readonly seconds: number };
}

export interface HeaderValue {
  readonly key: string;
  readonly value: string;
}

/** RateLimitResponse, as proto-loader takes it. */
export interface RateLimitAnswer {
  readonly overallCode: Code;
  readonly statuses: DescriptorStatus[];
  readonly responseHeadersToAdd: HeaderValue[];
  readonly requestHeadersToAdd: HeaderValue[];
}

const UNITS: ReadonlyMap<number, Unit> = new Map([
  [1000, 'SECOND'],
  [60_000, 'MINUTE'],
  [3_600_000, 'HOUR'],
  [86_400_000, 'DAY'],
]);

/** Envoy's unit for a period; a period that is no single unit (10s, 5m) is UNKNOWN (the name says which window). */
export const unitOf = (periodMs: number): Unit => UNITS.get(periodMs) ?? 'UNKNOWN';

/** What an unmatched descriptor gets, as from Envoy's own service: OK, and no limit. */
const UNLIMITED: DescriptorStatus = { code: 'OK', limitRemaining: 0 };

/**
 * The answer to a rate-limit request whose matched windows the store decided (all descriptors in
 * one call, all-or-nothing as a route's limiters are: when any is over its limit, none is counted),
 * and the decision over all windows it was built from. Each descriptor's status reports its own
 * limiter's window as an HTTP response would (the spent window that resets last, else the one with
 * the fewest hits left); the headers to add are the X-RateLimit-* (and, when over the limit,
 * Retry-After) headers tollgate's HTTP answer would carry, from the decision over all windows.
 */
export function decideDescriptors(
  plan: DescriptorPlan,
  results: readonly WindowResult[],
  nowMs: number,
): { readonly answer: RateLimitAnswer; readonly decision: Decision } {
  const allWindows: RouteWindow[] = [];
  const allResults: WindowResult[] = [];
  const seen = new Set<number>();
  const statuses = plan.descriptors.map((windows) => {
    if (!windows) return UNLIMITED;
    for (const w of windows) {
      if (seen.has(w.request)) continue; // a budget two descriptors share is reported once
      seen.add(w.request);
      allWindows.push(w.window);
      allResults.push(results[w.request]!);
    }
    const own = windows.map((w) => w.window);
    return status(
      own,
      decide(
        own,
        windows.map((w) => results[w.request]!),
        nowMs,
      ),
    );
  });
  const overall = decide(allWindows, allResults, nowMs);
  const answer: RateLimitAnswer = {
    overallCode: overall.allowed ? 'OK' : 'OVER_LIMIT',
    statuses,
    responseHeadersToAdd: rateLimitHeaders(overall),
    requestHeadersToAdd: [],
  };
  return { answer, decision: overall };
}

/** The answer when the store failed and every matched limiter lets requests through (onStoreError: open). */
export function answerWithoutStore(descriptorCount: number): RateLimitAnswer {
  return {
    overallCode: 'OK',
    statuses: Array.from({ length: descriptorCount }, () => UNLIMITED),
    responseHeadersToAdd: [],
    requestHeadersToAdd: [],
  };
}

function status(windows: readonly RouteWindow[], decision: Decision): DescriptorStatus {
  const report = decision.report;
  // Shadow limiters never refuse and, as over HTTP, report nothing.
  if (!report) return UNLIMITED;
  const periodMs = windows.find((w) => w.policyName === report.policyName)!.window.periodMs;
  return {
    code: decision.allowed ? 'OK' : 'OVER_LIMIT',
    currentLimit: { name: report.policyName, requestsPerUnit: report.limit, unit: unitOf(periodMs) },
    limitRemaining: report.remaining,
    durationUntilReset: { seconds: report.resetInSec }, // whole seconds, as the headers
  };
}

/**
 * The headers of tollgate's HTTP answer, built by the same function and in its order:
 * X-RateLimit-Limit, -Remaining, -Reset, then Retry-After when refused.
 */
function rateLimitHeaders(decision: Decision): HeaderValue[] {
  const headers: Record<string, string> = {};
  addRateLimitHeaders(headers, decision.report);
  if (!decision.allowed) headers['retry-after'] = String(decision.retryAfterSec);
  return Object.entries(headers).map(([key, value]) => ({ key, value }));
}

/**
 * The answer when a limiter's deny list or ban refused the request before any window was counted:
 * OVER_LIMIT on that limiter's descriptors (no window reported), Retry-After at a ban's end.
 */
export function refusedAnswer(
  matches: readonly ({ readonly limiter: CompiledLimiter } | undefined)[],
  limiter: CompiledLimiter,
  retryAfterSec: number | undefined,
): RateLimitAnswer {
  const statuses = matches.map((m): DescriptorStatus => {
    if (m?.limiter !== limiter) return UNLIMITED;
    const status = { code: 'OVER_LIMIT' as const, limitRemaining: 0 };
    return retryAfterSec === undefined
      ? status
      : { ...status, durationUntilReset: { seconds: retryAfterSec } };
  });
  return {
    overallCode: 'OVER_LIMIT',
    statuses,
    responseHeadersToAdd:
      retryAfterSec === undefined ? [] : [{ key: 'retry-after', value: String(retryAfterSec) }],
    requestHeadersToAdd: [],
  };
}
