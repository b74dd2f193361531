// Leases against instances that stop, crash or lose Redis: real `tollgate start` processes on a
// real redis-server, real HTTP. Whatever happens, the requests the upstream sees never exceed the
// limit; a crashed instance's slice is lost only to its window (at most max + cost − 1), a stopped
// one's goes back; a Redis that restarts is waited out by each limiter's onStoreError, and leases
// resume after it.
import { describe, expect } from 'vitest';
import { underAdmissionBound } from '../../src/limits/window-maths/lease.js';
import { send } from '../helpers/gateway.js';
import {
  expectCleanStop,
  leaseConfig,
  leaseProcessTest as test,
  seenUnder,
  Traffic,
  windowOf,
} from '../helpers/lease-processes.js';
import { sampleValue, scrape } from '../helpers/prometheus.js';
import { RedisServer } from '../helpers/redis-server.js';
import { waitFor } from '../helpers/wait.js';

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
