import type { ServerResponse } from 'node:http';
import type { CompiledRoute } from '../config/rule-table.js';
import type { GatewayConfig } from '../config/schema.js';
import type { RequestIdentity } from '../identity/resolve.js';
import type { Admission, Refusal, StreamBounds, StreamHolder } from '../limits/admission.js';
import { sendError } from './responses.js';

/**
 * Takes the concurrency slots the request needs before its body is read or an upstream connection
 * taken; they are given back when the response closes, whether it finished, failed or the client
 * left ('close' is emitted once in every case). A refused request is answered here (429, or 503 when
 * the upstream's stream budget is spent) with the route's rate-limit headers and Retry-After, and
 * its connection closed.
 * Returns false when the request must go no further.
 */
export function admit(
  admission: Admission,
  config: GatewayConfig,
  route: CompiledRoute,
  clientIp: string,
  identity: RequestIdentity | undefined,
  res: ServerResponse,
  rateHeaders: Record<string, string>,
): boolean {
  // The client left while the limiter waited: nothing to hold ('close' has passed), nothing to answer.
  if (res.closed) return false;
  if (!route.stream) {
    const max = config.requests.maxInFlightPerIp;
    if (max === 0) return true; // no bound: not even counted
    const refusal = admission.admitRequest(clientIp, max);
    if (refusal) return refuse(res, refusal, rateHeaders);
    // 'on', not 'once': a response emits 'close' once, and 'once' would add a wrapper per request.
    res.on('close', () => admission.releaseRequest(clientIp));
    return true;
  }
  const bounds: StreamBounds = {
    maxStreamsPerSession: config.streams.maxPerSession,
    maxStreamsPerIp: config.streams.maxPerIp,
    streamConnections: config.upstreams[route.upstream]?.streamConnections ?? 0,
  };
  const holder: StreamHolder = {
    ip: clientIp,
    // The same verified session the jwt-keyed limiters count (hashed); none when the JWT failed.
    session: identity?.jwt?.ok ? identity.hashed.get('jwt') : undefined,
    upstream: route.upstream,
  };
  const refusal = admission.admitStream(holder, bounds);
  if (refusal) return refuse(res, refusal, rateHeaders);
  res.on('close', () => admission.releaseStream(holder));
  return true;
}

/** The connection is closed too: it is one more than the client may hold, and its body is unread. */
function refuse(res: ServerResponse, refusal: Refusal, rateHeaders: Record<string, string>): false {
  sendError(res, refusal.status, refusal.code, refusal.message, {
    ...rateHeaders,
    'retry-after': String(refusal.retryAfterSec),
    connection: 'close',
  });
  return false;
}
