import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { BatchingStore, type BatchWindowStore } from './batching-store.js';
import type { LeaseBackend } from './lease-script.js';
import { LeasingStore } from './leasing-store.js';
import { LIVE_MS, LocalFallback } from './local-fallback.js';
import { instancesKey, redisBeat, type Beat } from './local-fallback-heartbeat.js';
import { MemoryStore } from './memory-store.js';
import { OverLimitCache } from './over-limit-cache.js';
import { RedisClusterStore } from './redis-cluster-store.js';
import { isTlsUrl, tlsOptions } from './redis-connection.js';
import { probeKey } from './readiness-probe.js';
import { RedisStore } from './redis-store.js';
import type { StoreObserver, WindowStore } from './window-store.js';

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

/**
 * The configured store. Network stores sit behind the over-limit cache and the leasing store; the
 * memory store needs neither (it answers in process: a leased window is counted exactly there).
 */
export function createStore(config: StoreConfig, logger?: Logger, metrics?: GatewayMetrics): WindowStore {
  return createStoreParts(config, logger, metrics).store;
}

/** The configured store, and the fallback of its onStoreError: local limiters (localFallback). */
export function createStoreParts(
  config: StoreConfig,
  logger?: Logger,
  metrics?: GatewayMetrics,
): { readonly store: WindowStore; readonly fallback: LocalFallback } {
  // The hits of one event-loop turn share one script call, under a deadline per batch.
  // The batching store measures each request's round trip as it settles it (no wrapper of its
  // own per request), inside the cache, so cache hits do not count as store latency, and do not
  // end an outage of the local fallback either.
  // [lease] Leased windows are spent in front of the batch (LeasingStore); the others pass through.
  // maxInFlight: store.redis.batchesInFlight for a single Redis (the next turns' hits gathered while a
  // call is out: bigger batches under load, none idle); 0 for a cluster, whose calls go to several masters.
  const networked = (store: BatchWindowStore & LeaseBackend, local: LocalFallback, maxInFlight: number) => {
    const observer: StoreObserver = {
      storeRoundTrip: (s) => metrics?.storeRoundTrip(s),
      storeError: () => metrics?.storeError(),
      storeAnswered: () => local.storeAnswered(),
    };
    const timeoutMs = config.redis.commandTimeout;
    const windowMs = config.redis.batchWindow;
    const batching = new BatchingStore(store, { timeoutMs, windowMs, maxInFlight, observer });
    const instances = () => local.instances;
    const leasing = new LeasingStore(batching, store, { timeoutMs, instances, observer });
    return new OverLimitCache(leasing, config.overLimitCache.maxKeys);
  };
  const common = {
    connectTimeoutMs: config.redis.connectTimeout,
    probeKey: probeKey(config.redis.keyPrefix),
    logger,
    functions: config.redis.functions,
  };
  const id = randomUUID();
  const heartbeatKey = instancesKey(config.redis.keyPrefix);
  // TLS files are read now, so a missing one fails the start with its name.
  const tls = (on: boolean) => (on ? { tls: tlsOptions(config.redis.tls) } : {});
  switch (storeKind(config)) {
    case 'redis-cluster': {
      const nodes = config.redis.cluster;
      const cluster = new RedisClusterStore({ nodes, ...tls(nodes.some(isTlsUrl)), ...common });
      const local = localFallback(
        config,
        logger,
        metrics,
        redisBeat(cluster.client, heartbeatKey, id, LIVE_MS),
      );
      return { store: networked(cluster, local, 0), fallback: local };
    }
    case 'redis': {
      const { url } = config.redis;
      const redis = new RedisStore({ url, ...tls(isTlsUrl(url)), ...common });
      const local = localFallback(
        config,
        logger,
        metrics,
        redisBeat(redis.client, heartbeatKey, id, LIVE_MS),
      );
      return { store: networked(redis, local, config.redis.batchesInFlight), fallback: local };
    }
    case 'memory':
      return {
        store: new MemoryStore({
          maxKeys: config.memory.maxKeys,
          sweepIntervalMs: config.memory.sweepInterval,
          observer: metrics,
        }),
        fallback: localFallback(config, logger, metrics), // never used: the memory store does not fail
      };
  }
}

/** The local fallback, its windows bounded as the memory store's (store.memory). */
export function localFallback(
  config: StoreConfig,
  logger?: Logger,
  metrics?: GatewayMetrics,
  beat?: Beat,
): LocalFallback {
  return new LocalFallback({
    maxKeys: config.memory.maxKeys,
    sweepIntervalMs: config.memory.sweepInterval,
    logger,
    observer: metrics,
    beat,
  });
}
