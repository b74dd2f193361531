// Fixed windows with a short period: one counter and one Reset per window, full budget after Reset.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Gateway } from '../src/http/gateway.js';
import { limitHeaders, send, startGateway } from './helpers/gateway.js';
import { RedisServer } from './helpers/redis-server.js';
import { TestUpstream } from './helpers/upstream.js';

let redis: RedisServer;
let upstream: TestUpstream;
const gateways: Gateway[] = [];

beforeAll(async () => {
  redis = await RedisServer.start();
  upstream = await TestUpstream.start();
});
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.close()));
  await upstream?.close();
  await redis?.kill();
});

const yaml = `
listeners: [{ host: 127.0.0.1, port: 0 }]
store: { redis: { url: "\${REDIS_URL}", commandTimeout: 2s } }
upstreams: { app: { url: "\${UPSTREAM}" } }
limiters:
  short: { windows: [{ limit: 3, period: 2s, key: [ip] }] }
routes: [{ name: r, paths: ["/*"], upstream: app, limiters: [short] }]
`;

test.each(['redis', 'memory'])(
  '%s store: the window resets at X-RateLimit-Reset with the full budget',
  async (kind) => {
    const env: Record<string, string> = {
      UPSTREAM: upstream.url,
      REDIS_URL: kind === 'redis' ? redis.url : '',
    };
    const gateway = await startGateway(yaml, env);
    gateways.push(gateway);
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
    await new Promise((r) =>
      setTimeout(r, Math.max(0, Number(refused.headers['x-ratelimit-reset']) * 1000 - Date.now()) + 50),
    );
    const after = await hit();
    expect(after.status).toBe(200);
    expect(after.headers['x-ratelimit-remaining']).toBe('2');
    expect(Number(after.headers['x-ratelimit-reset'])).toBeGreaterThan(reset);
  },
);
