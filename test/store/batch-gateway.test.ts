// Through the real gateway: a burst of concurrent requests costs far fewer Redis script calls than
// requests (the hits of one event-loop turn share one call), and the limit still holds exactly.
import type { Redis } from 'ioredis';
import { expect } from 'vitest';
import type { Gateway } from '../../src/runtime/gateway.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';
import { scriptCalls } from '../helpers/redis-server.js';
import { WarmConnection, type WarmReply } from '../helpers/warm-connection.js';

const LIMIT = 50;
const PER_INSTANCE = 100;

/**
 * The over-limit cache is off, so that every request, refused or not, reaches Redis; all requests
 * come from 127.0.0.1, so the in-flight cap per address is raised above the burst.
 */
// The windowed pair counts under keys of its own (keyPrefix), apart from the first pair's.
const config = (batchWindow = '0ms', keyPrefix = 'tg:') =>
  gatewayYaml(`
requests: { maxInFlightPerIp: 1000 }
shutdown:
  drainTimeout: 1s
store:
  redis: { url: '\${REDIS_URL}', commandTimeout: 2s, batchWindow: ${batchWindow}, keyPrefix: '${keyPrefix}' }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  shared:
    overLimitCache: false
    windows: [{ limit: ${LIMIT}, period: 1m, key: [ip] }]
  flow:
    windows: [{ limit: 100000, period: 1m, key: [ip] }]
routes:
  - { name: shared, paths: ['/shared/*'], upstream: app, limiters: [shared] }
  - { name: flow, paths: ['/flow/*'], upstream: app, limiters: [flow] }
`);

/**
 * `pair`: two gateways of the config on the file's Redis, each warm (the library loaded: a first
 * call adds one refused FCALL and FUNCTION LOAD); `windowedPair`: the same with a batch window of 10ms.
 */
const test = serversTest
  .extend('pair', { scope: 'file' }, ({ gatewayEnv, gateways }) => startPair(config(), gatewayEnv, gateways))
  .extend('windowedPair', { scope: 'file' }, ({ gatewayEnv, gateways }) =>
    startPair(config('10ms', 'tgw:'), gatewayEnv, gateways),
  );

async function startPair(
  yaml: string,
  env: Record<string, string>,
  gateways: { start(yaml: string, env: Record<string, string>): Promise<Gateway> },
): Promise<Gateway[]> {
  const pair = [await gateways.start(yaml, env), await gateways.start(yaml, env)];
  for (const g of pair) expect((await send(`${g.url()}/flow/warm`)).status).toBe(200);
  return pair;
}

/**
 * `n` requests, alternating between the two gateways, each on a connection of its own. Every
 * connection is established before any request is written, and all are written in one go: the
 * requests arrive together, as a burst from many clients does. Returns the replies and the script calls.
 */
async function burstOf(pair: Gateway[], inspect: Redis, n: number, path: (i: number) => string) {
  const clients = await Promise.all(
    Array.from({ length: n }, (_, i) => WarmConnection.open(pair[i % 2]!.url())),
  );
  try {
    const before = await scriptCalls(inspect);
    const replies = await Promise.all(clients.map((c, i) => c.get(path(i))));
    return { replies, calls: (await scriptCalls(inspect)) - before };
  } finally {
    for (const c of clients) c.destroy();
  }
}

const remainingOf = (r: WarmReply) => Number(r.headers['x-ratelimit-remaining']);

test('200 concurrent requests on one key: exactly 50 through, in far fewer script calls than requests', async ({
  pair,
  redisClient: inspect,
  upstream,
}) => {
  const { replies, calls } = await burstOf(pair, inspect, 2 * PER_INSTANCE, (i) => `/shared/${i}`);
  const allowed = replies.filter((r) => r.status === 200);
  const refused = replies.filter((r) => r.status === 429);
  expect(allowed).toHaveLength(LIMIT);
  expect(refused).toHaveLength(2 * PER_INSTANCE - LIMIT);
  // Each allowed request counted once, in order within the batches: remaining 49, 48, ..., 0.
  const remaining = allowed.map(remainingOf).sort((a, b) => a - b);
  expect(remaining).toEqual(Array.from({ length: LIMIT }, (_, i) => i));
  for (const r of refused) expect(r.headers['x-ratelimit-remaining']).toBe('0');
  expect(upstream.seen.filter((s) => s.url.startsWith('/shared/'))).toHaveLength(LIMIT);
  expect(await inspect.get((await inspect.keys('tg:*shared*'))[0] ?? 'none')).toBe(String(LIMIT));

  // Every request reached Redis (no over-limit cache), yet in shared calls.
  console.info(`shared burst: ${calls} script calls for ${replies.length} requests`);
  expect(calls).toBeGreaterThanOrEqual(2); // at least one per gateway
  expect(calls).toBeLessThanOrEqual(replies.length / 10);
});

test('a burst that never refuses: every request counted exactly once, in shared calls', async ({
  pair,
  redisClient: inspect,
}) => {
  const n = 2 * PER_INSTANCE;
  const { replies, calls } = await burstOf(pair, inspect, n, (i) => `/flow/${i}`);
  for (const r of replies) expect(r.status).toBe(200);
  // The warm-up took two hits of 100000 (one per gateway): remaining 99997 down to 99998 - n.
  const remaining = replies.map(remainingOf).sort((a, b) => b - a);
  expect(remaining).toEqual(Array.from({ length: n }, (_, i) => 99_997 - i));
  console.info(`flow burst: ${calls} script calls for ${n} requests`);
  expect(calls).toBeLessThanOrEqual(n / 10);
});

test('with a batch window: exactly 50 of 200 through two gateways, in shared calls', async ({
  windowedPair,
  redisClient: inspect,
}) => {
  const { replies, calls } = await burstOf(windowedPair, inspect, 2 * PER_INSTANCE, (i) => `/shared/w${i}`);
  expect(replies.filter((r) => r.status === 200)).toHaveLength(LIMIT);
  expect(replies.filter((r) => r.status === 429)).toHaveLength(2 * PER_INSTANCE - LIMIT);
  const remaining = replies
    .filter((r) => r.status === 200)
    .map(remainingOf)
    .sort((a, b) => a - b);
  expect(remaining).toEqual(Array.from({ length: LIMIT }, (_, i) => i));
  console.info(`windowed burst: ${calls} script calls for ${replies.length} requests`);
  expect(calls).toBeLessThanOrEqual(replies.length / 10);
});
