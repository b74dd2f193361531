import type { IncomingHttpHeaders } from 'node:http';
import type { CompiledRoute, RouteWindow } from '../rules/compile.js';
import type { Peer } from '../identity/peer.js';
import type { RequestIdentity } from '../identity/resolve.js';
import type { Decision, RateLimitReport } from '../limits/decision.js';
import type { Refusal } from '../limits/refusal.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import type { LimiterDecision } from '../metrics/outcomes.js';
import type { LocalFallback } from '../store/local-fallback.js';
import type { WindowRequest, WindowStore } from '../store/window-store.js';
import type { Lists, WindowVerdict } from './verdicts.js';
import type { GatewayState } from './state.js';
import type { RequestTier } from './request-tier.js';

/** What counting (count-request.ts) reads of a request and what it comes to. */

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

/** A request's windows as planned for the store: what deciding, or a store failure, reads. */
export interface Planned {
  readonly c: CountedRequest;
  readonly identity: RequestIdentity;
  readonly windows: readonly RouteWindow[];
  readonly lists: Lists;
  readonly tier: RequestTier | undefined;
  readonly nowMs: number;
  readonly planned: readonly WindowRequest[];
  readonly costs: number[] | undefined;
  readonly requests: readonly WindowRequest[];
}

/** The decision as counting reports it: a 429 refusal when refused. */
export function counted(
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
