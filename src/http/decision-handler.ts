import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { peerOf } from '../identity/peer.js';
import { throttledWarn } from '../logger.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { acceptableRequestId } from '../proxy/headers.js';
import { methodRefusal } from '../routing/method.js';
import { canonicalTarget, type CanonicalTarget } from '../routing/request-target.js';
import type { WindowStore } from '../store/window-store.js';
import { preflightRoute, setCorsHeaders } from './cors.js';
import {
  countRequest,
  credentialRefusal,
  type LimitOutcome,
  type Limiting,
  type Refusal,
} from './limit-request.js';
import { namesNoOriginal, originalRequest } from './original-request.js';
import { shedLoad } from './load-shedding.js';
import { answerReadyz } from './readyz.js';
import { errorBody, sendError, sendJson } from './responses.js';
import type { GatewayState } from './state.js';

export interface DecisionContext {
  readonly state: () => GatewayState;
  readonly store: WindowStore;
  readonly logger: Logger;
  readonly metrics: GatewayMetrics;
  readonly ietfHeaders: boolean;
  /** The status of a rate-limited answer: 429, or 403 for nginx's auth_request. */
  readonly onLimited: 429 | 403;
}

/**
 * A decision listener's handler (forward-auth): it reads the original request from the proxy's
 * headers (see original-request.ts), matches the same routes, resolves the same identity and
 * counts in the same store as the proxy handler (limit-request.ts), and answers without forwarding:
 * 200 with the X-RateLimit-* headers when the request may pass, else the gateway's refusal with
 * its exact headers and body.
 *
 * With onLimited 403 (nginx), whose auth_request keeps only the status of a refusal, every refusal
 * also carries its JSON body in X-Tollgate-Error, for the nginx config to answer with.
 * The in-flight caps (requests.maxInFlightPerIp, streams) are not applied: the decision service
 * never sees the request end.
 */
export function createDecisionHandler(
  ctx: DecisionContext,
): (req: IncomingMessage, res: ServerResponse) => void {
  const limiting: Limiting = {
    store: ctx.store,
    metrics: ctx.metrics,
    ietfHeaders: ctx.ietfHeaders,
    warnStore: throttledWarn(ctx.logger, 'rate-limit store failed'),
  };
  return (req, res) => {
    const requestId = acceptableRequestId(req.headers['x-request-id']) ?? randomUUID();
    answer(ctx, limiting, req, res, requestId).catch((err: unknown) => {
      ctx.logger.error({ err }, 'decision failed');
      sendError(res, 500, 'internal_error', 'The gateway failed to handle this request.', {
        'x-request-id': requestId,
      });
    });
  };
}

async function answer(
  ctx: DecisionContext,
  limiting: Limiting,
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
): Promise<void> {
  const state = ctx.state();
  const headers: Record<string, string> = { 'x-request-id': requestId };
  const seen: { route?: string; outcome: LimitOutcome; method?: string; path?: string } = {
    outcome: 'unlimited',
  };
  if (ctx.logger.isLevelEnabled('info')) {
    res.once('close', () => {
      ctx.logger.info({
        reqId: requestId,
        decision: true,
        method: seen.method,
        path: seen.path,
        status: res.statusCode,
        route: seen.route,
        limit: seen.outcome,
      });
    });
  }

  if (namesNoOriginal(req.headers) && (req.method === 'GET' || req.method === 'HEAD')) {
    if (req.url === '/healthz') return sendJson(res, 200, '{"status":"ok"}', headers);
    if (req.url === '/readyz') return answerReadyz(res, ctx.store, headers);
  }
  if (shedLoad(res, state.table.config.requests.shedAfter, ctx.metrics, headers)) return;
  const original = originalRequest(req.headers);
  if (!original.ok) return sendError(res, 400, 'invalid_original_request', original.reason, headers);
  const { method, host } = original;
  const target = canonicalTarget(original.uri);
  seen.method = method;
  seen.path = target.ok ? target.path : target.matchPath;

  const { router } = state.table;
  // A CORS preflight is never counted (as on a proxy listener): the proxy's upstream answers it.
  const preflight = preflightRoute(router, method, req.headers, target.matchPath, host);
  if (preflight) {
    seen.route = preflight.name;
    return allow(res, headers);
  }
  const route = router.matchPath(host, method, target.matchPath);
  if (!route) return sendError(res, 404, 'route_not_found', 'No route matches this request.', headers);
  seen.route = route.name;
  if (route.cors) {
    res.setHeader('x-request-id', requestId); // first, as on every response
    setCorsHeaders(res, route.cors, req.headers.origin);
  }

  if (route.limiters.length > 0) {
    const peer = peerOf(req.socket, state.identity);
    const counted = await countRequest(limiting, state, route, peer, req.headers, requestId, headers, seen);
    if (counted.refusal) return refuse(ctx, res, counted.refusal, headers);
    // Refused only after counting, as on a proxy listener.
    const invalid = invalidRequest(target, method);
    if (invalid) return refuse(ctx, res, invalid, headers);
    const credentials = credentialRefusal(route, counted.identity);
    if (credentials) return refuse(ctx, res, credentials, headers);
    return allow(res, headers);
  }
  const invalid = invalidRequest(target, method);
  if (invalid) return refuse(ctx, res, invalid, headers);
  allow(res, headers);
}

function allow(res: ServerResponse, headers: Record<string, string>): void {
  headers['content-length'] = '0';
  res.writeHead(200, headers);
  res.end();
}

/** The proxy listener's 400s for what it forwards: a target it cannot canonicalise, a lower-case method. */
function invalidRequest(target: CanonicalTarget, method: string): Refusal | undefined {
  if (!target.ok) {
    return {
      status: 400,
      code: 'invalid_request_target',
      message: `Invalid request target: ${target.reason}.`,
    };
  }
  const misspelt = methodRefusal(method);
  return misspelt === undefined ? undefined : { status: 400, code: 'invalid_method', message: misspelt };
}

/** The proxy listener's refusal, its 429 given the listener's onLimited status. */
function refuse(
  ctx: DecisionContext,
  res: ServerResponse,
  refusal: Refusal,
  headers: Record<string, string>,
): void {
  const status = refusal.status === 429 ? ctx.onLimited : refusal.status;
  if (ctx.onLimited === 403)
    headers['x-tollgate-error'] = asciiJson(errorBody(refusal.code, refusal.message));
  sendError(res, status, refusal.code, refusal.message, headers);
}

/**
 * JSON text a header can carry: non-ASCII characters as \u escapes (the same JSON value; the
 * same bytes when the message is ASCII, as the shipped messages are).
 */
export function asciiJson(json: string): string {
  // eslint-disable-next-line no-control-regex -- everything outside ASCII is what is escaped
  return json.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
