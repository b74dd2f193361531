// Calendar windows through a real gateway, in Redis and in memory: the reset is the next UTC
// midnight (and Retry-After the seconds to it), the Redis key names the day's start and expires at
// the boundary. The rollover itself is tested on a replayed clock in calendar-windows.unit.test.ts.
import { expect } from 'vitest';
import { test } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';

const config = (store: string) =>
  gatewayYaml(`
${store}
identity:
  trustedProxies: [127.0.0.1]
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  daily: { windows: [{ limit: 2, period: 1d, align: calendar, key: [ip] }] }
routes:
  - { name: daily, paths: ['/*'], upstream: app, limiters: [daily] }
`);

const DAY = 86_400_000;
/** The next UTC midnight after `ms`, in Unix seconds. */
const nextMidnight = (ms: number) => (Math.floor(ms / DAY) + 1) * (DAY / 1000);

for (const kind of ['redis', 'memory'] as const) {
  test(`${kind}: Reset is the next UTC midnight; the third request is refused until then`, async ({
    gateways,
    gatewayEnv,
    redisClient,
  }) => {
    const store = kind === 'redis' ? "store: { redis: { url: '${REDIS_URL}', keyPrefix: 'cal:' } }" : '';
    const gateway = await gateways.start(config(store), gatewayEnv);
    const from = { headers: { 'x-forwarded-for': '198.51.100.7' } };
    const before = Date.now();
    const first = await send(`${gateway.url()}/a`, from);
    await send(`${gateway.url()}/a`, from);
    const refused = await send(`${gateway.url()}/a`, from);
    const after = Date.now();
    expect(first.status).toBe(200);
    expect(refused.status).toBe(429);
    // Unless the test ran across midnight, both ends name the same boundary.
    const boundary = nextMidnight(before);
    expect([boundary, nextMidnight(after)]).toContain(Number(first.headers['x-ratelimit-reset']));
    expect(refused.headers['x-ratelimit-reset']).toBe(first.headers['x-ratelimit-reset']);
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    const retry = Number(refused.headers['retry-after']);
    expect(retry).toBeGreaterThanOrEqual(Math.ceil(boundary - after / 1000) - 1);
    expect(retry).toBeLessThanOrEqual(Math.ceil(boundary - before / 1000));
    if (kind === 'redis') {
      const dayStart = (boundary - DAY / 1000) * 1000;
      const keys = await redisClient.keys('cal:*:daily:*'); // not the readiness probe's
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatch(new RegExp(`^cal:\\{[\\w-]+\\}:daily:86400000\\.calendar:ip@${dayStart}$`));
      expect(await redisClient.get(keys[0]!)).toBe('2');
      const ttl = await redisClient.pttl(keys[0]!);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(boundary * 1000 - before);
    }
  });
}
