// Leases on a real Redis Cluster (3 masters, 3 replicas) whose master restarts empty, on its port
// or on a new one, its node id and slots kept (nodes.conf), its replica told not to take over: the
// slices held of that master's keys are dropped (the new window admits exactly its limit, not the
// held slice on top), those of another master's keys are spent on.
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
import { freePort } from '../helpers/ports.js';
import { RedisCluster } from '../helpers/redis-cluster.js';
import { waitFor } from '../helpers/wait.js';

// One cluster a test: each restarts (and at its end kills) one of its masters.
const test = base.extend('cluster', { scope: 'test' }, async ({}, { onCleanup }) => {
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
 * With `moved`, on new ports (a pod rescheduled with a new address): the other nodes learn them
 * from its gossip, by its id.
 */
async function restartNode(
  cluster: RedisCluster,
  port: number,
  dir: string,
  moved: boolean,
): Promise<{ child: ChildProcess; port: number }> {
  const node = cluster.nodes.find((n) => n.port === port)!;
  const [, conf] = (await cluster.call(port, 'CONFIG', 'GET', 'cluster-config-file')) as string[];
  await cluster.kill(port);
  const [newPort, busPort] = moved ? [await freePort(), await freePort()] : [port, node.busPort];
  const file = join(dir, 'nodes.conf');
  copyFileSync(conf!, file);
  const child = spawn(
    'redis-server',
    [
      ...['--port', String(newPort), '--cluster-port', String(busPort), '--bind', '127.0.0.1'],
      ...['--protected-mode', 'no', '--cluster-enabled', 'yes', '--cluster-config-file', file],
      ...['--cluster-node-timeout', '1000', '--save', '', '--appendonly', 'no', '--dir', dir],
    ],
    { stdio: 'ignore' },
  );
  // Back in the cluster: it says so, and (moved) another master knows it at its new port.
  const other = cluster.nodes.find((n) => n.port !== port)!.port;
  await waitFor(
    async () =>
      String(await cluster.call(newPort, 'CLUSTER', 'INFO').catch(() => '')).includes('cluster_state:ok') &&
      String(await cluster.call(other, 'CLUSTER', 'NODES')).includes(`127.0.0.1:${newPort}@`),
    (ok) => ok,
    { timeoutMs: 20_000, what: `the node of ${port} back in the cluster on ${newPort}` },
  );
  return { child, port: newPort };
}

test.for([
  ['on its port', false],
  ['on a new port (its node id kept)', true],
] as const)(
  'a master restarted empty %s: its keys admit exactly the limit again, another master keeps its slice',
  async ([, moved], { cluster }) => {
    // Two hot keys on two masters, and a key of the first master counted exactly (the probe).
    const tags = 'abcdefghijklmnopqrstuvwxyz'.split('');
    const masterOf = (tag: string) => cluster.nodeForSlot(calculateSlot(`{${tag}}`));
    const lost = tags[0]!;
    const lostMaster = await masterOf(lost);
    let kept = '';
    for (const t of tags) if (!kept && (await masterOf(t)) !== lostMaster) kept = t;
    const [hotLost, hotKept, probe] = [`{${lost}}:hot`, `{${kept}}:hot`, `{${lost}}:probe`];

    const store = new RedisClusterStore({
      nodes: cluster.seeds,
      probeKey: 'tg:probe',
      connectTimeoutMs: 5000,
    });
    const leasing = new LeasingStore(new BatchingStore(store, { timeoutMs: 5000 }), store, {
      timeoutMs: 5000,
      instances: () => 1,
    });
    let restarted: { child: ChildProcess; port: number } | undefined;
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-restarted-'));
    try {
      expect(await leasing.connect()).toBe(true);
      // Every node connected and named (while a node's id is asked, leased windows count exactly).
      await waitFor(
        () => store.client.nodes('all').every((n) => n.status === 'ready') && !store.dataset.checking,
        (settled) => settled,
        { what: 'every node connected and named' },
      );
      for (const key of [hotLost, hotKept])
        for (let i = 0; i < BEFORE; i++) expect((await leasing.hit([window(key)]))[0]!.allowed).toBe(true);
      expect([leasing.unspentOf(hotLost), leasing.unspentOf(hotKept)]).toEqual([MAX - BEFORE, MAX - BEFORE]);

      // Its replica stays a replica: the master comes back to its slots, empty.
      for (const r of await cluster.replicas()) {
        if (String(await cluster.call(r, 'INFO', 'replication')).includes(`master_port:${lostMaster}\r`))
          await cluster.call(r, 'CONFIG', 'SET', 'cluster-replica-no-failover', 'yes');
      }
      restarted = await restartNode(cluster, lostMaster, dir, moved);
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
      if (restarted && restarted.child.exitCode === null) {
        restarted.child.kill('SIGKILL');
        await once(restarted.child, 'exit');
      }
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
