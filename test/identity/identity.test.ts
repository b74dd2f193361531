// Client addresses and visitor JWTs as key parts, through the real gateway and a real Redis.
import { describe, expect } from 'vitest';
import type { Gateway } from '../../src/runtime/gateway.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { gatewayYaml, limitHeaders, send } from '../helpers/gateway.js';
import { TEST_JWT_SECRET, unsignedJwt, visitorJwt } from '../helpers/tokens.js';

const config = (trusted: string) =>
  gatewayYaml(`
store: { redis: { url: "\${REDIS_URL}", keyPrefix: "\${PREFIX}:", commandTimeout: 2s } }
identity:
  trustedProxies: "${trusted}"
  jwt: { secret: ${TEST_JWT_SECRET}, algorithms: [HS256], issuer: tollgate, audience: tollgate-widget }
upstreams: { app: { url: "\${UPSTREAM_URL}" } }
limiters:
  per-ip: { windows: [{ limit: 1, period: 1m, key: [ip] }] }
  per-session:
    message: slow down
    windows: [{ limit: 3, period: 1m, key: [jwt] }]
routes:
  - { name: ip, paths: [/ip], upstream: app, limiters: [per-ip] }
  - { name: session, paths: [/session], upstream: app, limiters: [per-session] }
`);

/** Two gateways on the file's Redis (each its own key prefix): one trusts 127.0.0.1 and 10/8 as proxies, one nothing. */
const test = serversTest
  .extend('trusting', { scope: 'file' }, ({ redis, upstream, gateways }) =>
    gateways.start(config('127.0.0.1, 10.0.0.0/8'), {
      REDIS_URL: redis.url,
      UPSTREAM_URL: upstream.url,
      PREFIX: 'trusting',
    }),
  )
  .extend('distrusting', { scope: 'file' }, ({ redis, upstream, gateways }) =>
    gateways.start(config(''), { REDIS_URL: redis.url, UPSTREAM_URL: upstream.url, PREFIX: 'distrusting' }),
  );

const hitIp = (gateway: Gateway, xff?: string) =>
  send(`${gateway.url()}/ip`, { headers: xff === undefined ? {} : { 'x-forwarded-for': xff } });

describe('client IP', () => {
  test('X-Forwarded-For from a trusted peer is walked from the right past trusted hops', async ({
    trusting,
  }) => {
    expect((await hitIp(trusting, '203.0.113.1, 10.1.2.3')).status).toBe(200);
    // Same client behind a different chain of trusted proxies: same key.
    expect((await hitIp(trusting, '203.0.113.1, 10.9.9.9, 10.1.1.1')).status).toBe(429);
    // A spoofed left-most entry does not change the client the trusted proxy saw.
    expect((await hitIp(trusting, '1.1.1.1, 203.0.113.1')).status).toBe(429);
    expect((await hitIp(trusting, '203.0.113.2')).status).toBe(200);
  });

  test('X-Forwarded-For from an untrusted peer is ignored', async ({ distrusting }) => {
    expect((await hitIp(distrusting, '203.0.113.50')).status).toBe(200);
    const spoofed = await hitIp(distrusting, '203.0.113.51');
    expect(spoofed.status).toBe(429); // both counted against the socket peer, 127.0.0.1
    expect((await hitIp(distrusting)).status).toBe(429);
  });

  test('IPv6 clients are keyed by their /64', async ({ trusting }) => {
    expect((await hitIp(trusting, '2001:db8:1:2::1')).status).toBe(200);
    expect((await hitIp(trusting, '2001:db8:1:2:ffff:ffff:ffff:ffff')).status).toBe(429);
    expect((await hitIp(trusting, '2001:db8:1:3::1')).status).toBe(200);
  });

  test('IPv4-mapped IPv6 counts as the IPv4 address', async ({ trusting }) => {
    expect((await hitIp(trusting, '::ffff:198.51.100.7')).status).toBe(200);
    expect((await hitIp(trusting, '198.51.100.7')).status).toBe(429);
  });

  test('a malformed hop stops the walk at the last vouched-for address', async ({ trusting }) => {
    // "garbage" was written by 10.0.0.5's client; the trusted proxy itself is the best we know.
    expect((await hitIp(trusting, 'garbage, 10.0.0.5')).status).toBe(200);
    expect((await hitIp(trusting, 'other-garbage, 10.0.0.5')).status).toBe(429);
  });
});

describe('visitor JWT', () => {
  const hitSession = (gateway: Gateway, headers: Record<string, string>) =>
    send(`${gateway.url()}/session`, { method: 'POST', headers });

  test('a valid token is keyed by its session claim, from either header', async ({ trusting, upstream }) => {
    const a = await hitSession(trusting, { authorization: `Bearer ${await visitorJwt('s-1')}` });
    expect(a.status).toBe(200);
    expect(limitHeaders(a)).toMatchObject({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '2' });
    // A new token for the same session shares the budget.
    const b = await hitSession(trusting, { 'x-widget-token': await visitorJwt('s-1', { expiresIn: '2h' }) });
    expect(b.headers['x-ratelimit-remaining']).toBe('1');
    // The raw token is not what reaches the upstream's logs via the gateway: it forwards untouched.
    expect(upstream.seen.at(-1)?.headers['x-widget-token']).toBeDefined();
  });

  const invalid = {
    none: async () => ({}),
    expired: async () => ({
      authorization: `Bearer ${await visitorJwt('s-2', { expiresIn: Math.floor(Date.now() / 1000) - 60 })}`,
    }),
    'wrong key': async () => ({
      authorization: `Bearer ${await visitorJwt('s-2', { secret: 'another-secret-another-secret!!' })}`,
    }),
    'alg none': async () => ({ authorization: `Bearer ${unsignedJwt('s-2')}` }),
    garbage: async () => ({ 'x-widget-token': 'not.a.jwt' }),
    'wrong audience': async () => ({
      authorization: `Bearer ${await visitorJwt('s-2', { audience: 'other' })}`,
    }),
    'no exp': async () => ({ authorization: `Bearer ${await visitorJwt('s-2', { expiresIn: 'none' })}` }),
  } as const;
  const errors: Record<keyof typeof invalid, [string, string]> = {
    none: ['missing_token', 'Visitor token missing.'],
    expired: ['token_expired', 'Visitor token has expired.'],
    'wrong key': ['invalid_token', 'Visitor token is invalid.'],
    'alg none': ['invalid_token', 'Visitor token is invalid.'],
    garbage: ['invalid_token', 'Visitor token is invalid.'],
    'wrong audience': ['invalid_token', 'Visitor token is invalid.'],
    'no exp': ['invalid_token', 'Visitor token is invalid.'],
  };

  test.for(Object.keys(invalid) as (keyof typeof invalid)[])(
    '%s: 401 with its error code and rate-limit headers',
    async (kind, { trusting }) => {
      const xff = `192.0.2.${Object.keys(invalid).indexOf(kind) + 10}`;
      const reply = await hitSession(trusting, { ...(await invalid[kind]()), 'x-forwarded-for': xff });
      expect(reply.status).toBe(401);
      expect(reply.headers['content-type']).toBe('application/json');
      const [code, message] = errors[kind];
      expect(reply.text).toBe(JSON.stringify({ error: { code, message } }));
      expect(limitHeaders(reply)).toMatchObject({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '2' });
      expect(reply.headers['retry-after']).toBeUndefined();
    },
  );

  test('a flood of bad tokens is limited under the per-IP fallback key', async ({ trusting }) => {
    const headers = { 'x-forwarded-for': '192.0.2.99', 'x-widget-token': 'garbage' };
    for (const remaining of ['2', '1', '0']) {
      const r = await hitSession(trusting, headers);
      expect(r.status).toBe(401);
      expect(r.headers['x-ratelimit-remaining']).toBe(remaining);
    }
    const flooded = await hitSession(trusting, headers);
    expect(flooded.status).toBe(429);
    expect(flooded.json()).toEqual({ error: { code: 'rate_limited', message: 'slow down' } });
    // A valid session from the same IP is unaffected.
    const valid = await hitSession(trusting, {
      'x-forwarded-for': '192.0.2.99',
      authorization: `Bearer ${await visitorJwt('s-3')}`,
    });
    expect(valid.status).toBe(200);
  });
});
