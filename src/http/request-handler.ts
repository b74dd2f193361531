import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { CompiledRoute } from '../rules/compile.js';
import { peerOf } from '../identity/peer.js';
import { clientIpKey, connectionStrips, type RequestIdentity } from '../identity/resolve.js';
import type { Admission } from '../limits/admission.js';
import { declaresTooLarge } from '../proxy/body-limit.js';
import { acceptableRequestId } from '../proxy/headers.js';
import { admit } from './admit.js';
import { bodyAtHand, requestBody, sendTooLarge } from './request-body.js';
import type { LiveStreams } from '../proxy/live-streams.js';
import type { ResponseBuffers } from '../proxy/response-buffers.js';
import { methodRefusal } from '../routing/method.js';
import { canonicalTarget } from '../routing/request-target.js';
import { throttledWarn } from '../logger.js';
import { statusClass, type GatewayMetrics } from '../metrics/gateway-metrics.js';
import type { WindowStore } from '../store/window-store.js';
import { answerPreflight, preflightRoute, setCorsHeaders } from './cors.js';
import { countRequest, credentialRefusal, type LimitOutcome, type Limiting } from './limit-request.js';
import { shedLoad } from './load-shedding.js';
import { answerReadyz } from './readyz.js';
import { sendError, sendJson, sendRateLimited } from './responses.js';
import type { GatewayState } from './state.js';

export type { LimitOutcome } from './limit-request.js';

export interface HandlerContext {
  readonly state: () => GatewayState;
  readonly store: WindowStore;
  readonly logger: Logger;
  readonly metrics: GatewayMetrics;
  readonly protocol: 'http' | 'https';
  /** Send the IETF RateLimit-Policy / RateLimit headers too. */
  readonly ietfHeaders: boolean;
  /** Event-stream responses in flight, ended at shutdown. */
  readonly liveStreams?: LiveStreams;
  /** The per-process concurrency caps (requests in flight per IP, streams per session and IP). */
  readonly admission: Admission;
  /** The response bytes held for clients slower than their upstream. */
  readonly responseBuffers?: ResponseBuffers;
}

interface Warnings {
  readonly limiting: Limiting;
  readonly unreachable: (fields: object) => void;
  readonly timeout: (fields: object) => void;
}

export function createRequestHandler(
  ctx: HandlerContext,
): (req: IncomingMessage, res: ServerResponse) => void {
  const warn: Warnings = {
    limiting: {
      store: ctx.store,
      metrics: ctx.metrics,
      ietfHeaders: ctx.ietfHeaders,
      warnStore: throttledWarn(ctx.logger, 'rate-limit store failed'),
    },
    unreachable: throttledWarn(ctx.logger, 'upstream unreachable'),
    timeout: throttledWarn(ctx.logger, 'upstream timed out'),
  };
  return (req, res) => {
    const requestId = acceptableRequestId(req.headers['x-request-id']) ?? randomUUID();
    handle(ctx, warn, req, res, requestId).catch((err: unknown) => {
      ctx.logger.error({ err }, 'request failed');
      sendError(res, 500, 'internal_error', 'The gateway failed to handle this request.', {
        'x-request-id': requestId,
      });
    });
  };
}

async function handle(
  ctx: HandlerContext,
  warn: Warnings,
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
): Promise<void> {
  const state = ctx.state(); // one table for the whole request, even across a reload
  const target = canonicalTarget(req.url ?? '/');
  const path = target.ok ? target.path : target.matchPath;
  const method = req.method ?? 'GET';
  const seen: { route?: string; outcome: LimitOutcome } = { outcome: 'unlimited' };
  // The gateway's own headers, passed to whatever answers: X-Request-Id, then the X-RateLimit-*
  // ones. Not res.setHeader: a response with no header set beforehand takes Node's fast writeHead.
  const gatewayHeaders: Record<string, string> = { 'x-request-id': requestId };
  // One access-log line per request; nothing is built for it when info is off.
  if (ctx.logger.isLevelEnabled('info')) {
    const started = performance.now();
    res.once('close', () => {
      ctx.logger.info({
        reqId: requestId,
        method,
        path,
        status: res.statusCode,
        route: seen.route,
        limit: seen.outcome,
        ms: Math.round((performance.now() - started) * 100) / 100,
        aborted: !res.writableFinished || undefined,
      });
    });
  }

  if ((method === 'GET' || method === 'HEAD') && (path === '/healthz' || path === '/readyz')) {
    if (path === '/healthz') return sendJson(res, 200, '{"status":"ok"}', gatewayHeaders);
    return answerReadyz(res, ctx.store, gatewayHeaders);
  }
  if (shedLoad(res, state.table.config.requests.shedAfter, ctx.metrics, gatewayHeaders)) return;

  const preflight = preflightRoute(state.table.router, method, req.headers, target.matchPath);
  if (preflight) {
    seen.route = preflight.name;
    res.setHeader('x-request-id', requestId);
    return answerPreflight(res, preflight.cors, req.headers);
  }
  const route = state.table.router.matchPath(req.headers.host, method, target.matchPath);
  if (!route) return sendError(res, 404, 'route_not_found', 'No route matches this request.', gatewayHeaders);
  seen.route = route.name;
  if (route.cors) {
    res.setHeader('x-request-id', requestId); // first, as on every response
    setCorsHeaders(res, route.cors, req.headers.origin);
  }

  const peer = peerOf(req.socket, state.identity);
  let identity: RequestIdentity | undefined;
  if (route.limiters.length > 0) {
    const counted = await countRequest(
      warn.limiting,
      state,
      route,
      peer,
      req.headers,
      requestId,
      gatewayHeaders,
      seen,
    );
    const refused = counted.refusal;
    if (refused) {
      // A 429's body is compiled once per limiter.
      if (refused.limiter) return sendRateLimited(res, refused.limiter, gatewayHeaders);
      return sendError(res, refused.status, refused.code, refused.message, gatewayHeaders);
    }
    identity = counted.identity;
  }
  // Refused only now, after counting, so malformed requests still spend their budget.
  if (!target.ok) {
    const message = `Invalid request target: ${target.reason}.`;
    return sendError(res, 400, 'invalid_request_target', message, gatewayHeaders);
  }
  const misspelt = methodRefusal(method);
  if (misspelt) return sendError(res, 400, 'invalid_method', misspelt, gatewayHeaders);
  if (rejectConnectionHeader(route, req, res, gatewayHeaders)) return;
  if (identity && rejectCredentials(route, identity, res, gatewayHeaders)) return;
  if (declaresTooLarge(req, route.maxBodySize)) return sendTooLarge(res, route.maxBodySize, gatewayHeaders);
  const clientIp = identity?.clientIp ?? clientIpKey(state.identity, peer, req.headers);
  if (!admit(ctx.admission, state.table.config, route, clientIp, identity, req, res, gatewayHeaders)) return;

  // The request passed: now the client may send the body it held back.
  if (req.headers.expect !== undefined) res.writeContinue();
  const { bodyTimeout } = state.table.config.requests;
  // Usually at hand (none, or all of it arrived with the headers): then nothing is awaited.
  let body = bodyAtHand(req, route.maxBodySize);
  if (body === undefined) {
    body = await requestBody(req, res, route.maxBodySize, bodyTimeout, gatewayHeaders);
    if (body === undefined) return;
  }
  const upstream = state.upstreams.get(route.upstream)!;
  const forwardStarted = performance.now();
  const forwarded = await upstream.forward(
    req,
    res,
    { peer: peer.text, peerTrusted: peer.trusted, protocol: ctx.protocol, requestId },
    {
      target: target.target,
      extraHeaders: gatewayHeaders,
      body,
      stream: route.stream,
      liveStreams: ctx.liveStreams,
      cors: route.cors !== undefined,
      responseTimeout: state.table.config.requests.responseTimeout,
      buffers: ctx.responseBuffers,
      bufferLimits: state.table.config.requests.responseBuffer,
    },
  );
  const result = forwarded.kind === 'ok' ? statusClass(forwarded.status) : forwarded.kind;
  ctx.metrics.upstream(route.name, upstream.name, result, (performance.now() - forwardStarted) / 1000);
  if (forwarded.kind === 'unreachable') {
    warn.unreachable({ reqId: requestId, upstream: upstream.name, err: forwarded.error.message });
    sendError(res, 502, 'bad_gateway', 'The upstream service is unavailable.', gatewayHeaders);
  } else if (forwarded.kind === 'timeout') {
    warn.timeout({ reqId: requestId, upstream: upstream.name, err: forwarded.error.message });
    sendError(res, 504, 'gateway_timeout', 'The upstream service did not answer in time.', gatewayHeaders);
  }
}

/** Answers 400 when a Connection header would strip Host or a header the request was keyed by. */
function rejectConnectionHeader(
  route: CompiledRoute,
  req: IncomingMessage,
  res: ServerResponse,
  headers: Record<string, string>,
): boolean {
  const stripped = connectionStrips(req.headers.connection, route.identityHeaders);
  if (stripped !== undefined) {
    const message = `The Connection header may not name ${stripped}: the gateway identifies requests by it.`;
    sendError(res, 400, 'invalid_connection_header', message, headers);
    return true;
  }
  return false;
}

/** Answers 401 when an enforcing limiter keys on a credential the request lacks. The request was already counted. */
function rejectCredentials(
  route: CompiledRoute,
  identity: RequestIdentity,
  res: ServerResponse,
  headers: Record<string, string>,
): boolean {
  const refused = credentialRefusal(route, identity);
  if (refused) sendError(res, refused.status, refused.code, refused.message, headers);
  return refused !== undefined;
}
