import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { describe, expect, test } from 'vitest';
import { addressKey } from '../../src/identity/address-key.js';
import { parseAddress, resolveClientIp, TrustedProxies } from '../../src/net/client-ip.js';

const v4 = fc.ipV4();
const v6 = fc.ipV6();
const trusted = new TrustedProxies(['10.0.0.0/8', '127.0.0.1', 'fd00::/8']);
const untrustedV4 = v4.filter((a) => !trusted.has(parseAddress(a)!));
const trustedV4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255)).map(([a, b, c]) => `10.${a}.${b}.${c}`);

describe('resolveClientIp', () => {
  test('an untrusted peer is the client, whatever X-Forwarded-For says', () => {
    fc.assert(
      fc.property(untrustedV4, fc.array(v4), (peer, xff) => {
        expect(resolveClientIp(peer, xff.join(', '), trusted)?.toString()).toBe(
          peer.replace(/\b0+(\d)/g, '$1'),
        );
      }),
    );
  });

  test('behind trusted proxies, the right-most untrusted hop is the client', () => {
    fc.assert(
      fc.property(
        fc.array(v4),
        untrustedV4,
        fc.array(trustedV4, { maxLength: 4 }),
        trustedV4,
        (left, client, hops, peer) => {
          const xff = [...left, client, ...hops].join(', ');
          expect(resolveClientIp(peer, xff, trusted)?.toString()).toBe(parseAddress(client)!.toString());
        },
      ),
    );
  });

  test('when every hop is trusted, the left-most is the client', () => {
    expect(resolveClientIp('127.0.0.1', '10.0.0.1, 10.0.0.2', trusted)?.toString()).toBe('10.0.0.1');
  });

  test('the IPv4-mapped form of a peer is its IPv4 address, and ports and zones are dropped', () => {
    expect(resolveClientIp('::ffff:127.0.0.1', '203.0.113.9:4711', trusted)?.toString()).toBe('203.0.113.9');
    expect(resolveClientIp('::ffff:203.0.113.9', undefined, trusted)?.toString()).toBe('203.0.113.9');
    expect(resolveClientIp('127.0.0.1', '[2001:db8::1]:443', trusted)?.toString()).toBe('2001:db8::1');
    expect(parseAddress('fe80::1%eth0')?.toString()).toBe('fe80::1');
    expect(parseAddress('not-an-ip')).toBeUndefined();
  });

  test('a multi-valued X-Forwarded-For header is one list', () => {
    expect(resolveClientIp('127.0.0.1', ['203.0.113.1', '10.0.0.1'], trusted)?.toString()).toBe(
      '203.0.113.1',
    );
  });
});

describe('addressKey', () => {
  test('IPv6 addresses with the same /64 share a key; others do not', () => {
    fc.assert(
      fc.property(v6, v6, (a, b) => {
        const pa = ipaddr.IPv6.parse(a);
        const pb = ipaddr.IPv6.parse(b);
        const samePrefix = pa.toByteArray().slice(0, 8).join() === pb.toByteArray().slice(0, 8).join();
        expect(addressKey(pa, 64) === addressKey(pb, 64)).toBe(samePrefix);
      }),
    );
  });

  test('the prefix length is configurable and shows in the key', () => {
    const a = ipaddr.IPv6.parse('2001:db8:abcd:1234:5678::1');
    expect(addressKey(a, 64)).toBe('2001:db8:abcd:1234::/64');
    expect(addressKey(a, 48)).toBe('2001:db8:abcd::/48');
    expect(addressKey(a, 128)).toBe('2001:db8:abcd:1234:5678::1/128');
    expect(addressKey(a, 56)).toBe('2001:db8:abcd:1200::/56');
  });

  test('IPv4 and IPv4-mapped IPv6 give the same key', () => {
    fc.assert(
      fc.property(v4, (a) => {
        expect(addressKey(parseAddress(`::ffff:${a}`)!, 64)).toBe(addressKey(parseAddress(a)!, 64));
      }),
    );
  });
});

describe('TrustedProxies', () => {
  test('rejects what is not an address or a CIDR', () => {
    expect(() => new TrustedProxies(['10.0.0.0/33'])).toThrow('not a CIDR: "10.0.0.0/33"');
    expect(() => new TrustedProxies(['proxy.local'])).toThrow('not an IP address or CIDR: "proxy.local"');
  });
});
