import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Gateway } from '../src/http/gateway.js';
import { DEFAULT_CONFIG, defaultEnv } from './helpers/default-config.js';
import { send, startGateway } from './helpers/gateway.js';
import { RedisServer } from './helpers/redis-server.js';
import { TestUpstream } from './helpers/upstream.js';

let redis: RedisServer;
let upstream: TestUpstream;
let gateway: Gateway;

beforeAll(async () => {
  redis = await RedisServer.start();
  upstream = await TestUpstream.start();
  gateway = await startGateway(DEFAULT_CONFIG, defaultEnv(upstream.url, { REDIS_URL: redis.url }));
});
afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await redis?.kill();
});

test('smoke', async () => {
  const r = await send(`${gateway.url()}/api/v1/widget/typing`, { method: 'POST' });
  console.log(r.status, r.headers, r.text.slice(0, 200));
  const r2 = await send(`${gateway.url()}/api/v1/widget/messages`, { method: 'POST' });
  console.log(r2.status, r2.headers, r2.text.slice(0, 200));
  expect(r.status).toBe(200);
});
