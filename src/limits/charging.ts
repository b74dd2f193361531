/**
 * Weighted cost (config cost, chargeAfter, countOnly; docs/limiting.md#weighted-cost): what a
 * request spends in each window, before forwarding and after the response. Pure.
 *
 * A deferred limiter (chargeAfter or countOnly) is only checked before forwarding: its windows go
 * to the store with the limit lowered by the cost and a cost of 0, so a window refuses exactly when
 * it has no room for the cost, and nothing is counted (no change to the store's script). After the
 * response the cost is charged without refusing (enforce false, as a shadow window counts).
 */
import type { Charging, RouteWindow } from '../rules/model.js';
import type { WindowRequest, WindowResult } from '../store/window-store.js';

/** Request headers that price a request. */
export interface PricedRequest {
  readonly headers: { readonly 'content-length'?: string; readonly 'transfer-encoding'?: string };
  readonly httpVersionMajor?: number;
  readonly method?: string;
}

/** Methods whose requests carry no body unless they say so. */
const BODILESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

/**
 * What the request costs under `charging`: a number of hits, or undefined when the cost is the
 * body's size and the size is unknown (a chunked body, or an HTTP/2 body without Content-Length).
 */
export function requestCost(charging: Charging, req: PricedRequest): number | undefined {
  const { cost } = charging;
  if (typeof cost === 'number') return cost;
  const declared = req.headers['content-length'];
  if (declared === undefined) {
    const bodyless =
      req.headers['transfer-encoding'] === undefined &&
      ((req.httpVersionMajor ?? 1) < 2 || BODILESS.has(req.method ?? 'GET'));
    return bodyless ? 1 : undefined;
  }
  const bytes = Number(declared); // Node has already refused a malformed Content-Length
  return Math.max(1, Math.ceil(bytes / cost.perBytes));
}

/** Each window's cost for this request (1 where the limiter has no charging), or undefined: 411. */
export function windowCosts(windows: readonly RouteWindow[], req: PricedRequest): number[] | undefined {
  const costs = new Array<number>(windows.length);
  for (let i = 0; i < windows.length; i++) {
    const charging = windows[i]!.limiter.charging;
    const cost = charging ? requestCost(charging, req) : 1;
    if (cost === undefined) return undefined;
    costs[i] = cost;
  }
  return costs;
}

/** The windows as admission sends them: charged now, or (deferred) checked for room only. */
export function admissionRequests(
  windows: readonly RouteWindow[],
  planned: readonly WindowRequest[],
  costs: readonly number[],
): WindowRequest[] {
  const out = new Array<WindowRequest>(planned.length);
  for (let i = 0; i < planned.length; i++) {
    const r = planned[i]!;
    const cost = costs[i]!;
    // Room for `cost` without counting: used + 0 ≤ limit − cost. Never cached as spent: the
    // over-limit cache would read the lowered limit as the window's.
    if (windows[i]!.limiter.charging?.deferred) out[i] = reshaped(r, r.limit - cost, 0, r.enforce);
    else out[i] = cost === 1 ? r : { ...r, cost };
  }
  return out;
}

/** The store's answers to admissionRequests, reported against the windows' real limits. */
export function admissionResults(
  windows: readonly RouteWindow[],
  costs: readonly number[],
  results: readonly WindowResult[],
): WindowResult[] {
  const out = new Array<WindowResult>(results.length);
  for (let i = 0; i < results.length; i++) {
    const r = results[i]!;
    out[i] = windows[i]!.limiter.charging?.deferred ? withLimit(r, r.limit + costs[i]!) : r;
  }
  return out;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * A window request with another limit and cost, never cached as spent. Built field by field, not
 * spread: the hot path's requests keep one shape, and an object spread per window costs more.
 */
function reshaped(r: WindowRequest, limit: number, cost: number, enforce: boolean): WindowRequest {
  const out: Mutable<WindowRequest> = {
    key: r.key,
    limit,
    periodMs: r.periodMs,
    enforce,
    cacheWhenSpent: false,
    cost,
  };
  if (r.algorithm !== undefined) out.algorithm = r.algorithm;
  if (r.rate !== undefined) out.rate = r.rate;
  if (r.endsAtMs !== undefined) out.endsAtMs = r.endsAtMs;
  if (r.ban !== undefined) out.ban = r.ban;
  return out;
}

/** A store result reported at another limit (field by field, as `reshaped`). */
function withLimit(r: WindowResult, limit: number): WindowResult {
  const out: Mutable<WindowResult> = { count: r.count, limit, resetAtMs: r.resetAtMs, allowed: r.allowed };
  if (r.retryAtMs !== undefined) out.retryAtMs = r.retryAtMs;
  if (r.bannedUntilMs !== undefined) out.bannedUntilMs = r.bannedUntilMs;
  return out;
}

/** A chargeAfter header's value: the hits to charge, and why it was not taken as sent. */
export interface ReportedCost {
  readonly cost: number;
  readonly problem?: 'missing' | 'invalid' | 'clamped';
}

const DIGITS = /^\s*\d{1,15}\s*$/;

/**
 * The cost an upstream reports: a non-negative integer (decimal digits). Missing or anything else
 * (negative, fractional, text, several values) charges 0; more than `max` charges `max`.
 */
export function reportedCost(value: string | string[] | undefined, max: number): ReportedCost {
  if (value === undefined) return { cost: 0, problem: 'missing' };
  if (typeof value !== 'string' || !DIGITS.test(value)) return { cost: 0, problem: 'invalid' };
  const cost = Number(value);
  return cost > max ? { cost: max, problem: 'clamped' } : { cost };
}

/** A chargeAfter header that was not taken as sent. */
export interface ChargeProblem {
  readonly header: string;
  readonly value: unknown;
  readonly problem: string;
}

const NO_PROBLEMS: readonly ChargeProblem[] = [];

/**
 * The hits each window is charged after the response (0: none), and the header problems met.
 * Only deferred limiters' windows are charged; countOnly ones only for their statuses. A header
 * read for several windows (the same header and bound) is read once.
 */
export function postCharges(
  windows: readonly RouteWindow[],
  costs: readonly number[],
  status: number,
  headers: Readonly<Record<string, string | string[] | undefined>>,
): { charges: number[]; problems: readonly ChargeProblem[] } {
  const charges = new Array<number>(windows.length).fill(0);
  let problems = NO_PROBLEMS;
  // Nothing allocated for the common route: one chargeAfter header.
  let lastRead: Charging | undefined;
  let lastReported: ReportedCost | undefined;
  let read: Map<string, ReportedCost> | undefined;
  for (let i = 0; i < windows.length; i++) {
    const c = windows[i]!.limiter.charging;
    if (!c?.deferred || (c.countOnly && !c.countOnly.has(status))) continue;
    if (c.afterHeader === undefined) {
      charges[i] = costs[i]!;
      continue;
    }
    let reported: ReportedCost | undefined;
    if (
      lastRead !== undefined &&
      lastRead.afterHeader === c.afterHeader &&
      lastRead.afterMax === c.afterMax
    ) {
      reported = lastReported;
    } else if (lastRead !== undefined) {
      read ??= new Map([[`${lastRead.afterHeader}:${lastRead.afterMax}`, lastReported!]]);
      reported = read.get(`${c.afterHeader}:${c.afterMax}`);
    }
    if (!reported) {
      reported = reportedCost(headers[c.afterHeader], c.afterMax);
      read?.set(`${c.afterHeader}:${c.afterMax}`, reported);
      if (reported.problem && reported.problem !== 'missing') {
        if (problems === NO_PROBLEMS) problems = [];
        (problems as ChargeProblem[]).push({
          header: c.afterHeader,
          value: headers[c.afterHeader],
          problem: reported.problem,
        });
      }
    }
    lastRead = c;
    lastReported = reported;
    charges[i] = reported.cost;
  }
  return { charges, problems };
}

/** The store requests of a post-charge: counted whatever the window holds. Empty: nothing to charge. */
export function chargeRequests(
  planned: readonly WindowRequest[],
  charges: readonly number[],
): WindowRequest[] {
  const out: WindowRequest[] = [];
  for (let i = 0; i < planned.length; i++) {
    const cost = charges[i]!;
    if (cost > 0) out.push(reshaped(planned[i]!, planned[i]!.limit, cost, false));
  }
  return out;
}
