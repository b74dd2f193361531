// Every route has a body bound at the gateway. An oversized body, declared or chunked, gets the
// gateway's 413 (never the embedded service's early close, which was a 502), and a body that does
// not arrive in time gets 408; both with the route's rate-limit headers and the connection closed.
import { Readable } from 'node:stream';
import { request } from 'undici';
import { describe, expect } from 'vitest';
import { DEFAULT_CONFIG } from '../helpers/default-config.js';
import { ALICE_KEY, dataDirWithWorkspaces, embeddedEnv } from '../helpers/embedded.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { gatewayYaml } from '../helpers/gateway.js';
import { RawClient, type RawResponse } from '../helpers/raw-client.js';
import { waitFor } from '../helpers/wait.js';

/** The default bound of services.maxBodySize, commented out in the shipped config. */
const LOOSE = '  # maxBodySize: 5mb\n';

/**
 * Three gateways, each started when a test first names it:
 * - `shipped`: the shipped config, its embedded services bound by services.maxBodySize;
 * - `loose`: the shipped config with a global bound (10mb) looser than the services' (1kb);
 * - `bounded`: the config's bounds (a global default, route overrides, a deadline) before the file's upstream;
 * and `seen`: what the file's upstream received on a path.
 */
const test = serversTest
  .extend('shipped', { scope: 'file' }, ({ redis, gateways }) =>
    gateways.start(DEFAULT_CONFIG, embeddedEnv(dataDirWithWorkspaces('acme'), { REDIS_URL: redis.url })),
  )
  .extend('loose', { scope: 'file' }, ({ gateways }) => {
    expect(DEFAULT_CONFIG.split(LOOSE)).toHaveLength(2);
    return gateways.start(
      DEFAULT_CONFIG.replace(LOOSE, '  maxBodySize: 10mb\n'),
      embeddedEnv(dataDirWithWorkspaces('acme'), { MAX_BODY_SIZE: '1kb' }),
    );
  })
  .extend('bounded', { scope: 'file' }, ({ gatewayEnv, gateways }) =>
    gateways.start(
      gatewayYaml(`
store: { redis: { url: '\${REDIS_URL}', commandTimeout: 2s } }
requests: { maxBodySize: 1kb, bodyTimeout: 400ms }
upstreams: { app: { url: '\${UPSTREAM_URL}' } }
routes:
  - { name: limited, paths: [/limited], upstream: app, limiters: [{ windows: [{ limit: 50, period: 1h, key: [ip] }] }] }
  - { name: larger, paths: [/larger], upstream: app, maxBodySize: 4kb }
  - { name: unbounded, paths: [/unbounded], upstream: app, maxBodySize: 0 }
  - { name: default, paths: ['/*'], upstream: app }
`),
      gatewayEnv,
    ),
  )
  .extend(
    'seen',
    { scope: 'file' },
    ({ upstream }) =>
      (path: string) =>
        upstream.seen.filter((s) => s.url === path),
  );

const MB5 = 5 * 1024 * 1024;
const tooLarge = (bound: number) =>
  JSON.stringify({
    error: { code: 'payload_too_large', message: `The request body exceeds ${bound} bytes.` },
  });

/** The gateway's 413, exactly: JSON body, Connection: close, and the rate-limit headers when limited. */
function expectTooLarge(reply: RawResponse, bound: number, limit: string | undefined): void {
  expect(reply.status).toBe(413);
  expect(reply.headers['content-type']).toBe('application/json');
  expect(reply.headers['connection']).toBe('close');
  expect(reply.body).toBe(tooLarge(bound));
  expect(reply.headers['x-ratelimit-limit']).toBe(limit);
  if (limit === undefined) {
    expect(reply.headers['x-ratelimit-remaining']).toBeUndefined();
  } else {
    expect(Number(reply.headers['x-ratelimit-remaining'])).toBeLessThan(Number(limit));
    expect(reply.headers['x-ratelimit-reset']).toMatch(/^\d{10}$/);
  }
  expect(reply.headers['retry-after']).toBeUndefined();
}

/** A declared body over the bound: only the head is sent, the refusal comes before any body byte. */
async function declared(url: string, path: string, length: number, headers: Record<string, string> = {}) {
  const client = await RawClient.open(url);
  client.head('POST', path, { 'content-type': 'application/json', 'content-length': length, ...headers });
  const reply = await client.response();
  await client.closed; // Connection: close is kept
  return reply;
}

/** A chunked body of `total` bytes in 64 KiB chunks, written until the gateway answers. */
async function chunked(url: string, path: string, total: number, headers: Record<string, string> = {}) {
  const client = await RawClient.open(url);
  client.head('POST', path, {
    'content-type': 'application/json',
    'transfer-encoding': 'chunked',
    ...headers,
  });
  const piece = Buffer.alloc(64 * 1024, 'a');
  for (let sent = 0; sent < total && !client.responded && !client.socket.destroyed; sent += piece.length) {
    client.chunk(piece.subarray(0, Math.min(piece.length, total - sent)));
    if (client.socket.writableNeedDrain) await new Promise((r) => client.socket.once('drain', r));
  }
  client.chunk('');
  const reply = await client.response();
  await client.closed;
  return reply;
}

describe('the shipped config: the embedded services are bound by services.maxBodySize at the gateway', () => {
  const auth = { authorization: `Bearer ${ALICE_KEY}` };

  test.for([
    ['/api/v1/widget/init', {}, '1000'],
    ['/api/v1/websites', auth, undefined],
  ] as const)(
    '%s: a declared 6 MB body gets 413, never 502, every time',
    async ([path, headers, limit], { shipped }) => {
      for (let i = 0; i < 4; i++)
        expectTooLarge(await declared(shipped.url(), path, 6 * 1024 * 1024, headers), MB5, limit);
    },
  );

  test.for([
    ['/api/v1/widget/init', {}, '1000'],
    ['/api/v1/websites', auth, undefined],
  ] as const)(
    '%s: a chunked 6 MB body gets 413 at the first byte past 5 MB',
    async ([path, headers, limit], { shipped }) => {
      for (let i = 0; i < 2; i++)
        expectTooLarge(await chunked(shipped.url(), path, 6 * 1024 * 1024, headers), MB5, limit);
    },
  );

  test('a 6 MB body sent whole by an ordinary client (undici) reads as 413, not 502', async ({ shipped }) => {
    const res = await request(`${shipped.url()}/api/v1/widget/init`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.alloc(6 * 1024 * 1024, 'a'),
    });
    expect(res.statusCode).toBe(413);
    expect(res.headers['connection']).toBe('close');
    expect(await res.body.text()).toBe(tooLarge(MB5));
  });

  test('a body of exactly the bound, sent chunked, reaches the service whole (with its length)', async ({
    shipped,
  }) => {
    const prefix = '{"workspace":"acme","pad":"';
    const body = prefix + 'x'.repeat(MB5 - prefix.length - 2) + '"}';
    expect(body.length).toBe(MB5);
    const res = await request(`${shipped.url()}/api/v1/widget/init`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Readable.from(body.match(/[^]{1,65536}/g)!),
    });
    const reply = (await res.body.json()) as { token_type: string; workspace: { name: string } };
    expect(res.statusCode).toBe(200);
    expect(reply).toMatchObject({ token_type: 'Bearer', workspace: { name: 'acme' } });
    expect(res.headers['x-ratelimit-limit']).toBe('1000');
  });
});

describe('a global bound looser than the services: routes to an embedded service keep the service bound', () => {
  test('the gateway answers 413 at the service bound, declared and chunked', async ({ loose }) => {
    expectTooLarge(await declared(loose.url(), '/api/v1/widget/init', 2048), 1024, '1000');
    expectTooLarge(
      await chunked(loose.url(), '/api/v1/websites', 2048, { authorization: `Bearer ${ALICE_KEY}` }),
      1024,
      undefined,
    );
  });
});

describe('bounds of the config: the global default, a route override, 0 (unbounded), the deadline', () => {
  test('the global default: 1 KiB passes with its length, one byte more is refused unseen', async ({
    bounded,
    seen,
  }) => {
    const ok = await request(`${bounded.url()}/exact`, {
      method: 'POST',
      body: Readable.from([Buffer.alloc(512, 'a'), Buffer.alloc(512, 'b')]),
    });
    expect(ok.statusCode).toBe(200);
    await ok.body.text();
    expect(seen('/exact')).toHaveLength(1);
    expect(seen('/exact')[0]!.headers['content-length']).toBe('1024');
    expect(seen('/exact')[0]!.body).toBe('a'.repeat(512) + 'b'.repeat(512));

    expectTooLarge(await declared(bounded.url(), '/over', 1025), 1024, undefined);
    expectTooLarge(await chunked(bounded.url(), '/over', 1025), 1024, undefined);
    expect(seen('/over')).toEqual([]);
  });

  test('a route override: 4 KiB passes, 4097 bytes are refused with that bound', async ({
    bounded,
    seen,
  }) => {
    const ok = await request(`${bounded.url()}/larger`, { method: 'POST', body: 'x'.repeat(4096) });
    expect(ok.statusCode).toBe(200);
    await ok.body.text();
    expectTooLarge(await chunked(bounded.url(), '/larger', 4097), 4096, undefined);
    expect(seen('/larger')).toHaveLength(1);
  });

  test('maxBodySize 0: a chunked 2 MB body is streamed through unread, still chunked', async ({
    bounded,
    seen,
  }) => {
    const res = await request(`${bounded.url()}/unbounded`, {
      method: 'POST',
      body: Readable.from(Array.from({ length: 32 }, () => Buffer.alloc(65536, 'u'))),
    });
    expect(res.statusCode).toBe(200);
    await res.body.text();
    expect(seen('/unbounded')[0]!.headers['transfer-encoding']).toBe('chunked');
    expect(seen('/unbounded')[0]!.body).toBe('u'.repeat(2 * 1024 * 1024));
  });

  test('a limited route: 413 carries the rate-limit headers, the refused request was counted', async ({
    bounded,
    seen,
  }) => {
    const first = await declared(bounded.url(), '/limited', 2000);
    expectTooLarge(first, 1024, '50');
    const second = await chunked(bounded.url(), '/limited', 2000);
    expectTooLarge(second, 1024, '50');
    expect(Number(second.headers['x-ratelimit-remaining'])).toBe(
      Number(first.headers['x-ratelimit-remaining']) - 1,
    );
    expect(seen('/limited')).toEqual([]);
  });

  test('Expect: 100-continue with a chunked body: continue, then 413 once the bound is passed', async ({
    bounded,
  }) => {
    const client = await RawClient.open(bounded.url());
    client.head('POST', '/over', { 'transfer-encoding': 'chunked', expect: '100-continue' });
    await waitFor(
      () => client.text,
      (t) => t.startsWith('HTTP/1.1 100 Continue\r\n\r\n'),
      { what: '100 Continue' },
    );
    client.chunk(Buffer.alloc(2000, 'c'));
    expectTooLarge(await client.response(), 1024, undefined);
    await client.closed;
  });

  test('a body that trickles in (a byte every 50 ms) gets 408 at the deadline, not at an idle timeout', async ({
    bounded,
    seen,
  }) => {
    const client = await RawClient.open(bounded.url());
    client.head('POST', '/limited', { 'content-type': 'text/plain', 'content-length': 1000 });
    const trickle = setInterval(() => client.write('x'), 50);
    try {
      const reply = await client.response();
      expect(reply.status).toBe(408);
      expect(reply.headers['content-type']).toBe('application/json');
      expect(reply.headers['connection']).toBe('close');
      expect(reply.body).toBe(
        JSON.stringify({
          error: { code: 'request_timeout', message: 'The request body did not arrive within 0.4 s.' },
        }),
      );
      expect(reply.headers['x-ratelimit-limit']).toBe('50');
      expect(reply.headers['x-ratelimit-reset']).toMatch(/^\d{10}$/);
      await client.closed;
    } finally {
      clearInterval(trickle);
    }
    expect(seen('/limited')).toEqual([]);
    // Its slot was given back.
    await waitFor(
      () => bounded.admission.held,
      (n) => n === 0,
      { what: 'the slots to be released' },
    );
  });

  test('a bodyless GET and an empty chunked POST pass untouched', async ({ bounded, seen }) => {
    const get = await request(`${bounded.url()}/plain?x=1`);
    expect(get.statusCode).toBe(200);
    const echoed = (await get.body.json()) as {
      method: string;
      body: string;
      headers: Record<string, string>;
    };
    expect(echoed).toMatchObject({ method: 'GET', body: '' });
    expect(echoed.headers['content-length']).toBeUndefined();

    const client = await RawClient.open(bounded.url());
    client.head('POST', '/empty', { 'transfer-encoding': 'chunked', connection: 'close' });
    client.chunk('');
    const reply = await client.response();
    expect(reply.status).toBe(200);
    expect(seen('/empty')[0]!.headers['content-length']).toBe('0');
    expect(seen('/empty')[0]!.body).toBe('');
  });
});
