// Leases against instances that stop, crash or lose Redis: real `tollgate start` processes on a
// real redis-server, real HTTP. Whatever happens, the requests the upstream sees never exceed the
// limit; a crashed instance's slice is lost only to its window (at most max + cost − 1), a stopped
// one's goes back; a Redis that restarts is waited out by each limiter's onStoreError, and leases
// resume after it.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { Pool } from 'undici';
import { describe, expect } from 'vitest';
import { underAdmissionBound } from '../../src/limits/window-maths/lease.js';
import { startGatewayProcess, type CliProcess } from '../helpers/cli.js';
import { test as serversTest } from '../helpers/fixtures.js';
import { gatewayYaml, send } from '../helpers/gateway.js';
import { sampleValue, scrape } from '../helpers/prometheus.js';
import { RedisServer } from '../helpers/redis-server.js';
import type { TestUpstream } from '../helpers/upstream.js';
import { sleep, waitFor } from '../helpers/wait.js';

interface LeaseSetup {
  readonly redisUrl: string;
  readonly upstreamUrl: string;
  /** The store's key prefix: one per test, so each starts on fresh windows. */
  readonly prefix: string;
  readonly limit: number;
  readonly max: number;
  readonly onError?: 'open' | 'closed' | 'local';
}

/** One leased limiter on every path: one hot key (every request comes from 127.0.0.1), an hour long. */
const leaseConfig = (s: LeaseSetup) =>
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
class Traffic {
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

const seenUnder = (upstream: TestUpstream, path: string) =>
  upstream.seen.filter((r) => r.url.startsWith(path)).length;

/** The hot window's count in Redis (0 when the key is gone) and the key's time to live. */
async function windowOf(client: Redis, prefix: string): Promise<{ count: number; pttl: number }> {
  const keys = await client.keys(`${prefix}{*}:hot:*`);
  expect(keys.length).toBeLessThanOrEqual(1);
  if (keys.length === 0) return { count: 0, pttl: -2 };
  return { count: Number(await client.get(keys[0]!)), pttl: await client.pttl(keys[0]!) };
}

/** No unhandled rejection or crash: the process is still up, and its stop is clean. */
async function expectCleanStop(gp: CliProcess): Promise<void> {
  expect(gp.running).toBe(true);
  expect(await gp.stop()).toBe(0);
  expect(gp.stderr).toBe('');
  expect(gp.logs().filter((l) => Number(l['level']) >= 50)).toEqual([]);
}

const test = serversTest
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

describe('two instances share a hot key', () => {
  test('SIGKILL mid-traffic: never over the limit, the survivor admits on, only the dead slice is lost', async ({
    redis,
    redisClient,
    upstream,
    startProcess,
  }) => {
    const s = { redisUrl: redis.url, upstreamUrl: upstream.url, prefix: 'kill:', limit: 400, max: 20 };
    const [a, b] = [await startProcess(leaseConfig(s)), await startProcess(leaseConfig(s))];
    const [toA, toB] = [new Traffic(a!.url, '/kill', 4), new Traffic(b!.url, '/kill', 4)];
    await waitFor(
      () => toA.count(200),
      (n) => n >= 60,
      { timeoutMs: 30_000, what: '60 admitted by the first instance' },
    );
    a!.signal('SIGKILL');
    expect((await a!.exit).signal).toBe('SIGKILL');
    await toA.stop();
    const bBefore = toB.count(200);
    await waitFor(
      () => toB.count(429),
      (n) => n > 0,
      { timeoutMs: 30_000, what: 'the survivor to spend the rest' },
    );
    await toB.stop();

    const seen = seenUnder(upstream, '/kill');
    expect(toB.statuses.filter((st) => st !== 200 && st !== 429)).toEqual([]);
    expect(toB.count(200)).toBeGreaterThan(bBefore); // the survivor kept admitting
    expect(toA.count(200) + toB.count(200)).toBeLessThanOrEqual(seen);
    expect(seen).toBeLessThanOrEqual(s.limit);
    // Refused only within the bound: both instances' slices out at most.
    expect(seen).toBeGreaterThanOrEqual(s.limit - underAdmissionBound(2, s.max));
    await expectCleanStop(b!);
    // The survivor gave its slice back: what Redis counts beyond what the upstream saw is the dead
    // slice (and requests it took but never forwarded), in a key that ends with the window.
    const { count, pttl } = await windowOf(redisClient, s.prefix);
    expect(count).toBeLessThanOrEqual(s.limit);
    expect(count - seen).toBeGreaterThanOrEqual(0);
    expect(count - seen).toBeLessThanOrEqual(underAdmissionBound(1, s.max));
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(3_600_000);
  });

  test('SIGTERM mid-traffic: the stopped instance gives its slice back; the count is what was admitted', async ({
    redis,
    redisClient,
    upstream,
    startProcess,
  }) => {
    const s = { redisUrl: redis.url, upstreamUrl: upstream.url, prefix: 'term:', limit: 100_000, max: 50 };
    const [a, b] = [await startProcess(leaseConfig(s)), await startProcess(leaseConfig(s))];
    const [toA, toB] = [new Traffic(a!.url, '/term', 4), new Traffic(b!.url, '/term', 4)];
    await waitFor(
      () => toA.count(200),
      (n) => n >= 60,
      { timeoutMs: 30_000, what: '60 admitted by the first instance' },
    );
    expect(await a!.stop()).toBe(0); // drained, its unspent slice given back, while the other serves
    await toA.stop();
    const bBefore = toB.count(200);
    await waitFor(
      () => toB.count(200),
      (n) => n >= bBefore + 60,
      { timeoutMs: 30_000, what: 'the other instance to admit on' },
    );
    await toB.stop();
    expect(toB.statuses.filter((st) => st !== 200)).toEqual([]);
    // One instance's slice at most is out while it runs...
    const seen = seenUnder(upstream, '/term');
    const running = await windowOf(redisClient, s.prefix);
    expect(running.count - seen).toBeGreaterThanOrEqual(0);
    expect(running.count - seen).toBeLessThanOrEqual(underAdmissionBound(1, s.max));
    // ...and none once both stopped: Redis holds exactly what was admitted.
    await expectCleanStop(b!);
    expect((await windowOf(redisClient, s.prefix)).count).toBe(seen);
    expect(toA.count(200) + toB.count(200)).toBe(seen);
  });
});

describe('redis-server killed and restarted while a slice is held', () => {
  const LIMIT = 60;
  const MAX = 20;
  /** Requests spent from the slice (20 leased, 5 spent) while Redis is down. */
  const HELD = MAX - 5;

  test.for(['closed', 'open', 'local'] as const)(
    'onStoreError %s: the slice is spent, then the policy applies; no crash; leases resume on the new Redis',
    async (onError, { upstream, startProcess }) => {
      const server = await RedisServer.start();
      const client = server.client();
      client.on('error', () => {}); // refused while the server is down
      try {
        const prefix = `restart-${onError}:`;
        const s = {
          redisUrl: server.url,
          upstreamUrl: upstream.url,
          prefix,
          limit: LIMIT,
          max: MAX,
          onError,
        };
        const gp = await startProcess(leaseConfig(s));
        const get = () => send(`${gp.url}/restart`);
        for (let i = 0; i < 5; i++) expect((await get()).status).toBe(200);
        expect(await windowOf(client, prefix)).toMatchObject({ count: MAX });

        await server.kill();
        const during = [];
        for (let i = 0; i < HELD + LIMIT + 5; i++) during.push(await get());
        const statuses = during.map((r) => r.status);
        // The slice was counted before Redis went: spending it needs no store, under every policy.
        expect(statuses.slice(0, HELD)).toEqual(new Array(HELD).fill(200));
        expect(during[HELD - 1]!.headers['x-ratelimit-remaining']).toBe(String(LIMIT - MAX));
        const after = statuses.slice(HELD);
        if (onError === 'closed') {
          expect(after).toEqual(new Array(after.length).fill(503));
          expect(during[HELD]!.json()).toMatchObject({ error: { code: 'rate_limit_unavailable' } });
        } else if (onError === 'open') {
          expect(after).toEqual(new Array(after.length).fill(200));
          expect(during[HELD]!.headers['x-ratelimit-limit']).toBeUndefined(); // uncounted
        } else {
          // Counted in process at the limit ÷ live instances (1): LIMIT more, then refused.
          expect(after).toEqual([...new Array(LIMIT).fill(200), ...new Array(5).fill(429)]);
        }
        const admin = await scrape(gp.adminUrl);
        // Each lease that failed is a store error (they reached no metric before).
        expect(sampleValue(admin, 'tollgate_store_errors_total')).toBeGreaterThanOrEqual(1);

        // The server comes back empty (no persistence): the heartbeat tells the gateway is connected.
        await server.restart();
        await waitFor(
          () => client.exists(`${prefix}{instances}`),
          (n) => n === 1,
          { timeoutMs: 20_000, what: 'the gateway to reconnect' },
        );
        const back = [];
        for (let i = 0; i < 10; i++) back.push(await get());
        expect(back.map((r) => r.status)).toEqual(new Array(10).fill(200));
        expect(back.map((r) => r.headers['x-ratelimit-limit'])).toEqual(new Array(10).fill(String(LIMIT)));
        expect(await windowOf(client, prefix)).toMatchObject({ count: MAX }); // one new slice
        if (onError === 'local') {
          await gp.waitForLog((l) => l.msg === 'rate-limit store back: limiting in the store again', {
            what: 'the local fallback to end',
          });
          expect(sampleValue(await scrape(gp.adminUrl), 'tollgate_store_fallback_active')).toBe(0);
        }
        const metrics = await scrape(gp.adminUrl);
        // A round trip per lease: the first, the new window's, and the failed ones.
        expect(sampleValue(metrics, 'tollgate_store_duration_seconds_count')).toBeGreaterThanOrEqual(3);
        await expectCleanStop(gp);
        expect((await windowOf(client, prefix)).count).toBe(10); // the new slice's rest given back
      } finally {
        client.disconnect();
        await server.kill();
      }
    },
  );

  test('an empty restart under a held slice: the new window admits the held slice beyond its limit, no more', async ({
    upstream,
    startProcess,
  }) => {
    const server = await RedisServer.start();
    const client = server.client();
    client.on('error', () => {});
    try {
      const prefix = 'empty:';
      const s = { redisUrl: server.url, upstreamUrl: upstream.url, prefix, limit: LIMIT, max: MAX };
      const gp = await startProcess(leaseConfig(s));
      const get = async () => (await send(`${gp.url}/empty`)).status;
      for (let i = 0; i < 5; i++) expect(await get()).toBe(200);
      await server.kill();
      await server.restart(); // no persistence: every window is gone
      await waitFor(
        () => client.exists(`${prefix}{instances}`),
        (n) => n === 1,
        { timeoutMs: 20_000, what: 'the gateway to reconnect' },
      );
      const statuses = [];
      for (let i = 0; i < HELD + LIMIT + 1; i++) statuses.push(await get());
      // The 15 held (counted in the lost window), then the new window's 60 exactly.
      expect(statuses).toEqual([...new Array(HELD + LIMIT).fill(200), 429]);
      expect(HELD).toBeLessThanOrEqual(underAdmissionBound(1, MAX)); // the documented excess
      await expectCleanStop(gp);
      expect((await windowOf(client, prefix)).count).toBe(LIMIT);
    } finally {
      client.disconnect();
      await server.kill();
    }
  });

  test('SIGTERM while redis-server is frozen: the stop ends, the slice is lost only to its window', async ({
    upstream,
    startProcess,
  }) => {
    const server = await RedisServer.start();
    const client = server.client();
    try {
      const prefix = 'frozen:';
      const s = { redisUrl: server.url, upstreamUrl: upstream.url, prefix, limit: LIMIT, max: MAX };
      const gp = await startProcess(leaseConfig(s));
      for (let i = 0; i < 5; i++) expect((await send(`${gp.url}/frozen`)).status).toBe(200);
      const frozen = server.freeze();
      try {
        expect(await gp.stop(20_000)).toBe(0); // not killed: the give-back waits commandTimeout at most
      } finally {
        frozen.thaw();
      }
      expect((await windowOf(client, prefix)).count).toBe(MAX); // not given back: counted until the window ends
    } finally {
      client.disconnect();
      await server.kill();
    }
  });
});
