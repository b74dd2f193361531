// Event streams have a connection budget of their own, apart from ordinary requests, and caps per
// visitor session and per address: 150 streams of one session do not stall anyone else.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request, type Dispatcher } from 'undici';
import { describe, expect } from 'vitest';
import { DEFAULT_CONFIG } from '../helpers/default-config.js';
import { dataDirWithWorkspaces, embeddedEnv } from '../helpers/embedded.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { gatewayYaml, send, type Reply } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';

const streamsRefusal = (holder: string, max: number) =>
  JSON.stringify({
    error: {
      code: 'too_many_streams',
      message: `This ${holder} already holds ${max} open event streams. Close one before opening another.`,
    },
  });

/** The gateway's refusal of a stream, exactly: JSON, Retry-After 5, the connection closed. */
async function expectRefused(res: Dispatcher.ResponseData, status: number, body: string): Promise<void> {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toBe('application/json');
  expect(res.headers['retry-after']).toBe('5');
  expect(res.headers['connection']).toBe('close');
  expect(await res.body.text()).toBe(body);
}

/**
 * - `widget`: the shipped config's gateway (at most 5 streams per address), with its widget calls;
 *   `open` holds the streams it opened, closed after the file's last test;
 * - `sse`: a gateway before an upstream of endless event streams (2 request connections, 4 for
 *   streams, 2 streams per address); `held` holds the streams a test keeps open.
 */
const test = serversTest
  .extend('widget', { scope: 'file' }, async ({ redis, gateways }, { onCleanup }) => {
    const gateway = await gateways.start(
      DEFAULT_CONFIG,
      embeddedEnv(dataDirWithWorkspaces('acme'), {
        REDIS_URL: redis.url,
        TRUSTED_PROXIES: '127.0.0.1',
        MAX_STREAMS_PER_IP: '5',
      }),
    );
    const open: Dispatcher.ResponseData[] = [];
    onCleanup(() => {
      for (const res of open) res.body.destroy();
    });

    async function init(ip: string): Promise<string> {
      const reply = await send(`${gateway.url()}/api/v1/widget/init`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
        body: JSON.stringify({ workspace: 'acme' }),
      });
      expect(reply.status).toBe(200);
      return (reply.json() as { token: string }).token;
    }

    /** Opens a stream; resolves at its head. A 200 is kept open (and closed after the test file). */
    async function stream(token: string, ip: string): Promise<Dispatcher.ResponseData> {
      const res = await request(`${gateway.url()}/api/v1/widget/messages/stream`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': ip },
      });
      if (res.statusCode === 200) open.push(res);
      return res;
    }

    const message = (token: string, ip: string, body: string): Promise<Reply> =>
      send(`${gateway.url()}/api/v1/widget/messages`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'x-forwarded-for': ip,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ body }),
      });

    const closeAll = async () => {
      for (const res of open.splice(0)) res.body.destroy();
      await waitFor(
        () => gateway.admission.held,
        (n) => n === 0,
        { what: 'every stream slot to be released' },
      );
    };
    return { gateway, open, init, stream, message, closeAll };
  })
  .extend('sse', { scope: 'file' }, async ({ gateways }, { onCleanup }) => {
    const held: Dispatcher.ResponseData[] = [];
    /** Upstream sockets that carried a stream, and those that carried an ordinary request. */
    const sockets = { stream: new Set<unknown>(), plain: new Set<unknown>() };
    const upstream = createServer((req, res) => {
      if (req.url === '/events') {
        sockets.stream.add(req.socket);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(': open\n\n'); // and never ends
        return;
      }
      sockets.plain.add(req.socket);
      req.resume();
      req.on('end', () => res.end(JSON.stringify({ url: req.url })));
    });
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    const gateway = await gateways.start(
      gatewayYaml(`
identity: { trustedProxies: ['127.0.0.1'] }
streams: { maxPerIp: 2 }
upstreams: { app: { url: '\${UPSTREAM_URL}', connections: 2, streamConnections: 4 } }
routes:
  - { name: events, methods: [GET], paths: [/events], upstream: app, stream: true }
  - { name: rest, paths: ['/*'], upstream: app }
`),
      { UPSTREAM_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` },
    );
    onCleanup(() => {
      for (const res of held) res.body.destroy();
      upstream.closeAllConnections();
      upstream.close();
    });
    const openStream = (ip: string) =>
      request(`${gateway.url()}/events`, { headers: { 'x-forwarded-for': ip } });
    return { gateway, held, sockets, openStream };
  });

describe('the widget stream of the shipped config', () => {
  test('a session holds 3 streams; the 4th is refused with 429 and no window headers', async ({
    widget: { gateway, open, init, stream, message, closeAll },
  }) => {
    const ip = '198.51.100.10';
    const token = await init(ip);
    for (let i = 0; i < 3; i++) {
      const res = await stream(token, ip);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/event-stream');
    }
    const fourth = await stream(token, ip);
    // Its window has room (296 left): a cap's 429 does not carry headers that would say otherwise.
    expect(fourth.headers['x-ratelimit-limit']).toBeUndefined();
    expect(fourth.headers['x-ratelimit-remaining']).toBeUndefined();
    expect(fourth.headers['x-ratelimit-reset']).toBeUndefined();
    await expectRefused(fourth, 429, streamsRefusal('visitor session', 3));

    // Spelled otherwise, it is the same stream route (the gateway routes the canonical path).
    for (const spelling of ['/api/v1/widget/messages/stream/', '/api/v1/widget//messages/%73tream?x=1']) {
      const res = await request(`${gateway.url()}${spelling}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': ip },
      });
      await expectRefused(res, 429, streamsRefusal('visitor session', 3));
    }
    // The session's ordinary requests are not streams: they still pass.
    expect((await message(token, ip, 'still here')).status).toBe(201);
    // Closing one stream makes room for one more.
    open.shift()!.body.destroy();
    await waitFor(
      () => gateway.admission.streamsPerSession.total,
      (n) => n === 2,
      { what: 'the closed stream to be released' },
    );
    expect((await stream(token, ip)).statusCode).toBe(200);
    await closeAll();
  });

  test('an address holds 5 streams over its sessions; another address is not affected', async ({
    widget: { init, stream, closeAll },
  }) => {
    const ip = '198.51.100.20';
    const [a, b] = [await init(ip), await init(ip)];
    for (let i = 0; i < 3; i++) expect((await stream(a, ip)).statusCode).toBe(200);
    for (let i = 0; i < 2; i++) expect((await stream(b, ip)).statusCode).toBe(200);
    await expectRefused(await stream(b, ip), 429, streamsRefusal('address', 5));
    const elsewhere = '198.51.100.21';
    expect((await stream(await init(elsewhere), elsewhere)).statusCode).toBe(200);
    await closeAll();
  });

  test('the issue: 150 streams of one session at once: 3 open, 147 refused, other visitors init', async ({
    widget: { open, init, stream, message, closeAll },
  }) => {
    const ip = '203.0.113.150';
    const token = await init(ip);
    const responses = await Promise.all(Array.from({ length: 150 }, () => stream(token, ip)));
    const statuses = responses.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(147);
    for (const res of responses.filter((r) => r.statusCode === 429)) {
      expect(await res.body.text()).toBe(streamsRefusal('visitor session', 3));
    }
    for (let i = 1; i <= 5; i++) await init(`192.0.2.${i}`);
    // The three streams still deliver.
    const sent = (await message(token, ip, 'to every stream')).json() as { message: { id: number } };
    for (const res of open) {
      const reader = (res.body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
      let text = '';
      while (!text.includes(`id: ${sent.message.id}\n`)) {
        const { value, done } = await reader.next();
        if (done) throw new Error(`the stream ended before the message: ${text}`);
        text += value.toString();
      }
    }
    await closeAll();
  });
});

describe('streams have their own connections to the upstream', () => {
  test('4 open streams on a request pool of 2: ordinary requests pass, 10 at once; the 5th stream gets 503', async ({
    sse: { gateway, held, sockets, openStream },
  }) => {
    for (const ip of ['192.0.2.1', '192.0.2.1', '192.0.2.2', '192.0.2.2']) {
      const res = await openStream(ip);
      expect(res.statusCode).toBe(200);
      held.push(res);
    }
    expect(sockets.stream.size).toBe(4);

    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        send(`${gateway.url()}/plain/${i}`, { method: 'POST', body: 'x' }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(replies.map((r) => r.json())).toEqual(
      Array.from({ length: 10 }, (_, i) => ({ url: `/plain/${i}` })),
    );
    // The ordinary requests never rode on a stream's connection, and kept to their own 2.
    for (const s of sockets.plain) expect(sockets.stream.has(s)).toBe(false);
    expect(sockets.plain.size).toBeLessThanOrEqual(2);

    // A third address: its own cap has room, the upstream's stream budget has none.
    await expectRefused(
      await openStream('192.0.2.3'),
      503,
      JSON.stringify({
        error: {
          code: 'stream_capacity_reached',
          message: 'The gateway holds as many event streams as it can. Please retry shortly.',
        },
      }),
    );
    // The per-address cap is checked before the budget.
    await expectRefused(await openStream('192.0.2.1'), 429, streamsRefusal('address', 2));

    held.shift()!.body.destroy();
    await waitFor(
      () => gateway.admission.streamsPerUpstream.held('app'),
      (n) => n === 3,
      { what: 'the closed stream to be released' },
    );
    const again = await openStream('192.0.2.3');
    expect(again.statusCode).toBe(200);
    held.push(again);

    for (const res of held.splice(0)) res.body.destroy();
    await waitFor(
      () => gateway.admission.held,
      (n) => n === 0,
      { what: 'every stream slot to be released' },
    );
  });
});
