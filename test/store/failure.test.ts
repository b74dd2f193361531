import { describe, expect } from 'vitest';
import { gatewayTest } from '../helpers/fixtures.js';
import { gatewayYaml, limitHeaders, send, startGateway, type Reply } from '../helpers/gateway.js';
import type { Gateway } from '../../src/runtime/gateway.js';
import { RedisServer } from '../helpers/redis-server.js';
import { timed, waitFor } from '../helpers/wait.js';

/** Two routes, identical but for what their limiter does when Redis cannot answer. */
const CONFIG = gatewayYaml(`
shutdown:
  drainTimeout: 1s
store:
  redis:
    url: \${REDIS_URL}
    commandTimeout: 1s
    connectTimeout: 500ms
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  fails-open:
    onStoreError: open
    windows: [{ limit: 10, period: 1m, key: [ip] }]
  fails-closed:
    onStoreError: closed
    windows: [{ limit: 10, period: 1m, key: [ip] }]
routes:
  - { name: open, paths: ['/open/*'], upstream: app, limiters: [fails-open] }
  - { name: closed, paths: ['/closed/*'], upstream: app, limiters: [fails-closed] }
`);

const UNAVAILABLE =
  '{"error":{"code":"rate_limit_unavailable","message":"Rate limiting is temporarily unavailable. Please retry shortly."}}';

/** Far more than the 1 s command timeout needs: it only proves a request does not wait on Redis. */
const PROMPT_MS = 3000;

/**
 * The file's Redis, upstream and gateway; and `ownServers`, a Redis and a gateway for one test
 * alone, for a test that must not inherit the counts (and the restarted Redis) others leave behind.
 */
const test = gatewayTest({ config: CONFIG })
  /** The file gateway's address. */
  .extend('base', { scope: 'file' }, ({ gateway }) => gateway.url())
  .extend('ownServers', async ({ upstream }, { onCleanup }) => {
    const redis = await RedisServer.start();
    const gateway = await startGateway(CONFIG, { REDIS_URL: redis.url, UPSTREAM_URL: upstream.url });
    onCleanup(async () => {
      await gateway.close();
      await redis.kill();
    });
    return { redis, gateway, base: gateway.url() };
  });

/** A request, with how long the gateway took to answer it. */
async function timedSend(url: string): Promise<{ reply: Reply; ms: number }> {
  const { value, ms } = await timed(() => send(url));
  return { reply: value, ms };
}

function expectCounted(reply: Reply, remaining: number): void {
  expect(reply.status).toBe(200);
  expect(reply.headers['x-ratelimit-limit']).toBe('10');
  expect(reply.headers['x-ratelimit-remaining']).toBe(String(remaining));
  expect(reply.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
  expect(reply.headers['retry-after']).toBeUndefined();
}

/** The open route forwards uncounted: the upstream's answer, and no rate-limit headers. */
function expectForwardedUncounted(reply: Reply, path: string): void {
  expect(reply.status).toBe(200);
  expect(reply.json()).toMatchObject({ method: 'GET', url: path });
  expect(limitHeaders(reply)).toEqual({});
}

/** The closed route refuses with the exact 503 body, and never reaches the upstream. */
function expectRefused(reply: Reply): void {
  expect(reply.status).toBe(503);
  expect(reply.headers['content-type']).toBe('application/json');
  expect(reply.text).toBe(UNAVAILABLE);
  expect(reply.json()).toEqual({
    error: {
      code: 'rate_limit_unavailable',
      message: 'Rate limiting is temporarily unavailable. Please retry shortly.',
    },
  });
  expect(limitHeaders(reply)).toEqual({});
}

/** tollgate_store_uncounted_total of the gateway. */
async function uncounted(gateway: Gateway): Promise<number> {
  const metric = await gateway.metrics.registry.getSingleMetric('tollgate_store_uncounted_total')!.get();
  return metric.values[0]?.value ?? 0;
}

/** Polls a route until the store counts again, and returns the first counted reply. */
async function firstCounted(url: string): Promise<Reply> {
  return waitFor(
    () => send(url),
    (r) => r.headers['x-ratelimit-remaining'] !== undefined,
    { what: `${url} to carry X-RateLimit-Remaining again` },
  );
}

describe('Redis killed, then restarted on the same port', () => {
  test('while Redis is up, both routes count exactly', async ({ base }) => {
    for (const remaining of [9, 8, 7]) {
      expectCounted(await send(`${base}/open/a`), remaining);
      expectCounted(await send(`${base}/closed/a`), remaining);
    }
    const ready = await send(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.text).toBe('{"status":"ready"}');
  });

  test('once Redis is killed, open forwards, closed answers 503, and each answers promptly', async ({
    base,
    redis,
    upstream,
    gateway,
  }) => {
    await redis.kill();
    const uncountedBefore = await uncounted(gateway);
    const closedSeen = upstream.seen.filter((r) => r.url.startsWith('/closed/')).length;

    for (let i = 0; i < 5; i++) {
      const open = await timedSend(`${base}/open/down-${i}`);
      expectForwardedUncounted(open.reply, `/open/down-${i}`);
      expect(open.ms).toBeLessThan(PROMPT_MS);

      const closed = await timedSend(`${base}/closed/down-${i}`);
      expectRefused(closed.reply);
      expect(closed.ms).toBeLessThan(PROMPT_MS);
    }
    expect(upstream.seen.filter((r) => r.url.startsWith('/closed/')).length).toBe(closedSeen);
    // Each request the open route let through uncounted is counted as such; the refused ones are not.
    expect(await uncounted(gateway)).toBe(uncountedBefore + 5);
  });

  test('/readyz answers 503 while Redis is down', async ({ base }) => {
    const { reply, ms } = await timedSend(`${base}/readyz`);
    expect(reply.status).toBe(503);
    // The connection's state as ioredis has it at the moment, between reconnection attempts.
    expect(reply.json()).toEqual({
      status: 'store_unavailable',
      reason: expect.stringMatching(/^redis connection (connecting|reconnecting|close)$/),
    });
    expect(ms).toBeLessThan(PROMPT_MS);
    // Liveness does not depend on the store.
    const health = await send(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(health.text).toBe('{"status":"ok"}');
  });

  test('after a restart, counting resumes by itself from a fresh (empty) Redis', async ({ base, redis }) => {
    await redis.restart();

    const first = await firstCounted(`${base}/open/back`);
    expectCounted(first, 9);
    expect(first.json()).toMatchObject({ url: '/open/back' });
    expectCounted(await send(`${base}/open/back`), 8);
    expectCounted(await send(`${base}/open/back`), 7);

    expectCounted(await send(`${base}/closed/back`), 9);
    expectCounted(await send(`${base}/closed/back`), 8);

    const ready = await send(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.text).toBe('{"status":"ready"}');
  });
});

describe('Redis that hangs (SIGSTOP) instead of dying', () => {
  test('each request finishes within the command-timeout budget, then counting resumes on SIGCONT', async ({
    ownServers: s,
  }) => {
    expectCounted(await send(`${s.base}/open/a`), 9);
    expectCounted(await send(`${s.base}/closed/a`), 9);

    const frozen = s.redis.freeze();
    try {
      for (let i = 0; i < 3; i++) {
        const open = await timedSend(`${s.base}/open/hung-${i}`);
        expectForwardedUncounted(open.reply, `/open/hung-${i}`);
        expect(open.ms).toBeLessThan(PROMPT_MS);

        const closed = await timedSend(`${s.base}/closed/hung-${i}`);
        expectRefused(closed.reply);
        expect(closed.ms).toBeLessThan(PROMPT_MS);
      }
      const ready = await timedSend(`${s.base}/readyz`);
      expect(ready.reply.status).toBe(503);
      // The connection is up, but the probe script gets no answer within the connect timeout.
      expect(ready.reply.text).toBe('{"status":"store_unavailable","reason":"no reply within 500ms"}');
      expect(ready.ms).toBeLessThan(PROMPT_MS);
    } finally {
      frozen.thaw();
    }

    // The connection survived the freeze, so counting resumes without a reconnect.
    const first = await firstCounted(`${s.base}/open/b`);
    const start = Number(first.headers['x-ratelimit-remaining']);
    expectCounted(first, start);
    expectCounted(await send(`${s.base}/open/b`), start - 1);
    expectCounted(await send(`${s.base}/open/b`), start - 2);

    const ready = await send(`${s.base}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.text).toBe('{"status":"ready"}');
  });
});
