import { Pool } from 'undici';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Gateway } from '../src/http/gateway.js';
import { send, startGateway, type Reply } from './helpers/gateway.js';
import { RedisServer } from './helpers/redis-server.js';
import { TestUpstream } from './helpers/upstream.js';

const MESSAGE = 'Shared budget spent: try again in a minute.';
const LIMIT = 50;
const PER_INSTANCE = 100;

/**
 * One limiter of 50 a minute per client IP. The command timeout is generous on purpose: under a
 * burst of 200 the test must see counting, not the store-error path.
 */
const CONFIG = `
listeners:
  - { name: public, host: 127.0.0.1, port: 0 }
shutdown:
  drainTimeout: 1s
store:
  redis: { url: '\${REDIS_URL}', commandTimeout: 2s }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  shared:
    message: ${JSON.stringify(MESSAGE)}
    windows: [{ limit: ${LIMIT}, period: 1m, key: [ip] }]
routes:
  - { name: api, paths: ['/*'], upstream: app, limiters: [shared] }
`;

const RATE_LIMITED = JSON.stringify({ error: { code: 'rate_limited', message: MESSAGE } });

let redis: RedisServer;
let upstream: TestUpstream;
let gateways: Gateway[] = [];
let pools: Pool[] = [];

beforeAll(async () => {
  redis = await RedisServer.start();
  upstream = await TestUpstream.start();
  const env = { REDIS_URL: redis.url, UPSTREAM_URL: upstream.url };
  gateways = [await startGateway(CONFIG, env), await startGateway(CONFIG, env)];
  // One connection per request, so all 200 are truly in flight at once.
  pools = gateways.map((g) => new Pool(g.url(), { connections: PER_INSTANCE }));
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
  await Promise.all(gateways.map((g) => g.close()));
  await upstream?.close();
  await redis?.kill();
});

interface Answer {
  readonly instance: number;
  readonly reply: Reply;
}

test('two instances sharing one Redis let exactly 50 of 200 concurrent requests through', async () => {
  expect(gateways[0]!.url()).not.toBe(gateways[1]!.url());

  const answers: Answer[] = await Promise.all(
    Array.from({ length: 2 * PER_INSTANCE }, async (_, i): Promise<Answer> => {
      const instance = i % 2;
      const reply = await send(`${gateways[instance]!.url()}/burst/${i}`, { dispatcher: pools[instance] });
      return { instance, reply };
    }),
  );

  const allowed = answers.filter((a) => a.reply.status === 200);
  const refused = answers.filter((a) => a.reply.status === 429);
  expect(allowed).toHaveLength(LIMIT);
  expect(refused).toHaveLength(2 * PER_INSTANCE - LIMIT);
  expect(upstream.seen).toHaveLength(LIMIT);

  // Every allowed request was counted once, atomically: the remaining values are 49, 48, ..., 0.
  const remaining = allowed.map((a) => Number(a.reply.headers['x-ratelimit-remaining']));
  expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: LIMIT }, (_, i) => i));
  for (const { reply } of allowed) {
    expect(reply.headers['x-ratelimit-limit']).toBe(String(LIMIT));
    expect(reply.headers['retry-after']).toBeUndefined();
  }

  for (const { reply } of refused) {
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.text).toBe(RATE_LIMITED);
    expect(reply.json()).toEqual({ error: { code: 'rate_limited', message: MESSAGE } });
    expect(reply.headers['x-ratelimit-limit']).toBe(String(LIMIT));
    expect(reply.headers['x-ratelimit-remaining']).toBe('0');
    expect(reply.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    expect(Number(reply.headers['retry-after'])).toBeLessThanOrEqual(60);
  }

  // One window in Redis, so both instances report the same reset (±1 s for rounding).
  const resets = answers.map((a) => Number(a.reply.headers['x-ratelimit-reset']));
  for (const reset of resets) expect(reset).toBeGreaterThan(Date.now() / 1000);
  expect(Math.max(...resets) - Math.min(...resets)).toBeLessThanOrEqual(1);
  for (const instance of [0, 1])
    expect(answers.filter((a) => a.instance === instance)).toHaveLength(PER_INSTANCE);
});

test('after the burst, both instances refuse the same key with the same X-RateLimit-Reset (±1)', async () => {
  const [a, b] = await Promise.all(
    gateways.map((g, i) => send(`${g.url()}/after`, { dispatcher: pools[i] })),
  );
  for (const reply of [a!, b!]) {
    expect(reply.status).toBe(429);
    expect(reply.text).toBe(RATE_LIMITED);
    expect(reply.headers['x-ratelimit-remaining']).toBe('0');
    expect(reply.headers['retry-after']).toMatch(/^[1-9]\d*$/);
  }
  const resetA = Number(a!.headers['x-ratelimit-reset']);
  const resetB = Number(b!.headers['x-ratelimit-reset']);
  expect(Math.abs(resetA - resetB)).toBeLessThanOrEqual(1);
  expect(upstream.seen).toHaveLength(LIMIT);
});
