// CORS on the wire: preflights answered by the gateway (never counted, never forwarded), and the
// CORS headers on every response of a CORS route — forwarded ones and the gateway's own 401, 413,
// 429 and 502 — with exact header values, through real sockets and a real redis-server.
import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect } from 'vitest';
import { clientAddresses } from '../helpers/clients.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { gatewayYaml, send, type Reply } from '../helpers/gateway.js';
import { freePort } from '../helpers/ports.js';
import { TEST_JWT_SECRET, visitorJwt } from '../helpers/tokens.js';
import { startPlainServer } from '../helpers/upstream.js';

const EXPOSED =
  'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, X-Request-Id, RateLimit, RateLimit-Policy';
const PREFLIGHT_VARY = 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers';
const SHOP = 'https://shop.example';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const CONFIG = gatewayYaml(`
store:
  redis: { url: '\${REDIS_URL}', commandTimeout: 2s }
identity:
  trustedProxies: [127.0.0.1]
  jwt: { secret: '\${JWT_SECRET}', algorithms: [HS256], issuer: tollgate, audience: tollgate-widget }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
  down: { url: '\${DOWN_URL}' }
limiters:
  per-ip:
    message: Slow down.
    windows: [{ limit: 3, period: 1m, key: [ip] }]
  per-visitor:
    message: Too many for this visitor.
    windows: [{ limit: 5, period: 1m, key: [jwt] }]
cors:
  any:
    origins: '*'
    methods: [GET, POST]
    headers: [Content-Type, Authorization]
    maxAge: 10m
  listed:
    origins: '\${LISTED_ORIGINS}'
    methods: [POST, DELETE]
    headers: [X-Widget-Token]
    maxAge: 90s
    credentials: true
routes:
  - { name: limited, methods: [POST], paths: [/limited], upstream: app, cors: any, limiters: [per-ip] }
  - { name: visitor, methods: [POST], paths: [/visitor], upstream: app, cors: any, limiters: [per-visitor] }
  - { name: small, methods: [POST], paths: [/small], upstream: app, cors: any, maxBodySize: 10 }
  - { name: down, paths: [/down], upstream: down, cors: any, limiters: [per-ip] }
  - { name: listed, paths: ['/listed*'], upstream: app, cors: listed, limiters: [per-ip] }
  - name: inline
    paths: [/inline]
    upstream: app
    cors: { origins: 'https://a.example', methods: [PUT], maxAge: 5s }
  - { name: plain, paths: ['/*'], upstream: app }
`);

/** What the upstream received: method and path. */
interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

const seen: Seen[] = [];
const newClient = clientAddresses('203.0.113.');

/** `corsUpstream`: an upstream that answers with CORS headers of its own, which the gateway must not pass on. */
const test = serversTest
  .extend('corsUpstream', { scope: 'file' }, async ({}, { onCleanup }) => {
    const server = await startPlainServer((req, res) => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      req.resume();
      const vary = new URL(req.url ?? '/', 'http://u').searchParams.get('vary');
      res.writeHead(200, {
        'content-type': 'application/json',
        'access-control-allow-origin': 'https://evil.example',
        'access-control-allow-credentials': 'true',
        'access-control-expose-headers': 'X-Internal',
        'x-internal': 'secret',
        ...(vary ? { vary } : {}),
      });
      res.end('{"upstream":true}');
    });
    onCleanup(() => server.close());
    return server;
  })
  .extend('gateway', { scope: 'file' }, async ({ redis, corsUpstream, gateways }) =>
    gateways.start(CONFIG, {
      REDIS_URL: redis.url,
      JWT_SECRET: TEST_JWT_SECRET,
      UPSTREAM_URL: corsUpstream.url,
      DOWN_URL: `http://127.0.0.1:${await freePort()}`,
      LISTED_ORIGINS: `${SHOP}, http://localhost:3000`,
    }),
  )
  .extend(
    'url',
    { scope: 'file' },
    ({ gateway }) =>
      (path: string) =>
        `${gateway.url()}${path}`,
  )
  .extend(
    'preflight',
    { scope: 'file' },
    ({ url }) =>
      function preflight(path: string, headers: Record<string, string>): Promise<Reply> {
        return send(url(path), { method: 'OPTIONS', headers });
      },
  );

/** The headers of a reply without the per-connection ones (date, connection, keep-alive). */
function headersOf(reply: Reply): Record<string, string> {
  const { date, connection: _connection, 'keep-alive': _keepAlive, ...rest } = reply.headers;
  expect(date).toMatch(/ GMT$/);
  return rest;
}

/**
 * The exact headers of a gateway JSON error on a CORS route, from an origin the `*` policy allows:
 * its own headers plus `extra` (rate-limit headers, Retry-After).
 */
const corsErrorHeaders = (reply: Reply, extra: Record<string, unknown> = {}) => ({
  'content-type': 'application/json',
  'content-length': String(reply.text.length),
  'access-control-allow-origin': '*',
  'access-control-expose-headers': EXPOSED,
  vary: 'Origin',
  ...extra,
  'x-request-id': expect.stringMatching(UUID),
});

/** The headers a limited response carries from the window with `remaining` left of 3 (per-ip). */
const limitedBy = (remaining: number, reply: Reply) => ({
  'x-ratelimit-limit': '3',
  'x-ratelimit-remaining': String(remaining),
  'x-ratelimit-reset': reply.headers['x-ratelimit-reset']!,
});

const seenOf = (path: string) => seen.filter((s) => s.url.startsWith(path)).map((s) => s.method);

describe('preflights', () => {
  test('an allowed preflight: 204 with the policy, answered by the gateway, never counted', async ({
    url,
    preflight,
  }) => {
    const ip = newClient();
    for (let i = 0; i < 5; i++) {
      const reply = await preflight('/limited', {
        origin: 'https://anyone.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,authorization',
        'x-forwarded-for': ip,
      });
      expect(reply.status).toBe(204);
      expect(reply.text).toBe('');
      expect(headersOf(reply)).toEqual({
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'GET, POST',
        'access-control-allow-headers': 'Content-Type, Authorization',
        'access-control-max-age': '600',
        vary: PREFLIGHT_VARY,
        'x-request-id': expect.stringMatching(UUID),
      });
    }
    expect(seenOf('/limited')).toEqual([]);
    // Five preflights later, the client's budget of 3 is whole.
    const real = await send(url('/limited'), {
      method: 'POST',
      headers: { origin: 'https://anyone.example', 'x-forwarded-for': ip },
    });
    expect(real.status).toBe(200);
    expect(real.headers['x-ratelimit-remaining']).toBe('2');
  });

  test('a listed origin is echoed, with credentials; the request id is the client’s', async ({
    preflight,
  }) => {
    const reply = await preflight('/listed/item', {
      origin: SHOP,
      'access-control-request-method': 'DELETE',
      'access-control-request-headers': 'X-Widget-Token',
      'x-request-id': 'req-123',
    });
    expect(reply.status).toBe(204);
    expect(headersOf(reply)).toEqual({
      'access-control-allow-origin': SHOP,
      'access-control-allow-methods': 'POST, DELETE',
      'access-control-allow-headers': 'X-Widget-Token',
      'access-control-allow-credentials': 'true',
      'access-control-max-age': '90',
      vary: PREFLIGHT_VARY,
      'x-request-id': 'req-123',
    });
  });

  test.for<[string, Record<string, string>, string, string]>([
    [
      'an origin not listed',
      { origin: 'https://shop.example.evil.test', 'access-control-request-method': 'POST' },
      'cors_origin_not_allowed',
      'This origin may not call this API.',
    ],
    [
      'the null origin',
      { origin: 'null', 'access-control-request-method': 'POST' },
      'cors_origin_not_allowed',
      'This origin may not call this API.',
    ],
    [
      'a method not allowed',
      { origin: SHOP, 'access-control-request-method': 'PATCH' },
      'cors_method_not_allowed',
      'This method is not allowed in cross-origin requests.',
    ],
    [
      'a header not allowed',
      {
        origin: SHOP,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-widget-token,cookie',
      },
      'cors_header_not_allowed',
      'A requested header is not allowed in cross-origin requests.',
    ],
  ])(
    '%s: 403 without CORS headers, not counted, not forwarded',
    async ([_, headers, code, message], { preflight, url }) => {
      const ip = newClient();
      const before = seen.length;
      const reply = await preflight('/listed', { ...headers, 'x-forwarded-for': ip });
      expect(reply.status).toBe(403);
      expect(reply.json()).toEqual({ error: { code, message } });
      expect(headersOf(reply)).toEqual({
        'content-type': 'application/json',
        'content-length': String(reply.text.length),
        vary: PREFLIGHT_VARY,
        'x-request-id': expect.stringMatching(UUID),
      });
      expect(seen.length).toBe(before);
      const real = await send(url('/listed'), {
        method: 'POST',
        headers: { origin: SHOP, 'x-forwarded-for': ip },
      });
      expect(real.headers['x-ratelimit-remaining']).toBe('2');
    },
  );

  test('an OPTIONS request that is no preflight is routed and counted as any other', async ({ url }) => {
    const ip = newClient();
    // No Access-Control-Request-Method: the listed route (all methods) forwards it.
    const reply = await send(url('/listed'), {
      method: 'OPTIONS',
      headers: { origin: SHOP, 'x-forwarded-for': ip },
    });
    expect(reply.status).toBe(200);
    expect(reply.headers['x-ratelimit-remaining']).toBe('2');
    expect(reply.headers['access-control-allow-origin']).toBe(SHOP);
    expect(seen.at(-1)).toMatchObject({ method: 'OPTIONS', url: '/listed' });
  });

  test('a preflight for a method whose route has no CORS goes where an OPTIONS request goes', async ({
    preflight,
  }) => {
    // PUT /limited is the plain route's (no CORS): the OPTIONS request is forwarded there.
    const reply = await preflight('/limited', { origin: SHOP, 'access-control-request-method': 'PUT' });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('{"upstream":true}');
    expect(seen.at(-1)).toMatchObject({ method: 'OPTIONS', url: '/limited' });
    // A route without CORS passes the upstream's headers on untouched.
    expect(reply.headers['access-control-allow-origin']).toBe('https://evil.example');
    expect(reply.headers.vary).toBeUndefined();
  });
});

describe('real responses on a CORS route', () => {
  test('a forwarded response: the gateway’s CORS headers only, the upstream’s dropped', async ({ url }) => {
    const ip = newClient();
    const reply = await send(url('/limited'), {
      method: 'POST',
      headers: { origin: 'https://anyone.example', 'x-forwarded-for': ip },
    });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('{"upstream":true}');
    expect(headersOf(reply)).toEqual({
      'content-type': 'application/json',
      'transfer-encoding': 'chunked',
      'access-control-allow-origin': '*',
      'access-control-expose-headers': EXPOSED,
      vary: 'Origin',
      'x-internal': 'secret',
      ...limitedBy(2, reply),
      'x-request-id': expect.stringMatching(UUID),
    });
    // The upstream sees the Origin: the gateway adds headers, it does not hide the request.
    expect(seen.at(-1)!.headers.origin).toBe('https://anyone.example');
  });

  test('the upstream’s Vary is kept, with Origin added once', async ({ url }) => {
    const post = (vary: string) =>
      send(url(`/limited?vary=${encodeURIComponent(vary)}`), {
        method: 'POST',
        headers: { origin: SHOP, 'x-forwarded-for': newClient() },
      });
    expect((await post('Accept-Encoding')).headers.vary).toBe('Accept-Encoding, Origin');
    expect((await post('accept-encoding, origin')).headers.vary).toBe('accept-encoding, origin');
    expect((await post('*')).headers.vary).toBe('*');
  });

  test('401 for a missing visitor token carries the CORS headers', async ({ url }) => {
    const reply = await send(url('/visitor'), {
      method: 'POST',
      headers: { origin: SHOP, 'x-forwarded-for': newClient() },
    });
    expect(reply.status).toBe(401);
    expect(reply.json()).toEqual({ error: { code: 'missing_token', message: 'Visitor token missing.' } });
    expect(headersOf(reply)).toEqual(
      corsErrorHeaders(reply, {
        'x-ratelimit-limit': '5',
        'x-ratelimit-remaining': '4',
        'x-ratelimit-reset': expect.stringMatching(/^\d+$/),
      }),
    );
    expect(seenOf('/visitor')).toEqual([]);
  });

  test('413 for a body over the route’s bound carries the CORS headers', async ({ url }) => {
    const reply = await send(url('/small'), {
      method: 'POST',
      headers: { origin: SHOP, 'content-type': 'application/json' },
      body: '{"name":"much too long"}',
    });
    expect(reply.status).toBe(413);
    expect(reply.headers.connection).toBe('close');
    expect(reply.json()).toEqual({
      error: { code: 'payload_too_large', message: 'The request body exceeds 10 bytes.' },
    });
    expect(headersOf(reply)).toEqual(corsErrorHeaders(reply));
    expect(seenOf('/small')).toEqual([]);
  });

  test('429 carries the CORS headers, so a page can read Retry-After', async ({ url }) => {
    const ip = newClient();
    const auth = `Bearer ${await visitorJwt(`s-${ip}`)}`;
    for (let i = 0; i < 5; i++) {
      const ok = await send(url('/visitor'), {
        method: 'POST',
        headers: { origin: SHOP, authorization: auth, 'x-forwarded-for': ip },
      });
      expect(ok.status).toBe(200);
    }
    const before = Date.now();
    const reply = await send(url('/visitor'), {
      method: 'POST',
      headers: { origin: SHOP, authorization: auth, 'x-forwarded-for': ip },
    });
    expect(reply.status).toBe(429);
    expect(reply.json()).toEqual({ error: { code: 'rate_limited', message: 'Too many for this visitor.' } });
    const retryAfter = Number(reply.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(headersOf(reply)).toEqual(
      corsErrorHeaders(reply, {
        'x-ratelimit-limit': '5',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': expect.stringMatching(/^\d+$/),
        'retry-after': String(retryAfter),
      }),
    );
    const reset = Number(reply.headers['x-ratelimit-reset']);
    expect(reset - retryAfter).toBeGreaterThanOrEqual(Math.floor(before / 1000));
    expect(reset - retryAfter).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
  });

  test('502 for an unreachable upstream carries the CORS headers', async ({ url }) => {
    const reply = await send(url('/down'), {
      method: 'POST',
      headers: { origin: SHOP, 'x-forwarded-for': newClient() },
    });
    expect(reply.status).toBe(502);
    expect(reply.json()).toEqual({
      error: { code: 'bad_gateway', message: 'The upstream service is unavailable.' },
    });
    expect(headersOf(reply)).toEqual(corsErrorHeaders(reply, { ...limitedBy(2, reply) }));
  });
});

describe('origins a policy does not allow', () => {
  test('get no CORS headers (nor the upstream’s), and are counted as usual', async ({ url }) => {
    const ip = newClient();
    const from = (origin?: string) =>
      send(url('/listed'), {
        method: 'POST',
        headers: origin === undefined ? { 'x-forwarded-for': ip } : { origin, 'x-forwarded-for': ip },
      });
    const lookAlike = await from('https://shop.example.evil.test');
    expect(lookAlike.status).toBe(200);
    expect(headersOf(lookAlike)).toEqual({
      'content-type': 'application/json',
      'transfer-encoding': 'chunked',
      vary: 'Origin',
      'x-internal': 'secret',
      ...limitedBy(2, lookAlike),
      'x-request-id': expect.stringMatching(UUID),
    });
    // No Origin at all (not a browser's cross-origin request): Vary only, and counted.
    const none = await from();
    expect(none.headers.vary).toBe('Origin');
    expect(Object.keys(none.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    expect(none.headers['x-ratelimit-remaining']).toBe('1');
    // The listed origin, on the same budget.
    const listed = await from(SHOP);
    expect(listed.headers).toMatchObject({
      'access-control-allow-origin': SHOP,
      'access-control-allow-credentials': 'true',
      'access-control-expose-headers': EXPOSED,
      vary: 'Origin',
      'x-ratelimit-remaining': '0',
    });
    const limited = await from('https://evil.example');
    expect(limited.status).toBe(429);
    expect(Object.keys(limited.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    expect(limited.headers.vary).toBe('Origin');
  });

  test('an inline policy on one route', async ({ url, preflight }) => {
    const allowed = await preflight('/inline', {
      origin: 'https://a.example',
      'access-control-request-method': 'PUT',
    });
    expect(allowed.status).toBe(204);
    expect(allowed.headers).toMatchObject({
      'access-control-allow-origin': 'https://a.example',
      'access-control-allow-methods': 'PUT',
      'access-control-max-age': '5',
    });
    expect(allowed.headers['access-control-allow-headers']).toBeUndefined();
    const refused = await preflight('/inline', { origin: SHOP, 'access-control-request-method': 'PUT' });
    expect(refused.status).toBe(403);
    const real = await send(url('/inline'), { method: 'PUT', headers: { origin: 'https://a.example' } });
    expect(real.headers['access-control-allow-origin']).toBe('https://a.example');
  });

  test('a route without CORS is untouched: no Vary, the upstream’s headers pass', async ({ url }) => {
    const reply = await send(url('/elsewhere'), { method: 'POST', headers: { origin: SHOP } });
    expect(reply.headers.vary).toBeUndefined();
    expect(reply.headers['access-control-allow-origin']).toBe('https://evil.example');
    expect(reply.headers['access-control-expose-headers']).toBe('X-Internal');
  });
});
