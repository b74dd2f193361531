import { Pool } from 'undici';
import { expect } from 'vitest';
import { test as serversTest } from '../helpers/fixtures.js';
import { gatewayYaml, send, type Reply } from '../helpers/gateway.js';

const MESSAGE = 'Shared budget spent: try again in a minute.';
const LIMIT = 50;
const PER_INSTANCE = 100;

/**
 * One limiter of 50 a minute per client IP. The command timeout is generous on purpose: under a
 * burst of 200 the test must see counting, not the store-error path.
 */
const CONFIG = gatewayYaml(`
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
`);

const RATE_LIMITED = JSON.stringify({ error: { code: 'rate_limited', message: MESSAGE } });

/**
 * `instances`: two gateways of CONFIG on the file's Redis, each with a pool of 100 connections (one
 * per request, so all 200 are truly in flight at once).
 */
const test = serversTest.extend(
  'instances',
  { scope: 'file' },
  async ({ gatewayEnv, gateways }, { onCleanup }) => {
    const started = [await gateways.start(CONFIG, gatewayEnv), await gateways.start(CONFIG, gatewayEnv)];
    const instances = started.map((gateway) => ({
      gateway,
      pool: new Pool(gateway.url(), { connections: PER_INSTANCE }),
    }));
    onCleanup(async () => {
      await Promise.all(instances.map((i) => i.pool.close()));
    });
    return instances;
  },
);

interface Answer {
  readonly instance: number;
  readonly reply: Reply;
}

test('two instances sharing one Redis let exactly 50 of 200 concurrent requests through', async ({
  instances,
  upstream,
}) => {
  expect(instances[0]!.gateway.url()).not.toBe(instances[1]!.gateway.url());

  const answers: Answer[] = await Promise.all(
    Array.from({ length: 2 * PER_INSTANCE }, async (_, i): Promise<Answer> => {
      const instance = i % 2;
      const { gateway, pool } = instances[instance]!;
      const reply = await send(`${gateway.url()}/burst/${i}`, { dispatcher: pool });
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

test('after the burst, both instances refuse the same key with the same X-RateLimit-Reset (±1)', async ({
  instances,
  upstream,
}) => {
  const [a, b] = await Promise.all(
    instances.map(({ gateway, pool }) => send(`${gateway.url()}/after`, { dispatcher: pool })),
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
