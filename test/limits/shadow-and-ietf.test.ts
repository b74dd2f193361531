// Shadow limiters (per limiter and the global switch), and the IETF RateLimit-Policy / RateLimit headers.
import { describe, expect } from 'vitest';
import { loadConfigText } from '../../src/rules/load.js';
import { hashPart } from '../../src/identity/hash.js';
import { windowKey } from '../../src/limits/plan.js';
import { clientAddresses } from '../helpers/clients.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { gatewayYaml, send, type Reply } from '../helpers/gateway.js';
import { sampleValue, scrape } from '../helpers/prometheus.js';
import { TEST_JWT_SECRET, visitorJwt } from '../helpers/tokens.js';

/** Every header a limiter may add to a response. */
const LIMIT_HEADERS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
  'ratelimit',
  'ratelimit-policy',
];
const limitAndIetfHeaders = (reply: Reply) =>
  Object.fromEntries(
    LIMIT_HEADERS.filter((h) => reply.headers[h] !== undefined).map((h) => [h, reply.headers[h]]),
  );

const TWO_WINDOWS_POLICY = '"l.0";q=5;w=60, "l.1";q=100;w=3600';

/** Per-limiter shadow; the same routes on a listener with the IETF headers and on one without. */
const LISTENERS_CONFIG = gatewayYaml(
  `
store:
  redis: { url: '\${REDIS_URL}', commandTimeout: 2s }
identity:
  trustedProxies: [127.0.0.1]
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  watch:
    shadow: true
    windows: [{ limit: 2, period: 1m, key: [ip] }]
  e:
    windows: [{ limit: 10, period: 1m, key: [ip] }]
  l:
    windows:
      - { limit: 5, period: 1m, key: [ip] }
      - { limit: 100, period: 1h, key: [ip] }
routes:
  - { name: shadow, paths: ['/shadow/*', '/status/*'], upstream: app, limiters: [watch] }
  - { name: mixed, paths: ['/mixed/*'], upstream: app, limiters: [e, watch] }
  - { name: two, paths: ['/two/*'], upstream: app, limiters: [l] }
`,
  { listeners: [{ name: 'ietf', ietfHeaders: true }, { name: 'plain' }], admin: true },
);

/** Every limiter shadowed, or none, by the global switch. */
function shadowConfig(shadow: boolean): string {
  return gatewayYaml(
    `
shadow: ${shadow}
store:
  redis: { url: '\${REDIS_URL}', keyPrefix: 'global:', commandTimeout: 2s }
identity:
  trustedProxies: [127.0.0.1]
  jwt: { secret: '${TEST_JWT_SECRET}', algorithms: [HS256] }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  normal:
    windows: [{ limit: 2, period: 1m, key: [ip] }]
  session:
    windows: [{ limit: 2, period: 1m, key: [jwt] }]
routes:
  - { name: normal, paths: ['/n/*'], upstream: app, limiters: [normal] }
  - { name: session, paths: ['/j/*'], upstream: app, limiters: [session] }
`,
    { listeners: [{ ietfHeaders: true }], admin: true },
  );
}

const test = serversTest
  .extend('listenersGateway', { scope: 'file' }, ({ gatewayEnv, gateways }) =>
    gateways.start(LISTENERS_CONFIG, gatewayEnv),
  )
  .extend('shadowGateway', { scope: 'file' }, ({ gatewayEnv, gateways }) =>
    gateways.start(shadowConfig(true), gatewayEnv),
  )
  /** The file's Redis client, to inspect keys. */
  .extend('inspect', { scope: 'file' }, ({ redisClient }) => redisClient)
  /** A GET on a listener of listenersGateway from a client address. */
  .extend(
    'get',
    { scope: 'file' },
    ({ listenersGateway }) =>
      (listener: 'ietf' | 'plain', ip: string, path: string) =>
        send(`${listenersGateway.url(listener)}${path}`, { headers: { 'x-forwarded-for': ip } }),
  )
  /** The Redis key of window `index` of a per-IP limiter of listenersGateway. */
  .extend(
    'key',
    { scope: 'file' },
    ({ listenersGateway }) =>
      (limiter: string, index: number, ip: string) =>
        windowKey('tg:', listenersGateway.table.limiters.get(limiter)!, index, () => hashPart(`ip=${ip}`)),
  )
  /** A GET to shadowGateway. */
  .extend(
    'shadowGet',
    { scope: 'file' },
    ({ shadowGateway }) =>
      (path: string, headers: Record<string, string>) =>
        send(`${shadowGateway.url()}${path}`, { headers }),
  );

const newClient = clientAddresses();

describe('per-limiter shadow, and the IETF headers of a listener', () => {
  /** The r and t of a RateLimit header for `name`, checking its exact form (pk: ietf-problem.test.ts). */
  function parseRateLimit(reply: Reply, name: string): { r: number; t: number } {
    const match = new RegExp(`^"${name.replace('.', '\\.')}";r=(\\d+);t=(\\d+);pk=:[A-Za-z0-9+/]{16}:$`).exec(
      reply.headers['ratelimit'] ?? '',
    );
    expect(match, `RateLimit: ${reply.headers['ratelimit']}`).not.toBeNull();
    return { r: Number(match![1]), t: Number(match![2]) };
  }

  /** t counts down to the moment X-RateLimit-Reset names (both rounded up to whole seconds). */
  function expectConsistent(reply: Reply, t: number, sentAtMs: number, receivedAtMs: number): void {
    const reset = Number(reply.headers['x-ratelimit-reset']);
    expect(reset - t).toBeGreaterThanOrEqual(Math.floor(sentAtMs / 1000));
    expect(reset - t).toBeLessThanOrEqual(Math.floor(receivedAtMs / 1000) + 1);
  }

  test('a shadow limiter (limit 2) lets requests 3..5 through, with no rate-limit headers, and counts them', async ({
    listenersGateway,
    inspect,
    get,
    key,
  }) => {
    const ip = newClient();
    for (let i = 1; i <= 5; i++) {
      const reply = await get('ietf', ip, `/shadow/${i}`);
      expect(reply.status).toBe(200);
      expect(reply.json()).toMatchObject({ url: `/shadow/${i}` });
      expect(limitAndIetfHeaders(reply)).toEqual({});
    }
    // It counts every request (that is its point), without ever refusing one.
    expect(await inspect.get(key('watch', 0, ip))).toBe('5');
    // An upstream's own X-RateLimit-* does not leak through either.
    const upstreamHeaders = await get('plain', ip, '/status/200');
    expect(upstreamHeaders.status).toBe(200);
    expect(upstreamHeaders.text).toBe('{"upstream":true}');
    expect(limitAndIetfHeaders(upstreamHeaders)).toEqual({});

    const m = await scrape(listenersGateway.adminUrl!);
    expect(sampleValue(m, 'tollgate_requests_total{limiter="watch",decision="allowed"}')).toBe(2);
    expect(sampleValue(m, 'tollgate_requests_total{limiter="watch",decision="shadow_limited"}')).toBe(4);
    expect(sampleValue(m, 'tollgate_requests_total{limiter="watch",decision="limited"}')).toBeUndefined();
  });

  test('on a route with an enforcing and a shadow limiter, only the enforcing one shows', async ({
    inspect,
    get,
    key,
  }) => {
    const ip = newClient();
    for (const remaining of [9, 8, 7, 6]) {
      const sentAt = Date.now();
      const reply = await get('ietf', ip, '/mixed/a');
      expect(reply.status).toBe(200);
      expect(reply.headers['x-ratelimit-limit']).toBe('10');
      expect(reply.headers['x-ratelimit-remaining']).toBe(String(remaining));
      expect(reply.headers['ratelimit-policy']).toBe('"e.0";q=10;w=60');
      const { r, t } = parseRateLimit(reply, 'e.0');
      expect(r).toBe(remaining);
      expectConsistent(reply, t, sentAt, Date.now());
    }
    expect(await inspect.get(key('watch', 0, ip))).toBe('4'); // spent at 2, never refusing
  });

  test('two windows: exact RateLimit-Policy and RateLimit on 200 and on 429; the plain listener has neither', async ({
    get,
  }) => {
    const ip = newClient();
    for (const remaining of [4, 3, 2, 1, 0]) {
      const sentAt = Date.now();
      const reply = await get('ietf', ip, '/two/a');
      expect(reply.status).toBe(200);
      expect(reply.headers['ratelimit-policy']).toBe(TWO_WINDOWS_POLICY);
      const { r, t } = parseRateLimit(reply, 'l.0');
      expect(r).toBe(remaining);
      expect(t).toBeGreaterThanOrEqual(0);
      expect(t).toBeLessThanOrEqual(60);
      expectConsistent(reply, t, sentAt, Date.now());
      expect(reply.headers['x-ratelimit-limit']).toBe('5');
      expect(reply.headers['x-ratelimit-remaining']).toBe(String(remaining));
      expect(reply.headers['retry-after']).toBeUndefined();
    }

    const sentAt = Date.now();
    const refused = await get('ietf', ip, '/two/a');
    expect(refused.status).toBe(429);
    expect(refused.text).toBe('{"error":{"code":"rate_limited","message":"Too Many Attempts."}}');
    expect(refused.headers['ratelimit-policy']).toBe(TWO_WINDOWS_POLICY);
    const { r, t } = parseRateLimit(refused, 'l.0');
    expect(r).toBe(0);
    expect(t).toBeLessThanOrEqual(60);
    expectConsistent(refused, t, sentAt, Date.now());
    expect(refused.headers['retry-after']).toBe(String(Math.max(1, t)));
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');

    // The same client on the listener without ietfHeaders: the X-RateLimit-* headers only.
    const plain = await get('plain', ip, '/two/a');
    expect(plain.status).toBe(429);
    expect(plain.headers['ratelimit']).toBeUndefined();
    expect(plain.headers['ratelimit-policy']).toBeUndefined();
    expect(plain.headers['x-ratelimit-limit']).toBe('5');
    expect(plain.headers['retry-after']).toMatch(/^\d+$/);

    const other = await get('plain', newClient(), '/two/a');
    expect(other.status).toBe(200);
    expect(Object.keys(limitAndIetfHeaders(other)).sort()).toEqual([
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
    ]);
  });

  test('when the hour window has the fewest left, RateLimit names it', async ({ inspect, get, key }) => {
    const ip = newClient();
    await inspect.set(key('l', 1, ip), 98, 'PX', 3_600_000); // 98 of 100 spent this hour

    const first = await get('ietf', ip, '/two/b');
    expect(first.status).toBe(200);
    expect(first.headers['ratelimit-policy']).toBe(TWO_WINDOWS_POLICY);
    let rt = parseRateLimit(first, 'l.1');
    expect(rt.r).toBe(1);
    expect(rt.t).toBeGreaterThan(3500);
    expect(rt.t).toBeLessThanOrEqual(3600);
    expect(first.headers['x-ratelimit-limit']).toBe('100');

    const second = await get('ietf', ip, '/two/b');
    expect(second.status).toBe(200);
    expect(parseRateLimit(second, 'l.1').r).toBe(0);

    const refused = await get('ietf', ip, '/two/b');
    expect(refused.status).toBe(429);
    rt = parseRateLimit(refused, 'l.1');
    expect(rt.r).toBe(0);
    expect(rt.t).toBeGreaterThan(3500);
    expect(refused.headers['retry-after']).toBe(String(rt.t));
    expect(refused.headers['x-ratelimit-limit']).toBe('100');
    expect(await inspect.get(key('l', 0, ip))).toBe('2'); // the refused request was not counted
  });
});

describe('the global shadow switch', () => {
  test('a normal limiter never refuses and sends no headers', async ({ shadowGateway, shadowGet }) => {
    const ip = { 'x-forwarded-for': newClient() };
    for (let i = 1; i <= 5; i++) {
      const reply = await shadowGet(`/n/${i}`, ip);
      expect(reply.status).toBe(200);
      expect(reply.json()).toMatchObject({ url: `/n/${i}` });
      expect(limitAndIetfHeaders(reply)).toEqual({});
    }
    const m = await scrape(shadowGateway.adminUrl!);
    expect(sampleValue(m, 'tollgate_requests_total{limiter="normal",decision="allowed"}')).toBe(2);
    expect(sampleValue(m, 'tollgate_requests_total{limiter="normal",decision="shadow_limited"}')).toBe(3);
  });

  test('a JWT-keyed limiter does not answer 401 for a missing or invalid token', async ({
    shadowGateway,
    shadowGet,
  }) => {
    const ip = newClient();
    const replies = [
      await shadowGet('/j/a', { 'x-forwarded-for': ip }),
      await shadowGet('/j/b', { 'x-forwarded-for': ip }),
      await shadowGet('/j/c', { 'x-forwarded-for': ip, authorization: 'Bearer not-a-jwt' }),
      await shadowGet('/j/d', { 'x-forwarded-for': ip, authorization: `Bearer ${await visitorJwt('s-1')}` }),
    ];
    for (const [i, reply] of replies.entries()) {
      expect(reply.status).toBe(200);
      expect(reply.json()).toMatchObject({ url: `/j/${'abcd'[i]}` });
      expect(limitAndIetfHeaders(reply)).toEqual({});
    }
    const m = await scrape(shadowGateway.adminUrl!);
    // Missing and invalid tokens share the per-IP fallback key: the third is over its limit of 2.
    expect(sampleValue(m, 'tollgate_requests_total{limiter="session",decision="allowed"}')).toBe(3);
    expect(sampleValue(m, 'tollgate_requests_total{limiter="session",decision="shadow_limited"}')).toBe(1);
  });

  test('switched off by a reload, the same limiters enforce against the counts they kept', async ({
    shadowGateway,
    gatewayEnv,
    shadowGet,
  }) => {
    const ip = newClient();
    for (let i = 0; i < 3; i++) expect((await shadowGet('/n/x', { 'x-forwarded-for': ip })).status).toBe(200);
    await shadowGateway.reload(loadConfigText(shadowConfig(false), 'enforcing.yaml', gatewayEnv));
    try {
      const refused = await shadowGet('/n/x', { 'x-forwarded-for': ip });
      expect(refused.status).toBe(429);
      expect(refused.headers['x-ratelimit-limit']).toBe('2');
      expect(refused.headers['ratelimit-policy']).toBe('"normal.0";q=2;w=60');
      const missing = await shadowGet('/j/x', { 'x-forwarded-for': newClient() });
      expect(missing.status).toBe(401);
      expect(missing.text).toBe('{"error":{"code":"missing_token","message":"Visitor token missing."}}');
    } finally {
      await shadowGateway.reload(loadConfigText(shadowConfig(true), 'shadow.yaml', gatewayEnv));
    }
    const again = await shadowGet('/n/x', { 'x-forwarded-for': ip });
    expect(again.status).toBe(200);
    expect(limitAndIetfHeaders(again)).toEqual({});
  });
});
