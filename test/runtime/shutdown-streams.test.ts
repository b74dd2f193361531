// A graceful shutdown ends open event streams at once, and still lets ordinary requests finish.
import { request } from 'undici';
import { expect } from 'vitest';
import { test as serversTest } from '../helpers/fixtures.js';
import { gatewayYaml } from '../helpers/gateway.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { startPlainServer } from '../helpers/upstream.js';
import { waitFor } from '../helpers/wait.js';

const { logger, lines: logged } = capturingLogger('warn');

/**
 * `streaming`: an upstream with an event stream that never ends by itself (/events), and an
 * ordinary request it answers only when the test releases it; `gateway` in front of it.
 */
const test = serversTest
  .extend('streaming', { scope: 'file' }, async ({}, { onCleanup }) => {
    const held: { release?: () => void } = {};
    const server = await startPlainServer((req, res) => {
      req.resume();
      if (req.url === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.write('event: message\ndata: {"n":1}\n\n');
        return;
      }
      // An ordinary request still in flight when the shutdown starts.
      held.release = () => res.end('{"slow":"done"}');
    });
    onCleanup(() => server.close());
    return { url: server.url, held };
  })
  .extend('gateway', { scope: 'file' }, ({ streaming, gateways }) =>
    gateways.start(
      gatewayYaml(`
shutdown: { drainTimeout: 30s }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
routes:
  - { name: all, paths: ['/*'], upstream: app }
`),
      { UPSTREAM_URL: streaming.url },
      { logger },
    ),
  );

test('open event streams are ended cleanly; the slow request still completes; no drain timeout', async ({
  gateway,
  streaming: { held },
}) => {
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
  const release = await waitFor(
    () => held.release,
    (release) => release !== undefined,
    { what: 'the slow request to reach the upstream' },
  );

  const closing = gateway.close();
  // The stream ends as a whole response (not an error), while the slow request is still open.
  expect(await ended).toBe('ended');
  expect(received.join('')).toBe('event: message\ndata: {"n":1}\n\n');
  release!();
  const slowReply = await slow;
  expect(slowReply.statusCode).toBe(200);
  expect(await slowReply.body.text()).toBe('{"slow":"done"}');
  await closing;
  expect(logged.filter((l) => l['msg'] === 'drain timeout: closing remaining connections')).toEqual([]);
});
