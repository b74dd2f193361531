import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, describe, expect } from 'vitest';
import { burst } from '../helpers/burst.js';
import { runCli, startGatewayProcess, type LogLine } from '../helpers/cli.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { gatewayYaml, REDIS_STORE, send } from '../helpers/gateway.js';

/** An empty REDIS_URL selects the in-process store. */
const config = (limit: number) =>
  gatewayYaml(
    `
workers: 2
reload: { watch: false }
${REDIS_STORE}
upstreams: { app: { url: "\${UPSTREAM_URL}" } }
limiters:
  l: { message: enough, windows: [{ limit: ${limit}, period: 1m, key: [ip] }] }
routes: [{ name: r, paths: ["/*"], upstream: app, limiters: [l] }]
`,
    { admin: true },
  );

const publicListening = (l: LogLine) => l.msg === 'listening' && l['listener'] === 'public';

/**
 * `dir` for the config files; `workers`: `tollgate start` with two workers counting in the file's
 * Redis, listening (both workers, and the primary's admin listener), stopped after the file.
 */
const test = serversTest
  .extend('dir', { scope: 'file' }, async ({}, { onCleanup }) => {
    const dir = await mkdtemp(join(tmpdir(), 'tollgate-workers-'));
    onCleanup(() => rm(dir, { recursive: true, force: true }));
    return dir;
  })
  .extend('workers', { scope: 'file' }, async ({ dir, redis, upstream }, { onCleanup }) => {
    const file = join(dir, 'redis.yaml');
    await writeFile(file, config(40));
    // Port 0: the workers share whatever port the primary got; every address is read from the logs.
    const gp = await startGatewayProcess(file, {
      env: { REDIS_URL: redis.url, UPSTREAM_URL: upstream.url },
      listeners: 2,
      admin: true,
    });
    onCleanup(async () => {
      await gp.stop();
    });
    return { gp, file };
  });

test('more than one worker with the in-process store is refused at start', async ({ dir, upstream }) => {
  const file = join(dir, 'memory.yaml');
  await writeFile(file, config(5));
  const run = await runCli(['start', '--config', file], {
    env: { REDIS_URL: '', UPSTREAM_URL: upstream.url },
  });
  expect(run.code).toBe(1);
  expect(run.stderr).toContain(
    `${file}:4:10: workers: more than one worker needs a shared store (store.redis.url or store.redis.cluster)`,
  );
});

describe('two workers on Redis', () => {
  const agent = new Agent({ connections: 16, pipelining: 0 }); // many connections: both workers get some
  afterAll(() => agent.close());

  test('the workers share one port and one budget: exactly the limit passes', async ({ workers: { gp } }) => {
    const listening = gp.logs().filter(publicListening);
    expect(new Set(listening.map((l) => l['pid'])).size).toBe(2);
    expect(new Set(listening.map((l) => l['port'])).size).toBe(1);

    const replies = await burst(
      100,
      () => send(`${gp.url}/x`, { dispatcher: agent, headers: { connection: 'close' } }),
      16,
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(40);
    const refused = replies.filter((r) => r.status === 429);
    expect(refused).toHaveLength(60);
    for (const r of refused) expect(r.text).toBe('{"error":{"code":"rate_limited","message":"enough"}}');

    const served = await gp.waitForLog((l) => l['route'] === 'r', {
      count: 100,
      what: 'the access log lines',
    });
    expect(served).toHaveLength(100);
    expect(new Set(served.map((l) => l['pid'])).size).toBe(2);
  });

  test("the primary's admin listener serves the workers' aggregated metrics", async ({ workers: { gp } }) => {
    const metrics = await send(`${gp.adminUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('tollgate_requests_total{limiter="l",decision="allowed"} 40');
    expect(metrics.text).toContain('tollgate_requests_total{limiter="l",decision="limited"} 60');
  });

  test('SIGHUP to the primary reloads every worker', async ({ workers: { gp, file } }) => {
    await writeFile(file, config(500));
    gp.signal('SIGHUP');
    await gp.waitForLog((l) => l.msg === 'config reloaded', { count: 2, what: 'both workers reloading' });
    const replies = await burst(
      20,
      () => send(`${gp.url}/x`, { dispatcher: agent, headers: { connection: 'close' } }),
      8,
    );
    for (const r of replies) expect(r.headers['x-ratelimit-limit']).toBe('500');
    // The counter kept its 40 (refused requests are not counted), and the new limit applies to it.
    const remaining = replies.map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 20 }, (_, i) => 500 - 40 - 20 + i));
  });

  test('SIGTERM stops the workers and the primary, exit code 0', async ({ workers: { gp } }) => {
    gp.signal('SIGTERM');
    expect((await gp.exit).code).toBe(0);
    expect(gp.logs().filter((l) => l.msg === 'shutting down').length).toBeGreaterThanOrEqual(3);
  });
});
