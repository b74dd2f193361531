/**
 * Overrides: a key value (a workspace API token id, a workspace, a JWT subject, an address or CIDR)
 * mapped to a tier, `unlimited` or a custom limit. Compiled once per change into maps, so the
 * request path looks one up in a few map reads (addresses: one per prefix length in use). Pure.
 */
import ipaddr from 'ipaddr.js';
import { parseAddress, parseRange, type Address } from '../net/client-ip.js';

export type OverrideKind = 'token' | 'workspace' | 'sub' | 'ip';
export const OVERRIDE_KINDS: readonly OverrideKind[] = ['token', 'workspace', 'sub', 'ip'];

export type OverrideAction =
  | { readonly tier: string }
  | { readonly unlimited: true }
  | { readonly limit: number; readonly burst?: number };

/** An override that applied to a request: its key ("ip:10.0.0.0/8") and what it says. */
export interface OverrideMatch {
  readonly key: string;
  readonly action: OverrideAction;
}

/** What a request offers to be matched by (each only when known and verified). */
export interface OverrideSubject {
  readonly token?: string | undefined;
  readonly workspace?: string | undefined;
  readonly sub?: string | undefined;
  /** The client address in key form (src/identity/address-key.ts): "1.2.3.4" or "2001:db8::/64". */
  readonly ip?: string | undefined;
}

/** A key "<kind>:<value>" checked and put in canonical form (an address as its CIDR); an error message otherwise. */
export function parseOverrideKey(key: string): { kind: OverrideKind; value: string; key: string } | string {
  const colon = key.indexOf(':');
  const kind = key.slice(0, colon) as OverrideKind;
  const value = key.slice(colon + 1).trim();
  if (colon <= 0 || !OVERRIDE_KINDS.includes(kind) || value === '')
    return `"${key}": a key is <kind>:<value>, kind one of ${OVERRIDE_KINDS.join(', ')}`;
  if (kind !== 'ip') return { kind, value, key: `${kind}:${value}` };
  try {
    const [addr, bits] = parseRange(value);
    const net = maskedAddress(addr, bits);
    return { kind, value: `${net}/${bits}`, key: `ip:${net}/${bits}` };
  } catch (err) {
    return `"${key}": ${(err as Error).message}`;
  }
}

const POSITIVE = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0;

/** An override's value: "unlimited", a tier name, { tier }, { unlimited: true } or { limit, burst? }. */
export function parseOverrideAction(value: unknown): OverrideAction | string {
  if (value === 'unlimited') return { unlimited: true };
  if (typeof value === 'string' && value !== '') return { tier: value };
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'a tier name, "unlimited", { "tier": … }, { "unlimited": true } or { "limit": n, "burst"?: n }';
  const o = value as Record<string, unknown>;
  const fields = Object.keys(o).sort().join(',');
  if (fields === 'tier' && typeof o.tier === 'string' && o.tier !== '') return { tier: o.tier };
  if (fields === 'unlimited' && o.unlimited === true) return { unlimited: true };
  if ((fields === 'limit' || fields === 'burst,limit') && POSITIVE(o.limit)) {
    if (o.burst === undefined) return { limit: o.limit };
    if (POSITIVE(o.burst)) return { limit: o.limit, burst: o.burst };
  }
  return 'one of { "tier": name }, { "unlimited": true } or { "limit": n, "burst"?: n } (positive integers)';
}

/** Entries checked one by one: the good ones in canonical form, and an error per bad one. */
export function parseOverrides(raw: unknown): { entries: Map<string, OverrideAction>; errors: string[] } {
  const entries = new Map<string, OverrideAction>();
  const errors: string[] = [];
  if (raw === null || raw === undefined) return { entries, errors };
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    errors.push('overrides must be a map of "<kind>:<value>" to a tier, "unlimited" or { limit }');
    return { entries, errors };
  }
  for (const [key, value] of Object.entries(raw)) {
    const parsed = parseOverrideKey(key);
    const action = parseOverrideAction(value);
    if (typeof parsed === 'string') errors.push(parsed);
    else if (typeof action === 'string') errors.push(`"${key}": ${action}`);
    else entries.set(parsed.key, action);
  }
  return { entries, errors };
}

/** The address with every bit past `bits` cleared, as text. */
function maskedAddress(addr: Address, bits: number): string {
  const bytes = addr.toByteArray();
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    bytes[i] = bytes[i]! & ((0xff << (8 - keep)) & 0xff);
  }
  return ipaddr.fromByteArray(bytes).toString();
}

/** An IPv4 address's 32 bits, as an unsigned number. */
function v4Number(addr: Address): number {
  const [a, b, c, d] = addr.toByteArray() as [number, number, number, number];
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

/** That number with every bit past `bits` cleared. */
const maskedV4 = (n: number, bits: number): number =>
  bits === 0 ? 0 : (n & (0xffffffff << (32 - bits))) >>> 0;

/**
 * Ranges of one address family by prefix length, longest first: the address is prepared once per
 * lookup (IPv4: a number, so no string is made per request), then masked and read once per length.
 */
class RangeTable<P, K> {
  readonly #byBits = new Map<number, Map<K, OverrideMatch>>();
  #lengths: number[] = [];

  constructor(
    private readonly prepare: (addr: Address) => P,
    private readonly mask: (prepared: P, bits: number) => K,
  ) {}

  add(net: Address, bits: number, match: OverrideMatch): void {
    let nets = this.#byBits.get(bits);
    if (!nets) {
      this.#byBits.set(bits, (nets = new Map()));
      this.#lengths = [...this.#byBits.keys()].sort((a, b) => b - a);
    }
    nets.set(this.mask(this.prepare(net), bits), match);
  }

  /** The longest range holding `addr`, known to its first `known` bits (an IPv6 key's prefix). */
  lookup(addr: Address, known: number): OverrideMatch | undefined {
    if (this.#lengths.length === 0) return undefined;
    const prepared = this.prepare(addr);
    for (const bits of this.#lengths) {
      if (bits > known) continue; // finer than what the key says of the client
      const found = this.#byBits.get(bits)!.get(this.mask(prepared, bits));
      if (found) return found;
    }
    return undefined;
  }
}

/**
 * The compiled overrides. Precedence, most specific first: token, workspace, sub, then the longest
 * address range holding the client.
 */
export class OverrideTable {
  static readonly EMPTY = new OverrideTable(new Map());
  readonly #exact: Map<string, OverrideMatch>;
  readonly #v4 = new RangeTable(v4Number, maskedV4);
  readonly #v6 = new RangeTable((addr: Address) => addr, maskedAddress);
  readonly entries: ReadonlyMap<string, OverrideAction>;
  /** Which kinds appear: the request path verifies a credential only for a kind in use. */
  readonly kinds: ReadonlySet<OverrideKind>;

  private constructor(entries: ReadonlyMap<string, OverrideAction>) {
    this.entries = entries;
    this.#exact = new Map();
    const kinds = new Set<OverrideKind>();
    for (const [key, action] of entries) {
      const parsed = parseOverrideKey(key);
      if (typeof parsed === 'string') continue; // compile() callers pass parsed keys
      kinds.add(parsed.kind);
      const match = { key: parsed.key, action };
      if (parsed.kind !== 'ip') {
        this.#exact.set(parsed.key, match);
        continue;
      }
      const [net, bits] = parseRange(parsed.value);
      (net.kind() === 'ipv4' ? this.#v4 : this.#v6).add(net, bits, match);
    }
    this.kinds = kinds;
  }

  /** `entries` keyed in canonical form (parseOverrides). */
  static compile(entries: ReadonlyMap<string, OverrideAction>): OverrideTable {
    return entries.size === 0 ? OverrideTable.EMPTY : new OverrideTable(entries);
  }

  get empty(): boolean {
    return this.entries.size === 0;
  }

  lookup(s: OverrideSubject): OverrideMatch | undefined {
    if (this.entries.size === 0) return undefined;
    if (s.token !== undefined) {
      const m = this.#exact.get(`token:${s.token}`);
      if (m) return m;
    }
    if (s.workspace !== undefined) {
      const m = this.#exact.get(`workspace:${s.workspace}`);
      if (m) return m;
    }
    if (s.sub !== undefined) {
      const m = this.#exact.get(`sub:${s.sub}`);
      if (m) return m;
    }
    if (s.ip === undefined || !this.kinds.has('ip')) return undefined;
    const slash = s.ip.indexOf('/');
    const addr = parseAddress(slash === -1 ? s.ip : s.ip.slice(0, slash));
    if (!addr) return undefined;
    const full = addr.kind() === 'ipv4' ? 32 : 128;
    const known = slash === -1 ? full : Number(s.ip.slice(slash + 1));
    return (addr.kind() === 'ipv4' ? this.#v4 : this.#v6).lookup(addr, known);
  }
}
