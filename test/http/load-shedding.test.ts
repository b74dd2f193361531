// Load shedding: a request that arrives while the gateway's event loop keeps running later than
// requests.shedAfter is answered 503 overloaded with Retry-After, before it is counted or forwarded.
// One slow turn alone is no overload.
import { once } from 'node:events';
import { connect } from 'node:net';
import { expect } from 'vitest';
import { loopLagMs } from '../../src/http/load-shedding.js';
import { gatewayTest } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';
import { sampleValue, scrape } from '../helpers/prometheus.js';
import { waitFor } from '../helpers/wait.js';

const SHED_AFTER_MS = 250;

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

/** A keep-alive connection the gateway has accepted and answered once: what it sends next is read in the next poll phase. */
async function openConnection(
  base: string,
): Promise<{ write: (raw: string) => void; answer: () => Promise<string> }> {
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
  return {
    write: (raw) => socket.write(raw),
    answer: async () => {
      await once(socket, 'end');
      return Buffer.concat(chunks).toString();
    },
  };
}

const POST_CLOSE = (path: string) =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`;

test('one slow turn alone sheds nothing: the request that waited through it is served', async ({
  gateway,
  upstream,
}) => {
  const base = gateway.url();
  await send(`${base}/warm-once`); // starts the lag sampler
  const connection = await openConnection(base);
  const seen = upstream.seen.length;
  connection.write(POST_CLOSE('/one-slow-turn'));
  blockLoop(4 * SHED_AFTER_MS); // the request waits in the socket while the loop is held, once
  expect((await connection.answer()).split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
  expect(upstream.seen.length).toBe(seen + 1);
});

test('a request that arrives while the loop keeps running late gets 503 overloaded, uncounted; the next one passes', async ({
  gateway,
  upstream,
}) => {
  const base = gateway.url();
  const warm = await send(`${base}/warm`);
  const remaining = Number(warm.headers['x-ratelimit-remaining']);
  const connection = await openConnection(base);
  const seen = upstream.seen.length;
  // Every turn of the loop is slow from now on, until the answer has come.
  const slow = setInterval(() => blockLoop(3 * SHED_AFTER_MS), 0);
  let text: string;
  try {
    await waitFor(
      () => loopLagMs(),
      (lag) => lag > SHED_AFTER_MS,
      { what: 'the loop to keep running late' },
    );
    connection.write(POST_CLOSE('/shed'));
    text = await connection.answer();
  } finally {
    clearInterval(slow);
  }
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
  expect(next.headers['x-ratelimit-remaining']).toBe(String(remaining - 2));
});
