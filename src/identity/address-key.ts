import ipaddr from 'ipaddr.js';
import type { Address } from '../net/client-ip.js';

/** The key form of an address: IPv4 as is, IPv6 as its network prefix ("2001:db8:1:2::/64"). */
export function addressKey(addr: Address, ipv6PrefixLength: number): string {
  if (addr.kind() === 'ipv4') return addr.toString();
  const bytes = addr.toByteArray();
  for (let i = 0; i < 16; i++) {
    const keep = Math.max(0, Math.min(8, ipv6PrefixLength - i * 8));
    bytes[i] = bytes[i]! & ((0xff << (8 - keep)) & 0xff);
  }
  return `${ipaddr.fromByteArray(bytes).toString()}/${ipv6PrefixLength}`;
}
