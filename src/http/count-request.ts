import type { IncomingHttpHeaders } from 'node:http';
import type { CompiledLimiter, CompiledRoute } from '../rules/compile.js';
import type { RouteWindow } from '../rules/model.js';
import type { Peer } from '../identity/peer.js';
import { identityOf, needsCredentials, resolveIdentity, type RequestIdentity } from '../identity/resolve.js';
import { decide, type Decision, type RateLimitReport } from '../limits/decision.js';
import { planWindows } from '../limits/plan.js';
import type { Refusal } from '../limits/refusal.js';
import type { GatewayMetrics, LimiterDecision } from '../metrics/gateway-metrics.js';
import type { WindowResult, WindowStore } from '../store/window-store.js';
import type { GatewayState } from './state.js';
import { needsTier, requestTier, type RequestTier } from './request-tier.js';

/**
 * Counting, which the proxy handler and the decision handler share: identity → plan → store →
 * decision, the limiter metrics, and the refusals that follow (429, 503 failing closed, 401 for a
 * bad credential). Each handler answers a refusal in its own way; the refusal itself is the same.
 * Counting is not admission: the in-flight caps are admit.ts's, taken after counting.
 */

/** How the limiters treated a request, as logged and counted in metrics. */
export type LimitOutcome = LimiterDecision | 'unlimited';

/** A listener's means of counting, built once per listener. */
export interface Limiting {
  readonly store: WindowStore;
  readonly metrics: GatewayMetrics;
  /** Send the IETF RateLimit-Policy / RateLimit headers too. */
  readonly ietfHeaders: boolean;
  /** The throttled warning of a failed store call. */
  readonly warnStore: (fields: object) => void;
}

/** What counting reads of a routed request (a RequestContext is one); it is never written. */
export interface CountedRequest {
  readonly limiting: Limiting;
  /** The table of the request (one for the whole request, even across a reload). */
  readonly state: GatewayState;
  readonly route: CompiledRoute;
  readonly peer: Peer;
  readonly req: { readonly headers: IncomingHttpHeaders };
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
  /** The tier chosen, on a route with tiers or while overrides are set. */
  readonly tier?: RequestTier | undefined;
}

const UNAVAILABLE: Refusal = {
  status: 503,
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
  const tier = needsTier(state.tiers, route)
    ? await requestTier(state.tiers, state.identity, route, identity, reqHeaders)
    : undefined;
  const windows = tier?.windows ?? route.windows;
  if (windows.length === 0)
    return { identity, outcome: 'unlimited', report: undefined, refusal: undefined, tier };
  const requests = planWindows(windows, (part) => identity.hashed.get(part)!, state.keyPrefix);
  let decision: Decision;
  try {
    const results = await lim.store.hit(requests);
    decision = decide(windows, results, Date.now());
    recordDecisions(lim.metrics, route, windows, results, decision.blockedBy);
  } catch (err) {
    for (const l of route.limiters) lim.metrics.limiterDecision(l.name, 'store_error');
    lim.warnStore({ reqId: c.requestId, err: (err as Error).message });
    if (route.failsClosed)
      return { identity, outcome: 'store_error', report: undefined, refusal: UNAVAILABLE, tier };
    lim.metrics.uncounted();
    return { identity, outcome: 'store_error', report: undefined, refusal: undefined, tier };
  }
  const { report } = decision;
  if (!decision.allowed) {
    const limiter = decision.blockedBy!;
    const retryAfterSec = decision.retryAfterSec;
    const refusal = { status: 429, code: 'rate_limited', message: limiter.message, retryAfterSec, limiter };
    return { identity, outcome: 'limited', report, refusal, tier };
  }
  const outcome = decision.shadowLimited ? 'shadow_limited' : 'allowed';
  return { identity, outcome, report, refusal: undefined, tier };
}

/** Counts each limiter's verdict: limited (it refused), shadow_limited (a shadow limiter's window was spent), or allowed. */
function recordDecisions(
  metrics: GatewayMetrics,
  route: CompiledRoute,
  windows: readonly RouteWindow[],
  results: readonly WindowResult[],
  blockedBy: CompiledLimiter | undefined,
): void {
  for (const limiter of route.limiters) {
    let decision: LimiterDecision = 'allowed';
    if (limiter === blockedBy) decision = 'limited';
    else if (limiter.shadow && windows.some((w, i) => w.limiter === limiter && !results[i]!.allowed)) {
      decision = 'shadow_limited';
    }
    metrics.limiterDecision(limiter.name, decision);
  }
}

/** The same codes and messages as the embedded widget service's, so clients see one vocabulary. */
const JWT_ERRORS = {
  missing: { status: 401, code: 'missing_token', message: 'Visitor token missing.' },
  expired: { status: 401, code: 'token_expired', message: 'Visitor token has expired.' },
  invalid: { status: 401, code: 'invalid_token', message: 'Visitor token is invalid.' },
} as const satisfies Record<string, Refusal>;

const TOKEN_MISSING: Refusal = { status: 401, code: 'missing_token', message: 'API token missing.' };
const TOKEN_INVALID: Refusal = {
  status: 401,
  code: 'invalid_token',
  message: 'API token is invalid or has been revoked.',
};

/** The 401 when an enforcing limiter keys on a credential the request lacks. The request was already counted. */
export function credentialRefusal(route: CompiledRoute, identity: RequestIdentity): Refusal | undefined {
  if (route.requiresJwt && identity.jwt && !identity.jwt.ok) return JWT_ERRORS[identity.jwt.reason];
  const token = identity.workspaceToken;
  if (route.requiresWorkspaceToken && token && !token.ok) {
    return token.reason === 'missing' ? TOKEN_MISSING : TOKEN_INVALID;
  }
  return undefined;
}
