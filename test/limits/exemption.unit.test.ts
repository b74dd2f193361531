// Allow and deny lists: matching against a reference model of CIDRs (addresses as bit strings),
// and what a route's lists make of a request (deny wins, shadow limiters, exempt windows left out).
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { describe, expect, test } from 'vitest';
import { compileLimiter } from '../../src/rules/compile.js';
import { compileList, screen } from '../../src/limits/exemption.js';
import { routeWindow } from '../../src/limits/keys.js';
import type { ListSubject } from '../../src/rules/model.js';

/** An address as its bits, most significant first. */
const bitsOf = (bytes: readonly number[]) => bytes.map((b) => b.toString(2).padStart(8, '0')).join('');

/** Reference: an entry matches when the families agree and the first `prefix` bits are equal. */
function modelMatches(entries: readonly { bytes: number[]; prefix: number }[], addr: number[] | undefined) {
  if (!addr) return false;
  return entries.some(
    (e) =>
      e.bytes.length === addr.length &&
      bitsOf(e.bytes).slice(0, e.prefix) === bitsOf(addr).slice(0, e.prefix),
  );
}

// Few distinct leading bytes, so that entries and addresses often share prefixes.
const byte = fc.oneof(fc.constantFrom(0, 10, 192, 255), fc.integer({ min: 0, max: 255 }));
const v4 = fc.array(byte, { minLength: 4, maxLength: 4 });
const v6 = fc.array(byte, { minLength: 16, maxLength: 16 });
const address = fc.oneof(v4, v6);
const entry = address.chain((bytes) =>
  fc.record({ bytes: fc.constant(bytes), prefix: fc.integer({ min: 0, max: bytes.length * 8 }) }),
);
const text = (bytes: number[]) => ipaddr.fromByteArray(bytes).toString();
/** An entry as an operator writes it: a bare address for a whole-length prefix, sometimes. */
const entryText = (e: { bytes: number[]; prefix: number }, bare: boolean) =>
  bare && e.prefix === e.bytes.length * 8 ? text(e.bytes) : `${text(e.bytes)}/${e.prefix}`;

const subjectOf = (bytes: number[] | undefined, token?: string): ListSubject => ({
  address: bytes && ipaddr.fromByteArray(bytes),
  token,
});

describe('allow and deny lists', () => {
  test('an address matches exactly when the reference model says so', () => {
    fc.assert(
      fc.property(
        fc.array(entry, { minLength: 1, maxLength: 5 }),
        fc.option(address, { nil: undefined }),
        fc.boolean(),
        (entries, addr, bare) => {
          const list = compileList({ addresses: entries.map((e) => entryText(e, bare)), tokens: [] })!;
          expect(list.matches(subjectOf(addr))).toBe(modelMatches(entries, addr));
        },
      ),
      { numRuns: 2000 },
    );
  });

  test('a token matches by its verified id alone', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 4 }),
        fc.option(fc.string({ minLength: 1, maxLength: 4 }), { nil: undefined }),
        (tokens, token) => {
          const list = compileList({ addresses: [], tokens })!;
          expect(list.matches(subjectOf([10, 0, 0, 1], token))).toBe(
            token !== undefined && tokens.includes(token),
          );
          expect(list.namesTokens).toBe(true);
        },
      ),
    );
  });

  test('an IPv4-mapped client address matches an IPv4 range (ipaddr.process unmaps it)', () => {
    const list = compileList({ addresses: ['10.0.0.0/8'], tokens: [] })!;
    expect(list.matches({ address: ipaddr.process('::ffff:10.1.2.3'), token: undefined })).toBe(true);
    expect(list.matches({ address: ipaddr.process('2001:db8::1'), token: undefined })).toBe(false);
  });

  test("a workspace matches by the verified token's workspace alone", () => {
    const list = compileList({ addresses: [], tokens: [], workspaces: ['vip'] })!;
    expect(list.namesTokens).toBe(true);
    expect(list.namesWorkspaces).toBe(true);
    expect(list.text).toBe('workspace vip');
    expect(list.matches({ ...subjectOf(undefined, 't1'), workspace: 'vip' })).toBe(true);
    expect(list.matches({ ...subjectOf(undefined, 't1'), workspace: 'other' })).toBe(false);
    expect(list.matches(subjectOf([10, 0, 0, 1], 't1'))).toBe(false);
  });

  test('an empty list compiles to none; the text is what check shows', () => {
    expect(compileList({ addresses: [], tokens: [] })).toBeUndefined();
    expect(compileList(undefined)).toBeUndefined();
    expect(compileList({ addresses: ['10.0.0.0/8', '::1'], tokens: ['42'] })!.text).toBe(
      '10.0.0.0/8, ::1, token 42',
    );
  });
});

describe('screening a route', () => {
  const limiter = (name: string, extra: object) =>
    compileLimiter(
      name,
      {
        message: 'm',
        shadow: false,
        overLimitCache: true,
        windows: [{ limit: 1, period: 1000, key: ['ip'] }],
        ...extra,
      } as never,
      'open',
    );
  const a = limiter('a', { allow: { addresses: ['10.0.0.0/8'], tokens: [] } });
  const b = limiter('b', {
    deny: { addresses: ['10.9.0.0/16'], tokens: [] },
    allow: { addresses: ['10.0.0.0/8'], tokens: [] },
  });
  const c = compileLimiter(
    'c',
    {
      message: 'm',
      shadow: true,
      overLimitCache: true,
      windows: [{ limit: 1, period: 1000, key: ['ip'] }],
      deny: { addresses: ['10.0.0.0/8'], tokens: [] },
    } as never,
    'open',
  );
  const limiters = [a, b, c];
  const windows = limiters.map((l) => routeWindow(l, 0, l.windows[0]!));

  test('allow leaves the limiter out; deny wins over allow; a shadow deny never refuses', () => {
    const inAllow = screen(limiters, windows, subjectOf([10, 1, 0, 1]));
    expect(inAllow.deniedBy).toBeUndefined();
    expect(inAllow.exempt).toEqual([a, b]);
    expect(inAllow.shadowDenied).toEqual([c]);
    expect(inAllow.windows).toEqual([windows[2]]);
    const inDeny = screen(limiters, windows, subjectOf([10, 9, 0, 1]));
    expect(inDeny.deniedBy).toBe(b);
    const outside = screen(limiters, windows, subjectOf([192, 0, 2, 1]));
    expect(outside).toEqual({ deniedBy: undefined, shadowDenied: [], exempt: [], windows });
  });
});
