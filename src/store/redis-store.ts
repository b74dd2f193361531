import { Redis, type Cluster, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { throttledWarn } from '../logger.js';
import type { BatchWindowStore } from './batching-store.js';
import {
  BATCH_WINDOW_LUA,
  batchScriptArgs,
  parseBatchReply,
  type BatchedRequest,
} from './batch-window-script.js';
import { FIXED_WINDOW_LUA } from './fixed-window-script.js';
import { BATCH_WINDOW_COMMAND, FIXED_WINDOW_COMMAND } from './redis-commands.js';
import {
  StoreUnavailableError,
  type WindowRequest,
  type WindowResult,
  type WindowStore,
} from './window-store.js';

export interface RedisStoreOptions {
  readonly url: string;
  readonly commandTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly logger?: Logger;
}

/** Settings that keep a request from ever waiting on, or double-counting through, an unhealthy Redis. */
export function redisClientOptions(
  o: Pick<RedisStoreOptions, 'commandTimeoutMs' | 'connectTimeoutMs'>,
): RedisOptions {
  return {
    enableOfflineQueue: false, // fail at once while disconnected instead of queueing
    commandTimeout: o.commandTimeoutMs,
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
 * Fixed windows in Redis: every window of a request in one EVALSHA round trip (hit), or every
 * window of a batch of requests in one (hitBatch, which BatchingStore feeds).
 */
export class RedisStore implements WindowStore, BatchWindowStore {
  readonly client: Redis;
  readonly #connectTimeoutMs: number;

  constructor(options: RedisStoreOptions) {
    this.#connectTimeoutMs = options.connectTimeoutMs;
    this.client = new Redis(options.url, redisClientOptions(options));
    // ioredis emits on every failed reconnect attempt.
    const warn = options.logger ? throttledWarn(options.logger, 'redis store error') : undefined;
    this.client.on('error', (err: Error) => warn?.({ err: err.message }));
    this.client.defineCommand(FIXED_WINDOW_COMMAND, { lua: FIXED_WINDOW_LUA });
    this.client.defineCommand(BATCH_WINDOW_COMMAND, { lua: BATCH_WINDOW_LUA });
  }

  hitBatch(batch: readonly BatchedRequest[]): Promise<WindowResult[]>[] {
    const decided = this.#runBatch(batch);
    return batch.map((_, i) => decided.then((results) => results[i]!));
  }

  async #runBatch(batch: readonly BatchedRequest[]): Promise<WindowResult[][]> {
    try {
      const reply = await this.client.tollgateWindowBatch(...batchScriptArgs(batch));
      return parseBatchReply(batch, reply, Date.now());
    } catch (err) {
      throw new StoreUnavailableError(`redis: ${(err as Error).message}`, { cause: err });
    }
  }

  async hit(requests: readonly WindowRequest[]): Promise<WindowResult[]> {
    let reply: number[];
    try {
      reply = await this.client.tollgateFixedWindow(requests.length, ...scriptArgs(requests));
    } catch (err) {
      throw new StoreUnavailableError(`redis: ${(err as Error).message}`, { cause: err });
    }
    return parseReply(requests, reply, Date.now());
  }

  connect(): Promise<boolean> {
    return whenReady(this.client, this.#connectTimeoutMs);
  }

  async ready(): Promise<boolean> {
    if (this.client.status !== 'ready') return false;
    try {
      return (await this.client.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  close(): Promise<void> {
    return quit(this.client);
  }
}

/** The script's KEYS then ARGV (limit, period, enforce per window), without the key count. */
export function scriptArgs(requests: readonly WindowRequest[]): (string | number)[] {
  const n = requests.length;
  const args: (string | number)[] = new Array(n * 4);
  requests.forEach((r, i) => {
    args[i] = r.key;
    args[n + 3 * i] = r.limit;
    args[n + 3 * i + 1] = r.periodMs;
    args[n + 3 * i + 2] = r.enforce ? 1 : 0;
  });
  return args;
}

/** Resolves true once the client is ready, or false after `timeoutMs`. */
export function whenReady(client: Redis | Cluster, timeoutMs: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      resolve(ok);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    client.once('ready', onReady);
  });
}

/** QUIT, or a hard disconnect when the connection cannot send it. */
export async function quit(client: Redis | Cluster): Promise<void> {
  try {
    await client.quit();
  } catch {
    client.disconnect();
  }
}

/** Turns the script's {blocked, count, ttl, ...} reply into results. */
export function parseReply(
  requests: readonly WindowRequest[],
  reply: readonly number[],
  nowMs: number,
): WindowResult[] {
  const blocked = reply[0] === 1;
  return requests.map((r, i) => {
    const count = Number(reply[2 * i + 1]);
    const before = blocked ? count : count - 1;
    return { count, limit: r.limit, resetAtMs: nowMs + Number(reply[2 * i + 2]), allowed: before < r.limit };
  });
}
