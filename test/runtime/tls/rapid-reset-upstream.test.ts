// Rapid reset never reaches the upstream (issue 18, finding 4): streams the client cancels as it
// opens them are never forwarded, so the upstream accepts no connection and no request for them,
// and the attacker is told why it is cut off: the GOAWAY (ENHANCE_YOUR_CALM) reaches it before
// the socket closes.
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { constants } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { selfSigned } from '../../helpers/certificates.js';
import { test as base } from '../../helpers/fixtures.js';
import { h2Request, h2Session } from '../../helpers/h2-client.js';

const run = promisify(execFile);
const server = selfSigned(mkdtempSync(join(tmpdir(), 'tollgate-rapid-')), 'server');
const listener = { name: 'tls', host: '127.0.0.1', port: 0, tls: { cert: server.cert, key: server.key } };
const config = `listeners:
  - ${JSON.stringify(listener)}
upstreams: { app: { url: '\${UPSTREAM_URL}', connections: 8, connectRate: 2 } }
routes: [{ name: all, paths: ['/*'], upstream: app }]
`;

const test = base.extend('gateway', { scope: 'file' }, async ({ upstream, gateways }) =>
  gateways.start(config, { UPSTREAM_URL: upstream.url }),
);

interface Attack {
  readonly opened: number;
  readonly closed: boolean;
  readonly goaway: number | null;
}

test('4 clients opening and resetting streams: no upstream connection or request, and each sees the GOAWAY', async ({
  gateway,
  upstream,
}) => {
  const client = fileURLToPath(new URL('../../helpers/rapid-reset-client.mjs', import.meta.url));
  const connectionsBefore = upstream.connectionsAccepted;
  const started = performance.now();
  const attacks = await Promise.all(
    Array.from({ length: 4 }, async () => {
      const { stdout } = await run(process.execPath, [client, gateway.url(), server.cert, '5000']);
      return JSON.parse(stdout) as Attack;
    }),
  );
  for (const attack of attacks) {
    // The default budget is 200 resets in a burst: each client got past it before being cut off.
    expect(attack.opened).toBeGreaterThan(200);
    expect(attack.closed).toBe(true);
    expect(attack.goaway).toBe(constants.NGHTTP2_ENHANCE_YOUR_CALM);
  }
  expect(upstream.hung).toBe(0);
  // Before: one upstream connection per cancelled stream the gateway read (about 1,000 here).
  // A stream whose reset arrives in a later read than its HEADERS is dispatched (and its
  // connection dropped when the reset comes); those connects are paced: the pool's 8 at once,
  // then 2 a second. An upper bound: the slower the run, the looser it is.
  const seconds = (performance.now() - started) / 1000;
  expect(upstream.connectionsAccepted - connectionsBefore).toBeLessThanOrEqual(8 + Math.ceil(2 * seconds));

  // Others are served.
  const other = await h2Session(gateway.url(), server.pem);
  expect((await h2Request(other, { ':path': '/echo' })).status).toBe(200);
  other.close();
}, 120_000);
