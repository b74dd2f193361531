import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
// Imported, not the global: Node 20's global `performance` is a lazy getter, run on every access.
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { CompiledRoute } from '../rules/compile.js';
import type { CorsRoute } from '../rules/model.js';
import { walkForwardedFor } from '../net/client-ip.js';
import { peerOf, type Peer } from '../identity/peer.js';
import { hashPart } from '../identity/hash.js';
import { clientIpKey, connectionStrips, type RequestIdentity } from '../identity/resolve.js';
import { windowKey } from '../limits/keys.js';
import { addRateLimitHeaders, partitionKey } from '../limits/rate-limit-headers.js';
import type { Refusal } from '../limits/refusal.js';
import { ietfPolicyOf } from '../limits/tier-choice.js';
import { throttledWarn } from '../logger.js';
import type { GatewayMetrics, LimiterDecision } from '../metrics/gateway-metrics.js';
import { acceptableRequestId } from '../proxy/headers.js';
import { methodRefusal } from '../routing/method.js';
import type { CanonicalTarget } from '../routing/request-target.js';
import type { LocalFallback } from '../store/local-fallback.js';
import type { WindowStore } from '../store/window-store.js';
import { preflightRoute, setCorsHeaders } from './cors.js';
import { recordDecisions, type Counted, type LimitOutcome, type Limiting } from './count-request.js';
import { shedLoad } from './load-shedding.js';
import { answerReadyz } from './readyz.js';
import type { RequestTier } from './request-tier.js';
import { sendError, sendJson } from './responses.js';
import type { GatewayState } from './state.js';

/**
 * The request shell both listener kinds share (the proxy, request-handler.ts, and the decision
 * listener, decision-handler.ts): the request id and the one context object of a request, the 500
 * guard, the access log, the health checks, load shedding, and the route + CORS step. Each
 * listener runs its own stages between them.
 */

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
}

/** A request with its route (and its peer): what counting and the later stages read. */
export interface RoutedContext extends RequestContext {
  readonly route: CompiledRoute;
  readonly peer: Peer;
}

/**
 * A listener's request function: each request gets its id (the client's X-Request-Id when
 * acceptable) and its context, then `handle`; whatever `handle` throws is logged and answered 500
 * (or the connection cut, when the answer had started).
 */
export function requestShell(
  listener: ListenerContext,
  kind: 'proxy' | 'decision',
  handle: (c: RequestContext) => Promise<void>,
): (req: IncomingMessage, res: ServerResponse) => void {
  const limiting: Limiting = {
    store: listener.store,
    metrics: listener.metrics,
    ietfHeaders: listener.ietfHeaders,
    warnStore: throttledWarn(listener.logger, 'rate-limit store failed'),
    fallback: listener.fallback,
    warnCharge: throttledWarn(listener.logger, 'chargeAfter: the upstream reported no valid cost'),
  };
  const decision = kind === 'decision' || undefined;
  const failure = kind === 'decision' ? 'decision failed' : 'request failed';
  return (req, res) => {
    const c = openRequest(listener, limiting, decision, req, res);
    handle(c).catch((err: unknown) => {
      listener.logger.error({ err, reqId: c.requestId }, failure);
      sendError(res, 500, 'internal_error', 'The gateway failed to handle this request.', {
        'x-request-id': c.requestId,
      });
    });
  };
}

function openRequest(
  listener: ListenerContext,
  limiting: Limiting,
  decision: true | undefined,
  req: IncomingMessage,
  res: ServerResponse,
): RequestContext {
  const requestId = acceptableRequestId(req.headers['x-request-id']) ?? randomUUID();
  return {
    listener,
    limiting,
    decision,
    req,
    res,
    requestId,
    state: listener.state(),
    headers: { 'x-request-id': requestId },
    method: undefined,
    path: undefined,
    routeName: undefined,
    route: undefined,
    peer: undefined,
    identity: undefined,
    outcome: 'unlimited',
    verdicts: undefined,
    tier: undefined,
    charged: undefined,
  };
}

/**
 * The one close hook of a request: when its response closes, it is counted in the metrics (by
 * route and status, with its time: tollgate_responses_total, tollgate_request_duration_seconds)
 * and, when `level` is on, its access-log line written (info, or debug for the health checks,
 * which probes ask every few seconds). Called once per request, before anything answers it.
 */
export function observeResponse(c: RequestContext, level: 'info' | 'debug'): void {
  const { logger, metrics } = c.listener;
  const log = logger.isLevelEnabled(level);
  const started = performance.now();
  // Read now: an HTTP/2 stream's socket is gone once it closed.
  if (log) c.peer ??= peerOf(c.req.socket, c.state.identity);
  metrics.opened();
  // 'on', not 'once': a response emits 'close' once, and 'once' adds a wrapper per request.
  c.res.on('close', () => {
    const elapsedMs = performance.now() - started;
    // No answer begun: the client left first (nginx's 499).
    const status = c.res.headersSent ? c.res.statusCode : CLIENT_LEFT;
    metrics.response(c.routeName ?? '', status, elapsedMs / 1000);
    if (!log) return;
    logger[level]({
      reqId: c.requestId,
      decision: c.decision,
      method: c.method,
      path: c.path,
      client: loggedClient(c),
      status: c.res.statusCode,
      route: c.routeName,
      limit: c.outcome,
      ms: Math.round(elapsedMs * 100) / 100,
      aborted: !c.res.writableFinished || undefined,
      ...(c.state.table.config.log.keyParts ? keyPartsLogged(c) : undefined),
    });
  });
}

/** The status counted for a response the client left before it began. */
export const CLIENT_LEFT = 499;

/** The `client` field: the address in full, hashed as a key part is (log.clientAddress), or none. */
function loggedClient(c: RequestContext): string | undefined {
  const mode = c.state.table.config.log.clientAddress;
  if (mode === 'none') return undefined;
  const address = clientAddress(c);
  return mode === 'hashed' ? hashPart(`ip=${address}`) : address;
}

/**
 * What log.keyParts adds to an access line. Undefined fields are left out; a credential's null:
 * checked, and the request had none verified (replay then knows it is none, not unlogged).
 */
interface KeyPartsFields {
  readonly host: string | undefined;
  readonly keys: Record<string, string>;
  readonly bytes: number | undefined;
  readonly charged: number | undefined;
  readonly tier: string | null | undefined;
  readonly token: string | null | undefined;
  readonly workspace: string | null | undefined;
  readonly sub: string | null | undefined;
}

/**
 * log.keyParts: the Host, the hashed key parts (as counted, a bad credential's fallback
 * included; ip and user_agent always), the body's declared size, the cost the upstream reported
 * (chargeAfter), and what the request's verified credentials said (the tier they name, the
 * workspace token's id and workspace, the JWT's subject), so `tollgate replay` can key, cost and
 * tier a candidate's limiters. Never a secret: a workspace token's id is the part before its "|".
 */
function keyPartsLogged(c: RequestContext): KeyPartsFields {
  const keys: Record<string, string> = c.identity ? Object.fromEntries(c.identity.hashed) : {};
  const headers = c.req.headers;
  if (keys['ip'] === undefined) {
    const ip = clientIpKey(c.state.identity, c.peer!, headers);
    keys['ip'] = ip === c.peer!.key ? c.peer!.keyHash : hashPart(`ip=${ip}`);
  }
  keys['user_agent'] ??= hashPart(`ua=${headers['user-agent'] ?? ''}`);
  // A decision listener routes the original request, whose host a proxy sends as X-Forwarded-Host.
  const forwardedHost = c.decision ? headers['x-forwarded-host'] : undefined;
  const host = typeof forwardedHost === 'string' ? forwardedHost : headers.host;
  // The declared body size, for a candidate's cost from body bytes.
  const length = headers['content-length'];
  const { tier } = c;
  // The tier step's token, else the one counting verified (a route keyed by it).
  const counted = c.identity?.workspaceToken;
  const token = tier?.token !== undefined ? tier.token : counted && (counted.ok ? counted.id : null);
  return {
    host,
    keys,
    bytes: length === undefined ? undefined : Number(length),
    charged: c.charged,
    tier: tier?.named,
    token,
    workspace: tier?.workspace,
    sub: tier?.sub,
  };
}

/** The client's address as resolved for limiting (the X-Forwarded-For walk from a trusted peer), in full. */
function clientAddress(c: RequestContext): string {
  const peer = c.peer!;
  const forwardedFor = c.req.headers['x-forwarded-for'];
  if (!peer.trusted || !peer.addr || forwardedFor === undefined) return peer.text;
  return walkForwardedFor(peer.addr, forwardedFor, c.state.identity.trustedProxies).toString();
}

/** True for the health checks both listener kinds answer: GET or HEAD /healthz and /readyz. */
export function isHealthCheck(method: string | undefined, path: string | undefined): boolean {
  return (method === 'GET' || method === 'HEAD') && (path === '/healthz' || path === '/readyz');
}

/** Answers a health check (logged at debug): /healthz 200 while the process runs, /readyz per the store. */
export function answerHealthCheck(c: RequestContext, path: string): Promise<void> | void {
  observeResponse(c, 'debug');
  if (path === '/healthz') return sendJson(c.res, 200, '{"status":"ok"}', c.headers);
  return answerReadyz(c.res, c.listener.store, c.headers);
}

/** Answers 503 when the event loop is overloaded (load-shedding.ts). True when it answered. */
export function shed(c: RequestContext): boolean {
  return shedLoad(c.res, c.state.table.config.requests.shedAfter, c.listener.metrics, c.headers);
}

/**
 * The route of a CORS preflight (never counted; each listener answers it its own way), with
 * X-Request-Id set first, as on every response.
 */
export function preflightOf(
  c: RequestContext,
  method: string,
  host: string | undefined,
  matchPath: string,
): CorsRoute<CompiledRoute> | undefined {
  const preflight = preflightRoute(c.state.table.router, method, c.req.headers, matchPath, host);
  if (!preflight) return undefined;
  c.routeName = preflight.name;
  c.res.setHeader('x-request-id', c.requestId);
  return preflight;
}

/**
 * The request's route, its CORS headers set on the response before anything answers it; undefined
 * once answered 404.
 */
export function routeOf(
  c: RequestContext,
  method: string,
  host: string | undefined,
  matchPath: string,
): RoutedContext | undefined {
  const route = c.state.table.router.matchPath(host, method, matchPath);
  if (!route) {
    sendError(c.res, 404, 'route_not_found', 'No route matches this request.', c.headers);
    return undefined;
  }
  c.routeName = route.name;
  if (route.cors) {
    c.res.setHeader('x-request-id', c.requestId); // first, as on every response
    setCorsHeaders(c.res, route.cors, c.req.headers.origin);
  }
  c.route = route;
  c.peer ??= peerOf(c.req.socket, c.state.identity);
  return c as RoutedContext; // route and peer are now set
}

/** The route's RateLimit-Policy, or, at a tier or an override's limit, the windows' at it. */
const ietfPolicy = (route: CompiledRoute, counted: Counted): string =>
  counted.tier && counted.tier.windows !== route.windows
    ? ietfPolicyOf(counted.tier.windows)
    : route.ietfPolicy;

/**
 * Keeps what counting came to: the outcome, the identity, the X-RateLimit-* headers, and the
 * limiters' verdicts for `settle`. A refusal of counting's own settles the request at once.
 */
export function keepCount(c: RoutedContext, counted: Counted): Refusal | undefined {
  c.outcome = counted.outcome;
  c.identity = counted.identity;
  c.verdicts = counted.verdicts;
  c.tier = counted.tier;
  const { report } = counted;
  if (!c.limiting.ietfHeaders || !report) addRateLimitHeaders(c.headers, report);
  else addRateLimitHeaders(c.headers, report, ietfPolicy(c.route, counted), reportedPartition(c, counted));
  if (counted.refusal) settle(c, undefined, false);
  return counted.refusal;
}

/**
 * Counts a counted request under its limiters once its fate is known: refused after counting
 * (`refused`: a bad credential, a cap, a body bound, a malformed target), or let on (each
 * limiter's own verdict). Once per request; a request no limiter saw is not counted. `admitted`
 * (let on to the upstream, or the decision listener's 200) is false for a refusal of counting's
 * own and for a client that left.
 */
export function settle(c: RequestContext, refused?: LimiterDecision, admitted = refused === undefined): void {
  const verdicts = c.verdicts;
  if (verdicts === undefined || c.route === undefined) return;
  c.verdicts = undefined;
  if (refused !== undefined) c.outcome = refused;
  recordDecisions(c.limiting.metrics, c.route, verdicts, refused);
  if (admitted) auditUncounted(c.limiting.metrics, c.route, verdicts);
}

/**
 * tollgate_admitted_over_limit_total: a request admitted while an enforcing limiter could not
 * count it (the store failed; onStoreError: open, or an open limiter beside local ones) went past
 * that limiter's limit unchecked.
 */
function auditUncounted(
  metrics: GatewayMetrics,
  route: CompiledRoute,
  verdicts: readonly (LimiterDecision | undefined)[],
): void {
  for (let i = 0; i < verdicts.length; i++) {
    if (verdicts[i] !== 'store_error') continue;
    const limiter = route.limiters[i]!;
    if (!limiter.shadow) metrics.admittedOverLimit(limiter.name);
  }
}

/** The `pk` of the window the headers report: its store key, hashed (rate-limit-headers.ts). */
function reportedPartition(c: RoutedContext, counted: Counted): string | undefined {
  const w = c.route.windows.find((rw) => rw.policyName === counted.report!.policyName);
  if (!w) return undefined;
  const hashed = counted.identity.hashed;
  return partitionKey(windowKey(c.state.keyPrefix, w.limiter, w.index, (part) => hashed.get(part)!));
}

/** The 400 when a Connection header would strip Host or a header the request was keyed by. */
export function connectionRefusal(
  connection: string | string[] | undefined,
  identityHeaders: CompiledRoute['identityHeaders'],
): Refusal | undefined {
  const stripped = connectionStrips(connection, identityHeaders);
  if (stripped === undefined) return undefined;
  const message = `The Connection header may not name ${stripped}: the gateway identifies requests by it.`;
  return { status: 400, code: 'invalid_connection_header', decision: 'invalid_target', message };
}

/** The 400s of a request the proxy would not forward: a target it cannot canonicalise, a misspelt method. */
export function malformedRequest(target: CanonicalTarget, method: string): Refusal | undefined {
  if (!target.ok) {
    const message = `Invalid request target: ${target.reason}.`;
    return { status: 400, code: 'invalid_request_target', decision: 'invalid_target', message };
  }
  const misspelt = methodRefusal(method);
  if (misspelt === undefined) return undefined;
  return { status: 400, code: 'invalid_method', decision: 'invalid_target', message: misspelt };
}
