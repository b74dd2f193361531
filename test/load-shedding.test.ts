// Load shedding: a request that arrives while the gateway's event loop runs later than
// requests.shedAfter is answered 503 overloaded with Retry-After, before it is counted or forwarded.
import { once } from 'node:events';
import { connect } from 'node:net';
import { expect } from 'vitest';
import { gatewayTest } from './helpers/fixtures.js';
import { gatewayYaml, send } from './helpers/gateway.js';
import { sampleValue, scrape } from './helpers/prometheus.js';
import { waitFor } from './helpers/wait.js';

const SHED_AFTER_MS = 100;

const test = gatewayTest({
  config: gatewayYaml(
    `
requests: { shedAfter: ${SHED_AFTER_MS}ms }
store:
  redis: { url: '\${REDIS_URL}', commandTimeout: 2s }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  per-ip: { windows: [{ limit: 10, period: 1m, key: [ip] }] }
routes:
  - { name: app, paths: ['/*'], upstream: app, limiters: [per-ip] }
`,
    { admin: true },
  ),
});

/** Holds this process's event loop (the gateway's: it runs in-process) synchronously for `ms`. */
function blockLoop(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    /* busy */
  }
}

test('a request that waited through a slow turn gets 503 overloaded, uncounted; the next one passes', async ({
  gateway,
  upstream,
}) => {
  const base = gateway.url();
  const warm = await send(`${base}/warm`); // starts the lag sampler
  expect(warm.headers['x-ratelimit-remaining']).toBe('9');

  // One keep-alive connection the gateway has already accepted and reads: the request below is
  // then read in the first poll phase after the block, right after the lag is sampled.
  const socket = connect(Number(new URL(base).port), '127.0.0.1');
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.write('GET /on-this-connection HTTP/1.1\r\nHost: x\r\n\r\n');
  await waitFor(
    () => Buffer.concat(chunks).toString(),
    (text) => /^HTTP\/1\.1 200 /.test(text) && text.endsWith('}'),
    { what: 'the first answer on the connection' },
  );
  chunks.length = 0;
  const seen = upstream.seen.length;
  const body = '{"big":"body the gateway never reads"}';
  socket.write(
    `POST /shed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
  );
  blockLoop(4 * SHED_AFTER_MS); // the request waits in the socket while the loop is held
  await once(socket, 'end');
  const text = Buffer.concat(chunks).toString();
  const [head, payload] = text.split('\r\n\r\n');
  expect(head!.split('\r\n')[0]).toBe('HTTP/1.1 503 Service Unavailable');
  expect(head).toMatch(/\r\nretry-after: 1\r\n/i);
  expect(head).not.toMatch(/x-ratelimit/i);
  expect(JSON.parse(payload!)).toEqual({
    error: { code: 'overloaded', message: 'The gateway is overloaded. Please retry shortly.' },
  });
  expect(upstream.seen.length).toBe(seen);
  expect(sampleValue(await scrape(gateway.adminUrl!), 'tollgate_shed_requests_total')).toBe(1);

  // Once the loop keeps time again, requests pass, and the shed one was never counted.
  const next = await waitFor(
    () => send(`${base}/after`),
    (r) => r.status === 200,
    { what: 'a request to pass again' },
  );
  expect(next.headers['x-ratelimit-remaining']).toBe('7');
});
