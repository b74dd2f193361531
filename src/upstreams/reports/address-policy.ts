import ipaddr from 'ipaddr.js';

/**
 * Which addresses the analyser may connect to. Only ipaddr.js's `unicast` range counts as public:
 * every named special range (loopback, private, link-local, carrier-grade NAT, unique-local,
 * multicast, reserved, 6to4, Teredo…) is refused, so a new special range is refused by default.
 */
export function isPublicAddress(ip: string): boolean {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  if (!ipaddr.isValid(bare)) return false;
  let address = ipaddr.parse(bare);
  // ::ffff:127.0.0.1 reaches 127.0.0.1: judge the IPv4 address it carries.
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    address = (address as ipaddr.IPv6).toIPv4Address();
  }
  return address.range() === 'unicast';
}

/** A host name that is an IP literal (as WHATWG URL writes it: IPv6 in brackets), else undefined. */
export function ipLiteral(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return ipaddr.isValid(bare) ? bare : undefined;
}
