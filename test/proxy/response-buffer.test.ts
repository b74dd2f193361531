// A client that reads slower than its upstream answers must not keep an upstream connection (issue
// 18, finding 3): a response that fits its share of requests.responseBuffer is taken from the
// upstream whole and waits on the client at the gateway. The upstream here has one connection, and
// the write deadline is long, so only the buffer can free that connection for others.
import { once } from 'node:events';
import { connect as h2Connect } from 'node:http2';
import { expect } from 'vitest';
import { plainAndTlsListeners } from '../helpers/certificates.js';
import { test as base } from '../helpers/fixtures.js';
import { h2Request, h2Session } from '../helpers/h2-client.js';
import { allReleased } from '../helpers/released.js';
import { waitFor } from '../helpers/wait.js';

const { ca, yaml: listeners } = plainAndTlsListeners('tollgate-buffer-');
const config = `${listeners}
admin: { host: 127.0.0.1, port: 0 }
requests: { responseTimeout: 10m, responseBuffer: { perResponse: 256kb, total: 1mb } }
upstreams: { app: { url: '\${UPSTREAM_URL}', connections: 1 } }
routes: [{ name: all, paths: ['/*'], upstream: app }]
`;

const test = base.extend('gateway', { scope: 'file' }, async ({ upstream, gateways }) =>
  gateways.start(config, { UPSTREAM_URL: upstream.url }),
);

/** An HTTP/2 client whose streams have a receive window of 0: it takes headers, never a body byte. */
async function parkedReader(url: string) {
  const session = h2Connect(url, { ca, settings: { initialWindowSize: 0 } });
  session.on('error', () => {});
  await once(session, 'remoteSettings');
  return session;
}

test('a parked reader of a response within its share frees the one upstream connection at once', async ({
  gateway,
  upstream,
}) => {
  const session = await parkedReader(gateway.url('tls'));
  const seen = upstream.seen.length;
  // 4 × 16 KB: more than the stream's window (0) and its write buffer, within the 256 KB share.
  const parked = session.request({ ':path': '/big?chunks=4' }, { endStream: true });
  parked.on('error', () => {});
  await once(parked, 'response');
  await waitFor(
    () => upstream.seen.length === seen + 1 && upstream.openRequests,
    (open) => open === 0,
    { what: 'the upstream done with the parked response' },
  );
  // The one connection serves another client while the parked client still has read nothing.
  const other = await h2Session(gateway.url('tls'), ca);
  expect((await h2Request(other, { ':path': '/echo' })).status).toBe(200);
  expect(parked.closed).toBe(false);
  other.close();
  session.destroy();
  await allReleased(gateway.adminUrl!, upstream);
});

test('a response past its share waits on its client, holding the upstream; the budget comes back', async ({
  gateway,
  upstream,
}) => {
  const session = await parkedReader(gateway.url('tls'));
  // 1024 × 16 KB = 16 MB: past the 256 KB share and what the kernel's buffers hold, so the upstream
  // must wait on this client.
  const parked = session.request({ ':path': '/big?chunks=1024' }, { endStream: true });
  parked.on('error', () => {});
  await once(parked, 'response');
  await waitFor(
    () => upstream.openRequests,
    (open) => open === 1,
    { what: 'the large response held upstream' },
  );
  session.destroy(); // the client leaves: the upstream request is cancelled, the share returned
  await allReleased(gateway.adminUrl!, upstream);
  // The whole budget is back: four parked small responses fit it again, one after another.
  const sessions = [];
  for (let i = 0; i < 4; i++) {
    const s = await parkedReader(gateway.url('tls'));
    sessions.push(s);
    const r = s.request({ ':path': '/big?chunks=4' }, { endStream: true });
    r.on('error', () => {});
    await once(r, 'response');
    await waitFor(
      () => upstream.openRequests,
      (open) => open === 0,
      { what: `parked response ${i + 1} taken whole from the upstream` },
    );
  }
  for (const s of sessions) s.destroy();
  await allReleased(gateway.adminUrl!, upstream);
});
