import type { IncomingHttpHeaders } from 'node:http';
import type { CompiledRoute, RouteWindow } from '../rules/compile.js';
import type { Peer } from '../identity/peer.js';
import { identityOf, needsCredentials, resolveIdentity, type RequestIdentity } from '../identity/resolve.js';
import { decide, type Decision, type RateLimitReport } from '../limits/decision.js';
import { planWindows } from '../limits/plan.js';
import { bannedBy, bannedRefusal } from '../limits/ban.js';
import {
  DENIED,
  hasLists,
  listSubject,
  namesWorkspaces,
  screen,
  withWorkspace,
} from '../limits/exemption.js';
import { admissionRequests, admissionResults, windowCosts } from '../limits/charging.js';
import type { Refusal } from '../limits/refusal.js';
import type { GatewayMetrics, LimiterDecision } from '../metrics/gateway-metrics.js';
import type { LocalFallback } from '../store/local-fallback.js';
import type { WindowRequest, WindowStore } from '../store/window-store.js';
import { refusedNow } from '../store/over-limit-cache.js';
import { localPlan, type LocalPlan } from './local-plan.js';
import { NO_LISTS, verdictsOf, type Lists, type WindowVerdict } from './verdicts.js';
import type { GatewayState } from './state.js';
import { needsTier, requestTier, withListedWorkspace, type RequestTier } from './request-tier.js';

/**
 * Counting, which the proxy handler and the decision handler share: identity → plan → store →
 * decision, the limiter metrics, and the refusals that follow (429, 503 failing closed, 401 for a
 * bad credential). Each handler answers a refusal in its own way; the refusal itself is the same.
 * Counting is not admission: the in-flight caps are admit.ts's, taken after counting.
 */

/** How the limiters treated a request, as logged; 'unlimited' when no limiter saw it. */
export type LimitOutcome = LimiterDecision | 'unlimited';

/** A listener's means of counting, built once per listener. */
export interface Limiting {
  readonly store: WindowStore;
  readonly metrics: GatewayMetrics;
  /** Send the IETF RateLimit-Policy / RateLimit headers too. */
  readonly ietfHeaders: boolean;
  /** The throttled warning of a failed store call. */
  readonly warnStore: (fields: object) => void;
  /** Counts onStoreError: local limiters in process while the store fails; absent: they fail open. */
  readonly fallback?: LocalFallback | undefined;
  /** The throttled warning of a chargeAfter header that was not a cost (ignored or clamped). */
  readonly warnCharge?: (fields: object) => void;
}

/** What counting reads of a routed request (a RequestContext is one); it is never written. */
export interface CountedRequest {
  readonly limiting: Limiting;
  /** The table of the request (one for the whole request, even across a reload). */
  readonly state: GatewayState;
  readonly route: CompiledRoute;
  readonly peer: Peer;
  readonly req: {
    readonly headers: IncomingHttpHeaders;
    readonly httpVersionMajor?: number;
    readonly method?: string;
  };
  readonly requestId: string;
}

/** What counting came to. */
export interface Counted {
  readonly identity: RequestIdentity;
  readonly outcome: LimitOutcome;
  /** The window the X-RateLimit-* headers report; none when the store failed or no enforcing limiter applies. */
  readonly report: RateLimitReport | undefined;
  /** Set when the request must go no further (429, or 503 when the store failed and the route fails closed). */
  readonly refusal: Refusal | undefined;
  /**
   * Each of the route's limiters' verdict (in route.limiters' order), counted once the request's
   * fate is known; undefined for a limiter that never saw it (a deny list or a ban came first).
   */
  readonly verdicts: readonly (WindowVerdict | undefined)[];
  /** A request let through on a route that charges after the response: what to charge then. */
  readonly deferred?: DeferredCharge;
  /** The tier chosen, on a route with tiers or while overrides are set. */
  readonly tier?: RequestTier | undefined;
}

/** What a post-charge needs (src/http/post-charge.ts): the windows as planned, and their costs. */
export interface DeferredCharge {
  /** The windows counted (the route's, less those an allow list exempted the request from). */
  readonly windows: readonly RouteWindow[];
  readonly planned: readonly WindowRequest[];
  readonly costs: readonly number[];
}

/** The 411 of a body-priced route's request without a Content-Length (also shown by `tollgate explain`). */
export const LENGTH_REQUIRED: Refusal = {
  status: 411,
  code: 'length_required',
  decision: 'length_required',
  message: "This route's rate limit is priced by the body's size: send a Content-Length.",
};

const UNAVAILABLE: Refusal = {
  status: 503,
  decision: 'store_error',
  code: 'rate_limit_unavailable',
  message: 'Rate limiting is temporarily unavailable. Please retry shortly.',
};

/** Resolves the identity of a route with limiters, counts the request in the store and decides. */
export async function countRequest(c: CountedRequest): Promise<Counted> {
  const { limiting: lim, state, route, peer } = c;
  const reqHeaders = c.req.headers;
  const identity = needsCredentials(route.parts)
    ? await resolveIdentity(state.identity, route.parts, peer, reqHeaders)
    : identityOf(state.identity, route.parts, peer, reqHeaders);
  // Tiers and overrides (docs/limiting.md#tiers-and-overrides): the windows at the request's tier.
  const chosen = needsTier(state.tiers, route)
    ? requestTier(state.tiers, state.identity, route, identity, reqHeaders)
    : undefined;
  let tier = chosen instanceof Promise ? await chosen : chosen; // no extra turn when nothing is verified
  // [lists] Denied: answered 403 before anything is counted. Exempt: that limiter's windows are left out.
  let { limiters } = route;
  let windows = tier?.windows ?? route.windows;
  if (windows.length === 0) {
    // An override of `unlimited`: no window counts the request.
    const verdicts = route.limiters.map((): WindowVerdict => 'exempt');
    return { identity, outcome: 'unlimited', report: undefined, refusal: undefined, verdicts, tier };
  }
  let lists = NO_LISTS;
  if (hasLists(limiters)) {
    let subject = listSubject(state.identity, peer, reqHeaders, identity);
    if (namesWorkspaces(limiters)) {
      subject = await withWorkspace(state.identity, subject);
      if (state.table.config.log.keyParts) tier = withListedWorkspace(tier, route, identity, subject);
    }
    const s = screen(limiters, windows, subject);
    if (s.deniedBy) {
      const verdicts = route.limiters.map((l) => (l === s.deniedBy ? 'denied' : undefined));
      return { identity, outcome: 'denied', report: undefined, refusal: DENIED, verdicts, tier };
    }
    lists = s;
    if (s.exempt.length > 0) limiters = limiters.filter((l) => !s.exempt.includes(l));
    if (limiters.length === 0) {
      const verdicts = route.limiters.map((): WindowVerdict => 'exempt');
      return { identity, outcome: 'exempt', report: undefined, refusal: undefined, verdicts, tier };
    }
    windows = s.windows;
  }
  const nowMs = Date.now();
  const planned = planWindows(windows, (part) => identity.hashed.get(part)!, state.keyPrefix, nowMs);
  let costs: number[] | undefined;
  if (route.charged) {
    costs = windowCosts(windows, c.req);
    if (!costs) {
      // Refused before counting: nothing spent.
      const verdicts = route.limiters.map((): WindowVerdict => 'length_required');
      return {
        identity,
        outcome: 'length_required',
        report: undefined,
        refusal: LENGTH_REQUIRED,
        verdicts,
        tier,
      };
    }
  }
  const requests = costs ? admissionRequests(windows, planned, costs) : planned;
  try {
    // A flooding key's refusal from the over-limit cache is taken at once: no await, no turn.
    let results = refusedNow(lim.store, requests) ?? (await lim.store.hit(requests));
    if (costs) results = admissionResults(windows, costs, results);
    const now = Date.now();
    const ban = bannedBy(windows, results, now); // [bans] refused, no window counted
    if (ban) {
      const verdicts = route.limiters.map((l) =>
        l === ban.limiter ? 'banned' : lists.exempt.includes(l) ? 'exempt' : undefined,
      );
      const refusal = bannedRefusal(ban.retryAfterSec);
      return { identity, outcome: 'banned', report: undefined, refusal, verdicts, tier };
    }
    const decision = decide(windows, results, now);
    lim.metrics.nearLimit.observe(route.name, windows, planned, results, decision.blockedBy);
    const verdicts = verdictsOf(route, windows, results, decision.blockedBy, lists);
    const deferred = route.deferred && costs ? { windows, planned, costs } : undefined;
    return counted(identity, decision, verdicts, tier, deferred);
  } catch (err) {
    lim.warnStore({ reqId: c.requestId, err: (err as Error).message });
    const local = route.failsClosed || !lim.fallback ? undefined : localPlan(route, lists.exempt);
    if (local) {
      // The local plan indexes the route's windows: plan them all when the lists left some out.
      const all =
        windows === route.windows
          ? requests
          : planWindows(route.windows, (part) => identity.hashed.get(part)!, state.keyPrefix, nowMs);
      const result = await countLocally(lim, lim.fallback!, route, local, all, identity, lists);
      return tier ? { ...result, tier } : result;
    }
    const verdicts = route.limiters.map((l): WindowVerdict =>
      lists.exempt.includes(l) ? 'exempt' : 'store_error',
    );
    if (route.failsClosed)
      return { identity, outcome: 'store_error', report: undefined, refusal: UNAVAILABLE, verdicts, tier };
    lim.metrics.uncounted();
    return { identity, outcome: 'store_error', report: undefined, refusal: undefined, verdicts, tier };
  }
}

/** The decision as counting reports it: a 429 refusal when refused. */
function counted(
  identity: RequestIdentity,
  decision: Decision,
  verdicts: readonly WindowVerdict[],
  tier?: RequestTier,
  deferred?: DeferredCharge,
): Counted {
  const { report } = decision;
  if (!decision.allowed) {
    const limiter = decision.blockedBy!;
    const retryAfterSec = decision.retryAfterSec;
    const refusal: Refusal = {
      status: 429,
      code: 'rate_limited',
      decision: 'limited',
      message: limiter.message,
      retryAfterSec,
      limiter,
      violatedPolicies: decision.violatedPolicies,
    };
    return { identity, outcome: 'limited', report, refusal, verdicts, tier };
  }
  const outcome = verdicts.includes('shadow_limited') ? 'shadow_limited' : 'allowed';
  if (deferred) return { identity, outcome, report, refusal: undefined, verdicts, tier, deferred };
  return { identity, outcome, report, refusal: undefined, verdicts, tier };
}

/**
 * The store failed and the route's limiters fail locally or open: the windows of its
 * onStoreError: local limiters are counted in process (each at its share of the limit) and
 * decided as usual; the open ones' are not counted (their verdict: store_error).
 */
async function countLocally(
  lim: Limiting,
  fallback: LocalFallback,
  route: CompiledRoute,
  plan: LocalPlan,
  requests: readonly WindowRequest[],
  identity: RequestIdentity,
  lists: Lists,
): Promise<Counted> {
  const hits = plan.indexes.map((i) => requests[i]!);
  const results = await fallback.hit(hits);
  const decision = decide(plan.windows, results, Date.now());
  lim.metrics.nearLimit.observe(route.name, plan.windows, hits, results, decision.blockedBy);
  const verdicts = verdictsOf(route, plan.windows, results, decision.blockedBy, lists, plan.limiters);
  route.limiters.forEach((limiter, i) => {
    const verdict = verdicts[i]!;
    if (verdict === 'allowed' || verdict === 'limited' || verdict === 'shadow_limited') {
      lim.metrics.localDecision(limiter.name, verdict);
    }
  });
  return counted(identity, decision, verdicts);
}
