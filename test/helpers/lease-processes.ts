// Leased gateways as processes for the lease tests (test/store/lease-stop.test.ts,
// lease-restart.test.ts): real `tollgate start` processes on a real redis-server, real HTTP.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { Pool } from 'undici';
import { expect } from 'vitest';
import { startGatewayProcess, type CliProcess } from './cli.js';
import { test as serversTest } from './fixtures.js';
import { gatewayYaml, send } from './gateway.js';
import type { TestUpstream } from './upstream.js';
import { sleep } from './wait.js';

export interface LeaseSetup {
  readonly redisUrl: string;
  readonly upstreamUrl: string;
  /** The store's key prefix: one per test, so each starts on fresh windows. */
  readonly prefix: string;
  readonly limit: number;
  readonly max: number;
  readonly onError?: 'open' | 'closed' | 'local';
}

/** One leased limiter on every path: one hot key (every request comes from 127.0.0.1), an hour long. */
export const leaseConfig = (s: LeaseSetup) =>
  gatewayYaml(
    `
shutdown: { drainTimeout: 2s }
store:
  onError: ${s.onError ?? 'closed'}
  redis: { url: '${s.redisUrl}', commandTimeout: 2s, keyPrefix: '${s.prefix}' }
upstreams:
  app: { url: '${s.upstreamUrl}' }
limiters:
  hot:
    lease: { max: ${s.max}, spread: 1 }
    windows: [{ limit: ${s.limit}, period: 1h, key: [ip] }]
routes:
  - { name: api, paths: ['/*'], upstream: app, limiters: [hot] }
`,
    { admin: true },
  );

/** GET `path` from `concurrency` loops until stopped; each answer's status (0: no answer). */
export class Traffic {
  readonly statuses: number[] = [];
  #stopped = false;
  readonly #done: Promise<void>;

  constructor(url: string, path: string, concurrency: number) {
    const pool = new Pool(url, { connections: concurrency });
    const loop = async () => {
      while (!this.#stopped) {
        try {
          this.statuses.push((await send(`${url}${path}`, { dispatcher: pool })).status);
        } catch {
          this.statuses.push(0);
          await sleep(10); // the instance is gone: do not spin
        }
      }
    };
    const loops = Array.from({ length: concurrency }, loop);
    this.#done = Promise.all(loops).then(() => pool.destroy());
  }

  count(status: number): number {
    return this.statuses.filter((s) => s === status).length;
  }

  /** Stops sending and waits for the answers in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#done;
  }
}

export const seenUnder = (upstream: TestUpstream, path: string) =>
  upstream.seen.filter((r) => r.url.startsWith(path)).length;

/** The hot window's count in Redis (0 when the key is gone) and the key's time to live. */
export async function windowOf(client: Redis, prefix: string): Promise<{ count: number; pttl: number }> {
  const keys = await client.keys(`${prefix}{*}:hot:*`);
  expect(keys.length).toBeLessThanOrEqual(1);
  if (keys.length === 0) return { count: 0, pttl: -2 };
  return { count: Number(await client.get(keys[0]!)), pttl: await client.pttl(keys[0]!) };
}

/** No unhandled rejection or crash: the process is still up, and its stop is clean. */
export async function expectCleanStop(gp: CliProcess): Promise<void> {
  expect(gp.running).toBe(true);
  expect(await gp.stop()).toBe(0);
  expect(gp.stderr).toBe('');
  expect(gp.logs().filter((l) => Number(l['level']) >= 50)).toEqual([]);
}

export const leaseProcessTest = serversTest
  .extend('dir', { scope: 'file' }, async ({}, { onCleanup }) => {
    const dir = await mkdtemp(join(tmpdir(), 'tollgate-lease-'));
    onCleanup(() => rm(dir, { recursive: true, force: true }));
    return dir;
  })
  .extend('startProcess', async ({ dir }, { onCleanup }) => {
    const started: CliProcess[] = [];
    onCleanup(async () => {
      await Promise.all(started.map((p) => p.stop()));
    });
    return async (text: string): Promise<CliProcess> => {
      const file = join(await mkdtemp(join(dir, 'gw-')), 'gateway.yaml');
      await writeFile(file, text);
      const gp = await startGatewayProcess(file, { admin: true });
      started.push(gp);
      return gp;
    };
  });
