// `workers: N`: node:cluster workers on one port, sharing Redis; the primary aggregates metrics and relays reloads.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { burst } from './helpers/burst.js';
import { send } from './helpers/gateway.js';
import { RedisServer } from './helpers/redis-server.js';
import { TestUpstream } from './helpers/upstream.js';

const CLI = ['--import', 'tsx', 'src/cli.ts'];

const config = (limit: number, redisUrl: string) => `
listeners: [{ host: 127.0.0.1, port: "\${PORT}" }]
admin: { host: 127.0.0.1, port: "\${ADMIN_PORT}" }
workers: 2
reload: { watch: false }
store: { redis: { url: "${redisUrl}", commandTimeout: 2s } }
upstreams: { app: { url: "\${UPSTREAM}" } }
limiters:
  l: { message: enough, windows: [{ limit: ${limit}, period: 1m, key: [ip] }] }
routes: [{ name: r, paths: ["/*"], upstream: app, limiters: [l] }]
`;

interface Running {
  child: ChildProcess;
  logs: () => {
    msg?: string;
    pid?: number;
    route?: string;
    listener?: string;
    port?: number;
    url?: string;
  }[];
  stderr: () => string;
}

function startCli(file: string, env: Record<string, string>): Running {
  const child = spawn(process.execPath, [...CLI, 'start', '--config', file], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return {
    child,
    logs: () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .flatMap((l) => {
          try {
            return [
              JSON.parse(l) as {
                msg?: string;
                pid?: number;
                route?: string;
                listener?: string;
                port?: number;
                url?: string;
              },
            ];
          } catch {
            return []; // a line still being written
          }
        }),
    stderr: () => err,
  };
}

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

let dir: string;
let redis: RedisServer;
let upstream: TestUpstream;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tollgate-workers-'));
  redis = await RedisServer.start();
  upstream = await TestUpstream.start();
});
afterAll(async () => {
  await upstream?.close();
  await redis?.kill();
});

test('more than one worker with the in-process store is refused at start', async () => {
  const file = join(dir, 'memory.yaml');
  await writeFile(file, config(5, '').replace('workers: 2', 'workers: 2\n'));
  const run = startCli(file, { PORT: '0', ADMIN_PORT: '0', UPSTREAM: upstream.url });
  const [code] = (await once(run.child, 'close')) as [number];
  expect(code).toBe(1);
  expect(run.stderr()).toContain(
    `${file}:4:10: workers: more than one worker needs a shared store (store.redis.url or store.redis.cluster)`,
  );
});

describe('two workers on Redis', () => {
  let run: Running;
  let base: string;
  let admin: string;
  let file: string;
  const agent = new Agent({ connections: 16, pipelining: 0 }); // many connections: both workers get some

  beforeAll(async () => {
    file = join(dir, 'redis.yaml');
    await writeFile(file, config(40, redis.url));
    // Port 0: the workers share whatever port the primary got; every address is read from the logs.
    run = startCli(file, { PORT: '0', ADMIN_PORT: '0', UPSTREAM: upstream.url });
    const workers = () => run.logs().filter((l) => l.msg === 'listening' && l.listener === 'public');
    await until(() => workers().length === 2, 'two workers listening');
    await until(
      () => run.logs().some((l) => l.msg === 'listening' && l.listener === 'admin'),
      'the admin listener',
    );
    const ports = new Set(workers().map((l) => l.port));
    expect(ports.size).toBe(1);
    base = `http://127.0.0.1:${[...ports][0]}`;
    admin = run.logs().find((l) => l.listener === 'admin')!.url!;
  });
  afterAll(async () => {
    await agent.close();
    if (run.child.exitCode === null) {
      run.child.kill('SIGKILL');
      await once(run.child, 'exit');
    }
  });

  test('the workers share one port and one budget: exactly the limit passes', async () => {
    const listening = run.logs().filter((l) => l.msg === 'listening' && l.listener === 'public');
    expect(new Set(listening.map((l) => l.pid)).size).toBe(2);

    const replies = await burst(
      100,
      () => send(`${base}/x`, { dispatcher: agent, headers: { connection: 'close' } }),
      16,
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(40);
    const refused = replies.filter((r) => r.status === 429);
    expect(refused).toHaveLength(60);
    for (const r of refused) expect(r.text).toBe('{"error":{"code":"rate_limited","message":"enough"}}');

    await until(() => run.logs().filter((l) => l.route === 'r').length === 100, 'the access log lines');
    const servedBy = new Set(
      run
        .logs()
        .filter((l) => l.route === 'r')
        .map((l) => l.pid),
    );
    expect(servedBy.size).toBe(2);
  });

  test("the primary's admin listener serves the workers' aggregated metrics", async () => {
    const metrics = await send(`${admin}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('tollgate_requests_total{limiter="l",decision="allowed"} 40');
    expect(metrics.text).toContain('tollgate_requests_total{limiter="l",decision="limited"} 60');
  });

  test('SIGHUP to the primary reloads every worker', async () => {
    await writeFile(file, config(500, redis.url));
    run.child.kill('SIGHUP');
    await until(
      () => run.logs().filter((l) => l.msg === 'config reloaded').length === 2,
      'both workers reloading',
    );
    const replies = await burst(
      20,
      () => send(`${base}/x`, { dispatcher: agent, headers: { connection: 'close' } }),
      8,
    );
    for (const r of replies) expect(r.headers['x-ratelimit-limit']).toBe('500');
    // The counter kept its 40 (refused requests are not counted), and the new limit applies to it.
    const remaining = replies.map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 20 }, (_, i) => 500 - 40 - 20 + i));
  });

  test('SIGTERM stops the workers and the primary, exit code 0', async () => {
    run.child.kill('SIGTERM');
    const [code] = (await once(run.child, 'close')) as [number];
    expect(code).toBe(0);
    expect(run.logs().filter((l) => l.msg === 'shutting down').length).toBeGreaterThanOrEqual(3);
  });
});
