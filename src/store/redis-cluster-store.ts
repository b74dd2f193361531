import { createHash } from 'node:crypto';
import calculateSlot from 'cluster-key-slot';
import { Cluster, Command } from 'ioredis';
import type { Logger } from 'pino';
import { throttledWarn } from '../logger.js';
import { FIXED_WINDOW_LUA } from './fixed-window-script.js';
import { parseReply, quit, redisClientOptions, scriptArgs, whenReady } from './redis-store.js';
import {
  StoreUnavailableError,
  type WindowRequest,
  type WindowResult,
  type WindowStore,
} from './window-store.js';

export interface RedisClusterStoreOptions {
  /** Seed nodes, "host:port" (or redis:// URLs); the rest of the cluster is discovered. */
  readonly nodes: readonly string[];
  readonly commandTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly logger?: Logger;
}

const SCRIPT_SHA = createHash('sha1').update(FIXED_WINDOW_LUA).digest('hex');

/**
 * Errors that mean the script was not run, so sending it again cannot count twice: the node's
 * refusals, and ioredis refusing to send an auto-pipeline whose slots moved apart meanwhile.
 */
const DID_NOT_RUN =
  /^(?:(?:NOSCRIPT|MOVED|ASK|TRYAGAIN|CLUSTERDOWN) |All keys in the pipeline should belong)/;

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
 * Fixed windows in a Redis Cluster. A request's windows are grouped by hash slot and each slot's
 * windows are checked and counted by one atomic script, the slots in parallel. Windows of one
 * limiter always share a slot; when a request's limiters span several slots, each slot decides
 * alone (a request refused in one slot may still be counted in another).
 */
export class RedisClusterStore implements WindowStore {
  readonly client: Cluster;
  readonly #connectTimeoutMs: number;
  readonly #commandTimeoutMs: number;

  constructor(options: RedisClusterStoreOptions) {
    this.#connectTimeoutMs = options.connectTimeoutMs;
    this.#commandTimeoutMs = options.commandTimeoutMs;
    const { retryStrategy, enableOfflineQueue, enableAutoPipelining, ...redisOptions } =
      redisClientOptions(options);
    this.client = new Cluster([...options.nodes], {
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
  }

  async hit(requests: readonly WindowRequest[]): Promise<WindowResult[]> {
    // Not ready: fail now rather than wait for the cluster (auto-pipelining would wait unbounded).
    if (this.client.status !== 'ready')
      throw new StoreUnavailableError(`redis cluster: ${this.client.status}`);
    const groups = groupBySlot(requests);
    if (groups.length === 1) return parseReply(requests, await this.#run(requests), Date.now());
    // One script per slot, in parallel; if one fails the request is a store error, although the
    // other slots may have counted it.
    const parts = groups.map((g) => g.map((i) => requests[i]!));
    const replies = await Promise.all(parts.map((part) => this.#run(part)));
    const nowMs = Date.now();
    const results: WindowResult[] = new Array(requests.length);
    groups.forEach((group, g) => {
      const partial = parseReply(parts[g]!, replies[g]!, nowMs);
      group.forEach((i, k) => (results[i] = partial[k]!));
    });
    return results;
  }

  connect(): Promise<boolean> {
    return whenReady(this.client, this.#connectTimeoutMs);
  }

  async ready(): Promise<boolean> {
    return this.client.status === 'ready';
  }

  close(): Promise<void> {
    return quit(this.client);
  }

  /**
   * One slot's windows, in one script run. EVALSHA is a command ioredis knows the keys of, so
   * auto-pipelining routes it by its first key (a script defined with defineCommand and a varying
   * key count would be routed by the count, and rejected by ioredis).
   */
  async #run(windows: readonly WindowRequest[]): Promise<number[]> {
    const args = scriptArgs(windows);
    const started = Date.now();
    try {
      return (await this.client.evalsha(SCRIPT_SHA, windows.length, ...args)) as number[];
    } catch (err) {
      if (!DID_NOT_RUN.test((err as Error).message)) throw unavailable(err);
    }
    // The script did not run: not loaded on that node yet, or redirected inside an auto-pipeline
    // that also held other slots' commands (ioredis follows redirects only for whole pipelines).
    // Sent again on its own, ioredis follows MOVED, ASK and TRYAGAIN; within the same time budget.
    const command = new Command('eval', [FIXED_WINDOW_LUA, windows.length, ...args], {
      replyEncoding: 'utf8',
    });
    command.setTimeout(Math.max(1, this.#commandTimeoutMs - (Date.now() - started)));
    void this.client.sendCommand(command);
    try {
      return (await command.promise) as number[];
    } catch (err) {
      throw unavailable(err);
    }
  }
}
