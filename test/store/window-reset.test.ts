// Fixed windows with a short period: one counter and one Reset per window, full budget after Reset.
import { expect } from 'vitest';
import { test } from '../helpers/fixtures.js';
import { gatewayYaml, limitHeaders, REDIS_STORE, send } from '../helpers/gateway.js';
import { untilClockPast } from '../helpers/wait.js';

/** An empty REDIS_URL selects the in-process store. */
const yaml = gatewayYaml(`
${REDIS_STORE}
upstreams: { app: { url: "\${UPSTREAM_URL}" } }
limiters:
  short: { windows: [{ limit: 3, period: 2s, key: [ip] }] }
routes: [{ name: r, paths: ["/*"], upstream: app, limiters: [short] }]
`);

test.for(['redis', 'memory'])(
  '%s store: the window resets at X-RateLimit-Reset with the full budget',
  async (kind, { redis, upstream, gateways }) => {
    const gateway = await gateways.start(yaml, {
      UPSTREAM_URL: upstream.url,
      REDIS_URL: kind === 'redis' ? redis.url : '',
    });
    const hit = () => send(`${gateway.url()}/x`);

    const first = await hit();
    const reset = Number(first.headers['x-ratelimit-reset']);
    expect(limitHeaders(first)).toEqual({
      'x-ratelimit-limit': '3',
      'x-ratelimit-remaining': '2',
      'x-ratelimit-reset': String(reset),
    });
    for (const remaining of ['1', '0']) {
      const r = await hit();
      expect(r.headers['x-ratelimit-remaining']).toBe(remaining);
      expect(Math.abs(Number(r.headers['x-ratelimit-reset']) - reset)).toBeLessThanOrEqual(1);
    }
    const refused = await hit();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(2);
    expect(Math.abs(Number(refused.headers['x-ratelimit-reset']) - reset)).toBeLessThanOrEqual(1);

    // Wait until the announced reset; then the whole budget is back, in a new window.
    await untilClockPast(Number(refused.headers['x-ratelimit-reset']) * 1000 + 50);
    const after = await hit();
    expect(after.status).toBe(200);
    expect(after.headers['x-ratelimit-remaining']).toBe('2');
    expect(Number(after.headers['x-ratelimit-reset'])).toBeGreaterThan(reset);
  },
);
