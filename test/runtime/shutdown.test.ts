import { Pool } from 'undici';
import { expect } from 'vitest';
import type { Gateway } from '../../src/runtime/gateway.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { gatewayYaml, send, startGateway, type Reply } from '../helpers/gateway.js';
import { connectOnce } from '../helpers/ports.js';
import { startPlainServer } from '../helpers/upstream.js';
import { timed, waitFor } from '../helpers/wait.js';

/**
 * A limited route to TestUpstream, and /hang to an upstream that reports when a request arrives.
 * Each gateway gets its own key prefix, so every test counts from a fresh window.
 */
function config(drainTimeout: string, keyPrefix: string): string {
  return gatewayYaml(`
shutdown:
  drainTimeout: ${drainTimeout}
store:
  redis: { url: '\${REDIS_URL}', keyPrefix: '${keyPrefix}', commandTimeout: 2s }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
  hanging: { url: '\${HANGING_URL}' }
limiters:
  per-ip:
    windows: [{ limit: 10, period: 1m, key: [ip] }]
routes:
  - { name: hang, paths: [/hang], upstream: hanging, limiters: [per-ip] }
  - { name: app, paths: ['/*'], upstream: app, limiters: [per-ip] }
`);
}

/** Generous: proves close() does not hang, not how fast it is. */
const CLOSE_BOUND_MS = 6000;

let started = 0;

/**
 * `hanging`: an upstream that never answers, counting the requests that arrived and those the
 * gateway then abandoned. `start`: a gateway of the test's own (it closes it itself; if it did not
 * get there, it is closed after the test), with a client pool.
 */
const test = serversTest
  .extend('hanging', { scope: 'file' }, async ({}, { onCleanup }) => {
    const hangs = { arrived: 0, closed: 0 };
    const server = await startPlainServer((req, res) => {
      hangs.arrived++;
      req.resume();
      res.on('close', () => hangs.closed++); // never answers
    });
    onCleanup(() => server.close());
    return { url: server.url, hangs };
  })
  .extend('start', async ({ redis, upstream, hanging }, { onCleanup }) => {
    const opened: { gateway: Gateway; pool: Pool }[] = [];
    onCleanup(async () => {
      for (const { gateway, pool } of opened) {
        await gateway.close();
        await pool.destroy();
      }
    });
    return async (drainTimeout: string) => {
      const gateway = await startGateway(config(drainTimeout, `shutdown-${++started}:`), {
        REDIS_URL: redis.url,
        UPSTREAM_URL: upstream.url,
        HANGING_URL: hanging.url,
      });
      const pool = new Pool(gateway.url(), { connections: 4 });
      opened.push({ gateway, pool });
      return { gateway, pool, port: gateway.listeners[0]!.port };
    };
  });

type Settled = { readonly ok: true; readonly reply: Reply } | { readonly ok: false; readonly error: unknown };

/** Starts a request and records how it ends, so a rejection is never left unobserved. */
function inFlight(url: string, dispatcher: Pool): Promise<Settled> {
  return send(url, { dispatcher }).then(
    (reply): Settled => ({ ok: true, reply }),
    (error: unknown): Settled => ({ ok: false, error }),
  );
}

test('close() lets an in-flight request finish, refuses new connections meanwhile, then resolves', async ({
  start,
  upstream,
}) => {
  const { gateway, pool, port } = await start('10s');
  const before = upstream.seen.length;
  const events: string[] = [];

  const request = inFlight(`${gateway.url()}/slow?ms=2000`, pool);
  void request.then(() => events.push('answered'));
  // The upstream has the request (it records it, then waits 2 s before answering).
  await waitFor(
    () => upstream.seen.length,
    (n) => n === before + 1,
    { what: 'the /slow request to reach the upstream' },
  );

  const closing = timed(() => gateway.close());
  void closing.then(() => events.push('closed'));

  await expect(connectOnce(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  expect(events).toEqual([]); // the refusal happened while the request was still in flight

  const settled = await request;
  expect(settled.ok).toBe(true);
  const reply = (settled as Extract<Settled, { ok: true }>).reply;
  expect(reply.status).toBe(200);
  expect(reply.json()).toMatchObject({ method: 'GET', url: '/slow?ms=2000' });
  expect(reply.headers['x-ratelimit-limit']).toBe('10');
  expect(reply.headers['x-ratelimit-remaining']).toBe('9');

  const { ms } = await closing;
  expect(ms).toBeLessThan(CLOSE_BOUND_MS);
  expect(events).toEqual(['answered', 'closed']);
  await expect(connectOnce(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
});

test('past shutdown.drainTimeout, close() cuts the in-flight connection and resolves', async ({
  start,
  hanging: { hangs },
}) => {
  const { gateway, pool, port } = await start('300ms');
  const arrivedBefore = hangs.arrived;
  const closedBefore = hangs.closed;

  const request = inFlight(`${gateway.url()}/hang`, pool);
  await waitFor(
    () => hangs.arrived,
    (n) => n === arrivedBefore + 1,
    { what: 'the /hang request to reach the upstream' },
  );

  const closing = timed(() => gateway.close());
  await expect(connectOnce(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });

  const { ms } = await closing;
  expect(ms).toBeLessThan(CLOSE_BOUND_MS);

  // The client sees its connection closed, without a response.
  const settled = await request;
  expect(settled.ok).toBe(false);
  expect((settled as Extract<Settled, { ok: false }>).error).toMatchObject({ code: 'UND_ERR_SOCKET' });

  // And the gateway gave up its upstream request rather than leaving it hanging.
  await waitFor(
    () => hangs.closed,
    (n) => n === closedBefore + 1,
    { what: 'the upstream to see the /hang request closed' },
  );
});
