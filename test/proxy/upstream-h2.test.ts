// upstreams.<name>.allowH2: an https upstream that speaks only HTTP/2 is reached with it, and
// refused without it (upstreams stay HTTP/1.1 by default). A real process, so the test's CA is
// trusted through NODE_EXTRA_CA_CERTS as a deployment would.
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createSecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test as base } from 'vitest';
import { selfSigned } from '../helpers/certificates.js';
import { startGatewayProcess } from '../helpers/cli.js';
import { send } from '../helpers/gateway.js';

const dir = mkdtempSync(join(tmpdir(), 'tollgate-upstream-h2-'));

/** `upstream`: an HTTP/2-only https server, its certificate; `gateway`: `tollgate start` before it, trusting it. */
const test = base
  .extend('upstream', { scope: 'file' }, async ({}, { onCleanup }) => {
    const cert = selfSigned(dir, 'upstream');
    const server = createSecureServer(
      { cert: await readFile(cert.cert), key: await readFile(cert.key) }, // HTTP/2 only: no allowHTTP1
      (req, res) => res.end(JSON.stringify({ httpVersion: req.httpVersion, path: req.url })),
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    onCleanup(() => {
      server.close();
    });
    return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, cert: cert.cert };
  })
  .extend('gateway', { scope: 'file' }, async ({ upstream }, { onCleanup }) => {
    const config = join(dir, 'gateway.yaml');
    writeFileSync(
      config,
      `listeners: [{ host: 127.0.0.1, port: 0 }]
upstreams:
  h2: { url: '${upstream.url}', allowH2: true }
  h1: { url: '${upstream.url}' }
routes:
  - { name: h2, paths: ['/h2/*'], upstream: h2 }
  - { name: h1, paths: ['/h1/*'], upstream: h1 }
`,
    );
    const gateway = await startGatewayProcess(config, { env: { NODE_EXTRA_CA_CERTS: upstream.cert } });
    onCleanup(async () => {
      await gateway.stop();
    });
    return gateway;
  });

test('allowH2: the request reaches an HTTP/2-only upstream in HTTP/2', async ({ gateway }) => {
  const reply = await send(`${gateway.url}/h2/x`);
  expect(reply.status).toBe(200);
  expect(reply.json()).toEqual({ httpVersion: '2.0', path: '/h2/x' });
});

test('without allowH2 the upstream is spoken to in HTTP/1.1: an HTTP/2-only one is unreachable (502)', async ({
  gateway,
}) => {
  const reply = await send(`${gateway.url}/h1/x`);
  expect(reply.status).toBe(502);
  expect(reply.text).toBe(
    '{"error":{"code":"bad_gateway","message":"The upstream service is unavailable."}}',
  );
});
