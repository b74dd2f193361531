import type { Socket } from 'node:net';
import { parseAddress, type Address, type TrustedProxies } from '../net/client-ip.js';
import { addressKey } from './address-key.js';
import { hashPart } from './hash.js';

/** The identity settings a peer depends on (a part of resolve.ts's PeerSources). */
export interface PeerSources {
  readonly trustedProxies: TrustedProxies;
  readonly ipv6PrefixLength: number;
}

/** What the gateway knows of a connection's peer; the same for every request on a keep-alive socket. */
export interface Peer {
  /** The peer address as text (IPv4-mapped addresses unmapped), for X-Forwarded-For. */
  readonly text: string;
  readonly addr: Address | undefined;
  /** The peer is a trusted proxy: its X-Forwarded-* headers are believed. */
  readonly trusted: boolean;
  /** The peer's address in key form, and its hash. */
  readonly key: string;
  readonly keyHash: string;
}

const peers = new WeakMap<Socket, { sources: PeerSources; peer: Peer }>();

/** The socket's peer, computed once per connection (and again only if the identity settings change). */
export function peerOf(socket: Socket, sources: PeerSources): Peer {
  const cached = peers.get(socket);
  if (cached && cached.sources === sources) return cached.peer;
  const peer = describePeer(socket.remoteAddress ?? '', sources);
  peers.set(socket, { sources, peer });
  return peer;
}

export function describePeer(raw: string, sources: PeerSources): Peer {
  const addr = parseAddress(raw);
  const key = addr ? addressKey(addr, sources.ipv6PrefixLength) : 'unknown';
  return {
    text: addr?.toString() ?? raw,
    addr,
    trusted: addr !== undefined && sources.trustedProxies.has(addr),
    key,
    keyHash: hashPart(`ip=${key}`),
  };
}
