// A graceful shutdown ends open event streams at once, and still lets ordinary requests finish.
import { request } from 'undici';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Gateway } from '../src/http/gateway.js';
import { capturingLogger } from './helpers/log-capture.js';
import { startGateway } from './helpers/gateway.js';
import { startPlainServer, type PlainServer } from './helpers/resilience-http.js';
import { waitFor } from './helpers/wait.js';

const { logger, lines: logged } = capturingLogger('warn');

let upstream: PlainServer;
let gateway: Gateway;
let releaseSlow: (() => void) | undefined;

beforeAll(async () => {
  upstream = await startPlainServer((req, res) => {
    req.resume();
    if (req.url === '/events') {
      // A stream that never ends by itself.
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write('event: message\ndata: {"n":1}\n\n');
      return;
    }
    // An ordinary request still in flight when the shutdown starts.
    releaseSlow = () => res.end('{"slow":"done"}');
  });
  gateway = await startGateway(
    `
listeners: [{ host: 127.0.0.1, port: 0 }]
shutdown: { drainTimeout: 30s }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
routes:
  - { name: all, paths: ['/*'], upstream: app }
`,
    { UPSTREAM_URL: upstream.url },
    { logger },
  );
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

test('open event streams are ended cleanly; the slow request still completes; no drain timeout', async () => {
  const stream = await request(`${gateway.url()}/events`);
  expect(stream.statusCode).toBe(200);
  expect(stream.headers['content-type']).toBe('text/event-stream');
  const received: string[] = [];
  const ended = (async () => {
    for await (const chunk of stream.body) received.push(String(chunk));
    return 'ended';
  })();
  await waitFor(
    () => received.join(''),
    (text) => text.includes('data: {"n":1}'),
    { what: 'the first event' },
  );
  const slow = request(`${gateway.url()}/slow`);
  await waitFor(
    () => releaseSlow,
    (release) => release !== undefined,
    { what: 'the slow request to reach the upstream' },
  );

  const closing = gateway.close();
  // The stream ends as a whole response (not an error), while the slow request is still open.
  expect(await ended).toBe('ended');
  expect(received.join('')).toBe('event: message\ndata: {"n":1}\n\n');
  releaseSlow!();
  const slowReply = await slow;
  expect(slowReply.statusCode).toBe(200);
  expect(await slowReply.body.text()).toBe('{"slow":"done"}');
  await closing;
  expect(logged.filter((l) => l['msg'] === 'drain timeout: closing remaining connections')).toEqual([]);
});
