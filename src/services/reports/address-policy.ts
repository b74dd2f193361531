import { promises as dns } from 'node:dns';
import { isIPv6, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

const bracketless = (ip: string) => (ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip);

/**
 * An IPv6 address as it is written canonically (hex groups only). ipaddr.js reads the dotted tail
 * of `::1.2.3.4` (IPv4-compatible, ::/96) as if it were `::ffff:1.2.3.4` (IPv4-mapped); WHATWG URL
 * writes it as `::102:304`, which ipaddr.js reads right.
 */
function canonicalIPv6(bare: string): string | undefined {
  try {
    return new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
}

function parse(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = bracketless(ip);
  if (!bare.includes(':')) return ipaddr.IPv4.isValid(bare) ? ipaddr.IPv4.parse(bare) : undefined;
  const canonical = canonicalIPv6(bare);
  return canonical !== undefined && ipaddr.IPv6.isValid(canonical) ? ipaddr.IPv6.parse(canonical) : undefined;
}

/**
 * Which addresses the analyser may connect to. Only ipaddr.js's `unicast` range counts as public:
 * every named special range (loopback, private, link-local, carrier-grade NAT, unique-local,
 * multicast, reserved, 6to4, Teredo…) is refused, so a new special range is refused by default.
 * IPv4-mapped IPv6 (::ffff:0:0/96) is judged by the IPv4 address it carries; IPv4-compatible IPv6
 * (::/96, deprecated, and which some stacks route to the IPv4 address) is refused whole.
 */
export function isPublicAddress(ip: string): boolean {
  let address = parse(ip);
  if (address === undefined) return false;
  if (address.kind() === 'ipv6') {
    const v6 = address as ipaddr.IPv6;
    // ::ffff:127.0.0.1 reaches 127.0.0.1: judge the IPv4 address it carries.
    if (v6.isIPv4MappedAddress()) address = v6.toIPv4Address();
    // ::/96: ::, ::1 and ::7f00:1 (= ::127.0.0.1) alike.
    else if (v6.parts.slice(0, 6).every((part) => part === 0)) return false;
  }
  return address.range() === 'unicast';
}

/** A host name that is an IP literal (as WHATWG URL writes it: IPv6 in brackets), else undefined. */
export function ipLiteral(hostname: string): string | undefined {
  const bare = bracketless(hostname);
  return ipaddr.isValid(bare) ? bare : undefined;
}

/** Resolves a host name to its addresses (all of them). */
export type Resolver = (hostname: string) => Promise<string[]>;

/** Refuses addresses: used before every hop and again on the address actually connected to. */
export interface AddressGuard {
  readonly resolve: Resolver;
  allowed(ip: string): boolean;
}

export const systemResolver: Resolver = async (hostname) =>
  (await dns.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** The error code of a host refused for a non-public address. */
export const NOT_PUBLIC_CODE = 'ERR_ADDRESS_NOT_PUBLIC';

/** Checks every address a host resolves to; one refused address refuses the host. */
export async function guardedAddresses(guard: AddressGuard, hostname: string): Promise<string[]> {
  const literal = ipLiteral(hostname);
  const addresses = literal ? [literal] : await guard.resolve(hostname);
  if (addresses.length === 0) throw Object.assign(new Error(hostname), { code: 'ENOTFOUND' });
  if (addresses.some((a) => !guard.allowed(a))) {
    throw Object.assign(new Error(`${hostname}: address not public`), { code: NOT_PUBLIC_CODE });
  }
  return addresses;
}

/**
 * The socket's own lookup: the guard judges the addresses the connection is really made to, so a
 * host that resolves to a public address for the check and a private one for the connection
 * (DNS rebinding) is still refused.
 */
export function guardedLookup(guard: AddressGuard): LookupFunction {
  return (hostname, options, callback) => {
    guardedAddresses(guard, hostname).then(
      (addresses) => {
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
        const entries = addresses
          .map((address) => ({ address, family: isIPv6(address) ? 6 : 4 }))
          .filter((e) => !family || e.family === family);
        if (entries.length === 0) {
          callback(Object.assign(new Error(hostname), { code: 'ENOTFOUND' }), '');
        } else if (options.all) callback(null, entries);
        else callback(null, entries[0]!.address, entries[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}
