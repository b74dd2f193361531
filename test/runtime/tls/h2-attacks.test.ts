// HTTP/2 clients that misbehave, through real TLS sockets (node's HTTP/2 client, and a raw client
// writing frames itself) against a real gateway and upstream. Each test ends by proving that
// whatever the streams took is back: the in-flight slots (tollgate_in_flight), the open requests
// (tollgate_open_requests), the upstream's open requests, the response bytes held for slow clients,
// and a stream slot of the connection (a new stream is served on it).
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { connect, constants, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { describe, expect, test as base } from 'vitest';
import type { Gateway } from '../../../src/runtime/gateway.js';
import { selfSigned, type CertificateFiles } from '../../helpers/certificates.js';
import { startGateway } from '../../helpers/gateway.js';
import { FRAME, RawH2Client } from '../../helpers/h2-frames.js';
import { h2Request, h2Session } from '../../helpers/h2-client.js';
import { sampleValue, scrape } from '../../helpers/prometheus.js';
import { TestUpstream } from '../../helpers/upstream.js';
import { waitFor } from '../../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-h2-attacks-'));
const MAX_STREAMS = 8;

function config(cert: CertificateFiles, drainTimeout = '10s'): string {
  const listener = {
    name: 'tls',
    host: '127.0.0.1',
    port: 0,
    tls: { cert: cert.cert, key: cert.key },
    http2: { maxConcurrentStreams: MAX_STREAMS, maxResetBurst: 10000, maxResetsPerSecond: 10000 },
  };
  return `
listeners:
  - ${JSON.stringify(listener)}
admin: { host: 127.0.0.1, port: 0 }
identity: { trustedProxies: ['127.0.0.1'] }
requests: { maxInFlightPerIp: 4, bodyTimeout: 800ms, responseTimeout: 1s, shedAfter: 0 }
shutdown: { drainTimeout: ${drainTimeout} }
upstreams: { app: { url: '\${UPSTREAM_URL}' } }
routes:
  - { name: small, paths: ['/small*'], upstream: app, maxBodySize: 10 }
  - { name: unbounded, paths: ['/unbounded*'], upstream: app, maxBodySize: 0 }
  - { name: all, paths: ['/*'], upstream: app }
`;
}

interface Rig {
  readonly cert: CertificateFiles;
  readonly upstream: TestUpstream;
  readonly gateway: Gateway;
  readonly session: () => Promise<ClientHttp2Session>;
}

async function rig(drainTimeout?: string): Promise<Rig & { close: () => Promise<void> }> {
  const cert = selfSigned(dir, 'server');
  const upstream = await TestUpstream.start();
  const gateway = await startGateway(config(cert, drainTimeout), { UPSTREAM_URL: upstream.url });
  return {
    cert,
    upstream,
    gateway,
    session: () => h2Session(gateway.url(), cert.pem),
    close: async () => {
      await gateway.close();
      await upstream.close();
    },
  };
}

const test = base.extend('h2', { scope: 'file' }, async ({}, { onCleanup }) => {
  const r = await rig();
  onCleanup(r.close);
  return r as Rig;
});

/** What the gateway and its upstream hold now. */
async function held({ gateway, upstream }: Rig) {
  const metrics = await scrape(gateway.adminUrl!);
  return {
    inFlight: sampleValue(metrics, 'tollgate_in_flight{kind="requests"}'),
    open: sampleValue(metrics, 'tollgate_open_requests'),
    upstreamRequests: upstream.openRequests,
    responseBuffers: gateway.responseBuffers.held,
  };
}

const portOf = (r: Rig): number => Number(new URL(r.gateway.url()).port);

const NOTHING = { inFlight: 0, open: 0, upstreamRequests: 0, responseBuffers: 0 };

/** Waits until nothing is held: every slot, request and buffer the streams took is back. */
async function allReleased(r: Rig): Promise<void> {
  await waitFor(
    () => held(r),
    (h) => JSON.stringify(h) === JSON.stringify(NOTHING),
    { what: 'every slot, request and buffer back', timeoutMs: 15_000 },
  );
}

/** Waits until `n` requests are in flight at the gateway. */
const inFlight = (r: Rig, n: number) =>
  waitFor(
    () => held(r),
    (h) => h.inFlight === n,
    { what: `${n} requests in flight` },
  );

/**
 * A stream whose errors the test reads from its close (a reset is what it is about), its response
 * read and dropped (node's client closes a stream only once its response is read).
 */
function open(
  session: ClientHttp2Session,
  headers: Record<string, string>,
  endStream = true,
): ClientHttp2Stream {
  const s = session.request(headers, { endStream });
  s.on('error', () => {});
  s.resume();
  return s;
}

/** Resolves when the stream has closed, however (events.once would reject on its 'error'). */
const closed = (s: ClientHttp2Stream): Promise<void> =>
  new Promise((resolve) => (s.closed ? resolve() : s.once('close', () => resolve())));

/** The connection still serves: a stream slot is free and the gateway answers on it. */
async function stillServes(session: ClientHttp2Session): Promise<void> {
  const reply = await h2Request(session, { ':path': '/echo', 'x-forwarded-for': '198.51.100.250' });
  expect(reply.status).toBe(200);
}

describe('HTTP/2 streams the client resets', () => {
  test('reset mid-request-body, many streams at once: slots, upstream requests and stream slots come back', async ({
    h2,
  }) => {
    const session = await h2.session();
    const streams = [1, 2, 3, 4].map((i) => {
      const s = open(
        session,
        {
          ':method': 'POST',
          ':path': '/echo',
          'content-length': '1000',
          'x-forwarded-for': `198.51.100.${i}`,
        },
        false,
      );
      s.write('x'.repeat(100)); // a tenth of the body
      return s;
    });
    await inFlight(h2, 4);
    for (const s of streams) s.close(constants.NGHTTP2_CANCEL);
    await Promise.all(streams.map(closed));
    await allReleased(h2);
    expect(h2.upstream.seen.filter((s) => s.body.length === 100)).toEqual([]); // nothing half-sent upstream
    await stillServes(session);
    session.close();
  });

  test('reset mid-response (the upstream still answering, or not yet): the upstream requests are cancelled', async ({
    h2,
  }) => {
    const session = await h2.session();
    const abortedBefore = h2.upstream.aborted;
    const hung = [1, 2].map((i) =>
      open(session, { ':path': '/hang', 'x-forwarded-for': `198.51.100.1${i}` }),
    );
    const big = open(session, { ':path': '/big?chunks=256', 'x-forwarded-for': '198.51.100.13' });
    await once(big, 'data'); // the response has started: 4 MiB follow
    await waitFor(
      () => h2.upstream.hung,
      (n) => n >= 2,
      { what: 'two requests hanging upstream' },
    );
    for (const s of [...hung, big]) s.close(constants.NGHTTP2_CANCEL);
    await allReleased(h2);
    expect(h2.upstream.aborted).toBe(abortedBefore + 2);
    await stillServes(session);
    session.close();
  });

  test('a reset with an error code (not CANCEL) mid-body: no crash, all released', async ({ h2 }) => {
    const session = await h2.session();
    const s = open(
      session,
      { ':method': 'POST', ':path': '/echo', 'content-length': '50', 'x-forwarded-for': '198.51.100.20' },
      false,
    );
    s.write('x');
    await inFlight(h2, 1);
    s.close(constants.NGHTTP2_INTERNAL_ERROR);
    await allReleased(h2);
    await stillServes(session);
    session.close();
  });
});

describe('a body streamed to the upstream unread (a bound of 0)', () => {
  test('forwarded whole; reset mid-body, its upstream request ends', async ({ h2 }) => {
    const session = await h2.session();
    const whole = await h2Request(session, { ':method': 'POST', ':path': '/unbounded' }, 'y'.repeat(100_000));
    expect(whole.status).toBe(200);
    expect((JSON.parse(whole.text) as { body: string }).body).toBe('y'.repeat(100_000));
    const cut = open(
      session,
      {
        ':method': 'POST',
        ':path': '/unbounded/cut',
        'content-length': '100000',
        'x-forwarded-for': '198.51.100.90',
      },
      false,
    );
    cut.write('y'.repeat(1000));
    await waitFor(
      () => h2.upstream.openRequests,
      (n) => n === 1,
      { what: 'the request streaming upstream' },
    );
    cut.close(constants.NGHTTP2_CANCEL);
    await allReleased(h2);
    expect(h2.upstream.seen.filter((x) => x.url === '/unbounded/cut')).toEqual([]); // never taken for whole
    await stillServes(session);
    session.close();
  });
});

describe('HTTP/2 clients that hold the gateway', () => {
  test('a client that never reads a large response: the stream is cut at the write deadline, its upstream request ends', async ({
    h2,
  }) => {
    // A window of 16 KiB per stream, never opened again: the response stops at it.
    const session = await h2.session();
    const s = session.request({ ':path': '/big?chunks=256', 'x-forwarded-for': '198.51.100.30' });
    s.on('error', () => {});
    s.pause(); // never read: node sends no WINDOW_UPDATE for bytes not read
    const [headers] = (await once(s, 'response')) as [Record<string, unknown>];
    expect(headers[':status']).toBe(200);
    await closed(s);
    expect(s.rstCode).not.toBe(constants.NGHTTP2_NO_ERROR); // cut, never taken for a whole response
    await allReleased(h2);
    await stillServes(session);
    session.close();
  });

  test('headers but never the body: 408 at the body deadline, for every stream; the stream slots come back', async ({
    h2,
  }) => {
    const session = await h2.session();
    const streams = [1, 2, 3].map((i) =>
      open(
        session,
        {
          ':method': 'POST',
          ':path': '/echo',
          'content-length': '20',
          'x-forwarded-for': `198.51.100.4${i}`,
        },
        false,
      ),
    );
    const statuses = await Promise.all(
      streams.map(async (s) =>
        Number(((await once(s, 'response')) as [Record<string, unknown>])[0][':status']),
      ),
    );
    expect(statuses).toEqual([408, 408, 408]);
    await Promise.all(streams.map(closed)); // the gateway ended them: the client did not reset them
    await allReleased(h2);
    expect(h2.upstream.seen.filter((s) => s.headers['x-forwarded-for']?.includes('198.51.100.4'))).toEqual(
      [],
    );
    await stillServes(session);
    session.close();
  });

  test('a body trickled a byte at a time: 408 at the body deadline (a deadline for the whole body, not per byte)', async ({
    h2,
  }) => {
    const session = await h2.session();
    const s = open(
      session,
      { ':method': 'POST', ':path': '/echo', 'content-length': '1000', 'x-forwarded-for': '198.51.100.50' },
      false,
    );
    const trickle = setInterval(() => s.writable && s.write('x'), 50);
    try {
      const [headers] = (await once(s, 'response')) as [Record<string, unknown>];
      expect(headers[':status']).toBe(408);
    } finally {
      clearInterval(trickle);
    }
    await closed(s); // by the gateway: the client did not reset it
    await allReleased(h2);
    await stillServes(session);
    session.close();
  });

  test('a body over the bound: 413 with a Content-Length (unread) and without one (read to the bound)', async ({
    h2,
  }) => {
    const session = await h2.session();
    const declared = open(
      session,
      {
        ':method': 'POST',
        ':path': '/small',
        'content-length': '100000',
        'x-forwarded-for': '198.51.100.60',
      },
      false,
    );
    declared.write('x'.repeat(1000)); // and the rest never
    const undeclared = open(
      session,
      { ':method': 'POST', ':path': '/small', 'x-forwarded-for': '198.51.100.61' },
      false,
    );
    undeclared.write('x'.repeat(11));
    const statusOf = async (s: ClientHttp2Stream) =>
      Number(((await once(s, 'response')) as [Record<string, unknown>])[0][':status']);
    expect(await Promise.all([statusOf(declared), statusOf(undeclared)])).toEqual([413, 413]);
    await Promise.all([declared, undeclared].map(closed)); // by the gateway: the client did not reset them
    await allReleased(h2);
    // The bound itself passes, with or without a Content-Length.
    const within = await h2Request(session, { ':method': 'POST', ':path': '/small' }, 'x'.repeat(10));
    expect(within.status).toBe(200);
    expect(JSON.parse(within.text)).toMatchObject({ body: 'x'.repeat(10) });
    session.close();
  });
});

describe('floods and cut connections', () => {
  test('a raw client opening 5× maxConcurrentStreams streams in one write: none past the bound is served, none leaks', async ({
    h2,
  }) => {
    const raw = await RawH2Client.open(portOf(h2), h2.cert.pem);
    const ids = raw.openStreams(MAX_STREAMS * 5, 'GET', '/hang', { 'x-forwarded-for': '198.51.100.70' });
    // Node cuts a connection that opens streams past its bound (no GOAWAY: the session fails);
    // the streams within it, four in flight and four refused (429, the per-IP cap), go with it.
    await waitFor(
      () => raw.socket.destroyed,
      (gone) => gone,
      { what: 'the flooding connection closed' },
    );
    const answered = ids.filter((id) => raw.on(id).some((f) => f.type === FRAME.HEADERS));
    expect(answered.every((id) => id < MAX_STREAMS * 2)).toBe(true); // ids 1, 3, … 15: the first eight
    await allReleased(h2);
    // Others are served.
    const other = await h2.session();
    await stillServes(other);
    other.close();
  });

  test('the session destroyed mid-flight (the socket closed) with streams open in every state: all slots freed', async ({
    h2,
  }) => {
    // The client's own TLS socket under node's HTTP/2 client, so the test can cut it.
    let socket: TLSSocket | undefined;
    const session = connect(h2.gateway.url(), {
      createConnection: () =>
        (socket = tlsConnect({
          host: '127.0.0.1',
          port: portOf(h2),
          ca: h2.cert.pem,
          ALPNProtocols: ['h2'],
        })),
    });
    session.on('error', () => {});
    await once(session, 'remoteSettings');
    const abortedBefore = h2.upstream.aborted;
    for (const i of [1, 2]) open(session, { ':path': '/hang', 'x-forwarded-for': `198.51.100.8${i}` });
    const midBody = open(
      session,
      { ':method': 'POST', ':path': '/echo', 'content-length': '100', 'x-forwarded-for': '198.51.100.83' },
      false,
    );
    midBody.write('x');
    const big = open(session, { ':path': '/big?chunks=256', 'x-forwarded-for': '198.51.100.84' });
    big.pause();
    await once(big, 'response');
    await inFlight(h2, 4);
    socket!.destroy();
    await allReleased(h2);
    expect(h2.upstream.aborted).toBe(abortedBefore + 2);
  });
});

describe('the drain', () => {
  test('GOAWAY to HTTP/2 clients with streams in flight: those finish, new ones are refused, all is released', async () => {
    const r = await rig('10s');
    const session = await r.session();
    const goaway = once(session, 'goaway');
    const slow = [1, 2].map(() => h2Request(session, { ':path': '/slow?ms=1500' }));
    await inFlight(r, 2);
    const closing = r.gateway.close();
    const [code, lastStreamId] = (await goaway) as [number, number];
    expect(code).toBe(constants.NGHTTP2_NO_ERROR);
    expect(lastStreamId).toBe(3); // streams 1 and 3, the two in flight
    const replies = await Promise.all(slow);
    expect(replies.map((x) => x.status)).toEqual([200, 200]);
    // A stream opened after the GOAWAY is not served.
    await expect(h2Request(session, { ':path': '/echo' })).rejects.toThrow();
    await closing;
    expect(r.gateway.admission.requestsPerIp.total).toBe(0);
    expect(r.upstream.openRequests).toBe(0);
    expect(r.gateway.responseBuffers.held).toBe(0);
    await r.upstream.close();
  });
});
