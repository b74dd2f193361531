// The client address behind proxies: trusted ranges, the X-Forwarded-For walk and the hop forms.
// Shared by the gateway (src/identity/, which keys limits by it) and the analytics collector
// (src/services/websites/analytics/, which excludes and places visits by it), so the two cannot disagree.
// Pure: no I/O, nothing of either side.
import ipaddr from 'ipaddr.js';

export type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** Trusted proxy ranges, parsed once. IPv4-mapped IPv6 ranges are not needed: addresses are unmapped first. */
export class TrustedProxies {
  readonly #ranges: readonly [Address, number][];

  constructor(cidrs: readonly string[]) {
    this.#ranges = cidrs.map((cidr) => parseRange(cidr));
  }

  get empty(): boolean {
    return this.#ranges.length === 0;
  }

  has(addr: Address): boolean {
    for (const [net, bits] of this.#ranges) {
      if (net.kind() === addr.kind() && addr.match(net, bits)) return true;
    }
    return false;
  }
}

/** Parses "10.0.0.0/8", "::1/128" or a bare address (a single host). Throws with a readable message. */
export function parseRange(cidr: string): [Address, number] {
  const text = cidr.trim();
  if (text.includes('/')) {
    if (!ipaddr.isValidCIDR(text)) throw new Error(`not a CIDR: "${cidr}"`);
    const [addr, bits] = ipaddr.parseCIDR(text);
    return [addr, bits];
  }
  if (!ipaddr.isValid(text)) throw new Error(`not an IP address or CIDR: "${cidr}"`);
  const addr = ipaddr.process(text);
  return [addr, addr.kind() === 'ipv4' ? 32 : 128];
}

/** Parses an address, mapping IPv4-mapped IPv6 to IPv4. Undefined when it is not an address. */
export function parseAddress(text: string): Address | undefined {
  let t = text.trim();
  // "[2001:db8::1]:443" and "1.2.3.4:5678" appear in some X-Forwarded-For values.
  if (t.startsWith('[')) t = t.slice(1, t.indexOf(']') === -1 ? undefined : t.indexOf(']'));
  else if (t.indexOf(':') !== -1 && t.indexOf(':') === t.lastIndexOf(':') && t.includes('.'))
    t = t.split(':')[0]!;
  const zone = t.indexOf('%');
  if (zone !== -1) t = t.slice(0, zone);
  // One parse: process() throws on what isValid() refuses, and a throw is the rare case.
  try {
    return ipaddr.process(t);
  } catch {
    return undefined;
  }
}

/**
 * The client address: the socket peer, unless the peer is a trusted proxy, in which case
 * X-Forwarded-For is walked from the right, skipping trusted hops. A malformed hop stops the walk
 * at the last address that was vouched for.
 */
export function resolveClientIp(
  peer: string | undefined,
  forwardedFor: string | string[] | undefined,
  trusted: TrustedProxies,
): Address | undefined {
  const peerAddr = peer === undefined ? undefined : parseAddress(peer);
  if (!peerAddr || !trusted.has(peerAddr)) return peerAddr;
  return walkForwardedFor(peerAddr, forwardedFor, trusted);
}

/**
 * The X-Forwarded-For walk for a peer already known to be trusted: from the right, blank hops
 * skipped, the first untrusted hop is the client; a malformed hop stops at the last one vouched for.
 */
export function walkForwardedFor(
  peerAddr: Address,
  forwardedFor: string | string[] | undefined,
  trusted: TrustedProxies,
): Address {
  if (forwardedFor === undefined) return peerAddr;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',');
  let client: Address = peerAddr;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!.trim();
    if (hop === '') continue;
    const addr = parseAddress(hop);
    if (!addr) break;
    client = addr;
    if (!trusted.has(addr)) break;
  }
  return client;
}
