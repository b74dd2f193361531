// The over-limit cache: once a window is spent, the gateway refuses that key from process memory,
// with the same answer the store would give, and without a Redis round trip.
import { describe, expect } from 'vitest';
import { loadConfigText } from '../../src/rules/load.js';
import { hashPart } from '../../src/identity/hash.js';
import { windowKey } from '../../src/limits/plan.js';
import { burst } from '../helpers/burst.js';
import { clientAddresses, rateLimitedBody } from '../helpers/clients.js';
import { gatewayTest } from '../helpers/fixtures.js';
import { gatewayYaml, limitHeaders, send, type Reply } from '../helpers/gateway.js';
import { scriptCalls } from '../helpers/redis-server.js';
import { untilClockPast } from '../helpers/wait.js';

/** `cachedLimit` is the one setting the reload test changes. */
function config(cachedLimit: number): string {
  return gatewayYaml(`
store:
  redis: { url: '\${REDIS_URL}', commandTimeout: 2s }
identity:
  trustedProxies: [127.0.0.1]
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  cached:
    message: Refused from the cache.
    windows: [{ limit: ${cachedLimit}, period: 1m, key: [ip] }]
  uncached:
    message: Refused by Redis.
    overLimitCache: false
    windows: [{ limit: 3, period: 1m, key: [ip] }]
  short:
    windows: [{ limit: 2, period: 2s, key: [ip] }]
  mixed-minute:
    windows: [{ limit: 2, period: 1m, key: [ip] }]
  mixed-hour:
    overLimitCache: false
    windows: [{ limit: 2, period: 1h, key: [ip] }]
routes:
  - { name: cached, paths: ['/cached/*'], upstream: app, limiters: [cached] }
  - { name: uncached, paths: ['/uncached/*'], upstream: app, limiters: [uncached] }
  - { name: short, paths: ['/short/*'], upstream: app, limiters: [short] }
  - { name: mixed, paths: ['/mixed/*'], upstream: app, limiters: [mixed-minute, mixed-hour] }
`);
}

const body = rateLimitedBody;

const newClient = clientAddresses();

const test = gatewayTest({ config: config(3) })
  /** The file's Redis client, to inspect keys; the config environment, for reloads. */
  .extend('inspect', { scope: 'file' }, ({ redisClient }) => redisClient)
  .extend('env', { scope: 'file' }, ({ gatewayEnv }) => gatewayEnv)
  .extend(
    'get',
    { scope: 'file' },
    ({ gateway }) =>
      (ip: string, path: string, base = gateway.url()) =>
        send(`${base}${path}`, { headers: { 'x-forwarded-for': ip } }),
  )
  /** The Redis key of a single-window per-IP limiter, as the gateway computes it. */
  .extend(
    'keyOf',
    { scope: 'file' },
    ({ gateway }) =>
      (limiter: string, ip: string) =>
        windowKey('tg:', gateway.table.limiters.get(limiter)!, 0, () => hashPart(`ip=${ip}`)),
  )
  /**
   * Spends a window of a new client with sequential requests, checking each; returns the client and
   * the X-RateLimit-Reset of the last (allowed) reply.
   */
  .extend(
    'spend',
    { scope: 'file' },
    ({ get }) =>
      async function spend(path: string, limit: number): Promise<{ ip: string; reset: number }> {
        const ip = newClient();
        let last: Reply | undefined;
        for (let remaining = limit - 1; remaining >= 0; remaining--) {
          last = await get(ip, path);
          expect(last.status).toBe(200);
          expect(last.headers['x-ratelimit-limit']).toBe(String(limit));
          expect(last.headers['x-ratelimit-remaining']).toBe(String(remaining));
          expect(last.headers['retry-after']).toBeUndefined();
        }
        return { ip, reset: Number(last!.headers['x-ratelimit-reset']) };
      },
  )
  /** Starts counting the Redis script calls: the counter returned says how many were made since. */
  .extend('countCalls', { scope: 'file' }, ({ inspect }) => async (): Promise<() => Promise<number>> => {
    const before = await scriptCalls(inspect);
    return async () => (await scriptCalls(inspect)) - before;
  });

/** A 429 with the exact body and headers; `reset` is the exact X-RateLimit-Reset, or [min, max]. */
function expectRefused(reply: Reply, limit: number, message: string, reset: number | [number, number]): void {
  expect(reply.status).toBe(429);
  expect(reply.headers['content-type']).toBe('application/json');
  expect(reply.text).toBe(body(message));
  expect(reply.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(reply.headers['x-ratelimit-remaining']).toBe('0');
  const resetSec = Number(reply.headers['x-ratelimit-reset']);
  if (typeof reset === 'number') expect(resetSec).toBe(reset);
  else {
    expect(resetSec).toBeGreaterThanOrEqual(reset[0]);
    expect(resetSec).toBeLessThanOrEqual(reset[1]);
  }
  const retryAfter = Number(reply.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  // Retry-After counts down to the same moment X-RateLimit-Reset names.
  expect(Math.abs(resetSec - (Math.ceil(Date.now() / 1000) + retryAfter))).toBeLessThanOrEqual(1);
}

describe('a spent window is refused from process memory', () => {
  test('a flood of 60 after the window is spent: all 429, identical, and not one Redis script call', async ({
    inspect,
    upstream,
    get,
    keyOf,
    spend,
    countCalls,
  }) => {
    const { ip, reset } = await spend('/cached/a', 3);
    const key = keyOf('cached', ip);
    expect(await inspect.get(key)).toBe('3');
    const pttl = await inspect.pttl(key);
    expect(pttl).toBeGreaterThan(0);
    // The reset the store computed is the key's expiry in Redis.
    expect(Math.abs(reset - Math.ceil((Date.now() + pttl) / 1000))).toBeLessThanOrEqual(1);

    const calls = await countCalls();
    const forwardedBefore = upstream.seen.length;
    const flood = await burst(60, (i) => get(ip, `/cached/flood-${i}`), 12);
    for (const reply of flood) expectRefused(reply, 3, 'Refused from the cache.', reset);
    expect(new Set(flood.map((r) => r.text)).size).toBe(1);

    expect(await calls()).toBe(0);
    expect(upstream.seen.length).toBe(forwardedBefore);
    expect(await inspect.get(key)).toBe('3');
  });

  test('a gateway without the entry gets the same answer from Redis, then caches it too', async ({
    gateways,
    env,
    get,
    spend,
    countCalls,
  }) => {
    const { ip, reset } = await spend('/cached/a', 3);
    const fromCache = await get(ip, '/cached/a');
    expectRefused(fromCache, 3, 'Refused from the cache.', reset);

    const other = await gateways.start(config(3), env);
    try {
      const calls = await countCalls();
      const fromRedis = await get(ip, '/cached/a', other.url());
      // Reset is recomputed from the key's PTTL, so it may round to the neighbouring second.
      expectRefused(fromRedis, 3, 'Refused from the cache.', [reset - 1, reset + 1]);
      expect(fromRedis.text).toBe(fromCache.text);
      expect(await calls()).toBe(1);

      const again = await get(ip, '/cached/a', other.url());
      expectRefused(again, 3, 'Refused from the cache.', Number(fromRedis.headers['x-ratelimit-reset']));
      expect(await calls()).toBe(1);
    } finally {
      await other.close();
    }
  });

  test('with overLimitCache: false, every refused request is a Redis round trip', async ({
    inspect,
    get,
    keyOf,
    spend,
    countCalls,
  }) => {
    const { ip, reset } = await spend('/uncached/a', 3);

    const calls = await countCalls();
    for (let i = 0; i < 10; i++) {
      expectRefused(await get(ip, `/uncached/${i}`), 3, 'Refused by Redis.', [reset - 1, reset + 1]);
      expect(await calls()).toBe(i + 1);
    }
    expect(await inspect.get(keyOf('uncached', ip))).toBe('3');
  });

  test('once the window resets, the key is allowed again (and goes back to Redis)', async ({
    inspect,
    get,
    keyOf,
    spend,
    countCalls,
  }) => {
    const { ip, reset } = await spend('/short/a', 2);

    const calls = await countCalls();
    const refused = await get(ip, '/short/a');
    expectRefused(refused, 2, 'Too Many Attempts.', reset);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(2);
    expect(await calls()).toBe(0);

    // X-RateLimit-Reset is rounded up to whole seconds, so once it has passed, so has the window.
    expect(reset * 1000 - Date.now()).toBeLessThanOrEqual(3000);
    await untilClockPast(reset * 1000 + 100);

    const allowed = await get(ip, '/short/a');
    expect(allowed.status).toBe(200);
    expect(limitHeaders(allowed)).toMatchObject({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '1' });
    expect(Number(allowed.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(reset);
    expect(allowed.json()).toMatchObject({ url: '/short/a' });
    expect(await calls()).toBe(1);
    expect(await inspect.get(keyOf('short', ip))).toBe('1');
  });
});

describe('a request the cache cannot fully answer goes to the store', () => {
  test('with an uncached window on the route, every 429 comes from Redis and names the hour window', async ({
    get,
    countCalls,
  }) => {
    const ip = newClient();
    for (const remaining of ['1', '0']) {
      expect((await get(ip, '/mixed/a')).headers['x-ratelimit-remaining']).toBe(remaining);
    }
    for (let i = 0; i < 3; i++) {
      const calls = await countCalls();
      const refused = await get(ip, '/mixed/a');
      expect(await calls()).toBe(1);
      expect(refused.status).toBe(429);
      expect(refused.headers['x-ratelimit-limit']).toBe('2');
      // Both windows are spent: the client may retry only when the hour window resets.
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3500);
    }
  });
});

describe('a reload that changes the limit outdates the cached entries', () => {
  test('raising the limit lets the next request through at once; lowering it asks Redis again', async ({
    gateway,
    inspect,
    env,
    get,
    keyOf,
    spend,
    countCalls,
  }) => {
    const { ip, reset } = await spend('/cached/a', 3);
    expectRefused(await get(ip, '/cached/a'), 3, 'Refused from the cache.', reset);

    await gateway.reload(loadConfigText(config(5), 'raised.yaml', env));
    const calls = await countCalls();
    const allowed = await get(ip, '/cached/a');
    expect(allowed.status).toBe(200);
    // The counter kept its 3 hits: the 4th of 5 leaves 1.
    expect(limitHeaders(allowed)).toMatchObject({ 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '1' });
    expect(allowed.json()).toMatchObject({ url: '/cached/a' });
    expect(await calls()).toBe(1);

    const fifth = await get(ip, '/cached/a');
    expect(fifth.status).toBe(200);
    expect(limitHeaders(fifth)).toMatchObject({ 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '0' });
    const reset5 = Number(fifth.headers['x-ratelimit-reset']);
    expect(await calls()).toBe(2);
    // Spent again, at the new limit: cached again.
    expectRefused(await get(ip, '/cached/a'), 5, 'Refused from the cache.', reset5);
    expect(await calls()).toBe(2);
    expect(await inspect.get(keyOf('cached', ip))).toBe('5');

    // Lowered to 3: the entry (remembered at 5) no longer applies; Redis refuses with 5 hits already.
    await gateway.reload(loadConfigText(config(3), 'lowered.yaml', env));
    expectRefused(await get(ip, '/cached/a'), 3, 'Refused from the cache.', [reset5 - 1, reset5 + 1]);
    expect(await calls()).toBe(3);
    expectRefused(await get(ip, '/cached/a'), 3, 'Refused from the cache.', [reset5 - 1, reset5 + 1]);
    expect(await calls()).toBe(3);
    expect(await inspect.get(keyOf('cached', ip))).toBe('5');
  });
});
