import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { test } from 'vitest';
import { freePort } from './ports.js';
import { sleep, waitFor } from './wait.js';

const HOST = '127.0.0.1';
const run = promisify(execFile);

export interface ClusterNode {
  readonly port: number;
  /** The cluster bus port, chosen free too (port + 10000 may be taken or out of range). */
  readonly busPort: number;
  readonly child: ChildProcess;
}

/** A node's view of one slot range, from CLUSTER SLOTS. */
interface SlotRange {
  readonly from: number;
  readonly to: number;
  readonly master: number;
  readonly replicas: number[];
}

export interface Migration {
  readonly from: number;
  readonly to: number;
  /** Keys moved with MIGRATE. */
  readonly keys: string[];
}

const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

/**
 * A throw-away Redis Cluster of real redis-server processes (3 masters, 3 replicas) on free ports,
 * owned by one test file. Every wait is bounded; stop() kills everything and removes the files,
 * and the processes are killed as well if the test process exits without calling it.
 */
export class RedisCluster {
  readonly nodes: ClusterNode[] = [];
  readonly #dir: string;
  #stopped = false;
  readonly #killOnExit = () => {
    for (const n of this.nodes) if (alive(n.child)) n.child.kill('SIGKILL');
  };

  private constructor(dir: string) {
    this.#dir = dir;
    process.once('exit', this.#killOnExit);
  }

  static async start(): Promise<RedisCluster> {
    const cluster = new RedisCluster(mkdtempSync(join(tmpdir(), 'tollgate-cluster-')));
    try {
      for (let i = 0; i < 6; i++) cluster.nodes.push(await cluster.#startNode());
      await run(
        'redis-cli',
        [
          '--cluster',
          'create',
          ...cluster.nodes.map((n) => `${HOST}:${n.port}`),
          '--cluster-replicas',
          '1',
          '--cluster-yes',
        ],
        { timeout: 20_000 },
      );
      await cluster.waitHealthy(20_000);
      // A replica must be in sync before a test kills its master.
      for (const node of await cluster.replicas()) {
        await waitFor(
          () => cluster.call(node, 'INFO', 'replication'),
          (info) => /master_link_status:up/.test(String(info)),
          { timeoutMs: 15_000, what: `replica ${node} in sync` },
        );
      }
      return cluster;
    } catch (err) {
      await cluster.stop();
      throw err;
    }
  }

  /** "host:port" of every node, as store.redis.cluster takes them. */
  get seeds(): string[] {
    return this.nodes.map((n) => `${HOST}:${n.port}`);
  }

  /** Ports of the nodes whose process still runs. */
  get livePorts(): number[] {
    return this.nodes.filter((n) => alive(n.child)).map((n) => n.port);
  }

  /** One command on one node, over a connection of its own. */
  async call(port: number, ...args: (string | number)[]): Promise<unknown> {
    const client = new Redis({
      host: HOST,
      port,
      lazyConnect: true,
      connectTimeout: 1000,
      commandTimeout: 5000,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => {}); // reported through the rejected call
    try {
      await client.connect();
      return await client.call(String(args[0]), ...args.slice(1));
    } finally {
      client.disconnect();
    }
  }

  /** The slot map as one live node sees it. */
  async slots(askPort = this.livePorts[0]!): Promise<SlotRange[]> {
    const reply = (await this.call(askPort, 'CLUSTER', 'SLOTS')) as [number, number, ...[string, number][]][];
    return reply.map(([from, to, ...nodes]) => ({
      from,
      to,
      master: Number(nodes[0]![1]),
      replicas: nodes.slice(1).map((r) => Number(r[1])),
    }));
  }

  /** The port of the master serving `slot`, as `askPort` (any live node by default) sees it. */
  async nodeForSlot(slot: number, askPort?: number): Promise<number> {
    const range = (await this.slots(askPort)).find((r) => r.from <= slot && slot <= r.to);
    if (!range) throw new Error(`slot ${slot} is not served`);
    return range.master;
  }

  async masters(): Promise<number[]> {
    return [...new Set((await this.slots()).map((r) => r.master))].sort((a, b) => a - b);
  }

  async replicas(): Promise<number[]> {
    return [...new Set((await this.slots()).flatMap((r) => r.replicas))].sort((a, b) => a - b);
  }

  /** Waits until every live node reports cluster_state:ok with all slots served, and all agree on the slot map. */
  async waitHealthy(timeoutMs = 15_000): Promise<void> {
    await waitFor(
      async () => {
        try {
          const views = await Promise.all(
            this.livePorts.map(async (port) => {
              const info = String(await this.call(port, 'CLUSTER', 'INFO'));
              if (!/cluster_state:ok/.test(info) || !/cluster_slots_ok:16384/.test(info)) return undefined;
              const slots = await this.slots(port);
              // Every live node a master or a replica in this view: no node still joining.
              const listed = new Set(slots.flatMap((r) => [r.master, ...r.replicas]));
              return listed.size === this.livePorts.length ? JSON.stringify(slots) : undefined;
            }),
          );
          return views.every((v) => v !== undefined) && new Set(views).size === 1;
        } catch {
          return false;
        }
      },
      (ok) => ok,
      { timeoutMs, intervalMs: 100, what: 'cluster_state:ok on every node' },
    );
  }

  /** Kills one node with SIGKILL and waits for its process to exit. */
  async kill(port: number): Promise<void> {
    const node = this.nodes.find((n) => n.port === port);
    if (!node) throw new Error(`no node on port ${port}`);
    await killAndWait(node.child);
  }

  /**
   * Moves `slot` to the master on `toPort` the way redis-cli --cluster reshard does: IMPORTING on
   * the target, MIGRATING on the source, MIGRATE key by key, then SETSLOT NODE on every master.
   * `pauseMs` is waited after each key and before the final SETSLOT, so traffic meets every
   * intermediate state (ASK, TRYAGAIN, then MOVED).
   */
  async migrateSlot(slot: number, toPort: number, pauseMs = 0): Promise<Migration> {
    const from = await this.nodeForSlot(slot);
    if (from === toPort) throw new Error(`slot ${slot} is already on ${toPort}`);
    const sourceId = String(await this.call(from, 'CLUSTER', 'MYID'));
    const targetId = String(await this.call(toPort, 'CLUSTER', 'MYID'));
    await this.call(toPort, 'CLUSTER', 'SETSLOT', slot, 'IMPORTING', sourceId);
    await this.call(from, 'CLUSTER', 'SETSLOT', slot, 'MIGRATING', targetId);
    const moved: string[] = [];
    for (let round = 0; round < 100; round++) {
      const keys = (await this.call(from, 'CLUSTER', 'GETKEYSINSLOT', slot, 100)) as string[];
      if (keys.length === 0) break;
      for (const key of keys) {
        await this.call(from, 'MIGRATE', HOST, toPort, '', 0, 5000, 'KEYS', key);
        moved.push(key);
        await sleep(pauseMs);
      }
    }
    // Target first, then source, then the other masters (as redis-cli does).
    const others = (await this.masters()).filter((p) => p !== from && p !== toPort);
    for (const port of [toPort, from, ...others])
      await this.call(port, 'CLUSTER', 'SETSLOT', slot, 'NODE', targetId);
    return { from, to: toPort, keys: moved };
  }

  /** Kills every node and removes the data directory. Safe to call more than once. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    await Promise.all(this.nodes.map((n) => killAndWait(n.child)));
    process.off('exit', this.#killOnExit);
    rmSync(this.#dir, { recursive: true, force: true });
  }

  /** Starts one node on fresh free ports; tries other ports if the chosen ones were taken meanwhile. */
  async #startNode(): Promise<ClusterNode> {
    const taken = new Set(this.nodes.flatMap((n) => [n.port, n.busPort]));
    for (let attempt = 0; ; attempt++) {
      const port = await freshPort(taken);
      const busPort = await freshPort(new Set([...taken, port]));
      const child = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--cluster-port',
          String(busPort),
          '--bind',
          HOST,
          '--protected-mode',
          'no',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(this.#dir, `nodes-${port}.conf`),
          '--cluster-node-timeout',
          '1000',
          '--save',
          '',
          '--appendonly',
          'no',
          '--dir',
          this.#dir,
          // A replica's first full sync would otherwise wait 5 s for more replicas to join it, and
          // CLUSTER SLOTS lists a replica only once its offset moved, which idle takes one ping period.
          '--repl-diskless-sync-delay',
          '0',
          '--repl-ping-replica-period',
          '1',
        ],
        { stdio: 'ignore' },
      );
      const node = { port, busPort, child };
      this.nodes.push(node); // so stop() kills it whatever happens next
      try {
        await waitFor(
          async () => {
            if (!alive(child)) throw new Error(`redis-server on ${port} exited`);
            return this.call(port, 'PING').catch(() => undefined);
          },
          (reply) => reply === 'PONG',
          { timeoutMs: 10_000, what: `redis-server on ${port}` },
        );
        this.nodes.pop();
        return node;
      } catch (err) {
        this.nodes.pop();
        await killAndWait(child);
        if (attempt >= 2) throw err;
      }
    }
  }
}

async function freshPort(taken: ReadonlySet<number>): Promise<number> {
  for (let i = 0; i < 20; i++) {
    const port = await freePort();
    if (!taken.has(port) && port !== 6379) return port;
  }
  throw new Error('no free port');
}

async function killAndWait(child: ChildProcess): Promise<void> {
  if (!alive(child)) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await Promise.race([exited, sleep(5000)]);
}

/** `test` with `cluster`: a 3-master, 3-replica Redis Cluster of the test file's own. */
export const clusterTest = test.extend('cluster', { scope: 'file' }, async ({}, { onCleanup }) => {
  const cluster = await RedisCluster.start();
  onCleanup(() => cluster.stop());
  return cluster;
});
