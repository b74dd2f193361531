// Finding 9 of issue 18: the gateway answered 413 (or another early refusal) and closed while the
// client was still writing its body, so the kernel reset the connection and Node's http client saw
// EPIPE or ECONNRESET instead of the answer (7 of 12). Now every answer given before the body
// arrived whole half-closes the connection and reads and drops the rest, within LINGER's bounds.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect } from 'vitest';
import { LINGER } from '../../src/http/lingering-close.js';
import { startGatewayProcess } from '../helpers/cli.js';
import { test as base } from '../helpers/fixtures.js';
import { gatewayYaml, REDIS_STORE, send } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';

const BOUND = 1024;
const SIX_MB = 6 * 1024 * 1024;
const TIMES = 12;

const CONFIG = gatewayYaml(`
${REDIS_STORE}
identity: { trustedProxies: ['127.0.0.1'] }
requests: { maxInFlightPerIp: 1 }
upstreams: { app: { url: '\${UPSTREAM_URL}' } }
limiters:
  once: { windows: [{ limit: 1, period: 1m, key: [ip, 'header:X-Run'] }] }
routes:
  - { name: small, paths: [/small], upstream: app, maxBodySize: ${BOUND} }
  - { name: once, paths: [/once], upstream: app, limiters: [once], maxBodySize: 10mb }
  - { name: open, paths: ['/*'], upstream: app, maxBodySize: 10mb }
`);

/**
 * The gateway as a process of its own (`tollgate start`): in the test's process, client and
 * gateway would share one event loop, and the client would read the answer before the reset came.
 */
const test = base.extend('gateway', { scope: 'file' }, async ({ redis, upstream }, { onCleanup }) => {
  const file = join(mkdtempSync(join(tmpdir(), 'tollgate-linger-')), 'gateway.yaml');
  writeFileSync(file, CONFIG);
  const gp = await startGatewayProcess(file, { env: { REDIS_URL: redis.url, UPSTREAM_URL: upstream.url } });
  onCleanup(() => gp.stop().then(() => undefined));
  return { url: () => gp.url };
});

type Outcome = { status: number; body: unknown; connection?: string } | { error: string };

/**
 * One POST of `size` bytes with Node's own http client, written whole at once as the finding's
 * client did; chunked when `headers` names no Content-Length. The outcome: the whole answer, or the
 * error the client got before it had read it.
 */
function nodePost(url: string, size: number, headers: OutgoingHttpHeaders): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { method: 'POST', agent: false, headers });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          body: JSON.parse(text) as unknown,
          connection: res.headers.connection,
        }),
      );
      res.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    });
    // After a whole answer, a late write error changes nothing (the promise is settled).
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.end(Buffer.alloc(size, 'x'));
  });
}

async function times(n: number, fn: () => Promise<Outcome>): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (let i = 0; i < n; i++) outcomes.push(await fn());
  return outcomes;
}

const error = (code: string, message: string) => ({ error: { code, message } });
const TOO_LARGE = error('payload_too_large', `The request body exceeds ${BOUND} bytes.`);

describe(`Node's http client sending ${SIX_MB} bytes reads the early answer, ${TIMES} of ${TIMES}`, () => {
  test('413: a Content-Length over the bound', async ({ gateway, upstream }) => {
    const run = randomUUID();
    const outcomes = await times(TIMES, () =>
      nodePost(`${gateway.url()}/small?run=${run}`, SIX_MB, { 'content-length': SIX_MB }),
    );
    expect(outcomes).toEqual(Array(TIMES).fill({ status: 413, body: TOO_LARGE, connection: 'close' }));
    expect(upstream.seen.filter((r) => r.url.includes(run))).toEqual([]);
  });

  test('413: a chunked body read past the bound', async ({ gateway, upstream }) => {
    const run = randomUUID();
    const outcomes = await times(TIMES, () => nodePost(`${gateway.url()}/small?run=${run}`, SIX_MB, {}));
    expect(outcomes).toEqual(Array(TIMES).fill({ status: 413, body: TOO_LARGE, connection: 'close' }));
    expect(upstream.seen.filter((r) => r.url.includes(run))).toEqual([]);
  });

  test('429: rate limited', async ({ gateway, upstream }) => {
    const run = randomUUID();
    const first = await send(`${gateway.url()}/once`, {
      method: 'POST',
      headers: { 'x-run': run },
      body: 'x',
    });
    expect(first.status).toBe(200);
    const outcomes = await times(TIMES, () =>
      nodePost(`${gateway.url()}/once`, SIX_MB, { 'content-length': SIX_MB, 'x-run': run }),
    );
    expect(outcomes).toEqual(
      Array(TIMES).fill({
        status: 429,
        body: error('rate_limited', 'Too Many Attempts.'),
        connection: 'close',
      }),
    );
    expect(upstream.seen.filter((r) => r.headers['x-run'] === run)).toHaveLength(1);
  });

  test('400: a Connection header naming a header the request is keyed by', async ({ gateway, upstream }) => {
    const run = randomUUID();
    const outcomes = await times(TIMES, () =>
      nodePost(`${gateway.url()}/once`, SIX_MB, {
        'content-length': SIX_MB,
        'x-run': `${run}-${randomUUID()}`, // a budget each: counted, then refused
        connection: 'x-run',
      }),
    );
    const message = 'The Connection header may not name x-run: the gateway identifies requests by it.';
    expect(outcomes).toEqual(
      Array(TIMES).fill({
        status: 400,
        body: error('invalid_connection_header', message),
        connection: 'close',
      }),
    );
    expect(upstream.seen.filter((r) => String(r.headers['x-run']).startsWith(run))).toEqual([]);
  });

  test('429: too many requests in flight from the address', async ({ gateway, upstream }) => {
    const ip = '198.51.100.9';
    // One request held at the upstream takes the address's one slot.
    const hung = upstream.hung;
    const held = httpRequest(`${gateway.url()}/hang`, { agent: false, headers: { 'x-forwarded-for': ip } });
    held.on('error', () => {});
    held.end();
    await waitFor(
      () => upstream.hung,
      (n) => n === hung + 1,
      { what: 'the held request at the upstream' },
    );
    try {
      const outcomes = await times(TIMES, () =>
        nodePost(`${gateway.url()}/open`, SIX_MB, { 'content-length': SIX_MB, 'x-forwarded-for': ip }),
      );
      expect(outcomes.map((o) => ('status' in o ? [o.status, o.connection] : o))).toEqual(
        Array(TIMES).fill([429, 'close']),
      );
      expect(
        outcomes.map((o) => ('body' in o ? (o.body as { error: { code: string } }).error.code : o)),
      ).toEqual(Array(TIMES).fill('too_many_requests_in_flight'));
    } finally {
      held.destroy();
    }
  });

  test('curl sees the 413 too', async ({ gateway }) => {
    const file = join(mkdtempSync(join(tmpdir(), 'tollgate-linger-')), 'body');
    writeFileSync(file, Buffer.alloc(SIX_MB, 'x'));
    const { stdout } = await promisify(execFile)('curl', [
      '-s',
      '--data-binary',
      `@${file}`,
      '-H',
      'content-type: application/octet-stream',
      '-w',
      '\n%{http_code}',
      `${gateway.url()}/small`,
    ]);
    expect(stdout).toBe(`${JSON.stringify(TOO_LARGE)}\n413`);
  });
});

/** A raw connection that keeps its write side open after the server's FIN, as a careless client does. */
async function rawSender(
  url: string,
): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port), allowHalfOpen: true });
  await once(socket, 'connect');
  let received = '';
  socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
  socket.on('error', () => {});
  // Not events.once: it would reject on the write errors a careless client runs into.
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, received: () => received, closed };
}

describe('the discard is bounded', () => {
  test(`a client that never stops sending has at most ${LINGER.bytes} bytes read, and is cut after ${LINGER.ms} ms`, async ({
    gateway,
  }) => {
    const { socket, received, closed } = await rawSender(gateway.url());
    socket.write(`POST /small HTTP/1.1\r\nHost: gateway.test\r\nContent-Length: ${1 << 30}\r\n\r\n`);
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let written = 0;
    let open = true;
    void closed.then(() => (open = false));
    // As fast as the connection takes it, until the gateway closes it.
    while (open) {
      written += chunk.length;
      if (!socket.write(chunk)) await Promise.race([new Promise((r) => socket.once('drain', r)), closed]);
    }
    expect(received()).toMatch(/^HTTP\/1\.1 413 Payload Too Large\r\n/);
    expect(received()).toContain('\r\nconnection: close\r\n');
    // What the gateway read, plus what both kernels' buffers held when it closed.
    expect(written).toBeLessThan(LINGER.bytes + 32 * 1024 * 1024);
  });

  test(
    `a client that trickles its body forever is cut after ${LINGER.ms} ms`,
    { timeout: 60_000 },
    async ({ gateway }) => {
      const { socket, received, closed } = await rawSender(gateway.url());
      socket.write(`POST /small HTTP/1.1\r\nHost: gateway.test\r\nContent-Length: ${1 << 30}\r\n\r\n`);
      const trickle = setInterval(() => socket.writable && socket.write('x'), 20);
      try {
        await closed;
      } finally {
        clearInterval(trickle);
      }
      expect(received()).toMatch(/^HTTP\/1\.1 413 Payload Too Large\r\n/);
    },
  );

  test('a client that writes its whole body before it reads gets the answer', async ({ gateway }) => {
    const { socket, received, closed } = await rawSender(gateway.url());
    socket.write(`POST /small HTTP/1.1\r\nHost: gateway.test\r\nContent-Length: ${SIX_MB}\r\n\r\n`);
    // More than the kernels' buffers hold: it is all written only if the gateway reads it.
    const written = await new Promise<Error | null | undefined>((resolve) =>
      socket.write(Buffer.alloc(SIX_MB, 'x'), resolve),
    );
    expect(written ?? null).toBeNull(); // no write error
    await waitFor(received, (r) => r.endsWith(JSON.stringify(TOO_LARGE)), { what: 'the 413' });
    expect(received()).toMatch(/^HTTP\/1\.1 413 Payload Too Large\r\n/);
    socket.end();
    await closed;
  });

  test('nothing sent after the early answer is read as a request', async ({ gateway, upstream }) => {
    const run = randomUUID();
    const { socket, received, closed } = await rawSender(gateway.url());
    socket.write(`POST /small HTTP/1.1\r\nHost: gateway.test\r\nContent-Length: ${BOUND + 10}\r\n\r\n`);
    await waitFor(received, (r) => r.includes(JSON.stringify(TOO_LARGE)), { what: 'the 413' });
    // The rest of the body, then a request of its own.
    socket.write(Buffer.alloc(BOUND + 10, 'x'));
    socket.write(`GET /after?run=${run} HTTP/1.1\r\nHost: gateway.test\r\n\r\n`);
    socket.end();
    await closed;
    expect(received().match(/HTTP\/1\.1 /g)).toHaveLength(1);
    expect(upstream.seen.filter((r) => r.url.includes(run))).toEqual([]);
  });
});

describe('a small body keeps its connection', () => {
  test('a 429 to a POST whose small body came with it keeps the connection alive', async ({ gateway }) => {
    const run = randomUUID();
    const { socket, received } = await rawSender(gateway.url());
    const post = `POST /once HTTP/1.1\r\nHost: gateway.test\r\nX-Run: ${run}\r\nContent-Length: 17\r\n\r\n{"small":"body!"}`;
    socket.write(post);
    await waitFor(received, (r) => r.match(/HTTP\/1\.1 /g)?.length === 1 && r.endsWith('}'), {
      what: 'the first answer',
    });
    // Over the limit now: refused, and the same connection then serves the next request too.
    socket.write(post + post);
    await waitFor(received, (r) => (r.match(/HTTP\/1\.1 429 /g)?.length ?? 0) === 2, {
      what: 'two 429s on the same connection',
    });
    expect(received()).not.toMatch(/\r\nconnection: close\r\n/i);
    socket.destroy();
  });
});
