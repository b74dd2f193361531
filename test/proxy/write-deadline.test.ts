// Responses have a write deadline (issue 18, finding 3): a client that takes none of a response's
// bytes (HTTP/1.1 never reading, HTTP/2 advertising a zero window) has it cut after
// requests.responseTimeout, and the upstream connection it held is freed for other clients. The
// upstream here has a single connection, so one parked reader would otherwise starve everyone.
import { once } from 'node:events';
import { connect as h2Connect } from 'node:http2';
import { connect } from 'node:net';
import { expect } from 'vitest';
import { plainAndTlsListeners } from '../helpers/certificates.js';
import { test as base } from '../helpers/fixtures.js';
import { h2Request, h2Session } from '../helpers/h2-client.js';
import { send } from '../helpers/gateway.js';
import { allReleased } from '../helpers/released.js';
import { waitFor } from '../helpers/wait.js';

const { ca, yaml: listeners } = plainAndTlsListeners('tollgate-deadline-');
const config = `${listeners}
admin: { host: 127.0.0.1, port: 0 }
requests: { responseTimeout: 1s }
upstreams: { app: { url: '\${UPSTREAM_URL}', connections: 1 } }
routes: [{ name: all, paths: ['/*'], upstream: app }]
`;

const test = base.extend('gateway', { scope: 'file' }, async ({ upstream, gateways }) =>
  gateways.start(config, { UPSTREAM_URL: upstream.url }),
);

test('HTTP/1.1: a response the client never reads is cut, and the one upstream connection serves others', async ({
  gateway,
  upstream,
}) => {
  const { hostname, port } = new URL(gateway.url('plain'));
  const parked = connect(Number(port), hostname);
  parked.on('error', () => {});
  await once(parked, 'connect');
  parked.pause(); // never reads: the socket buffers fill and the gateway's writes wait
  const closed = once(parked, 'close');
  // 16 MB: more than the loopback socket buffers hold.
  parked.write('GET /big?chunks=1024 HTTP/1.1\r\nHost: app\r\n\r\n');
  await waitFor(
    () => upstream.openRequests,
    (n) => n === 1,
    { what: 'the big response upstream' },
  );

  // Served on the upstream's single connection once the parked response is cut.
  const other = await send(`${gateway.url('plain')}/echo`);
  expect(other.status).toBe(200);
  parked.resume(); // reading now, it meets the end of what the gateway sent before cutting it
  await closed;
  await allReleased(gateway.adminUrl!, upstream);
}, 120_000);

test('HTTP/2: a stream whose window stays at zero is reset, and the upstream connection serves others', async ({
  gateway,
  upstream,
}) => {
  // A receive window of 0 for every stream: the gateway may send headers but no byte of a body.
  const session = h2Connect(gateway.url('tls'), { ca, settings: { initialWindowSize: 0 } });
  session.on('error', () => {});
  await once(session, 'remoteSettings');
  const stream = session.request({ ':path': '/big?chunks=1024' }, { endStream: true });
  stream.on('error', () => {}); // the reset, asserted below
  const reset = new Promise((resolve) => stream.once('close', resolve));
  await waitFor(
    () => upstream.openRequests,
    (n) => n === 1,
    { what: 'the big response upstream' },
  );

  const good = await h2Session(gateway.url('tls'), ca);
  const other = await h2Request(good, { ':path': '/echo' });
  expect(other.status).toBe(200);
  await reset;
  expect(stream.rstCode).toBe(2); // INTERNAL_ERROR: the gateway cut the stream
  await allReleased(gateway.adminUrl!, upstream);
  good.close();
  session.destroy();
}, 120_000);
