import { once } from 'node:events';
import calculateSlot from 'cluster-key-slot';
import { Cluster, type Redis } from 'ioredis';
import type { Logger } from 'pino';
import { throttledWarn } from '../logger.js';
import { batchScriptArgs, parseBatchReply, type BatchedRequest } from './batch-window-script.js';
import { runLengths } from './batch-window-runs.js';
import type { BatchWindowStore, SettleRequest } from './batching-store.js';
import type { ConnectionOptions } from 'node:tls';
import { clusterSeeds, DatasetWatch } from './redis-connection.js';
import { probeScript } from './readiness-probe.js';
import { BatchScriptRunner, type Args } from './redis-function.js';
import { liftBanOn, listBansOn } from './redis-bans.js';
import { quit, redisClientOptions, whenReady } from './redis-store.js';
import {
  StoreUnavailableError,
  type BanEntry,
  type Readiness,
  type WindowRequest,
  type WindowResult,
  type WindowStore,
} from './window-store.js';
import { leaseOn, returnLeaseOn, type LeaseAsk, type LeaseGrant } from './lease-script.js';

export interface RedisClusterStoreOptions {
  /** Seed nodes, "host:port" or redis:// and rediss:// URLs (with an ACL user); the rest is discovered. */
  readonly nodes: readonly string[];
  /** TLS settings of rediss:// seeds (every node's connection). */
  readonly tls?: ConnectionOptions;
  readonly connectTimeoutMs: number;
  /** The key the readiness probe counts on (see probeKey); one slot, so one node is probed. */
  readonly probeKey: string;
  readonly logger?: Logger;
  /** False: the batch script as EVALSHA, never as a Redis function (store.redis.functions). */
  readonly functions?: boolean;
}

/** The windows of one request that fall in one slot. */
interface Part {
  readonly request: number;
  readonly indexes: readonly number[];
}

const connectNode = (node: Redis) => {
  if (node.status === 'wait') node.connect().catch(() => undefined); // failures surface as 'node error'
};

/** Whether a key's slot is served by the master at `address` (or the slot map does not say). */
const onMaster = (client: Cluster, address: string) => (key: string) => {
  const master = client.slots[calculateSlot(key)]?.[0];
  return master === undefined || master === address;
};

/** A node's id; undefined when the ACL refuses CLUSTER MYID (a user of an older documented line). */
const nodeIdOf = async (node: Redis): Promise<string | undefined> => {
  try {
    return String(await node.call('CLUSTER', 'MYID'));
  } catch (err) {
    if ((err as Error).message.startsWith('NOPERM')) return undefined;
    throw err;
  }
};

/** The master of a call's first key's slot; every master when the slot map does not say. */
const keyMaster = (client: Cluster, args: Args): readonly Redis[] => {
  const address = args[0] > 0 ? client.slots[calculateSlot(String(args[1]))]?.[0] : undefined;
  const master = client.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === address);
  return master ? [master] : client.nodes('master');
};

/**
 * Waits (bounded) until every master's own connection is open. The cluster is "ready" once it has
 * the slot map, but a command sent to a node whose connection still opens is refused ("Connection
 * is closed."), so a start that counted at once could fail its first requests.
 */
async function mastersOpen(client: Cluster, timeoutMs: number): Promise<boolean> {
  const opening = client.nodes('master').filter((n) => n.status !== 'ready');
  if (opening.length === 0) return true;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
  const opened = Promise.all(
    opening.map((node) => {
      connectNode(node);
      return once(node, 'ready');
    }),
  ).then(
    () => true,
    () => false, // a node's error: not yet
  );
  try {
    return await Promise.race([opened, late]);
  } finally {
    clearTimeout(timer);
  }
}

const unavailable = (err: unknown) =>
  new StoreUnavailableError(`redis cluster: ${(err as Error).message}`, { cause: err });

/**
 * Indexes of `requests` grouped by Redis Cluster hash slot, groups in order of first appearance.
 * One limiter's windows share a hash tag, so they always fall in one group.
 */
export function groupBySlot(requests: readonly Pick<WindowRequest, 'key'>[]): number[][] {
  const groups = new Map<number, number[]>();
  requests.forEach((r, i) => {
    const slot = calculateSlot(r.key);
    const group = groups.get(slot);
    if (group) group.push(i);
    else groups.set(slot, [i]);
  });
  return [...groups.values()];
}

/**
 * Fixed windows in a Redis Cluster. The requests of a batch are grouped by hash slot and each
 * slot's requests are checked and counted by one atomic script, in order, the slots in parallel.
 * Windows of one limiter always share a slot; when a request's limiters span several slots, each
 * slot decides alone (a request refused in one slot may still be counted in another).
 */
export class RedisClusterStore implements WindowStore, BatchWindowStore {
  readonly client: Cluster;
  /** [lease] Whether each master reached after a reconnect still holds the leased windows of its slots. */
  readonly dataset = new DatasetWatch();
  readonly #connectTimeoutMs: number;
  readonly #described: string;
  readonly #probeKey: string;
  readonly #script: BatchScriptRunner;

  constructor(options: RedisClusterStoreOptions) {
    this.#connectTimeoutMs = options.connectTimeoutMs;
    this.#probeKey = options.probeKey;
    const seeds = clusterSeeds(options.nodes);
    this.#described = `redis cluster store ${seeds.described}`;
    const { retryStrategy, enableOfflineQueue, enableAutoPipelining, ...redisOptions } =
      redisClientOptions(options);
    // Every node, seeds and discovered ones alike, is reached with the seeds' user, password and TLS.
    if (seeds.username !== undefined) redisOptions.username = seeds.username;
    if (seeds.password !== undefined) redisOptions.password = seeds.password;
    if (seeds.tls) redisOptions.tls = options.tls ?? {};
    this.client = new Cluster(seeds.nodes, {
      redisOptions,
      enableOfflineQueue,
      enableAutoPipelining,
      clusterRetryStrategy: retryStrategy,
      // A command whose connection closed may have run: re-sending it could count twice. MOVED,
      // ASK, TRYAGAIN and CLUSTERDOWN replies mean it did not run, and are still followed.
      retryDelayOnFailover: 0,
    });
    const warn = options.logger ? throttledWarn(options.logger, 'redis cluster store error') : undefined;
    this.client.on('error', (err: Error) => warn?.({ err: err.message }));
    this.client.on('node error', (err: Error, node: string) => warn?.({ err: err.message, node }));
    // ioredis opens a node's connection at its first command, and with the offline queue off it
    // refuses ("Connection is closed.") every other command sent while that connection opens.
    // Auto-pipelining hid this by queueing; with one batch call per turn, connect every node as
    // soon as it is known instead.
    this.client.on('+node', (node: Redis) => {
      const address = `${node.options.host}:${node.options.port}`;
      // By node id too: a master that comes back empty at a new address (its nodes.conf kept) is known.
      this.dataset.watch(node, address, onMaster(this.client, address), () => nodeIdOf(node));
    });
    this.client.on('+node', connectNode);
    this.client.on('ready', () => this.client.nodes('all').forEach(connectNode));
    // A master without the library (new, failed over to, restarted empty) is loaded when it says so.
    this.#script = new BatchScriptRunner(
      this.client,
      (args) => keyMaster(this.client, args),
      options.functions,
    );
  }

  hit(requests: readonly WindowRequest[]): Promise<WindowResult[]> {
    return new Promise((resolve, reject) =>
      this.hitBatch([requests], (_, outcome) =>
        outcome instanceof Error ? reject(outcome) : resolve(outcome),
      ),
    );
  }

  /**
   * Each request's windows are split by slot (one limiter's windows share one), the parts grouped
   * by slot in arrival order, and each slot's parts decided by one batch script call, the slots in
   * parallel. A request fails when any of its slots' calls fails.
   */
  hitBatch(batch: readonly BatchedRequest[], settle: SettleRequest): void {
    // Not ready: fail now rather than wait for the cluster.
    if (this.client.status !== 'ready') {
      const err = new StoreUnavailableError(`redis cluster: ${this.client.status}`);
      queueMicrotask(() => batch.forEach((_, i) => settle(i, err))); // settled later, as promised
      return;
    }
    const bySlot = new Map<number, Part[]>();
    batch.forEach((windows, request) => {
      for (const indexes of groupBySlot(windows)) {
        const slot = calculateSlot(windows[indexes[0]!]!.key);
        const part = { request, indexes };
        const parts = bySlot.get(slot);
        if (parts) parts.push(part);
        else bySlot.set(slot, [part]);
      }
    });
    const results: WindowResult[][] = batch.map((windows) => new Array<WindowResult>(windows.length));
    // Per request: the slot calls it still waits for (0 once settled, failed or not).
    const waiting = new Array<number>(batch.length).fill(0);
    for (const parts of bySlot.values()) for (const p of parts) waiting[p.request]!++;
    // A request without windows waits for no slot: answered now (later, as promised), not never.
    waiting.forEach((n, request) => n === 0 && queueMicrotask(() => settle(request, [])));
    for (const parts of bySlot.values()) {
      const sub = parts.map((p) => p.indexes.map((i) => batch[p.request]![i]!));
      const runs = runLengths(sub);
      this.#run(batchScriptArgs(sub, undefined, runs))
        .then((reply) => parseBatchReply(sub, reply, Date.now(), runs))
        .then(
          (parsed) =>
            parts.forEach((p, k) => {
              p.indexes.forEach((i, j) => (results[p.request]![i] = parsed[k]![j]!));
              if (waiting[p.request]! > 0 && --waiting[p.request]! === 0)
                settle(p.request, results[p.request]!);
            }),
          (err: unknown) =>
            parts.forEach((p) => {
              if (waiting[p.request]! === 0) return;
              waiting[p.request] = 0;
              settle(p.request, err as Error);
            }),
        );
    }
  }

  async connect(): Promise<boolean> {
    if (!(await whenReady(this.client, this.#connectTimeoutMs, this.#described))) return false;
    return mastersOpen(this.client, this.#connectTimeoutMs);
  }

  /** Ready when the cluster is and the script runs on the probe key's node (bounded by the connect timeout). */
  async readiness(): Promise<Readiness> {
    if (this.client.status !== 'ready')
      return { ready: false, reason: `redis cluster ${this.client.status}` };
    return probeScript((args) => this.#run(args), this.#probeKey, this.#connectTimeoutMs);
  }

  /** Every master is scanned: a ban lives in its limiter's slot, wherever that is. */
  listBans(prefix: string, max: number): Promise<{ bans: BanEntry[]; truncated: boolean }> {
    return listBansOn(this.client.nodes('master'), prefix, max, Date.now());
  }

  liftBan(key: string, strikesKey: string): Promise<boolean> {
    return liftBanOn(this.client, key, strikesKey);
  }

  close(): Promise<void> {
    return quit(this.client);
  }

  /**
   * One slot's requests, in one script run: FCALL (or EVALSHA), which ioredis routes by its first
   * key and follows through MOVED, ASK and TRYAGAIN; the batching store's deadline still holds.
   */
  async #run(args: [number, ...(string | number)[]]): Promise<unknown[]> {
    try {
      return await this.#script.run(args);
    } catch (err) {
      throw unavailable(err);
    }
  }

  // [lease] Leases of fixed windows (src/store/leasing-store.ts): one script run each, by key.
  lease(ask: LeaseAsk): Promise<LeaseGrant> {
    return leaseOn(this.client, ask);
  }

  returnLease(key: string, unspent: number, endsAt: number): Promise<number> {
    return returnLeaseOn(this.client, key, unspent, endsAt);
  }
}
