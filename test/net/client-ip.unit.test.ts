// The analytics collector and the gateway resolve a client's address with the one walk in src/net/:
// for any X-Forwarded-For chain reaching the gateway from any peer, the address the collector reads
// from what the gateway forwards is the address the gateway keyed its limits by.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { WorkspaceTokenStore } from '../../src/credentials/workspace-token.js';
import { addressKey } from '../../src/identity/address-key.js';
import { describePeer } from '../../src/identity/peer.js';
import { clientIpKey, type IdentitySources } from '../../src/identity/resolve.js';
import { parseAddress, TrustedProxies } from '../../src/net/client-ip.js';
import { upstreamRequestHeaders } from '../../src/proxy/headers.js';
import { visitorIp } from '../../src/services/websites/analytics/visitor-ip.js';

const TRUSTED = ['10.0.0.0/8', '127.0.0.1', 'fd00::/8'];

const byte = fc.nat(255);
const port = fc.integer({ min: 1, max: 65535 });
const trustedV4 = fc.tuple(byte, byte, byte).map(([a, b, c]) => `10.${a}.${b}.${c}`);
const trustedV6 = fc
  .tuple(byte, fc.nat(0xffff))
  .map(([a, b]) => `fd${a.toString(16).padStart(2, '0')}::${b.toString(16)}`);
const v4 = fc.oneof(fc.ipV4(), trustedV4, fc.constant('127.0.0.1'));
const v6 = fc.oneof(fc.ipV6(), trustedV6, fc.constant('::1'));

/** One hop as proxies write them: bare, with a port, bracketed, IPv4-mapped, blank or junk. */
const hop = fc.oneof(
  v4,
  v6,
  fc.tuple(v4, port).map(([a, p]) => `${a}:${p}`),
  fc.tuple(v6, port).map(([a, p]) => `[${a}]:${p}`),
  v4.map((a) => `::ffff:${a}`),
  fc.constantFrom('', ' ', '  '),
  fc.constantFrom('unknown', 'not-an-ip', '_hidden'),
);
const spacing = fc.constantFrom(',', ', ', ' , ');
/** The client's X-Forwarded-For: absent, one header, or several (Node gives an array then). */
const forwardedFor = fc.oneof(
  fc.constant(undefined),
  fc.tuple(fc.array(hop, { minLength: 1, maxLength: 8 }), spacing).map(([hops, sep]) => hops.join(sep)),
  fc.array(
    fc.array(hop, { minLength: 1, maxLength: 3 }).map((hops) => hops.join(', ')),
    {
      minLength: 2,
      maxLength: 3,
    },
  ),
);
/** The gateway's socket peer: a trusted proxy, or the client itself. */
const peer = fc.oneof(
  v4,
  v6,
  v4.map((a) => `::ffff:${a}`),
);

const trusted = new TrustedProxies(TRUSTED);
const sources: IdentitySources = {
  trustedProxies: trusted,
  // The whole address, so that the key is comparable with the collector's address.
  ipv6PrefixLength: 128,
  jwt: undefined,
  workspaceTokens: {} as WorkspaceTokenStore,
};

/** The gateway's key address, and the collector's address from the headers the gateway forwards. */
function bothSides(
  peerRaw: string,
  xff: string | string[] | undefined,
): { gateway: string; collector: string } {
  const incoming = xff === undefined ? {} : { 'x-forwarded-for': xff };
  const p = describePeer(peerRaw, sources);
  const gateway = clientIpKey(sources, p, incoming);
  const forwarded = upstreamRequestHeaders(
    incoming,
    { peer: p.text, peerTrusted: p.trusted, protocol: 'http', requestId: 'r' },
    false,
  );
  const seen = visitorIp('127.0.0.1', forwarded['x-forwarded-for'] as string, trusted);
  return { gateway, collector: addressKey(parseAddress(seen!)!, 128) };
}

describe('the collector and the gateway', () => {
  test('resolve the same address for any chain and any peer', () => {
    fc.assert(
      fc.property(peer, forwardedFor, (peerRaw, xff) => {
        const { gateway, collector } = bothSides(peerRaw, xff);
        expect(collector).toBe(gateway);
      }),
      { numRuns: 2000 },
    );
  });

  test('a blank hop is skipped and a port dropped on both sides', () => {
    expect(bothSides('127.0.0.1', '203.0.113.7:4711, , 10.0.0.1')).toEqual({
      gateway: '203.0.113.7',
      collector: '203.0.113.7',
    });
    expect(bothSides('::ffff:127.0.0.1', '[2001:db8::7]:443,  ,::ffff:10.1.2.3')).toEqual({
      gateway: '2001:db8::7/128',
      collector: '2001:db8::7/128',
    });
  });

  test("an untrusted peer's chain is dropped on both sides", () => {
    expect(bothSides('198.51.100.4', '203.0.113.7, , 10.0.0.1')).toEqual({
      gateway: '198.51.100.4',
      collector: '198.51.100.4',
    });
  });
});
