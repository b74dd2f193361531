import type { Redis, Result } from 'ioredis';

/** The name the batch script is defined under (defineCommand) on a single-node client. */
export const BATCH_WINDOW_COMMAND = 'tollgateWindowBatch' satisfies keyof Redis;

// The command defineCommand adds, typed on every ioredis client (ioredis' documented way).
declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** KEYS: each window spec's key; ARGV: entry count, the specs, then each request's (or run's) spec numbers. See BATCH_WINDOW_LUA. */
    tollgateWindowBatch(numKeys: number, ...args: (string | number)[]): Result<number[], Context>;
  }
}
