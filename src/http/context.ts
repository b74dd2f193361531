/** The context objects of a request, shared by the request shell and the stages it runs. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { CompiledRoute } from '../rules/compile.js';
import type { Peer } from '../identity/peer.js';
import type { RequestIdentity } from '../identity/resolve.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import type { LimiterDecision } from '../metrics/outcomes.js';
import type { LocalFallback } from '../store/local-fallback.js';
import type { WindowStore } from '../store/window-store.js';
import type { LimitOutcome, Limiting } from './count-request.js';
import type { RequestTier } from './request-tier.js';
import type { GatewayState } from './state.js';

/** What both listener kinds are given, once per listener. */
export interface ListenerContext {
  readonly state: () => GatewayState;
  readonly store: WindowStore;
  /** Counts onStoreError: local limiters while the store fails. */
  readonly fallback?: LocalFallback;
  readonly logger: Logger;
  readonly metrics: GatewayMetrics;
  /** Send the IETF RateLimit-Policy / RateLimit headers too. */
  readonly ietfHeaders: boolean;
}

/** One request, from its first step to its access-log line: the only object the shell makes for it. */
export interface RequestContext {
  readonly listener: ListenerContext;
  readonly limiting: Limiting;
  /** Logged on a decision listener's lines; undefined (not logged) on a proxy's. */
  readonly decision: true | undefined;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly requestId: string;
  /** One table for the whole request, even across a reload. */
  readonly state: GatewayState;
  /**
   * The gateway's own headers, passed to whatever answers: X-Request-Id, then the X-RateLimit-*
   * ones. Not res.setHeader: a response with no header set beforehand takes Node's fast writeHead.
   */
  readonly headers: Record<string, string>;
  /** As logged: the request's method and path (a decision listener's: the original request's). */
  method: string | undefined;
  path: string | undefined;
  /** The route matched, a preflight's too, as logged. */
  routeName: string | undefined;
  /** Set by routeOf; read through a RoutedContext. */
  route: CompiledRoute | undefined;
  /** The connection's peer: set when routed, or when the access log needs it. */
  peer: Peer | undefined;
  /** Set by keepCount when the route has limiters. */
  identity: RequestIdentity | undefined;
  /** What came of the request for its limiters, as logged; final once settled. */
  outcome: LimitOutcome;
  /** Set by keepCount: each limiter's verdict, counted in the metrics by `settle`, once. */
  verdicts: readonly (LimiterDecision | undefined)[] | undefined;
  /**
   * Set by keepCount on a route with tiers or while overrides are set (with log.keyParts, also by a
   * list naming workspaces): the tier and what the verified credentials said.
   */
  tier: RequestTier | undefined;
  /** log.keyParts on a chargeAfter route: the cost the upstream reported, as charged (post-charge.ts). */
  charged: number | undefined;
  /** Cleanups run by the access log's 'close' listener (EndHooks, src/proxy/request-end.ts). */
  ends: (() => void)[] | undefined;
}

/** A request with its route (and its peer): what counting and the later stages read. */
export interface RoutedContext extends RequestContext {
  readonly route: CompiledRoute;
  readonly peer: Peer;
}
