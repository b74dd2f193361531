// Requests an attacker writes by hand, against the shipped config, a real Redis and a real upstream:
// odd targets, Connection tricks, two credentials, a Host with a trailing dot, and the original
// clients' paths.
import { describe, expect } from 'vitest';
import { clientAddresses, expectLimited } from '../helpers/clients.js';
import { shippedConfigTest } from '../helpers/fixtures.js';
import { limitHeaders, type Reply } from '../helpers/gateway.js';
import { rawRequest } from '../helpers/raw-http.js';
import { visitorJwt } from '../helpers/tokens.js';
import type { TestUpstream } from '../helpers/upstream.js';

/** `from`: a raw request from one client address (through the trusted X-Forwarded-For). */
const test = shippedConfigTest().extend(
  'from',
  { scope: 'file' },
  ({ gateway }) =>
    (ip: string, method: string, target: string, headers: Record<string, string> = {}) =>
      rawRequest(gateway.url(), method, target, { 'x-forwarded-for': ip, ...headers }),
);

const newClient = clientAddresses('203.0.113.');
const seenUrls = (upstream: TestUpstream) => upstream.seen.map((s) => s.url);

function expectError(reply: Reply, status: number, code: string, message: string): void {
  expect(reply.status).toBe(status);
  expect(reply.headers['content-type']).toBe('application/json');
  expect(reply.json()).toEqual({ error: { code, message } });
}

describe('one canonical path for matching and forwarding', () => {
  test('a fragment cannot skip the limit: the 61st satisfaction#x is refused, and the upstream never sees "#"', async ({
    upstream,
    from,
  }) => {
    const ip = newClient();
    const before = upstream.seen.length;
    for (let i = 1; i <= 60; i++) {
      const reply = await from(ip, 'POST', '/api/v1/widget/satisfaction#x');
      expect(reply.status).toBe(200);
      expect(reply.headers['x-ratelimit-remaining']).toBe(String(60 - i));
    }
    expectLimited(await from(ip, 'POST', '/api/v1/widget/satisfaction#x'), 60, 'Too Many Attempts.', 60);
    expect(new Set(upstream.seen.slice(before).map((s) => s.url))).toEqual(
      new Set(['/api/v1/widget/satisfaction']),
    );
  });

  test('case, escapes, dot segments and ";params" all count under the same limiter', async ({
    upstream,
    from,
  }) => {
    const ip = newClient();
    const spellings = [
      '/api/v1/widget/satisfaction',
      '/API/V1/WIDGET/SATISFACTION',
      '/api/v1/widget/%73atisfaction',
      '/api/v1/x/../widget/./satisfaction',
      '/api//v1///widget/satisfaction/',
      '/api/v1/widget/satisfaction;jsessionid=1',
      '/api/v1/widget/satisfaction?x=#y',
    ];
    for (const [i, target] of spellings.entries()) {
      const reply = await from(ip, 'POST', target);
      expect(reply.headers['x-ratelimit-limit'], target).toBe('60');
      expect(reply.headers['x-ratelimit-remaining'], target).toBe(String(59 - i));
    }
    // What was forwarded is the canonical target (case and params are the upstream's to judge).
    expect(seenUrls(upstream).slice(-spellings.length)).toEqual([
      '/api/v1/widget/satisfaction',
      '/API/V1/WIDGET/SATISFACTION',
      '/api/v1/widget/satisfaction',
      '/api/v1/widget/satisfaction',
      '/api/v1/widget/satisfaction/',
      '/api/v1/widget/satisfaction;jsessionid=1',
      '/api/v1/widget/satisfaction?x=',
    ]);
  });

  test('a target it cannot canonicalise is counted, then refused with 400 and the rate-limit headers', async ({
    upstream,
    from,
  }) => {
    const ip = newClient();
    const before = upstream.seen.length;
    const cases: [string, string][] = [
      ['/api/v1/widget%2Fsatisfaction', 'the path has an encoded "/" or "\\"'],
      ['/api/v1/%zz/../widget/satisfaction', 'the path has a malformed percent-escape'],
      ['/api/v1/widget\\satisfaction', 'the path has a "\\"'],
      ['/api/v1/widget/satisfaction%00', 'the path has an encoded control character'],
    ];
    for (const [i, [target, reason]] of cases.entries()) {
      const reply = await from(ip, 'POST', target);
      expectError(reply, 400, 'invalid_request_target', `Invalid request target: ${reason}.`);
      expect(limitHeaders(reply)).toMatchObject({
        'x-ratelimit-limit': '60',
        'x-ratelimit-remaining': String(59 - i),
      });
    }
    expect(upstream.seen.length).toBe(before);
  });

  test('an absolute-form target is refused (and matched as the path it names)', async ({ from }) => {
    const reply = await from(newClient(), 'POST', 'http://evil.example/api/v1/widget/satisfaction');
    expectError(
      reply,
      400,
      'invalid_request_target',
      'Invalid request target: the request target must be a path starting with "/".',
    );
    expect(reply.headers['x-ratelimit-limit']).toBe('60');
  });
});

describe('Connection cannot remove what the gateway keyed on', () => {
  test('Connection: X-Widget-Token with two tokens is refused, and nothing is forwarded', async ({
    upstream,
    from,
  }) => {
    const [a, b] = await Promise.all([visitorJwt('session-a'), visitorJwt('session-b')]);
    const before = upstream.seen.length;
    const reply = await from(newClient(), 'POST', '/api/v1/widget/messages', {
      connection: 'X-Widget-Token',
      'x-widget-token': a,
      authorization: `Bearer ${b}`,
    });
    expectError(
      reply,
      400,
      'invalid_connection_header',
      'The Connection header may not name x-widget-token: the gateway identifies requests by it.',
    );
    expect(reply.headers['x-ratelimit-limit']).toBe('300');
    expect(upstream.seen.length).toBe(before);
  });

  test('Connection naming Authorization, User-Agent or Host is refused where the gateway reads them', async ({
    from,
  }) => {
    const token = await visitorJwt('session-c');
    const cases: [string, Record<string, string>, string][] = [
      [
        '/api/v1/widget/leads',
        { connection: 'keep-alive, Authorization', authorization: `Bearer ${token}` },
        'authorization',
      ],
      ['/api/v1/widget/init', { connection: 'User-Agent', 'user-agent': 'bot' }, 'user-agent'],
      ['/api/v1/websites', { connection: 'close, host' }, 'host'],
      [
        '/v1/wp/handshake',
        { connection: 'authorization', authorization: 'Bearer 7|s3cret' },
        'authorization',
      ],
    ];
    for (const [target, headers, name] of cases) {
      const method = target === '/api/v1/websites' ? 'GET' : 'POST';
      expectError(
        await from(newClient(), method, target, headers),
        400,
        'invalid_connection_header',
        `The Connection header may not name ${name}: the gateway identifies requests by it.`,
      );
    }
  });

  test('two different visitor tokens are refused as invalid; the same token twice passes', async ({
    upstream,
    from,
  }) => {
    const [a, b] = await Promise.all([visitorJwt('session-d'), visitorJwt('session-e')]);
    const differ = await from(newClient(), 'POST', '/api/v1/widget/messages', {
      'x-widget-token': a,
      authorization: `Bearer ${b}`,
    });
    expectError(differ, 401, 'invalid_token', 'Visitor token is invalid.');
    const same = await from(newClient(), 'POST', '/api/v1/widget/messages', {
      'x-widget-token': a,
      authorization: `Bearer ${a}`,
    });
    expect(same.status).toBe(200);
    expect(same.headers['x-ratelimit-remaining']).toBe('299');
    const forwarded = upstream.seen.at(-1)!;
    expect(forwarded.headers['x-widget-token']).toBe(a);
    expect(forwarded.headers['authorization']).toBe(`Bearer ${a}`);
  });

  test('Connection naming an ordinary header still strips it, as HTTP says', async ({ upstream, from }) => {
    const reply = await from(newClient(), 'GET', '/api/v1/websites', {
      connection: 'x-custom',
      'x-custom': '1',
    });
    expect(reply.status).toBe(200);
    expect(upstream.seen.at(-1)!.headers['x-custom']).toBeUndefined();
  });
});

describe('hosts and the original clients', () => {
  test('analyzer.localhost. (trailing dot) is the reports host', async ({ gateway, upstream, from }) => {
    const reply = await from(newClient(), 'GET', '/api/v1/reports', { host: 'analyzer.localhost.:8080' });
    expect(reply.status).toBe(200);
    // The reports route has no limiter; the websites route would not either, so tell them by route:
    // the gateway forwards the Host as sent, and the upstream saw the reports request.
    expect(upstream.seen.at(-1)!.url).toBe('/api/v1/reports');
    expect(gateway.table.router.match('analyzer.localhost.', 'GET', '/api/v1/reports')?.name).toBe('reports');
  });

  test('/api/v1/wp/* is bulk sync under wp-plugin, sharing the budget with /v1/wp/*', async ({ from }) => {
    const auth = { authorization: 'Bearer 7|s3cret' };
    const first = await from(newClient(), 'POST', '/api/v1/wp/handshake', auth);
    expect(first.status).toBe(200);
    const limit = Number(first.headers['x-ratelimit-limit']);
    const remaining = Number(first.headers['x-ratelimit-remaining']);
    expect(limit).toBe(60);
    const second = await from(newClient(), 'POST', '/v1/wp/posts/sync', auth);
    expect(second.headers['x-ratelimit-remaining']).toBe(String(remaining - 1));
    expectError(
      await from(newClient(), 'POST', '/api/v1/wp/handshake'),
      401,
      'missing_token',
      'API token missing.',
    );
  });

  test('GET /api/v1/widget/conversation/messages counts under widget-session with the POST operations', async ({
    from,
  }) => {
    const token = await visitorJwt('session-poll');
    const auth = { 'x-widget-token': token };
    const get = await from(newClient(), 'GET', '/api/v1/widget/conversation/messages', auth);
    expect(get.status).toBe(200);
    expect(limitHeaders(get)).toMatchObject({ 'x-ratelimit-limit': '300', 'x-ratelimit-remaining': '299' });
    const post = await from(newClient(), 'POST', '/api/v1/widget/conversation/messages', auth);
    expect(post.headers['x-ratelimit-remaining']).toBe('298');
    expectError(
      await from(newClient(), 'GET', '/api/v1/widget/conversation/messages'),
      401,
      'missing_token',
      'Visitor token missing.',
    );
  });

  test('a widget path no route names is never forwarded unlimited: 120 per minute per IP', async ({
    from,
  }) => {
    const ip = newClient();
    for (let i = 1; i <= 120; i++) {
      const reply = await from(ip, i % 2 ? 'GET' : 'PUT', `/api/v1/widget/unknown-${i}`);
      expect(reply.headers['x-ratelimit-remaining']).toBe(String(120 - i));
    }
    expectLimited(
      await from(ip, 'GET', '/api/v1/widget/anything'),
      120,
      'Too many widget requests. Please slow down.',
      60,
    );
  });
});
