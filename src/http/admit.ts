import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CompiledRoute } from '../rules/compile.js';
import type { Peer } from '../identity/peer.js';
import { clientIpKey, type RequestIdentity } from '../identity/resolve.js';
import type { Admission, StreamBounds, StreamHolder } from '../limits/admission.js';
import { removeRateLimitHeaders } from '../limits/rate-limit-headers.js';
import type { Refusal } from '../limits/refusal.js';
import { onRequestEnd, requestGone, type EndHooks } from '../proxy/request-end.js';
import { addRetryAfter, sendRefusal } from './responses.js';
import type { GatewayState } from './state.js';

/** What admission reads of a routed request (a RoutedContext is one); `headers` gets Retry-After when refused. */
export interface AdmittedRequest {
  readonly state: GatewayState;
  readonly route: CompiledRoute;
  readonly peer: Peer;
  /** Counting's identity; undefined for a route without limiters. */
  readonly identity: RequestIdentity | undefined;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The gateway's headers of the request (the route's X-RateLimit-* among them). */
  readonly headers: Record<string, string>;
  /** The request's end hooks (request-end.ts): the access log's 'close' listener runs them. */
  ends: EndHooks['ends'];
}

/**
 * Takes the concurrency slots the request needs before its body is read or an upstream connection
 * taken; they are given back exactly once when the request ends, whether it finished, failed, the
 * client reset its stream or dropped the connection with requests still queued (see request-end).
 * A refused request is answered here (429, or 503 when the upstream's stream budget is spent) with
 * Retry-After, and its connection closed; the window's X-RateLimit-* headers are taken off, since
 * a cap's 429 with "Remaining: 296" would contradict itself. Admission is the in-flight caps only;
 * counting in the limiters' windows came before it (count-request.ts). Returns true when admitted,
 * the refusal it answered, or false when the client had left.
 */
export function admit(admission: Admission, r: AdmittedRequest): boolean | Refusal {
  const { state, route, identity, req, res, headers: rateHeaders } = r;
  const config = state.table.config;
  // The client left while the limiter waited: nothing to hold, nothing to answer.
  if (requestGone(req, res)) return false;
  if (!route.stream) {
    const max = config.requests.maxInFlightPerIp;
    if (max === 0) return true; // no bound: not even counted
    const clientIp = clientIpOf(r);
    const refusal = admission.admitRequest(clientIp, max);
    if (refusal) return refuse(res, refusal, rateHeaders);
    onRequestEnd(req, res, () => admission.releaseRequest(clientIp), r);
    return true;
  }
  const bounds: StreamBounds = {
    maxStreamsPerSession: config.streams.maxPerSession,
    maxStreamsPerIp: config.streams.maxPerIp,
    streamConnections: config.upstreams[route.upstream]?.streamConnections ?? 0,
  };
  const holder: StreamHolder = {
    ip: clientIpOf(r),
    // The same verified session the jwt-keyed limiters count (hashed); none when the JWT failed.
    session: identity?.jwt?.ok ? identity.hashed.get('jwt') : undefined,
    upstream: route.upstream,
  };
  const refusal = admission.admitStream(holder, bounds);
  if (refusal) return refuse(res, refusal, rateHeaders);
  onRequestEnd(req, res, () => admission.releaseStream(holder), r);
  return true;
}

/** The client address in key form: counting's, else resolved now (a route without limiters). */
function clientIpOf(r: AdmittedRequest): string {
  return r.identity?.clientIp ?? clientIpKey(r.state.identity, r.peer, r.req.headers);
}

/** The connection is closed too: it is one more than the client may hold, and its body is unread. */
function refuse(res: ServerResponse, refusal: Refusal, rateHeaders: Record<string, string>): Refusal {
  removeRateLimitHeaders(rateHeaders);
  addRetryAfter(rateHeaders, refusal); // first, then Connection
  rateHeaders['connection'] = 'close';
  sendRefusal(res, refusal, rateHeaders);
  return refusal;
}
