import { Redis, type Cluster, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { throttledWarn } from '../logger.js';
import type { BatchWindowStore, SettleRequest } from './batching-store.js';
import { batchScriptArgs, parseBatchReply, type BatchedRequest } from './batch-window-script.js';
import { runLengths } from './batch-window-runs.js';
import { BatchScriptRunner } from './redis-function.js';
import { DatasetWatch, redactedUrl, settingsFault, StoreConfigError } from './redis-connection.js';
import type { ConnectionOptions } from 'node:tls';
import { probeScript } from './readiness-probe.js';
import { liftBanOn, listBansOn } from './redis-bans.js';
import {
  type BanEntry,
  type Readiness,
  StoreUnavailableError,
  type WindowRequest,
  type WindowResult,
  type WindowStore,
} from './window-store.js';
import { leaseOn, returnLeaseOn, type LeaseAsk, type LeaseGrant } from './lease-script.js';

export interface RedisStoreOptions {
  /** redis:// or rediss:// (TLS), with an optional ACL user and password. */
  readonly url: string;
  /** TLS settings (CA, server name, client certificate) of a rediss:// url. */
  readonly tls?: ConnectionOptions;
  readonly connectTimeoutMs: number;
  /** The key the readiness probe counts on (see probeKey). */
  readonly probeKey: string;
  readonly logger?: Logger;
  /** False: the batch script as EVALSHA, never as a Redis function (store.redis.functions). */
  readonly functions?: boolean;
}

/**
 * Settings that keep a request from ever waiting on, or double-counting through, an unhealthy
 * Redis. No commandTimeout: its timer would fire in the timers phase, before the poll phase reads
 * a reply that arrived while the event loop was busy, failing a batch Redis had answered in time.
 * The batching store keeps the deadline instead (see BatchingStore).
 */
export function redisClientOptions(o: Pick<RedisStoreOptions, 'connectTimeoutMs'>): RedisOptions {
  return {
    enableOfflineQueue: false, // fail at once while disconnected instead of queueing
    connectTimeout: o.connectTimeoutMs,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false, // a re-sent increment would count twice
    // The batching store already sends one script call per event-loop turn; auto-pipelining would
    // only queue that call behind the pipeline in flight, delaying it (and, before the batch
    // deadline, doubling the wait against a stalled Redis).
    enableAutoPipelining: false,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 5), 1000), // reconnect forever
  };
}

/**
 * Fixed windows in Redis: every window of a batch of requests in one FCALL round trip
 * (hitBatch, which BatchingStore feeds, under its deadline), or of one request (hit: a batch of
 * one, no deadline of its own, for tests and tools; the gateway always goes through BatchingStore).
 */
export class RedisStore implements WindowStore, BatchWindowStore {
  readonly client: Redis;
  /** [lease] Whether the server reached after a reconnect still holds the leased windows. */
  readonly dataset = new DatasetWatch();
  readonly #connectTimeoutMs: number;
  readonly #described: string;
  readonly #probeKey: string;
  readonly #script: BatchScriptRunner;

  constructor(options: RedisStoreOptions) {
    this.#connectTimeoutMs = options.connectTimeoutMs;
    this.#probeKey = options.probeKey;
    this.#described = `redis store ${redactedUrl(options.url)}`;
    // rediss:// alone would make ioredis speak TLS with Node's defaults; the options add the rest.
    const tls = options.tls && /^rediss:/i.test(options.url) ? { tls: options.tls } : {};
    this.client = new Redis(options.url, { ...redisClientOptions(options), ...tls });
    // ioredis emits on every failed reconnect attempt.
    const warn = options.logger ? throttledWarn(options.logger, 'redis store error') : undefined;
    this.client.on('error', (err: Error) => warn?.({ err: err.message }));
    this.#script = new BatchScriptRunner(this.client, () => [this.client], options.functions);
    const { host, port } = this.client.options;
    this.dataset.watch(this.client, `${host}:${port}`, () => true);
  }

  hitBatch(batch: readonly BatchedRequest[], settle: SettleRequest): void {
    const fail = (err: unknown) => {
      const error = new StoreUnavailableError(`redis: ${(err as Error).message}`, { cause: err });
      for (let i = 0; i < batch.length; i++) settle(i, error);
    };
    const runs = runLengths(batch);
    this.runScript(batchScriptArgs(batch, undefined, runs)).then((reply) => {
      let results: WindowResult[][];
      try {
        results = parseBatchReply(batch, reply, Date.now(), runs);
      } catch (err) {
        return fail(err);
      }
      for (let i = 0; i < results.length; i++) settle(i, results[i]!);
    }, fail);
  }

  /** Whether the batch script goes as FCALL (false: Redis has no functions for us, EVALSHA). */
  get usesFunctions(): boolean {
    return this.#script.functions;
  }

  /** One call of the batch script (see batchScriptArgs), as FCALL or, on a Redis without functions, EVALSHA. */
  runScript(args: readonly [number, ...(string | number)[]]): Promise<unknown[]> {
    return this.#script.run(args);
  }

  /** One request through the batch script: one script for both paths, so they cannot disagree. */
  hit(requests: readonly WindowRequest[]): Promise<WindowResult[]> {
    return new Promise((resolve, reject) =>
      this.hitBatch([requests], (_, outcome) =>
        outcome instanceof Error ? reject(outcome) : resolve(outcome),
      ),
    );
  }

  connect(): Promise<boolean> {
    return whenReady(this.client, this.#connectTimeoutMs, this.#described);
  }

  /** Ready when connected and the script runs on the probe key (bounded by the connect timeout). */
  async readiness(): Promise<Readiness> {
    if (this.client.status !== 'ready')
      return { ready: false, reason: `redis connection ${this.client.status}` };
    return probeScript((args) => this.runScript(args), this.#probeKey, this.#connectTimeoutMs);
  }

  listBans(prefix: string, max: number): Promise<{ bans: BanEntry[]; truncated: boolean }> {
    return listBansOn([this.client], prefix, max, Date.now());
  }

  liftBan(key: string, strikesKey: string): Promise<boolean> {
    return liftBanOn(this.client, key, strikesKey);
  }

  close(): Promise<void> {
    return quit(this.client);
  }

  // [lease] Leases of fixed windows (src/store/leasing-store.ts): one script run each, by key.
  lease(ask: LeaseAsk): Promise<LeaseGrant> {
    return leaseOn(this.client, ask);
  }

  returnLease(key: string, unspent: number, endsAt: number): Promise<number> {
    return returnLeaseOn(this.client, key, unspent, endsAt);
  }
}

/**
 * Resolves true once the client is ready, or false after `timeoutMs` (Redis away: the gateway
 * starts anyway and rides it out). Rejects with a StoreConfigError naming `described` when an
 * error shows the settings themselves are wrong (a refused password, an untrusted certificate),
 * which no reconnection would cure.
 */
export function whenReady(client: Redis | Cluster, timeoutMs: number, described: string): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve, reject) => {
    const done = (outcome: boolean | Error) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('error', onError);
      client.off('node error', onError);
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const onReady = () => done(true);
    const onError = (err: unknown) => {
      // A cluster that cannot load its slots reports the node's error as lastNodeError.
      const fault = settingsFault(err) ?? settingsFault((err as { lastNodeError?: unknown })?.lastNodeError);
      if (fault) done(new StoreConfigError(`${described}: ${fault}`));
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    client.once('ready', onReady);
    client.on('error', onError);
    client.on('node error', onError);
  });
}

/** How long a stop waits for QUIT's reply: a Redis that answers nothing must not hold the process. */
const QUIT_WAIT_MS = 1000;

/** QUIT, or a hard disconnect when the connection cannot send it or Redis does not answer it. */
export async function quit(client: Redis | Cluster): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const unanswered = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('QUIT unanswered')), QUIT_WAIT_MS);
  });
  try {
    const quitting = client.quit();
    quitting.catch(() => {}); // rejected by the disconnect below when unanswered
    await Promise.race([quitting, unanswered]);
  } catch {
    client.disconnect();
  } finally {
    clearTimeout(timer);
  }
}
