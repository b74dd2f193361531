import type { Cluster, Redis } from 'ioredis';

/**
 * Heartbeats in the store: every instance adds its id to one sorted set, scored by Redis's own
 * clock (so the instances' clocks need not agree), drops the ids not seen for `liveMs`, and reads
 * how many remain. One key under the prefix, with a hash tag of its own (one Cluster slot), apart
 * from the windows' keys (`<prefix>{<hash>}:…`); it expires when no instance beats.
 */
export const HEARTBEAT_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local live = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - live)
redis.call('PEXPIRE', KEYS[1], live)
return redis.call('ZCARD', KEYS[1])
`;

export const instancesKey = (keyPrefix: string): string => `${keyPrefix}{instances}`;

/** One heartbeat: adds this instance and answers the live instances, or rejects. */
export type Beat = () => Promise<number>;

/** A heartbeat through an ioredis client (one Redis or a Cluster: one key, so one slot). */
export function redisBeat(client: Redis | Cluster, key: string, id: string, liveMs: number): Beat {
  return async () => {
    const reply = await client.eval(HEARTBEAT_LUA, 1, key, id, liveMs);
    if (typeof reply !== 'number') throw new Error(`the heartbeat replied ${typeof reply}, not a number`);
    return reply;
  };
}
