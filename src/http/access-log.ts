/** A request's access-log line and its response metrics, written once when its response closes. */
// Imported, not the global: Node 20's global `performance` is a lazy getter, run on every access.
import { performance } from 'node:perf_hooks';
import { walkForwardedFor } from '../net/client-ip.js';
import { peerOf } from '../identity/peer.js';
import { runEndHooks, watchEnds } from '../proxy/request-end.js';
import { hashPart } from '../identity/hash.js';
import { clientIpKey } from '../identity/resolve.js';
import type { RequestContext } from './context.js';

/**
 * The one close hook of a request: when its response closes, it is counted in the metrics (by
 * route and status, with its time: tollgate_responses_total, tollgate_request_duration_seconds)
 * and, when `level` is on, its access-log line written (info, or debug for the health checks,
 * which probes ask every few seconds). Called once per request, before anything answers it; its
 * listener is also the one that runs the request's end hooks (`c.ends`, request-end.ts).
 */
export function observeResponse(c: RequestContext, level: 'info' | 'debug'): void {
  const { logger, metrics } = c.listener;
  const log = logger.isLevelEnabled(level);
  const started = performance.now();
  // Read now: an HTTP/2 stream's socket is gone once it closed.
  if (log) c.peer ??= peerOf(c.req.socket, c.state.identity);
  metrics.opened();
  watchEnds(c);
  // 'on', not 'once': a response emits 'close' once, and 'once' adds a wrapper per request.
  c.res.on('close', () => {
    try {
      logClosed(c, level, log, started);
    } finally {
      // The request's other cleanups (admission slots, the relay's abort): one listener for all.
      runEndHooks(c);
    }
  });
}

/** The response's metrics and its access-log line, once it closed. */
function logClosed(c: RequestContext, level: 'info' | 'debug', log: boolean, started: number): void {
  const { logger, metrics } = c.listener;
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
