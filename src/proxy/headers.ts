import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { connectionTokens } from '../net/connection-header.js';

/** Hop-by-hop headers (RFC 9110 §7.6.1) never cross the proxy. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The client's X-Request-Id when it is a sane token, otherwise undefined. */
export function acceptableRequestId(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' && REQUEST_ID.test(value) ? value : undefined;
}

/** The header names a Connection header lists (lower-case), or undefined when it lists none but keep-alive/close. */
function namedByConnection(connection: string | string[] | undefined): Set<string> | undefined {
  if (typeof connection !== 'string') return undefined;
  const names = connectionTokens(connection);
  return names && new Set(names);
}

/**
 * Copies end-to-end headers: drops hop-by-hop ones and those named in Connection, any in `drop`,
 * and the names in `strip` (skipped here rather than deleted after: a delete would turn the
 * object into a slow dictionary for writeHead).
 */
export function endToEnd(
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
  drop?: (name: string) => boolean,
  strip?: readonly string[],
): Record<string, string | string[]> {
  const named = namedByConnection(headers['connection']);
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || HOP_BY_HOP.has(name) || named?.has(name) || drop?.(name)) continue;
    if (strip !== undefined && strip.includes(name)) continue;
    out[name] = value;
  }
  return out;
}

export interface ForwardedFacts {
  readonly peer: string;
  /** The peer is a trusted proxy, so its X-Forwarded-* values are kept and extended. */
  readonly peerTrusted: boolean;
  readonly protocol: string;
  readonly requestId: string;
}

/** Forwarding headers only a trusted proxy may set; from anyone else they are dropped. */
const PROXY_SET = new Set([
  'forwarded',
  'x-forwarded-port',
  'x-forwarded-prefix',
  'x-forwarded-ssl',
  'x-forwarded-scheme',
  'x-real-ip',
  'x-client-ip',
  'true-client-ip',
]);

/** Request headers for the upstream: end-to-end headers plus X-Forwarded-For/-Proto/-Host and X-Request-Id. */
export function upstreamRequestHeaders(
  incoming: IncomingHttpHeaders,
  facts: ForwardedFacts,
  preserveHost: boolean,
): OutgoingHttpHeaders {
  // endToEnd's copy, in one loop without a per-request closure. Also dropped: "expect" (the
  // gateway itself answered 100-continue), Host unless preserved, and PROXY_SET from an untrusted peer.
  const named = namedByConnection(incoming['connection']);
  const trusted = facts.peerTrusted;
  const out: OutgoingHttpHeaders = {};
  for (const name in incoming) {
    const value = incoming[name];
    if (value === undefined || HOP_BY_HOP.has(name) || named?.has(name)) continue;
    if (name === 'expect' || (name === 'host' && !preserveHost) || (!trusted && PROXY_SET.has(name)))
      continue;
    out[name] = value;
  }
  const priorFor = trusted ? incoming['x-forwarded-for'] : undefined;
  out['x-forwarded-for'] = priorFor ? `${priorFor}, ${facts.peer}` : facts.peer;
  const priorProto = trusted ? incoming['x-forwarded-proto'] : undefined;
  out['x-forwarded-proto'] = typeof priorProto === 'string' ? priorProto : facts.protocol;
  const priorHost = trusted ? incoming['x-forwarded-host'] : undefined;
  const host = typeof priorHost === 'string' ? priorHost : incoming.host;
  if (host) out['x-forwarded-host'] = host;
  else delete out['x-forwarded-host'];
  out['x-request-id'] = facts.requestId;
  return out;
}
