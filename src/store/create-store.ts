import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema.js';
import { MemoryStore } from './memory-store.js';
import { RedisStore } from './redis-store.js';
import type { WindowStore } from './window-store.js';

/** Redis when store.redis.url is set (REDIS_URL in the default config), otherwise the in-process store. */
export function createStore(config: GatewayConfig['store'], logger?: Logger): WindowStore {
  if (config.redis.url) {
    return new RedisStore({
      url: config.redis.url,
      commandTimeoutMs: config.redis.commandTimeout,
      connectTimeoutMs: config.redis.connectTimeout,
      logger,
    });
  }
  return new MemoryStore({ maxKeys: config.memory.maxKeys, sweepIntervalMs: config.memory.sweepInterval });
}

export function storeKind(config: GatewayConfig['store']): 'redis' | 'memory' {
  return config.redis.url ? 'redis' : 'memory';
}
