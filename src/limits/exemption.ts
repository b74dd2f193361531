/**
 * Allow and deny lists (config `allow`, `deny` of a limiter): who a request is, by client address
 * (CIDRs) or verified workspace-token id, and what a route's limiters make of it. Pure, but for
 * reading the request's client address.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Peer } from '../identity/peer.js';
import type { IdentitySources, RequestIdentity } from '../identity/resolve.js';
import { parseRange, walkForwardedFor, type Address } from '../net/client-ip.js';
import type { CompiledLimiter, ListSubject, RequestList, RouteWindow } from '../rules/model.js';
import type { Refusal } from './refusal.js';

export interface ListConfig {
  readonly addresses: readonly string[];
  readonly tokens: readonly string[];
  readonly workspaces?: readonly string[];
}

/** A list compiled once per config; throws on an entry that is no address or CIDR (compile.ts checks first). */
export function compileList(cfg: ListConfig | undefined): RequestList | undefined {
  const workspaceNames = cfg?.workspaces ?? [];
  if (!cfg || (cfg.addresses.length === 0 && cfg.tokens.length === 0 && workspaceNames.length === 0))
    return undefined;
  const ranges = cfg.addresses.map((a) => parseRange(a));
  const tokens = new Set(cfg.tokens);
  const workspaces = new Set(workspaceNames);
  const text = [
    ...cfg.addresses,
    ...cfg.tokens.map((t) => `token ${t}`),
    ...workspaceNames.map((w) => `workspace ${w}`),
  ].join(', ');
  return {
    text,
    namesTokens: tokens.size > 0 || workspaces.size > 0,
    namesWorkspaces: workspaces.size > 0,
    matches(subject: ListSubject): boolean {
      if (subject.token !== undefined && tokens.has(subject.token)) return true;
      if (subject.workspace !== undefined && workspaces.has(subject.workspace)) return true;
      const addr = subject.address as Address | undefined;
      if (!addr) return false;
      for (const [net, bits] of ranges) if (net.kind() === addr.kind() && addr.match(net, bits)) return true;
      return false;
    },
  };
}

/** The entries of `addresses` that are no address or CIDR, with their index and why. */
export function badAddresses(addresses: readonly string[]): { index: number; message: string }[] {
  const bad: { index: number; message: string }[] = [];
  addresses.forEach((a, index) => {
    try {
      parseRange(a);
    } catch (err) {
      bad.push({ index, message: (err as Error).message });
    }
  });
  return bad;
}

/** The request's full client address (not its key form, an IPv6 prefix): the peer's, or the X-Forwarded-For walk's. */
export function clientAddress(
  sources: IdentitySources,
  peer: Peer,
  headers: IncomingHttpHeaders,
): Address | undefined {
  const forwardedFor = headers['x-forwarded-for'];
  if (!peer.trusted || !peer.addr || forwardedFor === undefined) return peer.addr;
  return walkForwardedFor(peer.addr, forwardedFor, sources.trustedProxies);
}

/** The subject of a request whose identity was resolved (its token verified when a list names tokens). */
export function listSubject(
  sources: IdentitySources,
  peer: Peer,
  headers: IncomingHttpHeaders,
  identity: RequestIdentity,
): ListSubject {
  const token = identity.workspaceToken?.ok ? identity.workspaceToken.id : undefined;
  return { address: clientAddress(sources, peer, headers), token };
}

/** Whether some limiter's list names workspaces: only then is the token's workspace looked up. */
export const namesWorkspaces = (limiters: readonly CompiledLimiter[]): boolean =>
  limiters.some((l) => l.allow?.namesWorkspaces === true || l.deny?.namesWorkspaces === true);

/** The subject with its verified token's workspace (the token store's facts, cached there). */
export async function withWorkspace(sources: IdentitySources, subject: ListSubject): Promise<ListSubject> {
  if (subject.token === undefined) return subject;
  const facts = await sources.workspaceTokens.facts?.(subject.token);
  return { ...subject, workspace: facts?.workspace };
}

/** What one limiter's lists make of a request: deny wins over allow. */
export type ListVerdict = 'denied' | 'exempt' | undefined;

export function listVerdict(limiter: CompiledLimiter, subject: ListSubject): ListVerdict {
  if (limiter.deny?.matches(subject)) return 'denied';
  if (limiter.allow?.matches(subject)) return 'exempt';
  return undefined;
}

/** What a route's lists make of a request. */
export interface Screening {
  /** The first enforcing limiter whose deny list names the request: answered 403. */
  readonly deniedBy: CompiledLimiter | undefined;
  /** Shadow limiters whose deny list names it: they would have refused it. */
  readonly shadowDenied: readonly CompiledLimiter[];
  /** Limiters whose allow list names it (and whose deny list does not): not counted. */
  readonly exempt: readonly CompiledLimiter[];
  /** The route's windows less the exempt limiters'. */
  readonly windows: readonly RouteWindow[];
}

/** Whether any of the limiters has a list: only then is a request screened. */
export const hasLists = (limiters: readonly CompiledLimiter[]): boolean =>
  limiters.some((l) => l.allow !== undefined || l.deny !== undefined);

/** Screens a request against the lists of a route's limiters (in route order). */
export function screen(
  limiters: readonly CompiledLimiter[],
  windows: readonly RouteWindow[],
  subject: ListSubject,
): Screening {
  let deniedBy: CompiledLimiter | undefined;
  const shadowDenied: CompiledLimiter[] = [];
  const exempt: CompiledLimiter[] = [];
  for (const l of limiters) {
    const verdict = listVerdict(l, subject);
    if (verdict === 'denied') {
      if (l.shadow) shadowDenied.push(l);
      else deniedBy ??= l;
    } else if (verdict === 'exempt') exempt.push(l);
  }
  return {
    deniedBy,
    shadowDenied,
    exempt,
    windows: exempt.length === 0 ? windows : windows.filter((w) => !exempt.includes(w.limiter)),
  };
}

/** The 403 of a deny list, in the gateway's error shape. */
export const DENIED: Refusal = {
  status: 403,
  code: 'denied',
  decision: 'denied',
  message: 'Requests from this client are refused here.',
};
