// Leases on a real Redis Cluster (3 masters, 3 replicas) whose master restarts empty on its port,
// its node id and slots kept (nodes.conf), its replica told not to take over: the slices held of
// that master's keys are dropped (the new window admits exactly its limit, not the held slice on
// top), those of another master's keys are spent on.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import calculateSlot from 'cluster-key-slot';
import { test as base, expect } from 'vitest';
import { BatchingStore } from '../../src/store/batching-store.js';
import { LeasingStore } from '../../src/store/leasing-store.js';
import { RedisClusterStore } from '../../src/store/redis-cluster-store.js';
import type { WindowRequest } from '../../src/store/window-store.js';
import { RedisCluster } from '../helpers/redis-cluster.js';
import { waitFor } from '../helpers/wait.js';

const test = base.extend('cluster', { scope: 'file' }, async ({}, { onCleanup }) => {
  const cluster = await RedisCluster.start();
  onCleanup(() => cluster.stop());
  return cluster;
});

const LIMIT = 60;
const MAX = 20;
const BEFORE = 5;

const window = (key: string, lease = true): WindowRequest => ({
  key,
  limit: LIMIT,
  periodMs: 600_000,
  enforce: true,
  cacheWhenSpent: false,
  ...(lease ? { lease: { max: MAX, spread: 1 } } : {}),
});

/** Requests of `key` until one is refused: how many were admitted. */
async function untilRefused(store: LeasingStore, key: string): Promise<number> {
  for (let n = 0; n <= 2 * LIMIT; n++) if (!(await store.hit([window(key)]))[0]!.allowed) return n;
  throw new Error(`${key}: never refused`);
}

/**
 * Starts redis-server again as the node on `port` was, its nodes.conf copied to a directory of its
 * own: no data (the cluster's directory holds the replicas' dump.rdb, which a restart would load).
 */
async function restartNode(cluster: RedisCluster, port: number, dir: string): Promise<ChildProcess> {
  const node = cluster.nodes.find((n) => n.port === port)!;
  const [, conf] = (await cluster.call(port, 'CONFIG', 'GET', 'cluster-config-file')) as string[];
  await cluster.kill(port);
  const file = join(dir, 'nodes.conf');
  copyFileSync(conf!, file);
  const child = spawn(
    'redis-server',
    [
      ...['--port', String(port), '--cluster-port', String(node.busPort), '--bind', '127.0.0.1'],
      ...['--protected-mode', 'no', '--cluster-enabled', 'yes', '--cluster-config-file', file],
      ...['--cluster-node-timeout', '1000', '--save', '', '--appendonly', 'no', '--dir', dir],
    ],
    { stdio: 'ignore' },
  );
  await waitFor(
    () => cluster.call(port, 'CLUSTER', 'INFO').catch(() => ''),
    (info) => String(info).includes('cluster_state:ok'),
    { timeoutMs: 20_000, what: `the node on ${port} back in the cluster` },
  );
  return child;
}

test('a master restarted empty: its keys admit exactly the limit again, another master keeps its slice', async ({
  cluster,
}) => {
  // Two hot keys on two masters, and a key of the first master counted exactly (the probe).
  const tags = 'abcdefghijklmnopqrstuvwxyz'.split('');
  const masterOf = (tag: string) => cluster.nodeForSlot(calculateSlot(`{${tag}}`));
  const lost = tags[0]!;
  const lostMaster = await masterOf(lost);
  let kept = '';
  for (const t of tags) if (!kept && (await masterOf(t)) !== lostMaster) kept = t;
  const [hotLost, hotKept, probe] = [`{${lost}}:hot`, `{${kept}}:hot`, `{${lost}}:probe`];

  const store = new RedisClusterStore({ nodes: cluster.seeds, probeKey: 'tg:probe', connectTimeoutMs: 5000 });
  const leasing = new LeasingStore(new BatchingStore(store, { timeoutMs: 5000 }), store, {
    timeoutMs: 5000,
    instances: () => 1,
  });
  let restarted: ChildProcess | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-restarted-'));
  try {
    expect(await leasing.connect()).toBe(true);
    for (const key of [hotLost, hotKept])
      for (let i = 0; i < BEFORE; i++) expect((await leasing.hit([window(key)]))[0]!.allowed).toBe(true);
    expect([leasing.unspentOf(hotLost), leasing.unspentOf(hotKept)]).toEqual([MAX - BEFORE, MAX - BEFORE]);

    // Its replica stays a replica: the master comes back to its slots, empty.
    for (const r of await cluster.replicas()) {
      if (String(await cluster.call(r, 'INFO', 'replication')).includes(`master_port:${lostMaster}\r`))
        await cluster.call(r, 'CONFIG', 'SET', 'cluster-replica-no-failover', 'yes');
    }
    restarted = await restartNode(cluster, lostMaster, dir);
    // The store reaches the restarted master again (a key of its slots counted), and has read it.
    await waitFor(
      () =>
        leasing.hit([window(probe, false)]).then(
          () => true,
          () => false,
        ),
      (ok) => ok,
      { timeoutMs: 30_000, what: 'the store to reach the restarted master' },
    );
    await waitFor(
      () => store.dataset.checking,
      (checking) => !checking,
      { what: 'the restarted master read' },
    );
    expect(await untilRefused(leasing, hotLost)).toBe(LIMIT); // not LIMIT + the 15 held
    expect(await untilRefused(leasing, hotKept)).toBe(LIMIT - BEFORE); // its 15 held spent on
  } finally {
    await leasing.close();
    if (restarted && restarted.exitCode === null) {
      restarted.kill('SIGKILL');
      await once(restarted, 'exit');
    }
    rmSync(dir, { recursive: true, force: true });
  }
});
