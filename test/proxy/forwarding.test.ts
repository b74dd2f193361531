import { Readable } from 'node:stream';
import { request } from 'undici';
import { describe, expect } from 'vitest';
import { test as fileTest } from '../helpers/fixtures.js';
import { gatewayYaml, limitHeaders, send, type Reply } from '../helpers/gateway.js';
import { freePort } from '../helpers/ports.js';
import { sendAsIs } from '../helpers/send-as-is.js';
import { startPlainServer, type SeenRequest } from '../helpers/upstream.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Every path exists twice: on Host limited.test behind a limiter (keyed by X-Client, so each test
 * counts from a fresh window), and on any other host with no limiter at all.
 */
const CONFIG = gatewayYaml(`
shutdown:
  drainTimeout: 1s
store:
  redis: { url: '\${REDIS_URL}', commandTimeout: 2s }
identity:
  trustedProxies: ['127.0.0.1']
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
  slow: { url: '\${UPSTREAM_URL}', headersTimeout: 200ms }
  down: { url: '\${DOWN_URL}' }
  hops: { url: '\${HOPS_URL}' }
limiters:
  per-client:
    message: Slow down, please.
    windows: [{ limit: 1000, period: 1m, key: ['header:X-Client'] }]
routes:
  - { name: limited-slow, hosts: [limited.test], paths: [/slow], upstream: slow, limiters: [per-client] }
  - { name: limited-down, hosts: [limited.test], paths: ['/down/*'], upstream: down, limiters: [per-client] }
  - { name: limited-hops, hosts: [limited.test], paths: [/hops], upstream: hops, limiters: [per-client] }
  - { name: limited, hosts: [limited.test], paths: ['/*'], upstream: app, limiters: [per-client] }
  - { name: open-slow, paths: [/slow], upstream: slow }
  - { name: open-down, paths: ['/down/*'], upstream: down }
  - { name: open-hops, paths: [/hops], upstream: hops }
  - { name: open, paths: ['/*'], upstream: app }
`);

const ONLY_CONFIG = gatewayYaml(`
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
routes:
  - { name: only, paths: [/only], upstream: app }
`);

const LIMIT = 1000;
const PERIOD_MS = 60_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The gateway's own error: exact status, content type and bytes of {"error":{"code","message"}}. */
function expectGatewayError(reply: Reply, status: number, code: string, message: string): void {
  expect(reply.status).toBe(status);
  expect(reply.headers['content-type']).toBe('application/json');
  expect(reply.text).toBe(JSON.stringify({ error: { code, message } }));
}

interface Surface {
  readonly name: 'limited' | 'unlimited';
  readonly host: string;
}
const LIMITED: Surface = { name: 'limited', host: 'limited.test' };
const UNLIMITED: Surface = { name: 'unlimited', host: 'open.test' };
const SURFACES = [LIMITED, UNLIMITED];

/** `hops`: an upstream that answers with hop-by-hop headers; `gateway`: CONFIG in front of them all. */
const serversTest = fileTest
  .extend('hops', { scope: 'file' }, async ({}, { onCleanup }) => {
    const hops = await startPlainServer((_req, res) => {
      res.writeHead(200, {
        connection: 'x-upstream-hop',
        'x-upstream-hop': 'must not pass',
        'keep-alive': 'timeout=77',
        'proxy-authenticate': 'Basic realm="upstream"',
        upgrade: 'h2c',
        'x-end-to-end': 'kept',
        'x-request-id': 'upstream-chosen',
        'retry-after': '120',
        ratelimit: '"upstream";r=1;t=1',
        'content-type': 'text/plain',
      });
      res.end('hops');
    });
    onCleanup(() => hops.close());
    return hops;
  })
  .extend('gateway', { scope: 'file' }, async ({ redis, upstream, hops, gateways }) =>
    gateways.start(CONFIG, {
      REDIS_URL: redis.url,
      UPSTREAM_URL: upstream.url,
      DOWN_URL: `http://127.0.0.1:${await freePort()}`, // nothing listens there
      HOPS_URL: hops.url,
    }),
  );

let probes = 0;
/** A fresh value for X-Client (a fresh rate-limit window) that also finds the request upstream. */
const nextProbe = (): string => `probe-${process.pid}-${++probes}`;

/**
 * - `base`: the gateway's URL;
 * - `seenWith`: the one request the upstream received with a probe;
 * - `via`: sends through the gateway on a surface, noting the clock around it for the reset check.
 */
const test = serversTest
  .extend('base', { scope: 'file' }, ({ gateway }) => gateway.url())
  .extend('seenWith', { scope: 'file' }, ({ upstream }) => (probe: string): SeenRequest => {
    const found = upstream.seen.filter((r) => r.headers['x-client'] === probe);
    expect(found).toHaveLength(1);
    return found[0]!;
  })
  .extend(
    'via',
    { scope: 'file' },
    ({ base }) =>
      async (
        surface: Surface,
        path: string,
        options: { method?: string; headers?: Record<string, string>; body?: string } = {},
      ): Promise<{ reply: Reply; probe: string; before: number; after: number }> => {
        const probe = nextProbe();
        const before = Date.now();
        const reply = await send(`${base}${path}`, {
          ...options,
          headers: { host: surface.host, 'x-client': probe, ...options.headers },
        });
        return { reply, probe, before, after: Date.now() };
      },
  );

/** Limited surface: the gateway's exact headers for the first hit of a fresh 1-minute window. Else none. */
function expectSurfaceHeaders(surface: Surface, sent: { reply: Reply; before: number; after: number }): void {
  const h = limitHeaders(sent.reply);
  if (surface.name === 'unlimited') {
    expect(h).toEqual({});
    return;
  }
  expect(h).toEqual({
    'x-ratelimit-limit': String(LIMIT),
    'x-ratelimit-remaining': String(LIMIT - 1),
    'x-ratelimit-reset': expect.stringMatching(/^\d+$/),
  });
  const reset = Number(h['x-ratelimit-reset']);
  expect(reset).toBeGreaterThanOrEqual(Math.ceil((sent.before + PERIOD_MS) / 1000));
  expect(reset).toBeLessThanOrEqual(Math.ceil((sent.after + PERIOD_MS) / 1000));
}

describe.each(SURFACES)('bodies cross intact both ways ($name route)', (surface) => {
  // 2 MiB of varied ASCII, so a dropped, duplicated or reordered chunk cannot go unnoticed.
  const payload = Array.from({ length: 2 ** 17 }, (_, i) => `${String(i).padStart(8, '0')}|tollgate-body|`)
    .join('')
    .slice(0, 2 * 1024 * 1024);

  test('a 2 MB POST body with Content-Length arrives intact upstream', async ({ seenWith, via }) => {
    expect(payload.length).toBe(2 * 1024 * 1024);
    const sent = await via(surface, '/upload', {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: payload,
    });
    expect(sent.reply.status).toBe(200);
    expectSurfaceHeaders(surface, sent);
    const seen = seenWith(sent.probe);
    expect(seen.method).toBe('POST');
    expect(seen.headers['content-length']).toBe(String(payload.length));
    expect(seen.body.length).toBe(payload.length);
    expect(seen.body === payload).toBe(true);
    // The upstream echoes it: the 2 MB response body comes back intact too.
    expect((sent.reply.json() as { body: string }).body === payload).toBe(true);
  });

  test('a 2 MB chunked POST body (no Content-Length) arrives intact upstream, with its length', async ({
    base,
    seenWith,
  }) => {
    const probe = nextProbe();
    const chunks = payload.match(/[^]{1,65536}/g)!;
    const res = await request(`${base}/upload-chunked`, {
      method: 'POST',
      headers: { host: surface.host, 'x-client': probe },
      body: Readable.from(chunks),
    });
    expect(res.statusCode).toBe(200);
    await res.body.text();
    const seen = seenWith(probe);
    // Read whole at the gateway (the default body bound) and sent with its exact length.
    expect(seen.headers['transfer-encoding']).toBeUndefined();
    expect(seen.headers['content-length']).toBe(String(payload.length));
    expect(seen.body.length).toBe(payload.length);
    expect(seen.body === payload).toBe(true);
  });

  test('/stream chunks reach the client as the upstream writes them', async ({ base }) => {
    const probe = nextProbe();
    const res = await request(`${base}/stream`, { headers: { host: surface.host, 'x-client': probe } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(res.headers['x-ratelimit-limit']).toBe(surface.name === 'limited' ? String(LIMIT) : undefined);
    const received: string[] = [];
    for await (const chunk of res.body) received.push((chunk as Buffer).toString());
    // The upstream writes "data: 1" 200 ms after "data: 0" and ends 200 ms after "data: 2": a
    // buffering proxy would deliver them together; a streaming one delivers the first alone.
    expect(received[0]).toBe('data: 0\n\n');
    expect(received.length).toBeGreaterThanOrEqual(3);
    expect(received.join('')).toBe('data: 0\n\ndata: 1\n\ndata: 2\n\n');
  });
});

describe.each(SURFACES)('headers ($name route)', (surface) => {
  test('hop-by-hop request headers are stripped, end-to-end ones kept', async ({ base, seenWith }) => {
    const probe = nextProbe();
    const reply = await sendAsIs(`${base}/echo`, {
      headers: {
        host: surface.host,
        'x-client': probe,
        connection: 'x-client-hop, keep-alive',
        'x-client-hop': 'must not pass',
        'keep-alive': 'timeout=99',
        te: 'trailers',
        upgrade: 'websocket',
        'proxy-authorization': 'Basic c2VjcmV0OnNlY3JldA==',
        'proxy-connection': 'keep-alive',
        'x-end-to-end': 'kept',
      },
    });
    expect(reply.status).toBe(200);
    const seen = seenWith(probe);
    for (const name of [
      'x-client-hop',
      'keep-alive',
      'te',
      'upgrade',
      'proxy-authorization',
      'proxy-connection',
    ])
      expect(seen.headers[name], name).toBeUndefined();
    expect(seen.headers['connection'] ?? '').not.toContain('x-client-hop');
    expect(seen.headers['x-end-to-end']).toBe('kept');
  });

  test('hop-by-hop response headers are stripped, end-to-end ones kept', async ({ via }) => {
    const sent = await via(surface, '/hops');
    expect(sent.reply.status).toBe(200);
    expect(sent.reply.text).toBe('hops');
    const h = sent.reply.headers;
    expect(h['x-upstream-hop']).toBeUndefined();
    expect(h['proxy-authenticate']).toBeUndefined();
    expect(h['upgrade']).toBeUndefined();
    expect(h['keep-alive']).not.toBe('timeout=77'); // the gateway's own connection, not the upstream's
    expect(h['connection']).toBe('keep-alive');
    expect(h['x-end-to-end']).toBe('kept');
    expect(h['x-request-id']).toMatch(UUID); // the id the gateway gave the upstream, not the upstream's own
    // The upstream's IETF RateLimit passes (draft section 7.2): this listener adds none of its own.
    expect(h['ratelimit']).toBe('"upstream";r=1;t=1');
    // On a limited surface Retry-After belongs to the gateway's 429; elsewhere it passes through.
    expect(h['retry-after']).toBe(surface.name === 'limited' ? undefined : '120');
    const { 'retry-after': _upstreams, ...gatewayHeaders } = h; // the upstream's, checked above
    expectSurfaceHeaders(surface, { ...sent, reply: { ...sent.reply, headers: gatewayHeaders } });
  });

  test('X-Forwarded-For/-Proto/-Host are set from the connection', async ({ seenWith, via }) => {
    const sent = await via(surface, '/echo');
    expect(sent.reply.status).toBe(200);
    const seen = seenWith(sent.probe);
    expect(seen.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(seen.headers['x-forwarded-proto']).toBe('http');
    expect(seen.headers['x-forwarded-host']).toBe(surface.host);
    expect(seen.headers['host']).toBe(surface.host); // preserveHost defaults to true
  });

  test("a trusted peer's X-Forwarded-* are kept, and X-Forwarded-For is extended", async ({
    base,
    seenWith,
  }) => {
    const probe = nextProbe();
    const reply = await sendAsIs(`${base}/echo`, {
      headers: {
        host: surface.host,
        'x-client': probe,
        'x-forwarded-for': '203.0.113.7, 198.51.100.2',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'public.example',
      },
    });
    expect(reply.status).toBe(200);
    const seen = seenWith(probe);
    expect(seen.headers['x-forwarded-for']).toBe('203.0.113.7, 198.51.100.2, 127.0.0.1');
    expect(seen.headers['x-forwarded-proto']).toBe('https');
    expect(seen.headers['x-forwarded-host']).toBe('public.example');
  });

  test("an untrusted peer's spoofed X-Forwarded-* are replaced", async ({ base, seenWith }) => {
    const probe = nextProbe();
    const reply = await sendAsIs(`${base}/echo`, {
      localAddress: '127.0.0.2', // not in identity.trustedProxies
      headers: {
        host: surface.host,
        'x-client': probe,
        'x-forwarded-for': '203.0.113.7',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'spoofed.example',
        'x-forwarded-port': '443',
        'x-forwarded-prefix': '/admin',
        'x-real-ip': '203.0.113.8',
        forwarded: 'for=203.0.113.9',
      },
    });
    expect(reply.status).toBe(200);
    const seen = seenWith(probe);
    expect(seen.headers['x-forwarded-for']).toBe('127.0.0.2');
    expect(seen.headers['x-forwarded-proto']).toBe('http');
    expect(seen.headers['x-forwarded-host']).toBe(surface.host);
    for (const name of ['x-forwarded-port', 'x-forwarded-prefix', 'x-real-ip', 'forwarded']) {
      expect(seen.headers[name], name).toBeUndefined();
    }
  });

  test.for([
    { label: 'a plain token', id: 'req-42' },
    { label: 'every allowed character', id: 'Az09._:-' },
    { label: '128 characters', id: 'r'.repeat(128) },
  ])('a valid X-Request-Id ($label) is kept and echoed', async ({ id }, { via, seenWith }) => {
    const sent = await via(surface, '/echo', { headers: { 'x-request-id': id } });
    expect(sent.reply.status).toBe(200);
    expect(sent.reply.headers['x-request-id']).toBe(id);
    expect(seenWith(sent.probe).headers['x-request-id']).toBe(id);
  });

  test.for<{ label: string; headers: Record<string, string> }>([
    { label: 'absent', headers: {} },
    { label: 'with spaces', headers: { 'x-request-id': 'has some spaces' } },
    { label: '200 characters', headers: { 'x-request-id': 'r'.repeat(200) } },
    { label: 'with a semicolon', headers: { 'x-request-id': 'a;b' } },
  ])(
    'an X-Request-Id $label is replaced by a UUID, sent upstream and echoed',
    async ({ headers }, { via, seenWith }) => {
      const sent = await via(surface, '/echo', { headers });
      expect(sent.reply.status).toBe(200);
      const id = sent.reply.headers['x-request-id'];
      expect(id).toMatch(UUID);
      expect(seenWith(sent.probe).headers['x-request-id']).toBe(id);
    },
  );
});

describe.each(SURFACES)('upstream answers and failures ($name route)', (surface) => {
  test("the upstream's own X-RateLimit-* headers never reach the client", async ({ via }) => {
    const sent = await via(surface, '/status/200');
    expect(sent.reply.status).toBe(200);
    expect(sent.reply.text).toBe('{"upstream":true}');
    expect(sent.reply.headers['x-ratelimit-limit']).not.toBe('999');
    expectSurfaceHeaders(surface, sent);
  });

  test("an upstream 500 is passed through (with the gateway's rate-limit headers on a limited route)", async ({
    via,
  }) => {
    const sent = await via(surface, '/status/500');
    expect(sent.reply.status).toBe(500);
    expect(sent.reply.text).toBe('{"upstream":true}');
    expectSurfaceHeaders(surface, sent);
  });

  test('an unreachable upstream answers 502', async ({ via }) => {
    const sent = await via(surface, '/down/x');
    expectGatewayError(sent.reply, 502, 'bad_gateway', 'The upstream service is unavailable.');
    expectSurfaceHeaders(surface, sent);
    expect(sent.reply.headers['x-request-id']).toMatch(UUID);
  });

  test('an upstream slower than headersTimeout answers 504', async ({ via }) => {
    // The upstream would answer 200 after 2 s: a 504 means the 200 ms headers timeout fired first.
    const sent = await via(surface, '/slow?ms=2000');
    expectGatewayError(sent.reply, 504, 'gateway_timeout', 'The upstream service did not answer in time.');
    expectSurfaceHeaders(surface, sent);
    expect(sent.reply.headers['x-request-id']).toMatch(UUID);
  });

  test('a client that goes away cancels the upstream request', async ({ base, upstream }) => {
    const before = upstream.aborted;
    const arrivedBefore = upstream.hung;
    const abort = new AbortController();
    const pending = request(`${base}/hang`, {
      headers: { host: surface.host, 'x-client': nextProbe() },
      signal: abort.signal,
    });
    // Abort only once the upstream holds the request, so there is an upstream request to cancel.
    await waitFor(
      () => upstream.hung,
      (n) => n === arrivedBefore + 1,
      { what: 'the /hang request to reach the upstream' },
    );
    abort.abort();
    await expect(pending).rejects.toThrow();
    await waitFor(
      () => upstream.aborted,
      (n) => n === before + 1,
      { what: 'the upstream to see its /hang request closed' },
    );
    expect(upstream.aborted).toBe(before + 1);
  });
});

describe('responses outside limited surfaces', () => {
  test('/healthz answers 200 {"status":"ok"}, unlimited, on any host', async ({ base }) => {
    for (const host of ['limited.test', 'open.test']) {
      const reply = await send(`${base}/healthz`, { headers: { host } });
      expect(reply.status).toBe(200);
      expect(reply.headers['content-type']).toBe('application/json');
      expect(reply.text).toBe('{"status":"ok"}');
      expect(reply.json()).toEqual({ status: 'ok' });
      expect(limitHeaders(reply)).toEqual({});
    }
    const withQuery = await send(`${base}/healthz?probe=k8s`);
    expect(withQuery.text).toBe('{"status":"ok"}');
    const head = await send(`${base}/readyz`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('application/json');
    expect(head.text).toBe('');
  });

  test('an unlimited route carries no X-RateLimit-* and no Retry-After, whatever the status', async ({
    base,
  }) => {
    for (const path of ['/echo', '/status/200', '/status/429', '/status/503', '/down/x']) {
      const reply = await send(`${base}${path}`, { headers: { host: 'open.test' } });
      expect(limitHeaders(reply), path).toEqual({});
    }
  });

  describe('with a config whose only route is /only', () => {
    test('an unknown route answers 404 route_not_found, without rate-limit headers', async ({
      gateways,
      upstream,
    }) => {
      const only = await gateways.start(ONLY_CONFIG, { UPSTREAM_URL: upstream.url });
      for (const path of ['/', '/elsewhere', '/only/more', '/onlyx']) {
        const reply = await send(`${only.url()}${path}`);
        expectGatewayError(reply, 404, 'route_not_found', 'No route matches this request.');
        expect(limitHeaders(reply)).toEqual({});
      }
      const known = await send(`${only.url()}/only`);
      expect(known.status).toBe(200);
      expect(limitHeaders(known)).toEqual({});
    });
  });
});
