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
  return planned.map((r, i) => {
    const cost = costs[i]!;
    if (windows[i]!.limiter.charging?.deferred) {
      // Room for `cost` without counting: used + 0 ≤ limit − cost. Never cached as spent: the
      // over-limit cache would read the lowered limit as the window's.
      return { ...r, limit: r.limit - cost, cost: 0, cacheWhenSpent: false };
    }
    return cost === 1 ? r : { ...r, cost };
  });
}

/** The store's answers to admissionRequests, reported against the windows' real limits. */
export function admissionResults(
  windows: readonly RouteWindow[],
  costs: readonly number[],
  results: readonly WindowResult[],
): WindowResult[] {
  return results.map((r, i) =>
    windows[i]!.limiter.charging?.deferred ? { ...r, limit: r.limit + costs[i]! } : r,
  );
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

/**
 * The hits each window is charged after the response (0: none), and the header problems met.
 * Only deferred limiters' windows are charged; countOnly ones only for their statuses.
 */
export function postCharges(
  windows: readonly RouteWindow[],
  costs: readonly number[],
  status: number,
  headers: Readonly<Record<string, string | string[] | undefined>>,
): { charges: number[]; problems: { header: string; value: unknown; problem: string }[] } {
  const charges = new Array<number>(windows.length).fill(0);
  const problems: { header: string; value: unknown; problem: string }[] = [];
  const read = new Map<string, ReportedCost>();
  for (let i = 0; i < windows.length; i++) {
    const c = windows[i]!.limiter.charging;
    if (!c?.deferred || (c.countOnly && !c.countOnly.has(status))) continue;
    if (c.afterHeader === undefined) {
      charges[i] = costs[i]!;
      continue;
    }
    const id = `${c.afterHeader}:${c.afterMax}`;
    let reported = read.get(id);
    if (!reported) {
      reported = reportedCost(headers[c.afterHeader], c.afterMax);
      read.set(id, reported);
      if (reported.problem && reported.problem !== 'missing')
        problems.push({ header: c.afterHeader, value: headers[c.afterHeader], problem: reported.problem });
    }
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
    if (cost > 0) out.push({ ...planned[i]!, enforce: false, cacheWhenSpent: false, cost });
  }
  return out;
}
