import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CompiledRoute } from '../rules/compile.js';
import type { CorsRoute } from '../rules/model.js';
import { peerOf } from '../identity/peer.js';
import { connectionStrips } from '../identity/resolve.js';
import { windowKey } from '../limits/keys.js';
import { addRateLimitHeaders, partitionKey } from '../limits/rate-limit-headers.js';
import type { Refusal } from '../limits/refusal.js';
import { ietfPolicyOf } from '../limits/tier-choice.js';
import { throttledWarn } from '../logger.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import type { LimiterDecision } from '../metrics/outcomes.js';
import { acceptableRequestId } from '../proxy/headers.js';
import { methodRefusal } from '../routing/method.js';
import type { CanonicalTarget } from '../routing/request-target.js';
import { observeResponse } from './access-log.js';
import type { ListenerContext, RequestContext, RoutedContext } from './context.js';
import { preflightRoute, setCorsHeaders } from './cors.js';
import type { Counted, Limiting } from './count-request.js';
import { recordDecisions } from './verdicts.js';
import { shedLoad } from './load-shedding.js';
import { answerReadyz } from './readyz.js';
import { sendError, sendJson } from './responses.js';

/**
 * The request shell both listener kinds share (the proxy, request-handler.ts, and the decision
 * listener, decision-handler.ts): the request id and the one context object of a request, the 500
 * guard, the health checks, load shedding, and the route + CORS step. Each
 * listener runs its own stages between them. The access log is access-log.ts; the context
 * objects' shapes, context.ts.
 */

/**
 * A listener's request function: each request gets its id (the client's X-Request-Id when
 * acceptable) and its context, then `handle`; whatever `handle` throws (or its promise rejects
 * with) is logged and answered 500 (or the connection cut, when the answer had started). A
 * `handle` that answered at once returns nothing: no promise to watch.
 */
export function requestShell(
  listener: ListenerContext,
  kind: 'proxy' | 'decision',
  handle: (c: RequestContext) => Promise<void> | void,
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
  const fail = (c: RequestContext, err: unknown): void => {
    listener.logger.error({ err, reqId: c.requestId }, failure);
    sendError(c.res, 500, 'internal_error', 'The gateway failed to handle this request.', {
      'x-request-id': c.requestId,
    });
  };
  return (req, res) => {
    const c = openRequest(listener, limiting, decision, req, res);
    try {
      const pending = handle(c);
      if (pending !== undefined) pending.catch((err: unknown) => fail(c, err));
    } catch (err) {
      fail(c, err);
    }
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
    ends: undefined,
  };
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
