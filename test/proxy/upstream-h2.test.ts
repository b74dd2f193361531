// upstreams.<name>.allowH2: an https upstream that speaks only HTTP/2 is reached with it, and
// refused without it (upstreams stay HTTP/1.1 by default). A real process, so the test's CA is
// trusted through NODE_EXTRA_CA_CERTS as a deployment would.
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { selfSigned } from '../helpers/certificates.js';
import { startGatewayProcess, type CliProcess } from '../helpers/cli.js';
import { send } from '../helpers/gateway.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-upstream-h2-'));
let upstream: Http2SecureServer;
let gateway: CliProcess;

beforeAll(async () => {
  const cert = selfSigned(dir, 'upstream');
  upstream = createSecureServer(
    { cert: await readFile(cert.cert), key: await readFile(cert.key) }, // HTTP/2 only: no allowHTTP1
    (req, res) => res.end(JSON.stringify({ httpVersion: req.httpVersion, path: req.url })),
  );
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  const url = `https://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const config = join(dir, 'gateway.yaml');
  writeFileSync(
    config,
    `listeners: [{ host: 127.0.0.1, port: 0 }]
upstreams:
  h2: { url: '${url}', allowH2: true }
  h1: { url: '${url}' }
routes:
  - { name: h2, paths: ['/h2/*'], upstream: h2 }
  - { name: h1, paths: ['/h1/*'], upstream: h1 }
`,
  );
  gateway = await startGatewayProcess(config, { env: { NODE_EXTRA_CA_CERTS: cert.cert } });
});
afterAll(async () => {
  await gateway?.stop();
  upstream?.close();
});

test('allowH2: the request reaches an HTTP/2-only upstream in HTTP/2', async () => {
  const reply = await send(`${gateway.url}/h2/x`);
  expect(reply.status).toBe(200);
  expect(reply.json()).toEqual({ httpVersion: '2.0', path: '/h2/x' });
});

test('without allowH2 the upstream is spoken to in HTTP/1.1: an HTTP/2-only one is unreachable (502)', async () => {
  const reply = await send(`${gateway.url}/h1/x`);
  expect(reply.status).toBe(502);
  expect(reply.text).toBe(
    '{"error":{"code":"bad_gateway","message":"The upstream service is unavailable."}}',
  );
});
