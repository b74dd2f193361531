import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { BatchingStore, type BatchWindowStore } from './batching-store.js';
import { MemoryStore } from './memory-store.js';
import { OverLimitCache } from './over-limit-cache.js';
import { RedisClusterStore } from './redis-cluster-store.js';
import { isTlsUrl, tlsOptions } from './redis-connection.js';
import { probeKey } from './readiness-probe.js';
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
  // The hits of one event-loop turn share one script call, under one deadline timer per batch.
  // The batching store measures each request's round trip as it settles it (no wrapper of its
  // own per request), inside the cache, so cache hits do not count as store latency.
  const networked = (store: BatchWindowStore) =>
    new OverLimitCache(
      new BatchingStore(store, { timeoutMs: config.redis.commandTimeout, observer: metrics }),
      config.overLimitCache.maxKeys,
    );
  const common = {
    connectTimeoutMs: config.redis.connectTimeout,
    probeKey: probeKey(config.redis.keyPrefix),
    logger,
  };
  // TLS files are read now, so a missing one fails the start with its name.
  const tls = (on: boolean) => (on ? { tls: tlsOptions(config.redis.tls) } : {});
  switch (storeKind(config)) {
    case 'redis-cluster': {
      const nodes = config.redis.cluster;
      return networked(new RedisClusterStore({ nodes, ...tls(nodes.some(isTlsUrl)), ...common }));
    }
    case 'redis': {
      const { url } = config.redis;
      return networked(new RedisStore({ url, ...tls(isTlsUrl(url)), ...common }));
    }
    case 'memory':
      return new MemoryStore({
        maxKeys: config.memory.maxKeys,
        sweepIntervalMs: config.memory.sweepInterval,
        observer: metrics,
      });
  }
}
