// A client that leaves while the limiter waits on the store is never forwarded.
import { request } from 'undici';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Gateway } from '../src/http/gateway.js';
import { startGateway } from './helpers/gateway.js';
import { RedisServer } from './helpers/redis-server.js';
import { freezeRedis } from './helpers/resilience-redis.js';
import { sleep, timed } from './helpers/resilience-wait.js';
import { TestUpstream } from './helpers/upstream.js';

const CONFIG = `
listeners: [{ host: 127.0.0.1, port: 0 }]
shutdown: { drainTimeout: 1s }
store: { redis: { url: "\${REDIS_URL}", commandTimeout: 2s } }
upstreams: { app: { url: "\${UPSTREAM_URL}" } }
limiters:
  l: { windows: [{ limit: 10, period: 1m, key: [ip] }] }
routes: [{ name: r, paths: ["/*"], upstream: app, limiters: [l] }]
`;

let redis: RedisServer;
let upstream: TestUpstream;
let gateway: Gateway;

beforeAll(async () => {
  redis = await RedisServer.start();
  upstream = await TestUpstream.start();
  gateway = await startGateway(CONFIG, { REDIS_URL: redis.url, UPSTREAM_URL: upstream.url });
});
afterAll(async () => {
  await upstream?.close();
  await redis?.kill();
});

test('the request is dropped, and shutdown does not wait for it', async () => {
  const frozen = await freezeRedis(redis);
  const aborted = request(`${gateway.url()}/slow?ms=100`, { signal: AbortSignal.timeout(100) });
  await expect(aborted).rejects.toThrow();
  await sleep(500);
  frozen.thaw(); // the store answers now, after the client has gone
  await sleep(500);
  expect(upstream.seen).toEqual([]);
  const { ms } = await timed(() => gateway.close());
  expect(ms).toBeLessThan(1500); // within the drain timeout, not the upstream's headers timeout
});
