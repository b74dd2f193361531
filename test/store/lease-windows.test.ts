// Leases through a whole gateway (real HTTP, a real redis-server), where the window or the config
// moves under a held slice: a window that ends (nothing put back into the next), a reload that
// changes the limit or takes `lease` off (the slice goes back, never spent under the new limit),
// and a flood of distinct keys (at most 10,000 windows held, exact counting beyond).
import { Pool } from 'undici';
import { expect } from 'vitest';
import { loadConfigText } from '../../src/rules/load.js';
import { BatchingStore } from '../../src/store/batching-store.js';
import { DEFAULT_LEASED_KEYS, LeasingStore } from '../../src/store/leasing-store.js';
import { RedisStore } from '../../src/store/redis-store.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';
import { scriptCalls } from '../helpers/redis-server.js';
import { waitFor } from '../helpers/wait.js';

interface Limiter {
  readonly prefix: string;
  readonly limit: number;
  /** The lease, or none (the window counted exactly). */
  readonly lease?: string;
  readonly period?: string;
  readonly key?: string;
}

const config = (l: Limiter) =>
  gatewayYaml(`
store:
  redis: { url: '\${REDIS_URL}', commandTimeout: 5s, keyPrefix: '${l.prefix}' }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  hot:
    ${l.lease ? `lease: ${l.lease}` : ''}
    windows: [{ limit: ${l.limit}, period: ${l.period ?? '1h'}, key: [${l.key ?? 'ip'}] }]
routes:
  - { name: api, paths: ['/*'], upstream: app, limiters: [hot] }
`);

/**
 * `leasedGateway(limiter)`: a gateway whose store is wired as the gateway wires its own (leases in
 * front of the batching Redis store), as one instance, so the test can see what it holds.
 */
const test = serversTest.extend('leasedGateway', async ({ redis, gatewayEnv, gateways }) => {
  return async (l: Limiter) => {
    const redisStore = new RedisStore({ url: redis.url, probeKey: 'probe', connectTimeoutMs: 5000 });
    const batching = new BatchingStore(redisStore, { timeoutMs: 5000 });
    const leasing = new LeasingStore(batching, redisStore, { timeoutMs: 5000, instances: () => 1 });
    const gateway = await gateways.start(config(l), gatewayEnv, { store: leasing });
    const reload = (next: Limiter) =>
      gateway.reload(loadConfigText(config(next), 'reloaded.yaml', gatewayEnv));
    const get = async (headers: Record<string, string> = {}) =>
      (await send(`${gateway.url()}/x`, { headers })).status;
    return { gateway, leasing, reload, get };
  };
});

test('a window that ends under a held slice: nothing of it is put back into the next window', async ({
  redisClient,
  leasedGateway,
}) => {
  const l = { prefix: 'ends:', limit: 100, lease: '{ max: 10, spread: 1 }', period: '3s' };
  const first = await leasedGateway(l);
  expect(await first.get()).toBe(200);
  const [key] = await redisClient.keys('ends:{*}:hot:*');
  expect(await redisClient.get(key!)).toBe('10');
  expect(first.leasing.unspent).toBe(9);
  await waitFor(
    () => redisClient.exists(key!),
    (n) => n === 0,
    { what: 'the window to end' },
  );
  expect(first.leasing.unspent).toBe(0); // ended with its window
  // Another instance opens the next window, then the first stops: its 9 are not given back to it.
  const second = await leasedGateway(l);
  for (let i = 0; i < 3; i++) expect(await second.get()).toBe(200);
  await first.gateway.close();
  expect(await redisClient.get(key!)).toBe('10');
  expect(first.leasing.stats.returned).toBe(0);
  await second.gateway.close();
  expect(await redisClient.get(key!)).toBe('3');
});

test('a reload that lowers the limit: the slice goes back, and the new limit is never exceeded', async ({
  redisClient,
  leasedGateway,
}) => {
  const lease = '{ max: 10, spread: 1 }';
  const g = await leasedGateway({ prefix: 'lower:', limit: 1000, lease });
  for (let i = 0; i < 3; i++) expect(await g.get()).toBe(200);
  const [key] = await redisClient.keys('lower:{*}:hot:*');
  expect(await redisClient.get(key!)).toBe('10');
  await g.reload({ prefix: 'lower:', limit: 5, lease });
  // 7 given back (count 3), then a slice of the 2 left: 2 admitted, then refused.
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push(await g.get());
  expect(statuses).toEqual([200, 200, 429, 429]);
  expect(await redisClient.get(key!)).toBe('5');
  expect(g.leasing.stats.returned).toBe(7);
  // Raised again: the window leases afresh (before, it stayed counted exactly until it ended).
  await g.reload({ prefix: 'lower:', limit: 1000, lease });
  const before = await scriptCalls(redisClient);
  for (let i = 0; i < 20; i++) expect(await g.get()).toBe(200);
  expect((await scriptCalls(redisClient)) - before).toBe(2); // two slices of 10
  await g.gateway.close();
  expect(await redisClient.get(key!)).toBe('25');
});

test('a reload that takes lease off: the slice goes back, and the window is counted exactly', async ({
  redisClient,
  leasedGateway,
}) => {
  const g = await leasedGateway({ prefix: 'off:', limit: 1000, lease: '{ max: 10, spread: 1 }' });
  for (let i = 0; i < 3; i++) expect(await g.get()).toBe(200);
  const [key] = await redisClient.keys('off:{*}:hot:*');
  expect(await redisClient.get(key!)).toBe('10');
  await g.reload({ prefix: 'off:', limit: 1000 });
  expect(await g.get()).toBe(200);
  // The give-back went before the exact hit, on the same connection.
  expect(await redisClient.get(key!)).toBe('4');
  expect(g.leasing.windows).toBe(0);
  for (let i = 0; i < 3; i++) expect(await g.get()).toBe(200);
  expect(await redisClient.get(key!)).toBe('7');
});

test(`more than ${DEFAULT_LEASED_KEYS} distinct keys: ${DEFAULT_LEASED_KEYS} windows held, the rest counted exactly`, async ({
  redisClient,
  leasedGateway,
}) => {
  const g = await leasedGateway({
    prefix: 'many:',
    limit: 100,
    lease: '{ max: 10, spread: 1 }',
    key: "'header:X-Client'",
  });
  const total = DEFAULT_LEASED_KEYS + 50;
  const pool = new Pool(g.gateway.url(), { connections: 16 });
  try {
    const statuses: number[] = [];
    for (let sent = 0; sent < total; sent += 200) {
      const batch = Array.from({ length: Math.min(200, total - sent) }, (_, i) =>
        send(`${g.gateway.url()}/x`, { headers: { 'x-client': `c${sent + i}` }, dispatcher: pool }),
      );
      statuses.push(...(await Promise.all(batch)).map((r) => r.status));
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  } finally {
    await pool.close();
  }
  expect(g.leasing.windows).toBe(DEFAULT_LEASED_KEYS);
  const keys = await redisClient.keys('many:{*}:hot:*');
  expect(keys).toHaveLength(total);
  const counts = (await redisClient.mget(...keys)).map(Number);
  // A slice of 10 for each key held; a count of exactly 1 for each beyond.
  expect(counts.filter((c) => c === 10)).toHaveLength(DEFAULT_LEASED_KEYS);
  expect(counts.filter((c) => c === 1)).toHaveLength(50);
  // A new key, beyond the cap, is counted exactly, request by request.
  const before = await scriptCalls(redisClient);
  for (let i = 0; i < 3; i++) expect(await g.get({ 'x-client': 'newcomer' })).toBe(200);
  expect((await scriptCalls(redisClient)) - before).toBe(3);
  const [added] = (await redisClient.keys('many:{*}:hot:*')).filter((k) => !keys.includes(k));
  expect(await redisClient.get(added!)).toBe('3');
  expect(g.leasing.windows).toBe(DEFAULT_LEASED_KEYS);
});
