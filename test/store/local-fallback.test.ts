// onStoreError: local, with two gateways sharing one redis-server that is killed and restarted:
// during the outage each counts in process at its share (limit ÷ 2 live instances), so both
// together admit exactly the limit; after the restart they count jointly in Redis again.
import { describe, expect } from 'vitest';
import type { Gateway } from '../../src/runtime/gateway.js';
import { test as base } from '../helpers/fixtures.js';
import { loadConfigText } from '../../src/rules/load.js';
import { gatewayYaml, limitHeaders, send, type Reply } from '../helpers/gateway.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { waitFor } from '../helpers/wait.js';

const CONFIG = gatewayYaml(
  `
store:
  redis: { url: '\${REDIS_URL}', commandTimeout: 2s, connectTimeout: 500ms }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  shared:
    onStoreError: local
    windows: [{ limit: 10, period: 1h, key: [ip] }]
  tiny:
    onStoreError: local
    windows: [{ limit: 3, period: 1h, key: [ip] }]
routes:
  - { name: a, paths: ['/a/*'], upstream: app, limiters: [shared] }
  - { name: t, paths: ['/t/*'], upstream: app, limiters: [tiny] }
`,
  { admin: true },
);

const LOST =
  'rate-limit store lost: limiting locally, each onStoreError: local limit divided by the live instances';
const BACK = 'rate-limit store back: limiting in the store again';

interface Instance {
  readonly gateway: Gateway;
  readonly url: string;
  readonly lines: Record<string, unknown>[];
}

const test = base.extend('pair', { scope: 'file' }, async ({ gateways, gatewayEnv }) => {
  const start = async (): Promise<Instance> => {
    const { logger, lines } = capturingLogger();
    const gateway = await gateways.start(CONFIG, gatewayEnv, { logger });
    return { gateway, url: gateway.url(), lines };
  };
  return [await start(), await start()] as const;
});

/** A metric's value (a gauge or one labelled child of a counter), read from the gateway's registry. */
async function metric(g: Gateway, name: string, labels: Record<string, string> = {}): Promise<number> {
  const m = await g.metrics.registry.getSingleMetric(name)!.get();
  const v = m.values.find((x) => Object.entries(labels).every(([k, val]) => x.labels[k] === val));
  return v?.value ?? 0;
}

const said = (i: Instance, msg: string) => i.lines.filter((l) => l.msg === msg).length;

function expectHeaders(reply: Reply, status: number, limit: number, remaining: number): void {
  expect(reply.status).toBe(status);
  expect(reply.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(reply.headers['x-ratelimit-remaining']).toBe(String(remaining));
  expect(reply.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
  if (status === 429) {
    expect(Number(reply.headers['retry-after'])).toBeGreaterThan(3500);
    expect(reply.json()).toEqual({ error: { code: 'rate_limited', message: 'Too Many Attempts.' } });
  } else expect(reply.headers['retry-after']).toBeUndefined();
}

/** A gateway on its own key prefix (r:), its limiter's onStoreError as given. */
const reloadable = (policy: string) =>
  gatewayYaml(`
store:
  redis: { url: '\${REDIS_URL}', keyPrefix: 'r:', commandTimeout: 2s, connectTimeout: 500ms }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  l: { onStoreError: ${policy}, windows: [{ limit: 10, period: 1h, key: [ip] }] }
routes:
  - { name: a, paths: ['/*'], upstream: app, limiters: [l] }
`);

describe('hot reload', () => {
  test('a reload to onStoreError: local applies at once, and starts the heartbeats', async ({
    gateways,
    gatewayEnv,
    redis,
  }) => {
    const g = await gateways.start(reloadable('open'), gatewayEnv);
    const client = redis.client();
    try {
      expectHeaders(await send(`${g.url()}/x`), 200, 10, 9);
      // No heartbeat while no limiter is local (one would have been sent at the start, before the request).
      expect(await client.exists('r:{instances}')).toBe(0);
      await g.reload(loadConfigText(reloadable('local'), 'test.yaml', gatewayEnv));
      expect(g.table.limiters.get('l')!.onStoreError).toBe('local');
      await waitFor(
        () => client.zcard('r:{instances}'),
        (n) => n === 1,
        { what: 'the heartbeat after the reload' },
      );
      expect(await client.pttl('r:{instances}')).toBeGreaterThan(0);
    } finally {
      client.disconnect();
      await g.close();
    }
  });
});

describe('two gateways, one Redis, killed and restarted', () => {
  test('the instances learn of each other from the heartbeats, and count jointly in Redis', async ({
    pair: [a, b],
    redis,
  }) => {
    for (const i of [a, b]) {
      await waitFor(
        () => metric(i.gateway, 'tollgate_store_live_instances'),
        (n) => n === 2,
        { what: 'both instances to count 2 live instances' },
      );
      expect(await metric(i.gateway, 'tollgate_store_fallback_active')).toBe(0);
    }
    const client = redis.client();
    try {
      expect(await client.zcard('tg:{instances}')).toBe(2);
    } finally {
      client.disconnect();
    }
    expectHeaders(await send(`${a.url}/a/1`), 200, 10, 9);
    expectHeaders(await send(`${b.url}/a/2`), 200, 10, 8);
    expect(said(a, LOST) + said(b, LOST)).toBe(0);
  });

  test('with Redis killed, each admits its share (10 ÷ 2, 3 ÷ 2 at least 1): exactly 10 and 2 together', async ({
    pair: [a, b],
    redis,
    upstream,
  }) => {
    await redis.kill();
    const seen = upstream.seen.length;
    for (const i of [a, b]) {
      for (let n = 0; n < 5; n++) expectHeaders(await send(`${i.url}/a/down`), 200, 5, 4 - n);
      for (let n = 0; n < 3; n++) expectHeaders(await send(`${i.url}/a/down`), 429, 5, 0);
      expectHeaders(await send(`${i.url}/t/down`), 200, 1, 0);
      expectHeaders(await send(`${i.url}/t/down`), 429, 1, 0);
    }
    // Admitted during the outage, both gateways together: the documented bound, exactly.
    expect(upstream.seen.length - seen).toBe(10 + 2);
    for (const i of [a, b]) {
      expect(await metric(i.gateway, 'tollgate_store_fallback_active')).toBe(1);
      expect(await metric(i.gateway, 'tollgate_store_live_instances')).toBe(2); // kept through the outage
      const local = (limiter: string, decision: string) =>
        metric(i.gateway, 'tollgate_local_decisions_total', { limiter, decision });
      expect([await local('shared', 'allowed'), await local('shared', 'limited')]).toEqual([5, 3]);
      expect([await local('tiny', 'allowed'), await local('tiny', 'limited')]).toEqual([1, 1]);
      expect(
        await metric(i.gateway, 'tollgate_requests_total', { limiter: 'shared', decision: 'limited' }),
      ).toBe(3);
      expect(said(i, LOST)).toBe(1); // once per outage, not per request
      expect(i.lines.find((l) => l.msg === LOST)).toMatchObject({ level: 40, instances: 2 });
    }
  });

  test('once Redis is back, counting moves back to it: a key appears, the limit is joint again', async ({
    pair: [a, b],
    redis,
  }) => {
    await redis.restart();
    // Both reconnected (ioredis retries with a backoff): their next request is counted in Redis.
    for (const i of [a, b]) {
      await waitFor(
        () => send(`${i.url}/readyz`),
        (r) => r.status === 200,
        { what: 'each gateway ready again' },
      );
    }
    // A fresh Redis: its window starts empty, and the two count in it jointly.
    expectHeaders(await send(`${a.url}/a/back`), 200, 10, 9);
    expectHeaders(await send(`${b.url}/a/back`), 200, 10, 8);
    expect(limitHeaders(await send(`${a.url}/a/back`))).toMatchObject({ 'x-ratelimit-remaining': '7' });
    const client = redis.client();
    try {
      const keys = await client.keys('tg:{*}:shared:*');
      expect(keys).toHaveLength(1);
      expect(await client.get(keys[0]!)).toBe('3');
      // The heartbeats fill the restarted Redis again.
      await waitFor(
        () => client.zcard('tg:{instances}'),
        (n) => n === 2,
        { what: 'both heartbeats in the restarted Redis' },
      );
    } finally {
      client.disconnect();
    }
    for (const i of [a, b]) {
      expect(await metric(i.gateway, 'tollgate_store_fallback_active')).toBe(0);
      expect([said(i, LOST), said(i, BACK)]).toEqual([1, 1]);
    }
  });
});
