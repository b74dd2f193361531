// One route per algorithm through a real gateway counting in Redis: the exact rate-limit headers,
// the IETF fields and the spec's 429 body. Times come from the clock: the reset and retry moments
// are asserted between the clock read before a request and after it.
import { expect } from 'vitest';
import { gatewayTest } from '../helpers/fixtures.js';
import { gatewayYaml, send, type Reply } from '../helpers/gateway.js';

const test = gatewayTest({
  config: gatewayYaml(
    `
store:
  redis: { url: '\${REDIS_URL}', keyPrefix: 'alg:', commandTimeout: 2s }
identity:
  trustedProxies: [127.0.0.1]
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  f: { windows: [{ limit: 2, period: 1h, key: [ip] }] }
  s: { windows: [{ limit: 2, period: 1d, algorithm: sliding, key: [ip] }] }
  b: { windows: [{ limit: 2, period: 1h, algorithm: token-bucket, burst: 3, key: [ip] }] }
routes:
  - { name: fixed, paths: ['/fixed/*'], upstream: app, limiters: [f] }
  - { name: sliding, paths: ['/sliding/*'], upstream: app, limiters: [s] }
  - { name: bucket, paths: ['/bucket/*'], upstream: app, limiters: [b] }
`,
    { listeners: [{ ietfHeaders: true }] },
  ),
});

const HEADERS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
  'ratelimit',
  'ratelimit-policy',
];
const limitHeaders = (r: Reply) =>
  Object.fromEntries(HEADERS.filter((h) => r.headers[h] !== undefined).map((h) => [h, r.headers[h]]));

const BODY = '{"error":{"code":"rate_limited","message":"Too Many Attempts."}}';
const HOUR = 3_600_000;
const DAY = 86_400_000;

/** A request from `ip`, with the clock read before and after it. */
async function timed(url: string, ip: string) {
  const before = Date.now();
  const reply = await send(url, { headers: { 'x-forwarded-for': ip } });
  return { reply, before, after: Date.now() };
}

/** Whole seconds, rounded up, of every ms in [lo, hi]. */
const secondsBetween = (lo: number, hi: number) => [Math.ceil(lo / 1000), Math.ceil(hi / 1000)];
const within = (value: string | undefined, [lo, hi]: number[]) => {
  expect(Number(value)).toBeGreaterThanOrEqual(lo!);
  expect(Number(value)).toBeLessThanOrEqual(hi!);
};

test('fixed: the spec semantics, unchanged', async ({ gateway }) => {
  const url = `${gateway.url()}/fixed/x`;
  const first = await timed(url, '198.51.100.1');
  expect(first.reply.status).toBe(200);
  const reset = first.reply.headers['x-ratelimit-reset'];
  within(reset, secondsBetween(first.before + HOUR, first.after + HOUR));
  expect(limitHeaders(first.reply)).toEqual({
    'x-ratelimit-limit': '2',
    'x-ratelimit-remaining': '1',
    'x-ratelimit-reset': reset,
    ratelimit: `"f.0";r=1;t=${first.reply.headers['ratelimit']!.split('t=')[1]}`,
    'ratelimit-policy': '"f.0";q=2;w=3600',
  });
  expect((await timed(url, '198.51.100.1')).reply.headers['x-ratelimit-remaining']).toBe('0');
  const refused = await timed(url, '198.51.100.1');
  expect(refused.reply.status).toBe(429);
  expect(refused.reply.text).toBe(BODY);
  expect(refused.reply.headers['x-ratelimit-reset']).toBe(reset); // the same window
  expect(refused.reply.headers['x-ratelimit-remaining']).toBe('0');
  within(
    refused.reply.headers['retry-after'],
    secondsBetween(first.before + HOUR - refused.after, first.after + HOUR - refused.before),
  );
});

test('sliding: remaining from the weighted count; reset once every hit has slid out; retry when the weight allows', async ({
  gateway,
  redisClient,
}) => {
  const url = `${gateway.url()}/sliding/x`;
  const ip = '198.51.100.2';
  const first = await timed(url, ip);
  const w = Math.floor(first.before / DAY);
  // A day's window: if midnight UTC fell between the reads, the scenario would change; it did not.
  expect(Math.floor(first.after / DAY)).toBe(w);
  const resetAt = (w + 2) * DAY; // the hits of this window slide out by the end of the next one
  expect(first.reply.status).toBe(200);
  expect(first.reply.headers['x-ratelimit-limit']).toBe('2');
  expect(first.reply.headers['x-ratelimit-remaining']).toBe('1');
  // The store's ms until the reset, added to the gateway's clock when the answer came: within the round trip.
  within(
    first.reply.headers['x-ratelimit-reset'],
    secondsBetween(resetAt, resetAt + (first.after - first.before)),
  );
  expect(first.reply.headers['ratelimit-policy']).toBe('"s.0";q=2;w=86400');
  const second = await timed(url, ip);
  expect(second.reply.headers['x-ratelimit-remaining']).toBe('0');
  const refused = await timed(url, ip);
  expect(refused.reply.status).toBe(429);
  expect(refused.reply.text).toBe(BODY);
  expect(refused.reply.headers['x-ratelimit-remaining']).toBe('0');
  expect(refused.reply.headers['x-ratelimit-limit']).toBe('2');
  // Two hits this window: the next passes in the next window, once 2 × (1 − elapsed/period) ≤ 1: half-way.
  const retryAt = (w + 1) * DAY + DAY / 2;
  within(
    refused.reply.headers['retry-after'],
    secondsBetween(retryAt - refused.after, retryAt - refused.before),
  );
  expect(refused.reply.headers['ratelimit']).toMatch(/^"s\.0";r=0;t=\d+;pk=:[A-Za-z0-9+/]{16}:$/);
  // Its own keys: a reload to another algorithm starts fresh.
  expect((await redisClient.keys('alg:*:s:86400000.sliding:ip')).length).toBe(1);
});

test('token bucket: burst 3 at once, a token back every 30 minutes', async ({ gateway, redisClient }) => {
  const url = `${gateway.url()}/bucket/x`;
  const ip = '198.51.100.3';
  const replies = [];
  for (let i = 0; i < 4; i++) replies.push(await timed(url, ip));
  const [first, , third, refused] = replies;
  expect(replies.map((r) => [r.reply.status, r.reply.headers['x-ratelimit-remaining']])).toEqual([
    [200, '2'],
    [200, '1'],
    [200, '0'],
    [429, '0'],
  ]);
  expect(first!.reply.headers['x-ratelimit-limit']).toBe('3'); // the burst: what may pass at once
  expect(first!.reply.headers['ratelimit-policy']).toBe('"b.0";q=2;w=3600'); // the rate
  // Full again when the TAT is reached: 3 tokens × 30 minutes after the first hit.
  const full = 3 * (HOUR / 2);
  within(
    third!.reply.headers['x-ratelimit-reset'],
    secondsBetween(first!.before + full, third!.after + full),
  );
  expect(refused!.reply.text).toBe(BODY);
  // One token back 30 minutes after the first hit.
  within(
    refused!.reply.headers['retry-after'],
    secondsBetween(first!.before + HOUR / 2 - refused!.after, first!.after + HOUR / 2 - refused!.before),
  );
  expect(refused!.reply.headers['ratelimit']).toMatch(/^"b\.0";r=0;t=\d+;pk=:[A-Za-z0-9+/]{16}:$/);
  expect((await redisClient.keys('alg:*:b:3600000.token-bucket:ip')).length).toBe(1);
});
