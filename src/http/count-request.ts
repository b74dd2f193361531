import type { RouteWindow } from '../rules/compile.js';
import { identityOf, needsCredentials, resolveIdentity, type RequestIdentity } from '../identity/resolve.js';
import { decide } from '../limits/decision.js';
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
import type { WindowResult } from '../store/window-store.js';
import { refusedNow } from '../store/over-limit-cache.js';
import { counted, type Counted, type CountedRequest, type Planned } from './counted.js';
import { storeFailed } from './store-failure.js';
import { NO_LISTS, verdictsOf, type Lists, type WindowVerdict } from './verdicts.js';
import { needsTier, requestTier, withListedWorkspace, type RequestTier } from './request-tier.js';

/**
 * Counting, which the proxy handler and the decision handler share: identity → plan → store →
 * decision, the limiter metrics, and the refusals that follow (429, 503 failing closed, 401 for a
 * bad credential). Each handler answers a refusal in its own way; the refusal itself is the same.
 * Counting is not admission: the in-flight caps are admit.ts's, taken after counting.
 */

export type { Counted, CountedRequest, DeferredCharge, LimitOutcome, Limiting } from './counted.js';

/** The 411 of a body-priced route's request without a Content-Length (also shown by `tollgate explain`). */
export const LENGTH_REQUIRED: Refusal = {
  status: 411,
  code: 'length_required',
  decision: 'length_required',
  message: "This route's rate limit is priced by the body's size: send a Content-Length.",
};

/**
 * Resolves the identity of a route with limiters, counts the request in the store and decides.
 * Answers at once, with no promise, when nothing is awaited: a route keyed by no credential, with
 * no tiers or lists, whose refusal the over-limit cache holds (a flooding key's 429).
 */
export function countRequest(c: CountedRequest): Counted | Promise<Counted> {
  const { state, route } = c;
  const awaits = needsCredentials(route.parts) || needsTier(state.tiers, route) || hasLists(route.limiters);
  if (awaits || route.windows.length === 0) return countResolved(c);
  const identity = identityOf(state.identity, route.parts, c.peer, c.req.headers);
  return countWindows(c, identity, route.windows, NO_LISTS, undefined);
}

/** countRequest of a request whose identity, tier or lists may be awaited. */
async function countResolved(c: CountedRequest): Promise<Counted> {
  const { state, route, peer } = c;
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
  return countWindows(c, identity, windows, lists, tier);
}

/** The windows planned (and priced), counted in the store, and decided. */
function countWindows(
  c: CountedRequest,
  identity: RequestIdentity,
  windows: readonly RouteWindow[],
  lists: Lists,
  tier: RequestTier | undefined,
): Counted | Promise<Counted> {
  const { limiting: lim, state, route } = c;
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
  const p: Planned = { c, identity, windows, lists, tier, nowMs, planned, costs, requests };
  // As one try around the store call and the decision: a throw in either is a store failure.
  try {
    // A flooding key's refusal from the over-limit cache is taken at once: no promise, no turn.
    const cached = refusedNow(lim.store, requests);
    if (cached) return decided(p, cached);
    return lim.store.hit(requests).then(
      (results) => {
        try {
          return decided(p, results);
        } catch (err) {
          return failed(p, err);
        }
      },
      (err: unknown) => failed(p, err),
    );
  } catch (err) {
    return failed(p, err);
  }
}

/** The store's answer decided: a ban, else each window's verdict and the decision. */
function decided(p: Planned, answer: readonly WindowResult[]): Counted {
  const { c, identity, windows, lists, tier, planned, costs } = p;
  const { route } = c;
  const results = costs ? admissionResults(windows, costs, answer) : answer;
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
  c.limiting.metrics.nearLimit.observe(route.name, windows, planned, results, decision.blockedBy);
  const verdicts = verdictsOf(route, windows, results, decision.blockedBy, lists);
  const deferred = route.deferred && costs ? { windows, planned, costs } : undefined;
  return counted(identity, decision, verdicts, tier, deferred);
}

const failed = (p: Planned, err: unknown): Promise<Counted> => storeFailed(p, err);
