import { parseAddress, walkForwardedFor, type TrustedProxies } from '../../../net/client-ip.js';

/**
 * The visitor's address as the gateway resolved it. The gateway appends its peer to
 * X-Forwarded-For (and keeps the prior value only from a trusted peer); the same walk the gateway
 * does (src/net/), from the right past the trusted proxies, gives the address it limited by. The
 * header is believed only from a loopback peer (the gateway in this process); any other peer is
 * the client itself.
 */
export function visitorIp(
  socketPeer: string | undefined,
  forwardedFor: string | string[] | undefined,
  trusted: TrustedProxies,
): string | undefined {
  const peer = socketPeer === undefined ? undefined : parseAddress(socketPeer);
  if (!peer || peer.range() !== 'loopback') return peer?.toString();
  return walkForwardedFor(peer, forwardedFor, trusted).toString();
}
