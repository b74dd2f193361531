// A least-privilege Redis user: the ACL line of docs/deployment.md is enough for the gateway; a user
// without the function commands (the line before functions) still runs the script, by EVALSHA; and
// a store that refuses the script (a command missing from the ACL, neither FCALL nor EVAL to run
// it, a read-only replica) makes /readyz answer 503 with Redis's reason, logged at error level at start.
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { test as serversTest, type GatewayLauncher } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { RedisServer } from '../helpers/redis-server.js';

/** The ACL SETUSER line the deployment guide gives, as its words. */
const DOCUMENTED = /^ACL SETUSER tollgate (.*)$/m
  .exec(readFileSync('docs/deployment.md', 'utf8'))![1]!
  .split(' ');

const config = gatewayYaml(`
store:
  redis: { url: '\${STORE_URL}', commandTimeout: 2s, connectTimeout: 2s }
upstreams:
  app: { url: '\${UPSTREAM_URL}' }
limiters:
  per-ip: { windows: [{ limit: 10, period: 1m, key: [ip] }] }
routes:
  - { name: app, paths: ['/*'], upstream: app, limiters: [per-ip] }
`);

/** The rules of the documented user, with the password `pw` and without the rules in `drop`. */
async function createUser(client: Redis, name: string, drop: readonly string[] = []): Promise<string> {
  const rules = DOCUMENTED.map((r) => (r.startsWith('>') ? '>pw' : r)).filter((r) => !drop.includes(r));
  await client.call('ACL', 'SETUSER', name, ...rules);
  return name;
}

const userUrl = (redis: RedisServer, user: string) => `redis://${user}:pw@127.0.0.1:${redis.port}`;

const test = serversTest;

test('the documented user: requests are counted, /readyz is ready, and Redis denied nothing', async ({
  redis,
  redisClient,
  upstream,
  gateways,
}) => {
  expect(DOCUMENTED).toEqual(expect.arrayContaining(['+pttl', '+fcall', '+function|load']));
  const user = await createUser(redisClient, 'tollgate');
  await redisClient.call('ACL', 'LOG', 'RESET');
  const { logger, lines } = capturingLogger();
  const gateway = await gateways.start(
    config,
    { STORE_URL: userUrl(redis, user), UPSTREAM_URL: upstream.url },
    { logger },
  );
  for (const remaining of ['9', '8', '7']) {
    const reply = await send(`${gateway.url()}/a`);
    expect(reply.status).toBe(200);
    expect(reply.headers['x-ratelimit-remaining']).toBe(remaining);
  }
  const ready = await send(`${gateway.url()}/readyz`);
  expect([ready.status, ready.text]).toEqual([200, '{"status":"ready"}']);
  await gateway.close();
  expect(lines.filter((l) => Number(l.level) >= 50)).toEqual([]);
  // Every command the gateway sent, from connecting to QUIT, was allowed.
  expect(await redisClient.call('ACL', 'LOG')).toEqual([]);
  // The probe key is counted at 0, never a window's count.
  expect(await redisClient.get('tg:readiness-probe')).toBe('0');
});

/** Starts a gateway on `url`; returns its /readyz reply and the error lines it logged at start. */
async function notReady(gateways: GatewayLauncher, url: string, upstreamUrl: string) {
  const { logger, lines } = capturingLogger();
  const gateway = await gateways.start(config, { STORE_URL: url, UPSTREAM_URL: upstreamUrl }, { logger });
  const ready = await send(`${gateway.url()}/readyz`);
  const errors = lines.filter((l) => Number(l.level) === 50).map((l) => [l.msg, l.reason]);
  return { ready, errors };
}

const START_ERROR =
  "rate-limit store cannot run the limiter's script: not ready, applying each limiter's onStoreError";

// A user of the ACL line before functions, or one that may call them but not load them (the library
// not loaded yet): the first call finds out (one denial in the ACL log) and the rest go as EVALSHA.
test.for([
  { name: 'no-functions', drop: ['+fcall', '+function|load'] },
  { name: 'no-load', drop: ['+function|load'] },
])(
  'a user without $drop: requests are counted by EVALSHA, /readyz is ready',
  async ({ name, drop }, { redis, redisClient, upstream, gateways }) => {
    const user = await createUser(redisClient, name, drop);
    await redisClient.flushall(); // the documented user's counts
    await redisClient.call('FUNCTION', 'FLUSH');
    await redisClient.call('ACL', 'LOG', 'RESET');
    const gateway = await gateways.start(config, {
      STORE_URL: userUrl(redis, user),
      UPSTREAM_URL: upstream.url,
    });
    for (const remaining of ['9', '8', '7']) {
      const reply = await send(`${gateway.url()}/${name}`);
      expect(reply.status).toBe(200);
      expect(reply.headers['x-ratelimit-remaining']).toBe(remaining);
    }
    const ready = await send(`${gateway.url()}/readyz`);
    expect([ready.status, ready.text]).toEqual([200, '{"status":"ready"}']);
    await gateway.close();
    // Denied once, at the first call (the start's readiness probe), never again.
    const log = (await redisClient.call('ACL', 'LOG')) as unknown[][];
    expect(
      log.map((entry) => [entry[entry.indexOf('count') + 1], entry[entry.indexOf('object') + 1]]),
    ).toEqual([[1, drop[0]!.slice(1)]]);
  },
);

describe('a store that refuses the script is not ready', () => {
  test('a user without +pttl', async ({ redis, redisClient, upstream, gateways }) => {
    const user = await createUser(redisClient, 'no-pttl', ['+pttl']);
    const { ready, errors } = await notReady(gateways, userUrl(redis, user), upstream.url);
    expect(ready.status).toBe(503);
    const { status, reason } = ready.json() as { status: string; reason: string };
    expect(status).toBe('store_unavailable');
    // Redis 7.0 names no command; 7.2 and later do.
    expect(reason).toMatch(
      /^(ERR The user executing the script can't run this command or subcommand script: tollgate_batch_[0-9a-f]{16}, on @user_function:\d+\.|NOPERM User no-pttl has no permissions to run the 'pttl' command.*)$/,
    );
    expect(errors).toEqual([[START_ERROR, reason]]);
  });

  test('a user with neither +fcall nor +eval, the script not loaded: NOSCRIPT, and it cannot be run', async ({
    redis,
    redisClient,
    upstream,
    gateways,
  }) => {
    const user = await createUser(redisClient, 'no-eval', ['+fcall', '+eval']);
    await redisClient.call('SCRIPT', 'FLUSH');
    const { ready, errors } = await notReady(gateways, userUrl(redis, user), upstream.url);
    expect(ready.status).toBe(503);
    const { reason } = ready.json() as { reason: string };
    expect(reason).toMatch(/^NOPERM .*'eval' command/);
    expect(errors).toEqual([[START_ERROR, reason]]);
  });

  test('a read-only replica', async ({ redis, upstream, gateways, onTestFinished }) => {
    const replica = await RedisServer.start();
    onTestFinished(() => replica.kill());
    const client = replica.client();
    onTestFinished(() => client.disconnect());
    await client.call('REPLICAOF', '127.0.0.1', String(redis.port));
    const { ready, errors } = await notReady(gateways, replica.url, upstream.url);
    expect(ready.status).toBe(503);
    const { status, reason } = ready.json() as { status: string; reason: string };
    expect(status).toBe('store_unavailable');
    // Refused before it runs: FCALL of a function that writes, or the load of the library.
    expect(reason).toBe("READONLY You can't write against a read only replica.");
    expect(errors).toEqual([[START_ERROR, reason]]);
  });
});
