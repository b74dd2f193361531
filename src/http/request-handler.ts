import type { IncomingMessage, ServerResponse } from 'node:http';
// Imported, not the global: Node 20's global `performance` is a lazy getter, run on every access.
import { performance } from 'node:perf_hooks';
import type { Admission } from '../limits/admission.js';
import { declaresTooLarge } from '../proxy/body-limit.js';
import type { LiveStreams } from '../proxy/live-streams.js';
import type { ResponseBuffers } from '../proxy/response-buffers.js';
import type { ForwardOptions, ForwardOutcome, ResponseHook, UpstreamPool } from '../proxy/upstream-pool.js';
import type { CanonicalTarget } from '../routing/request-target.js';
import { canonicalTargetOf } from '../routing/target-cache.js';
import { throttledWarn } from '../logger.js';
import { statusClass, type LimiterDecision } from '../metrics/outcomes.js';
import { admit } from './admit.js';
import { answerPreflight } from './cors.js';
import { countRequest, type Counted, type DeferredCharge } from './count-request.js';
import { credentialRefusal } from './credential-refusal.js';
import { postCharge, postChargeHook } from './post-charge.js';
import {
  answerHealthCheck,
  isHealthCheck,
  keepCount,
  connectionRefusal,
  malformedRequest,
  preflightOf,
  requestShell,
  routeOf,
  settle,
  shed,
} from './request-context.js';
import { observeResponse } from './access-log.js';
import type { ListenerContext, RequestContext, RoutedContext } from './context.js';
import { bodyAtHand, requestBody, sendTooLarge } from './request-body.js';
import { sendError, sendRefusal } from './responses.js';

export type { LimitOutcome } from './count-request.js';

export interface HandlerContext extends ListenerContext {
  readonly protocol: 'http' | 'https';
  /** Event-stream responses in flight, ended at shutdown. */
  readonly liveStreams?: LiveStreams;
  /** The per-process concurrency caps (requests in flight per IP, streams per session and IP). */
  readonly admission: Admission;
  /** The response bytes held for clients slower than their upstream. */
  readonly responseBuffers?: ResponseBuffers;
}

interface Warnings {
  readonly unreachable: (fields: object) => void;
  readonly timeout: (fields: object) => void;
}

type ValidTarget = Extract<CanonicalTarget, { ok: true }>;

/** A proxy listener's handler: the shell (request-context.ts) around the stages of `handle`. */
export function createRequestHandler(
  ctx: HandlerContext,
): (req: IncomingMessage, res: ServerResponse) => void {
  const warn: Warnings = {
    unreachable: throttledWarn(ctx.logger, 'upstream unreachable'),
    timeout: throttledWarn(ctx.logger, 'upstream timed out'),
  };
  return requestShell(ctx, 'proxy', (c) => handle(ctx, warn, c));
}

/**
 * A proxied request, stage by stage: health checks, shedding, preflight, route, counting, the
 * checks made only after counting, the body, forwarding. A stage that answers ends the request.
 * Not async up to counting: a request answered by then (a 404, a flooding key's 429 from the
 * over-limit cache) returns nothing, so the shell makes no promise and no catch for it.
 */
function handle(ctx: HandlerContext, warn: Warnings, c: RequestContext): Promise<void> | void {
  const target = canonicalTargetOf(c.req.url ?? '/');
  const method = (c.method = c.req.method ?? 'GET');
  const path = (c.path = target.ok ? target.path : target.matchPath);
  if (isHealthCheck(method, path)) return answerHealthCheck(c, path);
  observeResponse(c, 'info');
  if (shed(c)) return;
  const { host } = c.req.headers;
  const preflight = preflightOf(c, method, host, target.matchPath);
  if (preflight) return answerPreflight(c.res, preflight.cors, c.req.headers);
  const r = routeOf(c, method, host, target.matchPath);
  if (!r) return;
  if (r.route.limiters.length === 0) return proceed(ctx, warn, r, target, method, undefined);
  const answer = countRequest(r);
  // A refusal at once (a flooding key's 429 from the over-limit cache): answered with no promise.
  if (!(answer instanceof Promise) && answer.refusal) {
    const refusal = keepCount(r, answer)!;
    return sendRefusal(r.res, refusal, r.headers); // a 429's body is compiled once per limiter
  }
  return proceed(ctx, warn, r, target, method, answer);
}

/**
 * After routing: counting's answer kept (a refusal answered), then the checks, the body,
 * forwarding, and the post-charge of a deferred charge.
 */
async function proceed(
  ctx: HandlerContext,
  warn: Warnings,
  r: RoutedContext,
  target: CanonicalTarget,
  method: string,
  answer: Counted | Promise<Counted> | undefined,
): Promise<void> {
  let deferred: DeferredCharge | undefined;
  if (answer !== undefined) {
    const counted = answer instanceof Promise ? await answer : answer;
    const refusal = keepCount(r, counted);
    if (refusal) return sendRefusal(r.res, refusal, r.headers);
    deferred = counted.deferred;
  }
  if (!passes(ctx, r, target, method)) {
    if (deferred) postCharge(r, deferred, r.res.statusCode); // the gateway's own 4xx (countOnly: [401])
    return;
  }
  // The request passed: now the client may send the body it held back.
  if (r.req.headers.expect !== undefined) r.res.writeContinue();
  // Usually at hand (none, or all of it arrived with the headers): then nothing is awaited.
  let body = bodyAtHand(r.req, r.route.maxBodySize);
  if (body === undefined) {
    const { bodyTimeout } = r.state.table.config.requests;
    body = await requestBody(r.req, r.res, r.route.maxBodySize, bodyTimeout, r.headers);
    if (body === undefined) {
      if (deferred) postCharge(r, deferred, r.res.statusCode);
      return settle(r, bodyRefusal(r.res.statusCode), false);
    }
  }
  settle(r);
  const upstream = r.state.upstreams.get(r.route.upstream)!;
  const started = performance.now();
  const hook = deferred && postChargeHook(r, deferred);
  const forwarded = await forward(ctx, r, target, body, upstream, hook);
  settleForward(ctx, warn, r, upstream, forwarded, started);
  // No upstream response: the gateway's 502 or 504 is the status countOnly sees.
  if (deferred && !hook!.fired && forwarded.kind !== 'ok' && forwarded.kind !== 'aborted')
    postCharge(r, deferred, forwarded.kind === 'timeout' ? 504 : 502);
}

/**
 * The checks made after counting, so malformed requests still spend their budget: the target and
 * the method (400), a Connection header stripping what the request was keyed by (400), a missing
 * or bad credential (401), a declared body over the route's bound (413), then admission (the
 * in-flight caps, admit.ts). False once one of them answered.
 */
function passes(
  ctx: HandlerContext,
  r: RoutedContext,
  target: CanonicalTarget,
  method: string,
): target is ValidTarget {
  const { route, identity } = r;
  const refusal =
    malformedRequest(target, method) ??
    connectionRefusal(r.req.headers.connection, route.identityHeaders) ??
    (identity ? credentialRefusal(route, identity) : undefined);
  if (refusal) {
    settle(r, refusal.decision);
    sendRefusal(r.res, refusal, r.headers);
    return false;
  }
  if (declaresTooLarge(r.req, route.maxBodySize)) {
    settle(r, 'body_too_large');
    sendTooLarge(r.res, route.maxBodySize, r.headers);
    return false;
  }
  const admitted = admit(ctx.admission, r);
  if (admitted === true) return true;
  settle(r, admitted === false ? undefined : admitted.decision, false); // false: the client left
  return false;
}

/** What a body that was not read came to: 413, 408, or (the client left) the limiters' own verdicts. */
function bodyRefusal(status: number): LimiterDecision | undefined {
  return status === 413 ? 'body_too_large' : status === 408 ? 'body_timeout' : undefined;
}

/** Forwards the request to its upstream, the gateway's headers added to the response. */
function forward(
  ctx: HandlerContext,
  r: RoutedContext,
  target: ValidTarget,
  body: ForwardOptions['body'],
  upstream: UpstreamPool,
  hook: ResponseHook | undefined,
): Promise<ForwardOutcome> {
  const { peer, route } = r;
  const { requests } = r.state.table.config;
  return upstream.forward(
    r.req,
    r.res,
    { peer: peer.text, peerTrusted: peer.trusted, protocol: ctx.protocol, requestId: r.requestId },
    {
      target: target.target,
      extraHeaders: r.headers,
      body,
      stream: route.stream,
      liveStreams: ctx.liveStreams,
      cors: route.cors !== undefined,
      responseTimeout: requests.responseTimeout,
      buffers: ctx.responseBuffers,
      bufferLimits: requests.responseBuffer,
      hook,
      ends: r, // observeResponse's 'close' listener runs them
    },
  );
}

/** Counts the upstream's answer in the metrics; answers 502 or 504 when there was none. */
function settleForward(
  ctx: HandlerContext,
  warn: Warnings,
  r: RoutedContext,
  upstream: UpstreamPool,
  forwarded: ForwardOutcome,
  started: number,
): void {
  const result = forwarded.kind === 'ok' ? statusClass(forwarded.status) : forwarded.kind;
  ctx.metrics.upstream(r.route.name, upstream.name, result, (performance.now() - started) / 1000);
  if (forwarded.kind === 'unreachable') {
    warn.unreachable({ reqId: r.requestId, upstream: upstream.name, err: forwarded.error.message });
    sendError(r.res, 502, 'bad_gateway', 'The upstream service is unavailable.', r.headers);
  } else if (forwarded.kind === 'timeout') {
    warn.timeout({ reqId: r.requestId, upstream: upstream.name, err: forwarded.error.message });
    sendError(r.res, 504, 'gateway_timeout', 'The upstream service did not answer in time.', r.headers);
  }
}
