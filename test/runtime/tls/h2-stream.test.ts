// The HTTP/2 side of a TLS listener served by the core API (src/runtime/tls/h2-stream.ts,
// h2-response.ts): what each stream's request and response are, and that the response keeps what
// node's compatibility response did (headers merged, connection framing dropped, HEAD and 204
// without a body, 100-continue, 405 for CONNECT, 417 for another Expect, a client's reset read as
// an unfinished response), through a real TLS socket and node's HTTP/2 client.
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants, type ClientHttp2Session, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TLSSocket } from 'node:tls';
import { describe, expect, test as base } from 'vitest';
import type { ListenerConfig, ListenerTlsConfig } from '../../../src/config/schema.js';
import { StreamRequest } from '../../../src/runtime/tls/h2-request.js';
import { StreamResponse } from '../../../src/runtime/tls/h2-response.js';
import { SecureListener } from '../../../src/runtime/tls/secure-listener.js';
import { selfSigned } from '../../helpers/certificates.js';
import { silentLogger } from '../../helpers/gateway.js';
import { h2Request, h2Session } from '../../helpers/h2-client.js';
import { waitFor } from '../../helpers/wait.js';

interface Seen {
  readonly req: StreamRequest;
  readonly res: StreamResponse;
}

/** A /whole request's body as wholeBody took it, whether it ended, and its response at 'close'. */
interface Whole {
  body: string | undefined;
  ended: boolean;
  finishedAtClose: boolean | undefined;
}
const wholes: Whole[] = [];

/** What the handler does per path; every request it sees is kept in `seen`. */
function answer(req: StreamRequest, res: StreamResponse): void {
  switch (req.url) {
    case '/merge':
      res.setHeader('Vary', 'Origin');
      res.setHeader('x-a', '1');
      res.writeHead(201, {
        'x-a': '2',
        'x-b': ['1', '2'],
        connection: 'close',
        'keep-alive': 'timeout=5',
        'transfer-encoding': 'chunked',
        te: 'gzip',
      });
      res.end('ok');
      return;
    case '/no-content':
      res.writeHead(204);
      res.write('dropped');
      res.end('dropped too');
      return;
    case '/continue':
      res.writeContinue();
      req.resume();
      req.once('end', () => res.end('got it'));
      return;
    case '/partial':
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('part of it');
      return; // never ended: the client resets the stream
    case '/cut':
      res.writeHead(200);
      res.write('a');
      res.destroy(new Error('upstream failed mid-body'));
      return;
    case '/whole':
      // As the request path takes a small body: whole, once the frames read with HEADERS are in.
      void (req.framesRead() ?? Promise.resolve()).then(() => {
        const body = req.wholeBody(1024);
        const seen: Whole = { body: body?.toString(), ended: false, finishedAtClose: undefined };
        wholes.push(seen);
        req.once('end', () => (seen.ended = true));
        res.once('close', () => (seen.finishedAtClose = res.writableFinished));
        res.writeHead(200);
        res.end(body ?? '');
      });
      return;
    default:
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '5' });
      res.end('hello');
  }
}

const dir = mkdtempSync(join(tmpdir(), 'tollgate-h2-stream-'));

const test = base.extend('tls', { scope: 'file' }, async ({}, { onCleanup }) => {
  const certificate = selfSigned(dir, 'server');
  const tls: ListenerTlsConfig = {
    cert: certificate.cert,
    key: certificate.key,
    ca: '',
    minVersion: 'TLSv1.2',
  };
  const cfg = {
    name: 'h2',
    host: '127.0.0.1',
    port: 0,
    tls,
    http2: { enabled: true, maxConcurrentStreams: 10, maxResetBurst: 100, maxResetsPerSecond: 10 },
  } as unknown as ListenerConfig & { tls: ListenerTlsConfig };
  const seen: Seen[] = [];
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const h2 = { req, res } as unknown as Seen;
    seen.push(h2);
    answer(h2.req, h2.res);
  };
  const listener = await SecureListener.create(cfg, handle, silentLogger);
  listener.server.listen(0, '127.0.0.1');
  await once(listener.server, 'listening');
  const url = `https://127.0.0.1:${(listener.server.address() as AddressInfo).port}`;
  onCleanup(async () => {
    listener.closeAllConnections();
    await new Promise<void>((resolve) => listener.close(resolve));
  });
  const session = (): Promise<ClientHttp2Session> => h2Session(url, certificate.pem);
  return { listener, seen, session };
});

/** A request's reply and how its stream closed on the client's side. */
function exchange(
  session: ClientHttp2Session,
  headers: Record<string, string>,
  body?: string,
): Promise<{
  status: number;
  headers: Record<string, unknown>;
  text: string;
  rstCode: number;
  informational: number[];
}> {
  return new Promise((resolve, reject) => {
    const req = session.request(headers, { endStream: body === undefined });
    const informational: number[] = [];
    let status = 0;
    let out: Record<string, unknown> = {};
    let text = '';
    req.on('continue', () => {
      informational.push(100);
      if (body !== undefined) req.end(body);
    });
    req.on('response', (h) => {
      status = Number(h[':status']);
      out = { ...h };
    });
    req.setEncoding('utf8');
    req.on('data', (d: string) => (text += d));
    req.on('error', reject);
    req.on('close', () => resolve({ status, headers: out, text, rstCode: req.rstCode ?? -1, informational }));
  });
}

describe('HTTP/2 streams served by the core API', () => {
  test("node's compatibility dispatcher is gone: one 'stream' listener; a request gets a StreamRequest (no compatibility request) and a StreamResponse", async ({
    tls: { listener, seen, session },
  }) => {
    expect(listener.server.listeners('stream')).toHaveLength(1);
    const s = await session();
    const before = seen.length;
    const reply = await h2Request(s, { ':path': '/hello' });
    s.close();
    expect(reply).toEqual({
      status: 200,
      headers: expect.objectContaining({ 'content-type': 'text/plain', 'content-length': '5' }),
      text: 'hello',
    });
    const { req, res } = seen[before]!;
    expect(req).toBeInstanceOf(StreamRequest);
    expect(res).toBeInstanceOf(StreamResponse);
    expect(req.headers.host).toMatch(/^127\.0\.0\.1:\d+$/); // from :authority
    expect({ method: req.method, url: req.url, version: req.httpVersionMajor }).toEqual({
      method: 'GET',
      url: '/hello',
      version: 2,
    });
    // Nothing of node's compatibility layer was made for the stream (it sets stream[kRequest]).
    const kRequest = Object.getOwnPropertySymbols(req.stream).find((s) => String(s) === 'Symbol(request)');
    expect(kRequest && (req.stream as unknown as Record<symbol, unknown>)[kRequest]).toBeFalsy();
  });

  test("every stream of a connection has the connection's TLS socket as req.socket; another connection has its own", async ({
    tls: { seen, session },
  }) => {
    const a = await session();
    const b = await session();
    const before = seen.length;
    await h2Request(a, { ':path': '/1' });
    await h2Request(a, { ':path': '/2' });
    await h2Request(b, { ':path': '/3' });
    a.close();
    b.close();
    const [one, two, three] = seen.slice(before).map((x) => x.req.socket);
    expect(one).toBeInstanceOf(TLSSocket);
    expect(two).toBe(one);
    expect(three).toBeInstanceOf(TLSSocket);
    expect(three).not.toBe(one);
  });

  test('headers set before writeHead are merged with those given (given ones win); connection framing is dropped', async ({
    tls: { session },
  }) => {
    const s = await session();
    const reply = await exchange(s, { ':path': '/merge' });
    s.close();
    expect(reply.status).toBe(201);
    expect(reply.text).toBe('ok');
    expect(reply.rstCode).toBe(constants.NGHTTP2_NO_ERROR);
    expect(reply.headers).toMatchObject({ vary: 'Origin', 'x-a': '2', 'x-b': '1, 2' });
    for (const name of ['connection', 'keep-alive', 'transfer-encoding', 'te']) {
      expect(reply.headers).not.toHaveProperty(name);
    }
  });

  test('the response ends with its last DATA frame: no trailers frame of its own', async ({
    tls: { seen, session },
  }) => {
    const s = await session();
    const before = seen.length;
    await h2Request(s, { ':path': '/hello' });
    s.close();
    const stream = (seen[before]!.res as { stream: ServerHttp2Stream }).stream;
    await waitFor(
      () => stream.closed,
      (closed) => closed,
      { what: 'the stream to close' },
    );
    expect(stream.sentTrailers).toBeUndefined();
  });

  test('HEAD and 204: the headers alone, the body written dropped, the stream ended cleanly', async ({
    tls: { session },
  }) => {
    const s = await session();
    const head = await exchange(s, { ':path': '/hello', ':method': 'HEAD' });
    const noContent = await exchange(s, { ':path': '/no-content' });
    s.close();
    expect(head).toMatchObject({ status: 200, text: '', rstCode: constants.NGHTTP2_NO_ERROR });
    expect(head.headers['content-length']).toBe('5');
    expect(noContent).toMatchObject({ status: 204, text: '', rstCode: constants.NGHTTP2_NO_ERROR });
  });

  test('Expect: 100-continue reaches the handler, which sends 100 itself; another Expect is 417, CONNECT 405, neither handled', async ({
    tls: { seen, session },
  }) => {
    const s = await session();
    const before = seen.length;
    const continued = await exchange(
      s,
      { ':path': '/continue', ':method': 'POST', expect: '100-continue' },
      'the body',
    );
    const other = await exchange(s, { ':path': '/hello', expect: 'something-else' });
    const connect = await exchange(s, { ':method': 'CONNECT', ':authority': 'example.com:443' });
    s.close();
    expect(continued).toMatchObject({ status: 200, text: 'got it', informational: [100] });
    expect(other).toMatchObject({ status: 417, text: '' });
    expect(connect).toMatchObject({ status: 405, text: '' });
    expect(seen.slice(before).map((x) => x.req.url)).toEqual(['/continue']);
  });

  test("a body taken whole: its 'end' comes when the stream closes, and the stream closes only once the response's last write is done", async ({
    tls: { session },
  }) => {
    const s = await session();
    const before = wholes.length;
    const reply = await h2Request(s, { ':path': '/whole', ':method': 'POST' }, '{"event":"bench"}');
    await waitFor(
      () => wholes[before]?.finishedAtClose,
      (finished) => finished !== undefined,
      { what: "the response's close" },
    );
    s.close();
    expect(reply).toMatchObject({ status: 200, text: '{"event":"bench"}' });
    // Destroyed before its last write completed, the response would read unfinished at 'close'
    // (and node 20 makes an ERR_STREAM_DESTROYED, with its stack trace, for that write).
    expect(wholes[before]).toEqual({ body: '{"event":"bench"}', ended: true, finishedAtClose: true });
  });

  test("a client's reset: the response reads closed, destroyed and unfinished; the gateway's own cut is marked as its own", async ({
    tls: { seen, session },
  }) => {
    const s = await session();
    const before = seen.length;
    const partial = s.request({ ':path': '/partial' });
    partial.on('error', () => {});
    await once(partial, 'data');
    partial.close(constants.NGHTTP2_CANCEL);
    const cut = await exchange(s, { ':path': '/cut' }).catch((err: Error) => err);
    s.close();
    const res = seen[before]!.res;
    await waitFor(
      () => res.closed,
      (closed) => closed,
      { what: 'the response to close' },
    );
    expect({ closed: res.closed, destroyed: res.destroyed, finished: res.writableFinished }).toEqual({
      closed: true,
      destroyed: true,
      finished: false,
    });
    expect(cut).toBeInstanceOf(Error); // INTERNAL_ERROR: a truncated response is never taken for a whole one
    expect((cut as { code?: string }).code).toBe('ERR_HTTP2_STREAM_ERROR');
  });
});
