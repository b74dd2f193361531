// A property over real sockets (issue 18, finding 1): whatever a client does — pipelining on
// HTTP/1.1, opening and resetting HTTP/2 streams, dropping the connection at any point — once it is
// gone the gateway holds no in-flight slot and the upstream no request.
import { once } from 'node:events';
import { connect as h2Connect, constants } from 'node:http2';
import { connect } from 'node:net';
import fc from 'fast-check';
import { expect } from 'vitest';
import { plainAndTlsListeners } from '../helpers/certificates.js';
import { test as base } from '../helpers/fixtures.js';
import { requestsInFlight } from '../helpers/prometheus.js';
import { allReleased } from '../helpers/released.js';
import { sleep } from '../helpers/wait.js';

const { ca, yaml: listeners } = plainAndTlsListeners('tollgate-fuzz-');
const config = `${listeners}
admin: { host: 127.0.0.1, port: 0 }
requests: { maxInFlightPerIp: 1000 }
upstreams: { app: { url: '\${UPSTREAM_URL}' } }
routes: [{ name: all, paths: ['/*'], upstream: app }]
`;

const test = base.extend('gateway', { scope: 'file' }, async ({ upstream, gateways }) =>
  gateways.start(config, { UPSTREAM_URL: upstream.url }),
);

const path = fc.constantFrom('/hang', '/echo', '/big?chunks=64', '/slow?ms=30');
/** One client: its protocol, its requests, which of them (HTTP/2) it resets, and when it drops the connection. */
const client = fc.record({
  h2: fc.boolean(),
  paths: fc.array(path, { minLength: 1, maxLength: 12 }),
  resets: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
  resetAfterMs: fc.integer({ min: 0, max: 20 }),
  closeAfterMs: fc.integer({ min: 0, max: 60 }),
});
type Client = typeof client extends fc.Arbitrary<infer T> ? T : never;

async function http1(url: string, c: Client): Promise<void> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  await once(socket, 'connect');
  socket.write(c.paths.map((p) => `GET ${p} HTTP/1.1\r\nHost: app\r\n\r\n`).join(''));
  await sleep(c.closeAfterMs);
  socket.destroy();
}

async function http2(url: string, c: Client): Promise<void> {
  const session = h2Connect(url, { ca });
  session.on('error', () => {});
  await once(session, 'remoteSettings');
  const streams = c.paths.map((p) => {
    const stream = session.request({ ':path': p }, { endStream: true });
    stream.on('error', () => {});
    stream.resume();
    return stream;
  });
  await sleep(c.resetAfterMs);
  streams.forEach((s, i) => c.resets[i] && s.close(constants.NGHTTP2_CANCEL));
  await sleep(c.closeAfterMs);
  session.destroy();
}

test('open, pipeline, reset and close at random points: the gauges return to zero, the upstream holds nothing', async ({
  gateway,
  upstream,
}) => {
  await fc.assert(
    fc.asyncProperty(fc.array(client, { minLength: 1, maxLength: 4 }), async (clients) => {
      await Promise.all(
        clients.map((c) => (c.h2 ? http2(gateway.url('tls'), c) : http1(gateway.url('plain'), c))),
      );
      await allReleased(gateway.adminUrl!, upstream, 30_000);
    }),
    { numRuns: 20 },
  );
  expect(await requestsInFlight(gateway.adminUrl!)).toBe(0);
}, 600_000);
