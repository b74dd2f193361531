// Overrides: keys and values checked and put in canonical form, and the compiled lookup (exact
// keys, then the longest address range) against a reference model that scans every entry.
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { describe, expect, test } from 'vitest';
import {
  OverrideTable,
  parseOverrideAction,
  parseOverrideKey,
  parseOverrides,
  type OverrideAction,
  type OverrideSubject,
} from '../../src/limits/overrides.js';

describe('parsing', () => {
  test('keys: kinds, and addresses as their masked CIDR', () => {
    expect(parseOverrideKey('token:abc')).toEqual({ kind: 'token', value: 'abc', key: 'token:abc' });
    expect(parseOverrideKey('ip:10.1.2.3/8')).toEqual({
      kind: 'ip',
      value: '10.0.0.0/8',
      key: 'ip:10.0.0.0/8',
    });
    expect(parseOverrideKey('ip:203.0.113.7')).toMatchObject({ key: 'ip:203.0.113.7/32' });
    expect(parseOverrideKey('ip:2001:db8::1/48')).toMatchObject({ key: 'ip:2001:db8::/48' });
    expect(parseOverrideKey('user:x')).toBe(
      '"user:x": a key is <kind>:<value>, kind one of token, workspace, sub, ip',
    );
    expect(parseOverrideKey('token:')).toMatch(/a key is <kind>:<value>/);
    expect(parseOverrideKey('ip:300.1.1.1')).toBe('"ip:300.1.1.1": not an IP address or CIDR: "300.1.1.1"');
  });

  test('values: a tier name, unlimited, or a custom limit', () => {
    expect(parseOverrideAction('pro')).toEqual({ tier: 'pro' });
    expect(parseOverrideAction('unlimited')).toEqual({ unlimited: true });
    expect(parseOverrideAction({ tier: 'free' })).toEqual({ tier: 'free' });
    expect(parseOverrideAction({ unlimited: true })).toEqual({ unlimited: true });
    expect(parseOverrideAction({ limit: 5 })).toEqual({ limit: 5 });
    expect(parseOverrideAction({ limit: 5, burst: 9 })).toEqual({ limit: 5, burst: 9 });
    for (const bad of [
      { limit: 0 },
      { limit: 1.5 },
      { limit: 5, tier: 'x' },
      { unlimited: false },
      [],
      null,
      3,
      '',
    ])
      expect(typeof parseOverrideAction(bad)).toBe('string');
  });

  test('a map: good entries kept, each bad one named', () => {
    const { entries, errors } = parseOverrides({
      'token:a': 'pro',
      'ip:1.2.3.0/24': { limit: 0 },
      'x:y': 'pro',
    });
    expect([...entries]).toEqual([['token:a', { tier: 'pro' }]]);
    expect(errors).toEqual([
      '"ip:1.2.3.0/24": one of { "tier": name }, { "unlimited": true } or { "limit": n, "burst"?: n } (positive integers)',
      '"x:y": a key is <kind>:<value>, kind one of token, workspace, sub, ip',
    ]);
    expect(parseOverrides(['token:a']).errors).toEqual([
      'overrides must be a map of "<kind>:<value>" to a tier, "unlimited" or { limit }',
    ]);
  });
});

const table = (o: Record<string, unknown>) => OverrideTable.compile(parseOverrides(o).entries);

describe('lookup', () => {
  const t = table({
    'token:t1': 'pro',
    'workspace:w1': 'unlimited',
    'sub:alice': { limit: 3 },
    'ip:10.0.0.0/8': 'free',
    'ip:10.1.0.0/16': 'pro',
    'ip:10.1.2.3': 'unlimited',
    'ip:2001:db8::/32': 'v6',
  });

  test('precedence: token, workspace, sub, then the longest range', () => {
    const all: OverrideSubject = { token: 't1', workspace: 'w1', sub: 'alice', ip: '10.1.2.3' };
    expect(t.lookup(all)?.key).toBe('token:t1');
    expect(t.lookup({ ...all, token: 'other' })?.key).toBe('workspace:w1');
    expect(t.lookup({ ...all, token: undefined, workspace: undefined })?.key).toBe('sub:alice');
    expect(t.lookup({ ip: '10.1.2.3' })?.key).toBe('ip:10.1.2.3/32');
    expect(t.lookup({ ip: '10.1.9.9' })?.key).toBe('ip:10.1.0.0/16');
    expect(t.lookup({ ip: '10.9.9.9' })?.key).toBe('ip:10.0.0.0/8');
    expect(t.lookup({ ip: '11.0.0.1' })).toBeUndefined();
  });

  test('an IPv6 key (a /64 prefix) matches ranges no finer than what it knows', () => {
    expect(t.lookup({ ip: '2001:db8:1:2::/64' })?.key).toBe('ip:2001:db8::/32');
    expect(table({ 'ip:2001:db8:1:2::1': 'x' }).lookup({ ip: '2001:db8:1:2::/64' })).toBeUndefined();
  });

  test('empty: nothing matches, the kinds in use are known', () => {
    expect(OverrideTable.compile(new Map()).lookup({ token: 'a', ip: '1.2.3.4' })).toBeUndefined();
    expect([...t.kinds].sort()).toEqual(['ip', 'sub', 'token', 'workspace']);
  });
});

/** The reference: every entry scanned; exact kinds first, then the range with the most bits. */
function reference(entries: ReadonlyMap<string, OverrideAction>, s: OverrideSubject) {
  for (const kind of ['token', 'workspace', 'sub'] as const) {
    const v = s[kind];
    if (v !== undefined && entries.has(`${kind}:${v}`)) return `${kind}:${v}`;
  }
  if (s.ip === undefined) return undefined;
  const addr = ipaddr.parse(s.ip);
  let best: [string, number] | undefined;
  for (const key of entries.keys()) {
    if (!key.startsWith('ip:')) continue;
    const [net, bits] = ipaddr.parseCIDR(key.slice(3));
    if (net.kind() === addr.kind() && addr.match(net, bits) && (!best || bits > best[1])) best = [key, bits];
  }
  return best?.[0];
}

test('the compiled lookup agrees with a scan of every entry (IPv4)', () => {
  const octet = fc.integer({ min: 0, max: 3 }); // few values, so ranges overlap often
  const addr = fc.tuple(octet, octet, octet, octet).map((o) => `10.${o[1]}.${o[2]}.${o[3]}`);
  const key = fc.oneof(
    fc.tuple(addr, fc.integer({ min: 8, max: 32 })).map(([a, b]) => `ip:${a}/${b}`),
    fc.constantFrom('token:a', 'token:b', 'workspace:w', 'sub:s'),
  );
  const subject = fc.record({
    token: fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined }),
    workspace: fc.option(fc.constantFrom('w', 'v'), { nil: undefined }),
    sub: fc.option(fc.constantFrom('s', 't'), { nil: undefined }),
    ip: fc.option(addr, { nil: undefined }),
  });
  fc.assert(
    fc.property(
      fc.array(key, { maxLength: 12 }),
      fc.array(subject, { minLength: 1, maxLength: 8 }),
      (keys, subjects) => {
        const { entries } = parseOverrides(Object.fromEntries(keys.map((k) => [k, 'pro'])));
        const compiled = OverrideTable.compile(entries);
        for (const s of subjects) expect(compiled.lookup(s)?.key).toBe(reference(entries, s));
      },
    ),
  );
});
