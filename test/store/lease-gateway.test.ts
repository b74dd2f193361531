// Leases through whole gateways: two instances on one Redis spend slices of one hot key. A large
// budget is spent almost without script calls and, once both stop, Redis holds exactly what they
// admitted (unspent slices given back at the drain). A small budget is never exceeded.
import type { Redis } from 'ioredis';
import { Pool } from 'undici';
import { expect } from 'vitest';
import { underAdmissionBound } from '../../src/limits/window-maths/lease.js';
import { test } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';

const config = (limit: number, lease: string) =>
  gatewayYaml(`
shutdown:
  drainTimeout: 1s
store:
  redis: { url: '\${REDIS_URL}', commandTimeout: 5s, keyPrefix: 'tg${limit}:' }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  hot:
    lease: ${lease}
    windows: [{ limit: ${limit}, period: 1h, key: [ip] }]
routes:
  - { name: api, paths: ['/*'], upstream: app, limiters: [hot] }
`);

const scriptCalls = async (redis: Redis): Promise<number> => {
  const info = await redis.info('commandstats');
  let calls = 0;
  for (const m of info.matchAll(/^cmdstat_(?:eval\w*|fcall):calls=(\d+)/gm)) calls += Number(m[1]);
  return calls;
};

/** `total` requests, `perBatch` at a time, spread over the instances; the statuses. */
async function burst(urls: readonly string[], total: number, perBatch: number): Promise<number[]> {
  const pools = urls.map((url) => new Pool(url, { connections: perBatch }));
  const statuses: number[] = [];
  try {
    for (let sent = 0; sent < total; sent += perBatch) {
      const batch = Array.from({ length: Math.min(perBatch, total - sent) }, (_, i) => {
        const at = (sent + i) % urls.length;
        return send(`${urls[at]}/x`, { dispatcher: pools[at] }).then((r) => r.status);
      });
      statuses.push(...(await Promise.all(batch)));
    }
  } finally {
    await Promise.all(pools.map((p) => p.close()));
  }
  return statuses;
}

test('a large budget: few script calls, and exactly what was admitted is counted once both stop', async ({
  gatewayEnv,
  gateways,
  redisClient,
}) => {
  const yaml = config(1_000_000, '{ max: 100 }');
  const pair = [await gateways.start(yaml, gatewayEnv), await gateways.start(yaml, gatewayEnv)];
  const before = await scriptCalls(redisClient);
  const statuses = await burst(
    pair.map((g) => g.url()),
    1000,
    20,
  );
  const calls = (await scriptCalls(redisClient)) - before;
  expect(statuses.filter((s) => s === 200)).toHaveLength(1000);
  // Slices of 100: about one lease per 100 requests per instance, not one call per request.
  expect(calls).toBeLessThan(100);
  await Promise.all(pair.map((g) => g.close())); // drained: the unspent slices go back
  const [key] = await redisClient.keys('tg1000000:{*}:hot:*');
  expect(Number(await redisClient.get(key!))).toBe(1000);
});

test('a small budget is never exceeded, and under-admits at most the bound', async ({
  gatewayEnv,
  gateways,
  redisClient,
  upstream,
}) => {
  const yaml = config(300, '{ max: 20, spread: 1 }');
  const pair = [await gateways.start(yaml, gatewayEnv), await gateways.start(yaml, gatewayEnv)];
  const seen = upstream.seen.length;
  const statuses = await burst(
    pair.map((g) => g.url()),
    600,
    30,
  );
  const admitted = statuses.filter((s) => s === 200).length;
  expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
  expect(admitted).toBeLessThanOrEqual(300);
  expect(admitted).toBeGreaterThanOrEqual(300 - underAdmissionBound(2, 20));
  expect(upstream.seen.length - seen).toBe(admitted);
  await Promise.all(pair.map((g) => g.close()));
  const [key] = await redisClient.keys('tg300:{*}:hot:*');
  expect(Number(await redisClient.get(key!))).toBe(admitted);
});
