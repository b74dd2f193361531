import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { BatchingStore, type BatchWindowStore } from './batching-store.js';
import { InstrumentedStore } from './instrumented-store.js';
import { MemoryStore } from './memory-store.js';
import { OverLimitCache } from './over-limit-cache.js';
import { RedisClusterStore } from './redis-cluster-store.js';
import { RedisStore } from './redis-store.js';
import type { WindowStore } from './window-store.js';

type StoreConfig = GatewayConfig['store'];

export type StoreKind = 'redis-cluster' | 'redis' | 'memory';

/**
 * Redis Cluster when store.redis.cluster lists seed nodes (REDIS_CLUSTER_NODES), else Redis when
 * store.redis.url is set (REDIS_URL in the default config), otherwise the in-process store.
 */
export function storeKind(config: StoreConfig): StoreKind {
  if (config.redis.cluster.length > 0) return 'redis-cluster';
  return config.redis.url ? 'redis' : 'memory';
}

/** The configured store. Network stores sit behind the over-limit cache; the memory store needs none. */
export function createStore(config: StoreConfig, logger?: Logger, metrics?: GatewayMetrics): WindowStore {
  // Round trips are measured inside the cache, so cache hits do not count as store latency. The
  // hits of one event-loop turn share one script call, under one deadline timer per batch.
  const networked = (store: BatchWindowStore) => {
    const bounded = new BatchingStore(store, { timeoutMs: config.redis.commandTimeout });
    return new OverLimitCache(
      metrics ? new InstrumentedStore(bounded, metrics) : bounded,
      config.overLimitCache.maxKeys,
    );
  };
  const timeouts = {
    commandTimeoutMs: config.redis.commandTimeout,
    connectTimeoutMs: config.redis.connectTimeout,
  };
  switch (storeKind(config)) {
    case 'redis-cluster':
      return networked(new RedisClusterStore({ nodes: config.redis.cluster, ...timeouts, logger }));
    case 'redis':
      return networked(new RedisStore({ url: config.redis.url, ...timeouts, logger }));
    case 'memory': {
      const store = new MemoryStore({
        maxKeys: config.memory.maxKeys,
        sweepIntervalMs: config.memory.sweepInterval,
      });
      return metrics ? new InstrumentedStore(store, metrics) : store;
    }
  }
}
