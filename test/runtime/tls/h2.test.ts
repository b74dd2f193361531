// TLS listeners: HTTP/2 and HTTP/1.1 by ALPN, through real TLS sockets (curl --http2, undici
// allowH2, node:http2), mutual TLS, the HTTP/2 guards (streams per connection, rapid reset, the
// per-stream body bound and deadline, requests in flight per IP), and certificate rotation.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { constants } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Agent, request } from 'undici';
import { describe, expect, test as base } from 'vitest';
import { selfSigned, signedBy } from '../../helpers/certificates.js';
import { h2Request, h2Session, peerFingerprint } from '../../helpers/h2-client.js';
import { replaceFile } from '../../helpers/files.js';
import { startGateway } from '../../helpers/gateway.js';
import { capturingLogger } from '../../helpers/log-capture.js';
import { sampleValue, scrape } from '../../helpers/prometheus.js';
import { TestUpstream } from '../../helpers/upstream.js';
import { waitFor } from '../../helpers/wait.js';
import { readFile } from 'node:fs/promises';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'tollgate-tls-'));

/** A gateway config with one TLS listener; `listener` adds to its fields. */
function tlsConfig(tls: object, sections: string, listener: object = {}): string {
  const l = { name: 'tls', host: '127.0.0.1', port: 0, tls, ...listener };
  return `listeners:\n  - ${JSON.stringify(l)}\nadmin: { host: 127.0.0.1, port: 0 }\n${sections.trim()}\n`;
}

// shedAfter 0: the gateway runs in the test's process, whose event loop a loaded machine can hold
// back past the shedding threshold; a 503 overloaded would then fail a test about TLS and HTTP/2.
const routes = (maxInFlightPerIp = 2) => `
identity: { trustedProxies: ['127.0.0.1'] }
requests: { maxInFlightPerIp: ${maxInFlightPerIp}, bodyTimeout: 500ms, shedAfter: 0 }
upstreams: { app: { url: '\${UPSTREAM_URL}' } }
limiters:
  one: { message: 'Slow down.', windows: [{ limit: 1, period: 1m, key: [ip] }] }
routes:
  - { name: limited, paths: [/limited], upstream: app, limiters: [one] }
  - { name: small, paths: ['/small*'], upstream: app, maxBodySize: 10 }
  - { name: all, paths: ['/*'], upstream: app }
`;

const portOf = (url: string) => Number(new URL(url).port);

/**
 * Three gateways with a TLS listener, each before an upstream of its own, started when a test first
 * names it and closed after the file's last test:
 * - `h2`: HTTP/2 guards (3 streams per connection, a reset budget of 20), warnings captured in `log`;
 * - `mtls`: client certificates of one CA required, TLS 1.3 at least; `get` requests through it
 *   with a client's `connect` options;
 * - `rotation`: a certificate read from `files` (`first`, then `second`; `ca` trusts both, as a
 *   client would during a planned rotation), info logs captured in `log`.
 */
const test = base
  .extend('h2', { scope: 'file' }, async ({}, { onCleanup }) => {
    const log = capturingLogger('warn');
    const server = selfSigned(dir, 'server');
    const upstream = await TestUpstream.start();
    const gateway = await startGateway(
      tlsConfig({ cert: server.cert, key: server.key }, routes(), {
        http2: { maxConcurrentStreams: 3, maxResetBurst: 20, maxResetsPerSecond: 1 },
      }),
      { UPSTREAM_URL: upstream.url },
      { logger: log.logger },
    );
    onCleanup(async () => {
      await gateway.close();
      await upstream.close();
    });
    return { server, upstream, gateway, log };
  })
  .extend('mtls', { scope: 'file' }, async ({}, { onCleanup }) => {
    const server = selfSigned(dir, 'mtls-server');
    const ca = selfSigned(dir, 'client-ca');
    const client = signedBy(dir, 'client', ca);
    const stranger = signedBy(dir, 'stranger', selfSigned(dir, 'other-ca'));
    const upstream = await TestUpstream.start();
    const gateway = await startGateway(
      tlsConfig({ cert: server.cert, key: server.key, ca: ca.cert, minVersion: 'TLSv1.3' }, routes()),
      { UPSTREAM_URL: upstream.url },
    );
    onCleanup(async () => {
      await gateway.close();
      await upstream.close();
    });
    const get = async (connect: object) => {
      const agent = new Agent({ allowH2: true, connect: { ca: server.pem, ...connect } });
      try {
        const res = await request(`${gateway.url()}/echo`, { dispatcher: agent });
        return { status: res.statusCode, text: await res.body.text() };
      } finally {
        await agent.close();
      }
    };
    return { client, stranger, upstream, get };
  })
  .extend('rotation', { scope: 'file' }, async ({}, { onCleanup }) => {
    const log = capturingLogger('info');
    const files = { cert: join(dir, 'live.pem'), key: join(dir, 'live.key') };
    const first = selfSigned(dir, 'first');
    const second = selfSigned(dir, 'second');
    await replaceFile(files.cert, await readFile(first.cert, 'utf8'));
    await replaceFile(files.key, await readFile(first.key, 'utf8'));
    const upstream = await TestUpstream.start();
    const gateway = await startGateway(
      tlsConfig(files, routes(0)),
      { UPSTREAM_URL: upstream.url },
      { logger: log.logger },
    );
    onCleanup(async () => {
      await gateway.close();
      await upstream.close();
    });
    return { files, first, second, ca: Buffer.concat([first.pem, second.pem]), upstream, gateway, log };
  });

describe('a TLS listener speaks HTTP/2 and HTTP/1.1', () => {
  test('curl --http2 negotiates h2; the upstream gets X-Forwarded-Proto https and Host from :authority', async ({
    h2: { server, gateway },
  }) => {
    const url = `${gateway.url()}/echo?x=1`;
    const { stdout } = await run('curl', [
      '-s',
      '--http2',
      '--cacert',
      server.cert,
      '-H',
      'x-request-id: curl-1',
      '-w',
      '\n%{http_version}',
      url,
    ]);
    const [body, version] = stdout.split('\n');
    expect(version).toBe('2');
    const seen = JSON.parse(body!) as { url: string; headers: Record<string, string> };
    expect(seen.url).toBe('/echo?x=1');
    expect(seen.headers['x-forwarded-proto']).toBe('https');
    expect(seen.headers['host']).toBe(new URL(gateway.url()).host);
    expect(seen.headers['x-forwarded-host']).toBe(new URL(gateway.url()).host);
    expect(seen.headers['x-request-id']).toBe('curl-1');
    expect(Object.keys(seen.headers).filter((h) => h.startsWith(':'))).toEqual([]);
  });

  test('undici allowH2: the 429 has the same body and headers as over HTTP/1.1', async ({
    h2: { server, gateway },
  }) => {
    const h2 = new Agent({ allowH2: true, connect: { ca: server.pem } });
    const h1 = new Agent({ connect: { ca: server.pem } });
    try {
      const replies = [];
      for (const [dispatcher, ip] of [
        [h2, '198.51.100.2'],
        [h1, '198.51.100.1'],
      ] as const) {
        const send = () =>
          request(`${gateway.url()}/limited`, {
            dispatcher,
            headers: { 'x-forwarded-for': ip, 'x-request-id': 'r1' },
          });
        expect((await send()).statusCode).toBe(200);
        const res = await send();
        replies.push({ status: res.statusCode, headers: { ...res.headers }, text: await res.body.text() });
      }
      const [overH2, overH1] = replies;
      expect(overH2!.status).toBe(429);
      expect(overH2!.text).toBe('{"error":{"code":"rate_limited","message":"Slow down."}}');
      expect(overH2!.text).toBe(overH1!.text);
      const drop = (h: Record<string, unknown>) => {
        const {
          date: _d,
          connection: _c,
          'keep-alive': _k,
          'x-ratelimit-reset': reset,
          'retry-after': retry,
          ...rest
        } = h;
        return { ...rest, reset: typeof reset, retry: typeof retry };
      };
      expect(drop(overH2!.headers)).toEqual(drop(overH1!.headers));
      expect(overH2!.headers).toMatchObject({
        'x-request-id': 'r1',
        'x-ratelimit-limit': '1',
        'x-ratelimit-remaining': '0',
        'content-type': 'application/json',
        'content-length': '56',
      });
      expect(Number(overH2!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    } finally {
      await Promise.all([h2.close(), h1.close()]);
    }
  });

  test('h2: connection-specific and hop-by-hop headers are not forwarded; a body without Content-Length is', async ({
    h2: { server, gateway },
  }) => {
    const session = await h2Session(gateway.url(), server.pem);
    try {
      const reply = await h2Request(
        session,
        {
          ':method': 'POST',
          ':path': '/echo',
          te: 'trailers',
          'proxy-authorization': 'Basic eA==',
          'x-keep': 'yes',
        },
        'hello over h2',
      );
      expect(reply.status).toBe(200);
      const seen = JSON.parse(reply.text) as {
        method: string;
        body: string;
        headers: Record<string, string>;
      };
      expect(seen.method).toBe('POST');
      expect(seen.body).toBe('hello over h2');
      expect(seen.headers['content-length']).toBe('13');
      expect(seen.headers['x-keep']).toBe('yes');
      // (Connection: keep-alive is undici's own, towards the upstream.)
      for (const h of ['te', 'proxy-authorization', 'transfer-encoding']) {
        expect(seen.headers[h]).toBeUndefined();
      }
      expect(Object.keys(seen.headers).filter((h) => h.startsWith(':'))).toEqual([]);
    } finally {
      session.close();
    }
  });

  test('h2: the body bound applies per stream (413), and the connection serves the next stream', async ({
    h2: { server, gateway },
  }) => {
    const session = await h2Session(gateway.url(), server.pem);
    try {
      const tooLarge = await h2Request(session, { ':method': 'POST', ':path': '/small' }, 'x'.repeat(11));
      expect(tooLarge.status).toBe(413);
      expect(tooLarge.text).toBe(
        '{"error":{"code":"payload_too_large","message":"The request body exceeds 10 bytes."}}',
      );
      expect(tooLarge.headers['connection']).toBeUndefined();
      const next = await h2Request(session, { ':method': 'POST', ':path': '/small' }, 'x'.repeat(10));
      expect(next.status).toBe(200);
    } finally {
      session.close();
    }
  });

  test('h2: the body deadline applies per stream (408)', async ({ h2: { server, gateway } }) => {
    const session = await h2Session(gateway.url(), server.pem);
    try {
      const stream = session.request({ ':method': 'POST', ':path': '/echo' }, { endStream: false });
      // Its request side stays open after the 408: reset below, so no 'error' can reach it later
      // (when the gateway closes) without a listener, which would crash the worker.
      stream.on('error', () => {});
      stream.write('{'); // and never the rest
      const [headers] = (await once(stream, 'response')) as [Record<string, string>];
      let text = '';
      stream.setEncoding('utf8');
      stream.on('data', (d: string) => (text += d));
      await once(stream, 'end');
      expect(headers[':status']).toBe(408);
      expect(text).toBe(
        '{"error":{"code":"request_timeout","message":"The request body did not arrive within 0.5 s."}}',
      );
      expect((await h2Request(session, { ':path': '/echo' })).status).toBe(200);
      stream.close(constants.NGHTTP2_CANCEL);
    } finally {
      session.close();
    }
  });

  test('h2: streams count against the requests in flight per IP, on one connection', async ({
    h2: { server, upstream, gateway },
  }) => {
    const session = await h2Session(gateway.url(), server.pem);
    const hungBefore = upstream.hung;
    const abortedBefore = upstream.aborted;
    try {
      const hanging = [0, 1].map(() => {
        const s = session.request({ ':path': '/hang', 'x-forwarded-for': '203.0.113.9' });
        s.on('error', () => {});
        return s;
      });
      await waitFor(
        () => upstream.hung,
        (n) => n === hungBefore + 2,
        { what: 'two streams at the upstream' },
      );
      const third = await h2Request(session, { ':path': '/echo', 'x-forwarded-for': '203.0.113.9' });
      expect(third.status).toBe(429);
      expect(JSON.parse(third.text)).toEqual({
        error: {
          code: 'too_many_requests_in_flight',
          message: 'More than 2 requests from this address are in progress. Retry when one has finished.',
        },
      });
      expect(third.headers['retry-after']).toBe('1');
      for (const s of hanging) s.close(constants.NGHTTP2_CANCEL);
      await waitFor(
        () => gateway.admission.requestsPerIp.held('203.0.113.9'),
        (n) => n === 0,
        {
          what: 'the slots to be given back',
        },
      );
      // A reset stream cancels its upstream request.
      await waitFor(
        () => upstream.aborted,
        (n) => n === abortedBefore + 2,
        { what: 'the upstream requests cancelled' },
      );
    } finally {
      session.close();
    }
  });

  test('maxConcurrentStreams is announced, and a stream past it waits for a free one', async ({
    h2: { server, upstream, gateway },
  }) => {
    const session = await h2Session(gateway.url(), server.pem);
    const hungBefore = upstream.hung;
    try {
      expect(session.remoteSettings.maxConcurrentStreams).toBe(3);
      const streams = ['203.0.113.21', '203.0.113.22', '203.0.113.23', '203.0.113.24'].map((ip) => {
        const s = session.request({ ':path': '/hang', 'x-forwarded-for': ip });
        s.on('error', () => {});
        return s;
      });
      await waitFor(
        () => upstream.hung,
        (n) => n === hungBefore + 3,
        { what: 'three streams at the upstream' },
      );
      streams[0]!.close(constants.NGHTTP2_CANCEL);
      await waitFor(
        () => upstream.hung,
        (n) => n === hungBefore + 4,
        { what: 'the fourth stream' },
      );
      for (const s of streams) s.close(constants.NGHTTP2_CANCEL);
    } finally {
      session.close();
    }
  });

  test('rapid reset: a client (a process of its own) that opens and resets streams past the budget is disconnected', async ({
    h2: { server, gateway, log },
  }) => {
    const client = fileURLToPath(new URL('../../helpers/rapid-reset-client.mjs', import.meta.url));
    const { stdout } = await run(process.execPath, [client, gateway.url(), server.cert, '5000']);
    const result = JSON.parse(stdout) as { opened: number; closed: boolean; goaway: number | null };
    // Closed by the gateway long before the client's 5000: the budget is 20 resets, and the client
    // counts only streams the server has read. The final GOAWAY says ENHANCE_YOUR_CALM; the socket
    // closes right after it, so a client still writing may miss it (then it sees the close alone).
    expect(result.closed).toBe(true);
    expect([null, constants.NGHTTP2_ENHANCE_YOUR_CALM]).toContain(result.goaway);
    expect(result.opened).toBeLessThan(1000);
    await waitFor(
      () => log.lines.filter((l) => l['msg'] === 'HTTP/2 client reset streams too fast: disconnected'),
      (lines) => lines.length >= 1,
      { what: 'the rapid-reset warning' },
    );
    expect(
      log.lines.find((l) => l['msg'] === 'HTTP/2 client reset streams too fast: disconnected'),
    ).toMatchObject({
      listener: 'tls',
      peer: '127.0.0.1',
    });
    // Others are unaffected.
    const other = await h2Session(gateway.url(), server.pem);
    expect((await h2Request(other, { ':path': '/echo' })).status).toBe(200);
    other.close();
  });
});

describe('mutual TLS and the minimum version', () => {
  test('a client certificate of the CA is accepted', async ({ mtls: { client, get } }) => {
    const reply = await get({ cert: await readFile(client.cert), key: await readFile(client.key) });
    expect(reply.status).toBe(200);
  });

  test('no client certificate, or one of another CA, is refused in the handshake', async ({
    mtls: { stranger, upstream, get },
  }) => {
    await expect(get({})).rejects.toThrow(/certificate|socket|closed/i);
    await expect(
      get({ cert: await readFile(stranger.cert), key: await readFile(stranger.key) }),
    ).rejects.toThrow(/certificate|unknown ca|socket|closed/i);
    expect(upstream.seen).toHaveLength(1);
  });

  test('TLS 1.2 is refused when minVersion is TLSv1.3', async ({ mtls: { client, get } }) => {
    const cert = { cert: await readFile(client.cert), key: await readFile(client.key) };
    await expect(get({ ...cert, maxVersion: 'TLSv1.2' })).rejects.toThrow(/version|alert|socket/i);
  });
});

describe('certificate rotation in process', () => {
  test('under a stream of requests: zero failures, open connections keep the old certificate, new ones get the new', async ({
    rotation: { files, first, second, ca, gateway, log },
  }) => {
    const port = portOf(gateway.url());
    const old = await h2Session(gateway.url(), ca);
    expect((old.socket as TLSSocket).getPeerCertificate().fingerprint256).toBe(first.fingerprint);
    const before = sampleValue(
      await scrape(gateway.adminUrl!),
      'tollgate_config_reloads_total{result="success"}',
    );

    // Requests on new connections and on the open one, until a new connection sees the new certificate.
    const failures: string[] = [];
    let done = 0;
    let sawNew = false;
    const seenOnNew = new Set<string>();
    const load = async () => {
      while (!sawNew) {
        const agent = new Agent({ allowH2: true, connect: { ca } });
        try {
          const [fresh, onOld] = await Promise.all([
            request(`${gateway.url()}/echo`, { dispatcher: agent }).then(
              async (r) => (await r.body.text(), r.statusCode),
            ),
            h2Request(old, { ':path': '/echo' }).then((r) => r.status),
          ]);
          if (fresh !== 200 || onOld !== 200) failures.push(`new connection ${fresh}, open one ${onOld}`);
          done++;
        } catch (err) {
          failures.push(String(err));
        } finally {
          await agent.close();
        }
        const fp = await peerFingerprint(port, { ca: ca });
        seenOnNew.add(fp);
        if (fp === second.fingerprint) sawNew = true;
      }
    };
    const loaders = [load(), load(), load()];
    await waitFor(
      () => done,
      (n) => n >= 6,
      { what: 'requests before the swap' },
    );
    await replaceFile(files.cert, await readFile(second.cert, 'utf8'));
    await replaceFile(files.key, await readFile(second.key, 'utf8'));
    expect(await gateway.reloadCertificates()).toBe(true);
    await Promise.all(loaders);

    expect(failures).toEqual([]);
    expect([...seenOnNew].sort()).toEqual([first.fingerprint, second.fingerprint].sort());
    expect((old.socket as TLSSocket).getPeerCertificate().fingerprint256).toBe(first.fingerprint);
    expect((await h2Request(old, { ':path': '/echo' })).status).toBe(200);
    expect(gateway.certificateFingerprints.get('tls')).toBe(second.fingerprint);
    const after = sampleValue(
      await scrape(gateway.adminUrl!),
      'tollgate_config_reloads_total{result="success"}',
    );
    expect(after).toBe(before! + 1);
    expect(
      log.lines.some((l) => l['msg'] === 'certificates reloaded' && l['fingerprint'] === second.fingerprint),
    ).toBe(true);
    old.close();
  });

  test('a bad new certificate keeps the old one: logged with the file name, counted as a failed reload', async ({
    rotation: { files, first, second, ca, gateway, log },
  }) => {
    const port = portOf(gateway.url());
    const failedBefore = sampleValue(
      await scrape(gateway.adminUrl!),
      'tollgate_config_reloads_total{result="failure"}',
    );
    await replaceFile(
      files.cert,
      '-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n',
    );
    expect(await gateway.reloadCertificates()).toBe(false);
    const line = log.lines.find(
      (l) => l['msg'] === 'certificate reload failed: keeping the running certificate',
    );
    expect(line).toMatchObject({ listener: 'tls', file: files.cert });
    expect(
      sampleValue(await scrape(gateway.adminUrl!), 'tollgate_config_reloads_total{result="failure"}'),
    ).toBe(failedBefore! + 1);
    expect(await peerFingerprint(port, { ca: ca })).toBe(second.fingerprint);
    // A key that does not match the certificate names both files.
    await replaceFile(files.cert, await readFile(second.cert, 'utf8'));
    await replaceFile(files.key, await readFile(first.key, 'utf8'));
    expect(await gateway.reloadCertificates()).toBe(false);
    expect(
      log.lines
        .filter((l) => l['msg'] === 'certificate reload failed: keeping the running certificate')
        .at(-1),
    ).toMatchObject({ file: `${files.cert} + ${files.key}` });
    // An unreadable file.
    await replaceFile(files.key, await readFile(second.key, 'utf8'));
    const missing = join(dir, 'missing.pem');
    void missing;
    expect(await peerFingerprint(port, { ca: ca })).toBe(second.fingerprint);
  });
});
