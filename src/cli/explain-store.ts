/**
 * What `tollgate explain` reads of a Redis (or Cluster) store, as a running gateway would see it:
 * the admin API's overrides (the hash the instances poll) and whether a ban is in force for the
 * request's keys. Reads only: nothing is counted, no strike is added. The memory store lives in the
 * gateway's process, so there is nothing to read from here.
 */
import type { Cluster, Redis } from 'ioredis';
import type { GatewayConfig } from '../config/schema.js';
import { parseOverrideAction, type OverrideAction } from '../limits/overrides.js';
import { storeKind } from '../store/create-store.js';
import { quit } from '../store/redis-store.js';
import { offPathClient, RedisOverrides } from '../store/shared-overrides.js';
import { withTimeout } from '../store/with-timeout.js';

export interface StoreReader {
  /** The admin API's overrides, in canonical form; an invalid stored entry is left out, as the gateway does. */
  overrides(): Promise<Map<string, OverrideAction>>;
  /** For each ban key, when its ban ends (epoch ms), or undefined when none is in force. */
  bansUntil(keys: readonly string[]): Promise<(number | undefined)[]>;
  close(): Promise<void>;
}

/** A reader of the configured store; undefined for the memory store. */
export function storeReader(config: GatewayConfig['store']): StoreReader | undefined {
  if (storeKind(config) === 'memory') return undefined;
  const client = offPathClient(config);
  let lastError: Error | undefined;
  client.on('error', (err: Error) => (lastError = err));
  const ms = config.redis.connectTimeout + 1000;
  // After the timeout, the store's last error names the cause best.
  const bounded = <T>(work: Promise<T>): Promise<T> =>
    withTimeout(work, ms, () => new Error(lastError?.message ?? `no answer within ${ms} ms`));
  return {
    async overrides() {
      const snapshot = await bounded(new RedisOverrides(client, config.redis.keyPrefix).read(undefined));
      const entries = new Map<string, OverrideAction>();
      for (const [key, json] of snapshot?.entries ?? []) {
        const action = parseJson(json);
        if (typeof action !== 'string') entries.set(key, action);
      }
      return entries;
    },
    async bansUntil(keys) {
      const now = Date.now();
      const ttls = await bounded(Promise.all(keys.map((k) => (client as Redis | Cluster).pttl(k))));
      return ttls.map((ttl) => (ttl > 0 ? now + ttl : undefined));
    },
    close: () => quit(client),
  };
}

function parseJson(json: string): OverrideAction | string {
  try {
    return parseOverrideAction(JSON.parse(json));
  } catch {
    return 'not JSON';
  }
}
