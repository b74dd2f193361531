import type { IncomingHttpHeaders } from 'node:http';
import type { KeyPart } from '../config/schema.js';
import { walkForwardedFor, type TrustedProxies } from '../net/client-ip.js';
import { addressKey } from './address-key.js';
import { hashPart } from './hash.js';
import type { Peer } from './peer.js';
import { bearerToken } from '../credentials/bearer.js';
import { visitorToken, type JwtOutcome, type VisitorJwtVerifier } from '../credentials/visitor-jwt.js';
import type { WorkspaceTokenStore } from '../credentials/workspace-token.js';
import { verifyWorkspaceToken, type TokenOutcome } from './token-verification.js';
import { connectionTokens } from '../net/connection-header.js';

export interface IdentitySources {
  readonly trustedProxies: TrustedProxies;
  readonly ipv6PrefixLength: number;
  readonly jwt: VisitorJwtVerifier | undefined;
  readonly workspaceTokens: WorkspaceTokenStore;
}

/** Who a request comes from, as far as the route's limiters need to know. */
export interface RequestIdentity {
  /** The client address in key form (IPv4, or an IPv6 prefix such as "2001:db8::/64"). */
  readonly clientIp: string;
  readonly jwt: JwtOutcome | undefined;
  readonly workspaceToken: TokenOutcome | undefined;
  /** The readable value of each part used, only when asked for (`tollgate explain`; never logged or stored). */
  readonly raw: ReadonlyMap<KeyPart, string> | undefined;
  /** The hashed value of each part used: what reaches the store. */
  readonly hashed: ReadonlyMap<KeyPart, string>;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/** The client address in key form: the peer's, or, from a trusted proxy, the X-Forwarded-For walk's. */
export function clientIpKey(sources: IdentitySources, peer: Peer, headers: IncomingHttpHeaders): string {
  const forwardedFor = headers['x-forwarded-for'];
  if (!peer.trusted || !peer.addr || forwardedFor === undefined) return peer.key;
  const client = walkForwardedFor(peer.addr, forwardedFor, sources.trustedProxies);
  return addressKey(client, sources.ipv6PrefixLength);
}

/**
 * The visitor token, verified. Two different tokens (X-Widget-Token and a Bearer) are refused as
 * invalid: the upstream might act on the one the gateway did not charge.
 */
async function verifyVisitor(
  verifier: VisitorJwtVerifier | undefined,
  headers: IncomingHttpHeaders,
): Promise<JwtOutcome> {
  if (!verifier) return { ok: false, reason: 'invalid' };
  const authorization = header(headers, 'authorization');
  const widgetToken = header(headers, 'x-widget-token');
  const token = visitorToken(authorization, widgetToken);
  const bearer = widgetToken === undefined ? undefined : bearerToken(authorization);
  if (bearer !== undefined && token !== bearer) return { ok: false, reason: 'invalid' };
  return verifier.verify(token);
}

/** The request headers each key part is read from (lower-case), and Host, which routing reads. */
export function headersReadBy(parts: Iterable<KeyPart>): Set<string> {
  const names = new Set(['host']);
  for (const part of parts) {
    if (part === 'user_agent') names.add('user-agent');
    else if (part === 'jwt') names.add('authorization').add('x-widget-token');
    else if (part === 'workspace_token') names.add('authorization');
    else if (part.startsWith('header:')) names.add(part.slice('header:'.length).toLowerCase());
  }
  return names;
}

/**
 * The first header that a Connection header names among `protectedNames`: a hop-by-hop removal of
 * it would forward a request other than the one identified and counted.
 */
export function connectionStrips(
  connection: string | string[] | undefined,
  protectedNames: ReadonlySet<string>,
): string | undefined {
  if (connection === undefined) return undefined;
  const value = Array.isArray(connection) ? connection.join(',') : connection;
  return connectionTokens(value)?.find((name) => protectedNames.has(name));
}

/** True when some part is a credential, verified asynchronously: only then is resolveIdentity needed. */
export function needsCredentials(parts: ReadonlySet<KeyPart>): boolean {
  return parts.has('jwt') || parts.has('workspace_token');
}

/**
 * Resolves the key parts a route needs. A credential that fails verification is replaced by a
 * per-IP fallback value in the same part, so floods of bad credentials are still counted.
 */
export async function resolveIdentity(
  sources: IdentitySources,
  parts: ReadonlySet<KeyPart>,
  peer: Peer,
  headers: IncomingHttpHeaders,
  keepRaw = false,
): Promise<RequestIdentity> {
  const jwt = parts.has('jwt') ? await verifyVisitor(sources.jwt, headers) : undefined;
  const workspaceToken = parts.has('workspace_token')
    ? await verifyWorkspaceToken(header(headers, 'authorization'), sources.workspaceTokens)
    : undefined;
  return identityOf(sources, parts, peer, headers, jwt, workspaceToken, keepRaw);
}

/**
 * The identity from credentials already verified (see resolveIdentity), or of parts that need no
 * credential (see needsCredentials): synchronous, so the request path awaits nothing for it.
 */
export function identityOf(
  sources: IdentitySources,
  parts: ReadonlySet<KeyPart>,
  peer: Peer,
  headers: IncomingHttpHeaders,
  jwt?: JwtOutcome,
  workspaceToken?: TokenOutcome,
  keepRaw = false,
): RequestIdentity {
  const clientIp = clientIpKey(sources, peer, headers);
  // The readable values are for explain alone: the request path builds no map for them.
  const raw = keepRaw ? new Map<KeyPart, string>() : undefined;
  const hashed = new Map<KeyPart, string>();
  for (const part of parts) {
    let value: string;
    switch (part) {
      case 'ip':
        // The peer's hash is computed once per connection; a forwarded client's comes from a cache.
        // The "ip=" text is built only when something reads it (no string per request for the peer).
        if (clientIp === peer.key) hashed.set(part, peer.keyHash);
        else hashed.set(part, cachedHash(`ip=${clientIp}`));
        raw?.set(part, `ip=${clientIp}`);
        continue;
      case 'user_agent':
        value = `ua=${headers['user-agent'] ?? ''}`;
        break;
      case 'jwt':
        value = jwt!.ok ? `jwt=${jwt!.session}` : `jwt!ip=${clientIp}`;
        break;
      case 'workspace_token':
        value = workspaceToken!.ok ? `wt=${workspaceToken!.id}` : `wt!ip=${clientIp}`;
        break;
      default: {
        const name = part.slice('header:'.length).toLowerCase();
        value = `h:${name}=${header(headers, name) ?? ''}`;
      }
    }
    raw?.set(part, value);
    hashed.set(part, hashPart(value));
  }
  return { clientIp, jwt, workspaceToken, raw, hashed };
}

/** Hashes of forwarded client addresses ("ip=..."), most recently used last; bounded. */
const ipHashes = new Map<string, string>();
const IP_HASHES_MAX = 10_000;

function cachedHash(value: string): string {
  let hash = ipHashes.get(value);
  if (hash !== undefined) {
    ipHashes.delete(value); // re-inserted below: the Map's order is the recency order
  } else {
    hash = hashPart(value);
    if (ipHashes.size >= IP_HASHES_MAX) ipHashes.delete(ipHashes.keys().next().value!);
  }
  ipHashes.set(value, hash);
  return hash;
}
