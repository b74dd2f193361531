// Decision listeners (forward-auth): the original request read from a proxy's headers, the same
// routes, identity and counters as the proxy listener, answered without forwarding.
import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import type { Gateway } from '../../src/runtime/gateway.js';
import { gatewayTest } from '../helpers/fixtures.js';
import { forwardAuthConfig, GOOD_TOKEN, INVALID_TOKEN_BODY, LIMITED_BODY } from '../helpers/forward-auth.js';
import { limitHeaders, send, type Reply } from '../helpers/gateway.js';
import { sampleValue, scrape } from '../helpers/prometheus.js';

const test = gatewayTest({ config: forwardAuthConfig() });

/** Asks a decision listener about METHOD http://app.test URI, as Traefik and Caddy do. */
function ask(
  gateway: Gateway,
  method: string,
  uri: string,
  headers: Record<string, string> = {},
  listener = 'decision',
): Promise<Reply> {
  return send(`${gateway.url(listener)}/`, {
    headers: {
      'x-forwarded-method': method,
      'x-forwarded-uri': uri,
      'x-forwarded-host': 'app.test',
      ...headers,
    },
  });
}

/** The same request sent through the proxy listener. */
const proxied = (gateway: Gateway, path: string, headers: Record<string, string> = {}) =>
  send(`${gateway.url('public')}${path}`, { headers: { host: 'app.test', ...headers } });

const run = () => ({ 'x-run': randomUUID() });

describe('a decision listener', () => {
  test('answers 200 with the X-RateLimit-* headers and an empty body, and forwards nothing', async ({
    gateway,
    upstream,
  }) => {
    const before = upstream.seen.length;
    const reply = await ask(gateway, 'GET', '/run/a', run());
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('');
    expect(limitHeaders(reply)).toEqual({
      'x-ratelimit-limit': '3',
      'x-ratelimit-remaining': '2',
      'x-ratelimit-reset': expect.stringMatching(/^\d+$/),
    });
    expect(reply.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(upstream.seen.length).toBe(before);
  });

  test('counts in the same counters as the proxy listener, and refuses with its exact 429', async ({
    gateway,
  }) => {
    const headers = run();
    expect((await proxied(gateway, '/run/a', headers)).status).toBe(200);
    expect((await ask(gateway, 'POST', '/run/b', headers)).headers['x-ratelimit-remaining']).toBe('1');
    expect((await proxied(gateway, '/run/c', headers)).headers['x-ratelimit-remaining']).toBe('0');
    const decided = await ask(gateway, 'GET', '/run/d', headers);
    const viaProxy = await proxied(gateway, '/run/e', headers);
    for (const reply of [decided, viaProxy]) {
      expect(reply.status).toBe(429);
      expect(reply.text).toBe(LIMITED_BODY);
      expect(reply.headers['content-type']).toBe('application/json');
      expect(reply.headers['content-length']).toBe(String(LIMITED_BODY.length));
      expect(reply.headers['x-ratelimit-remaining']).toBe('0');
      expect(Number(reply.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(reply.headers['x-tollgate-error']).toBeUndefined();
    }
    expect(limitHeaders(decided)).toEqual(limitHeaders(viaProxy));
  });

  test('reads nginx auth_request headers (X-Original-Method, X-Original-URI, Host)', async ({ gateway }) => {
    const headers = { ...run(), 'x-original-method': 'GET', host: 'app.test' };
    const first = await send(`${gateway.url('decision')}/auth`, {
      headers: { ...headers, 'x-original-uri': '/run/x?y=1' },
    });
    expect(first.status).toBe(200);
    expect(first.headers['x-ratelimit-remaining']).toBe('2');
    // The host comes from X-Forwarded-Host when there is one: another host matches no route.
    const other = await send(`${gateway.url('decision')}/auth`, {
      headers: { ...headers, 'x-original-uri': '/run/x', 'x-forwarded-host': 'other.test' },
    });
    expect(other.status).toBe(404);
    expect(other.json()).toEqual({
      error: { code: 'route_not_found', message: 'No route matches this request.' },
    });
  });

  test('keys the client IP on X-Forwarded-For from a trusted proxy', async ({ gateway }) => {
    const headers = run();
    for (let i = 0; i < 3; i++) {
      expect(
        (await ask(gateway, 'GET', '/run/a', { ...headers, 'x-forwarded-for': '203.0.113.1' })).status,
      ).toBe(200);
    }
    expect(
      (await ask(gateway, 'GET', '/run/a', { ...headers, 'x-forwarded-for': '203.0.113.1' })).status,
    ).toBe(429);
    const other = await ask(gateway, 'GET', '/run/a', { ...headers, 'x-forwarded-for': '203.0.113.2' });
    expect(other.status).toBe(200);
    expect(other.headers['x-ratelimit-remaining']).toBe('2');
  });

  test('answers a bad credential with the proxy listener’s 401, after counting it', async ({ gateway }) => {
    const headers = { ...run(), authorization: 'Bearer 7|wrong' };
    const decided = await ask(gateway, 'GET', '/api/items', headers);
    const viaProxy = await proxied(gateway, '/api/items', headers);
    for (const reply of [decided, viaProxy]) {
      expect(reply.status).toBe(401);
      expect(reply.text).toBe(INVALID_TOKEN_BODY);
    }
    expect(decided.headers['x-ratelimit-remaining']).toBe('4');
    expect(viaProxy.headers['x-ratelimit-remaining']).toBe('3');
    const good = await ask(gateway, 'GET', '/api/items', { ...run(), authorization: GOOD_TOKEN });
    expect(good.status).toBe(200);
    expect(good.headers['x-ratelimit-limit']).toBe('5');
  });

  test('allows a route without limiters with no rate-limit headers; refuses an unknown route', async ({
    gateway,
  }) => {
    const open = await ask(gateway, 'DELETE', '/open/thing');
    expect(open.status).toBe(200);
    expect(limitHeaders(open)).toEqual({});
    const unknown = await ask(gateway, 'GET', '/nowhere');
    expect(unknown.status).toBe(404);
  });

  test('counts an invalid target, then refuses it with 400 as the proxy listener does', async ({
    gateway,
  }) => {
    const headers = run();
    const reply = await ask(gateway, 'GET', '/run/a%2fb', headers);
    expect(reply.status).toBe(400);
    expect((reply.json() as { error: { code: string } }).error.code).toBe('invalid_request_target');
    expect(reply.headers['x-ratelimit-remaining']).toBe('2');
  });

  test('counts an OPTIONS request that is no CORS preflight like any other', async ({ gateway }) => {
    const reply = await ask(gateway, 'OPTIONS', '/run/a', run());
    expect(reply.status).toBe(200);
    expect(reply.headers['x-ratelimit-remaining']).toBe('2');
  });

  test('allows a CORS preflight uncounted; a refusal on a CORS route carries the CORS headers', async ({
    gateway,
  }) => {
    const headers = { ...run(), origin: 'https://site.example' };
    const preflight = await ask(gateway, 'OPTIONS', '/browser/a', {
      ...headers,
      'access-control-request-method': 'POST',
    });
    expect(preflight.status).toBe(200);
    expect(limitHeaders(preflight)).toEqual({});
    for (let i = 0; i < 3; i++) expect((await ask(gateway, 'POST', '/browser/a', headers)).status).toBe(200);
    const refused = await ask(gateway, 'POST', '/browser/a', headers);
    expect(refused.status).toBe(429);
    expect(refused.headers['access-control-allow-origin']).toBe('*');
    expect(refused.headers['vary']).toBe('Origin');
    expect(refused.text).toBe(LIMITED_BODY);
  });

  test('answers /healthz when no original request is named', async ({ gateway }) => {
    const reply = await send(`${gateway.url('decision')}/healthz`);
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ status: 'ok' });
  });
});

describe('a decision listener refuses a question it cannot read with 400', () => {
  const cases: [string, Record<string, string>, string][] = [
    [
      'nothing',
      {},
      'The original request is named by X-Forwarded-Method and X-Forwarded-Uri; missing: X-Forwarded-Method, X-Forwarded-Uri.',
    ],
    [
      'no URI',
      { 'x-forwarded-method': 'GET' },
      'The original request is named by X-Forwarded-Method and X-Forwarded-Uri; missing: X-Forwarded-Uri.',
    ],
    [
      'no method (nginx)',
      { 'x-original-uri': '/run/a' },
      'The original request is named by X-Original-Method and X-Original-URI; missing: X-Original-Method.',
    ],
    [
      'both families',
      { 'x-forwarded-method': 'GET', 'x-forwarded-uri': '/open/a', 'x-original-uri': '/run/a' },
      'Both X-Forwarded-Method/X-Forwarded-Uri and X-Original-Method/X-Original-URI are present: send one family.',
    ],
    [
      'a bad method',
      { 'x-forwarded-method': 'GET /', 'x-forwarded-uri': '/run/a' },
      'X-Forwarded-Method must be one HTTP method.',
    ],
    [
      'an empty URI',
      { 'x-forwarded-method': 'GET', 'x-forwarded-uri': '' },
      'X-Forwarded-Uri must be one non-empty request target.',
    ],
    [
      'a list of hosts',
      { 'x-forwarded-method': 'GET', 'x-forwarded-uri': '/run/a', 'x-forwarded-host': 'a.test, app.test' },
      'X-Forwarded-Host must be one host.',
    ],
  ];
  for (const [name, headers, message] of cases) {
    test(name, async ({ gateway }) => {
      const reply = await send(`${gateway.url('decision')}/`, { headers });
      expect(reply.status).toBe(400);
      expect(reply.json()).toEqual({ error: { code: 'invalid_original_request', message } });
      expect(reply.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });
  }
});

describe('onLimited: 403 (nginx)', () => {
  test('refuses with 403 and the exact 429 body, also in X-Tollgate-Error', async ({ gateway }) => {
    const headers = run();
    for (let i = 0; i < 3; i++)
      expect((await ask(gateway, 'GET', '/run/a', headers, 'nginx')).status).toBe(200);
    const reply = await ask(gateway, 'GET', '/run/a', headers, 'nginx');
    expect(reply.status).toBe(403);
    expect(reply.text).toBe(LIMITED_BODY);
    expect(reply.headers['x-tollgate-error']).toBe(LIMITED_BODY);
    expect(reply.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(reply.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  test('keeps 401 for a bad credential, with its body in X-Tollgate-Error', async ({ gateway }) => {
    const reply = await ask(gateway, 'GET', '/api/a', { ...run(), authorization: 'Bearer 7|nope' }, 'nginx');
    expect(reply.status).toBe(401);
    expect(reply.headers['x-tollgate-error']).toBe(INVALID_TOKEN_BODY);
  });
});

test('decisions are counted in the limiters’ metrics as the proxy’s are', async ({ gateway }) => {
  const series = (decision: string) => `tollgate_requests_total{limiter="per-run",decision="${decision}"}`;
  const before = await scrape(gateway.adminUrl!);
  const headers = run();
  for (let i = 0; i < 4; i++) await ask(gateway, 'GET', '/run/m', headers);
  const after = await scrape(gateway.adminUrl!);
  const delta = (d: string) => (sampleValue(after, series(d)) ?? 0) - (sampleValue(before, series(d)) ?? 0);
  expect(delta('allowed')).toBe(3);
  expect(delta('limited')).toBe(1);
});
