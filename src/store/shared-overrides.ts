/**
 * The overrides set through the admin API, kept in the store so every instance applies them: in
 * Redis a hash of "<kind>:<value>" to the override's JSON, and a version key bumped in the same
 * transaction by every change. Instances poll the version (one GET per interval) and read the hash
 * only when it moved. Both keys share one hash tag, so they sit in one Redis Cluster slot.
 * The memory store keeps them in process (one instance: nothing to share).
 */
import { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema.js';
import { throttledWarn } from '../logger.js';
import { clusterSeeds, isTlsUrl, tlsOptions } from './redis-connection.js';
import { quit, redisClientOptions } from './redis-store.js';
import { storeKind } from './create-store.js';

/** The entries, as JSON text by key; `version` changes with every change. */
export interface OverridesSnapshot {
  readonly version: string;
  readonly entries: ReadonlyMap<string, string>;
}

export interface SharedOverrides {
  /** The entries, or undefined when the version is still `known` (nothing changed). */
  read(known: string | undefined): Promise<OverridesSnapshot | undefined>;
  put(key: string, json: string): Promise<void>;
  /** True when the key was set. */
  delete(key: string): Promise<boolean>;
  close(): Promise<void>;
}

/** The two keys of the shared overrides under the store's key prefix. */
export const overridesKeys = (prefix: string) => ({
  entries: `${prefix}{overrides}:entries`,
  version: `${prefix}{overrides}:version`,
});

export class MemoryOverrides implements SharedOverrides {
  readonly #entries = new Map<string, string>();
  #version = 0;

  async read(known: string | undefined): Promise<OverridesSnapshot | undefined> {
    const version = String(this.#version);
    return version === known ? undefined : { version, entries: new Map(this.#entries) };
  }

  async put(key: string, json: string): Promise<void> {
    this.#entries.set(key, json);
    this.#version++;
  }

  async delete(key: string): Promise<boolean> {
    const had = this.#entries.delete(key);
    this.#version++;
    return had;
  }

  async close(): Promise<void> {}
}

export class RedisOverrides implements SharedOverrides {
  readonly #keys: ReturnType<typeof overridesKeys>;

  constructor(
    private readonly client: Redis | Cluster,
    prefix: string,
  ) {
    this.#keys = overridesKeys(prefix);
  }

  async read(known: string | undefined): Promise<OverridesSnapshot | undefined> {
    const version = (await this.client.get(this.#keys.version)) ?? '0';
    if (version === known) return undefined;
    // Entries and version in one transaction, so the version read names these very entries.
    const reply = await this.client.multi().hgetall(this.#keys.entries).get(this.#keys.version).exec();
    if (!reply || reply.some(([err]) => err)) throw new Error('redis: reading the overrides failed');
    const entries = reply[0]![1] as Record<string, string>;
    return { version: (reply[1]![1] as string | null) ?? '0', entries: new Map(Object.entries(entries)) };
  }

  async put(key: string, json: string): Promise<void> {
    await this.#write((m) => m.hset(this.#keys.entries, key, json));
  }

  async delete(key: string): Promise<boolean> {
    const reply = await this.#write((m) => m.hdel(this.#keys.entries, key));
    return reply === 1;
  }

  async #write(command: (m: ReturnType<Redis['multi']>) => ReturnType<Redis['multi']>): Promise<unknown> {
    const reply = await command(this.client.multi() as ReturnType<Redis['multi']>)
      .incr(this.#keys.version)
      .exec();
    const failed = reply?.find(([err]) => err);
    if (!reply || failed) throw new Error(`redis: ${failed?.[0]?.message ?? 'transaction aborted'}`);
    return reply[0]![1];
  }

  close(): Promise<void> {
    return quit(this.client);
  }
}

/** The shared overrides of the configured store: a connection of their own to Redis (or Cluster). */
export function sharedOverrides(config: GatewayConfig['store'], logger?: Logger): SharedOverrides {
  if (storeKind(config) === 'memory') return new MemoryOverrides();
  const warn = logger ? throttledWarn(logger, 'redis overrides error') : undefined;
  const client = offPathClient(config);
  client.on('error', (err: Error) => warn?.({ err: err.message }));
  return new RedisOverrides(client, config.redis.keyPrefix);
}

/**
 * A client of the configured Redis (or Cluster) for occasional reads off the request path (the
 * overrides' poll, `tollgate explain`); the caller listens for its errors and quits it.
 */
export function offPathClient(config: GatewayConfig['store']): Redis | Cluster {
  const kind = storeKind(config);
  // Unlike the windows' connection, commands wait for a connection (the poll is not on the
  // request path); maxRetriesPerRequest 0 still fails them at the first failed reconnect.
  // A command timeout of its own bounds a poll against a stalled Redis (the next poll asks again).
  const options = {
    ...redisClientOptions({ connectTimeoutMs: config.redis.connectTimeout }),
    enableOfflineQueue: true,
    commandTimeout: Math.max(1000, config.redis.connectTimeout),
  };
  let client: Redis | Cluster;
  if (kind === 'redis') {
    const { url } = config.redis;
    client = new Redis(url, { ...options, ...(isTlsUrl(url) ? { tls: tlsOptions(config.redis.tls) } : {}) });
  } else {
    const seeds = clusterSeeds(config.redis.cluster);
    const { retryStrategy, enableOfflineQueue, ...redisOptions } = options;
    if (seeds.username !== undefined) redisOptions.username = seeds.username;
    if (seeds.password !== undefined) redisOptions.password = seeds.password;
    if (seeds.tls) redisOptions.tls = tlsOptions(config.redis.tls);
    client = new Cluster(seeds.nodes, {
      redisOptions,
      enableOfflineQueue,
      clusterRetryStrategy: retryStrategy,
      retryDelayOnFailover: 0,
    });
  }
  return client;
}
