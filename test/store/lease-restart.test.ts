// A Redis that comes back after holding leased windows: restarted empty (no persistence), every
// window is gone, and the slices the instances still hold were counted only in it, so none is
// spent in the new window: each window admits at most its limit. A replica promoted in its place
// has the windows (and the slices counted in them): what is held is spent, not dropped.
import { describe, expect } from 'vitest';
import { send } from '../helpers/gateway.js';
import {
  expectCleanStop,
  leaseConfig,
  leaseProcessTest as test,
  seenUnder,
  windowOf,
} from '../helpers/lease-processes.js';
import { RedisServer } from '../helpers/redis-server.js';
import { TcpSwitch } from '../helpers/tcp-switch.js';
import { waitFor } from '../helpers/wait.js';

const LIMIT = 60;
const MAX = 20;
/** Each instance admits 5 before Redis goes: it holds the rest of its slice. */
const BEFORE = 5;

/** Statuses of GETs to `urls` in turn, round after round, until a round is refused everywhere. */
async function untilRefused(urls: readonly string[]): Promise<number[]> {
  const statuses: number[] = [];
  for (let round = 0; round < 4 * LIMIT; round++) {
    const replies = [];
    for (const url of urls) replies.push((await send(url)).status);
    statuses.push(...replies);
    if (replies.every((s) => s === 429)) return statuses;
  }
  throw new Error(`never refused: ${statuses.join(',')}`);
}

const admitted = (statuses: readonly number[]) => statuses.filter((s) => s === 200).length;

/** A redis-server of the test's own and a client of it (which rides out the restart), then both gone. */
async function onRedis(
  run: (server: RedisServer, client: ReturnType<RedisServer['client']>) => Promise<void>,
) {
  const server = await RedisServer.start();
  const client = server.client();
  client.on('error', () => {});
  try {
    await run(server, client);
  } finally {
    client.disconnect();
    await server.kill();
  }
}

describe('redis-server restarted empty on the same port while slices are held', () => {
  test('one instance: the new window admits exactly its limit, the held slice is dropped', async ({
    upstream,
    startProcess,
  }) => {
    await onRedis(async (server, client) => {
      const prefix = 'empty:';
      const s = { redisUrl: server.url, upstreamUrl: upstream.url, prefix, limit: LIMIT, max: MAX };
      const gp = await startProcess(leaseConfig(s));
      for (let i = 0; i < BEFORE; i++) expect((await send(`${gp.url}/empty`)).status).toBe(200);
      expect(await windowOf(client, prefix)).toMatchObject({ count: MAX }); // 15 held
      await server.kill();
      await server.restart(); // no persistence: every window is gone
      await waitFor(
        () => client.exists(`${prefix}{instances}`),
        (n) => n === 1,
        { timeoutMs: 20_000, what: 'the gateway to reconnect' },
      );
      const statuses = await untilRefused([`${gp.url}/empty`]);
      expect(statuses).toEqual([...new Array(LIMIT).fill(200), 429]);
      expect(seenUnder(upstream, '/empty')).toBe(BEFORE + LIMIT);
      await expectCleanStop(gp);
      expect((await windowOf(client, prefix)).count).toBe(LIMIT);
    });
  });

  test('two instances, both holding a slice: together they admit exactly the limit', async ({
    upstream,
    startProcess,
  }) => {
    await onRedis(async (server, client) => {
      const prefix = 'empty2:';
      const s = { redisUrl: server.url, upstreamUrl: upstream.url, prefix, limit: LIMIT, max: MAX };
      const [a, b] = [await startProcess(leaseConfig(s)), await startProcess(leaseConfig(s))];
      for (const gp of [a!, b!])
        for (let i = 0; i < BEFORE; i++) expect((await send(`${gp.url}/two`)).status).toBe(200);
      const held = (await windowOf(client, prefix)).count - 2 * BEFORE;
      expect(held).toBeGreaterThan(0);
      await server.kill();
      await server.restart();
      await waitFor(
        () => client.zcard(`${prefix}{instances}`),
        (n) => n === 2,
        { timeoutMs: 20_000, what: 'both instances to reconnect' },
      );
      const statuses = await untilRefused([`${a!.url}/two`, `${b!.url}/two`]);
      // Not LIMIT + held: nothing leased from the lost Redis is spent in the new window.
      expect(admitted(statuses)).toBe(LIMIT);
      expect(seenUnder(upstream, '/two')).toBe(2 * BEFORE + LIMIT);
      await expectCleanStop(a!);
      await expectCleanStop(b!);
      expect((await windowOf(client, prefix)).count).toBe(LIMIT);
    });
  });
});

test('a replica promoted behind the same address keeps the windows: the held slice is spent, not dropped', async ({
  upstream,
  startProcess,
}) => {
  const primary = await RedisServer.start();
  const replica = await RedisServer.start();
  const front = await TcpSwitch.start(primary.port);
  const [p, r] = [primary.client(), replica.client()];
  p.on('error', () => {});
  try {
    // The sync straight into memory: no dump.rdb left in the working directory.
    await r.call('CONFIG', 'SET', 'repl-diskless-load', 'on-empty-db');
    await r.call('REPLICAOF', '127.0.0.1', String(primary.port));
    await waitFor(
      () => r.info('replication'),
      (info) => info.includes('master_link_status:up'),
      { timeoutMs: 20_000, what: 'the replica to sync' },
    );
    const prefix = 'failover:';
    const s = { redisUrl: front.url, upstreamUrl: upstream.url, prefix, limit: LIMIT, max: MAX };
    const gp = await startProcess(leaseConfig(s));
    for (let i = 0; i < BEFORE; i++) expect((await send(`${gp.url}/failover`)).status).toBe(200);
    expect(await p.call('WAIT', '1', '5000')).toBe(1); // the slice's count is on the replica
    expect(await windowOf(r, prefix)).toMatchObject({ count: MAX });

    await primary.kill();
    await r.call('REPLICAOF', 'NO', 'ONE');
    await r.del(`${prefix}{instances}`); // written again once the gateway is back
    front.switchTo(replica.port);
    await waitFor(
      () => r.exists(`${prefix}{instances}`),
      (n) => n === 1,
      { timeoutMs: 20_000, what: 'the gateway to reach the promoted replica' },
    );
    const statuses = await untilRefused([`${gp.url}/failover`]);
    // The 15 held, then the rest of the window: exactly the limit in all (45 if they were dropped).
    expect(statuses).toEqual([...new Array(LIMIT - BEFORE).fill(200), 429]);
    await expectCleanStop(gp);
    expect((await windowOf(r, prefix)).count).toBe(LIMIT);
  } finally {
    p.disconnect();
    r.disconnect();
    await front.close();
    await primary.kill();
    await replica.kill();
  }
});
