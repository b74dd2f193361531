import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { MIN_SLICE } from '../limits/window-maths/lease.js';
import type { DatasetWatch } from './redis-connection.js';

// The lease scripts (docs/limiting.md#leases): one takes a slice of a fixed window's remaining
// budget and counts it, one gives an unspent slice back. A fixed window's key is the batch
// script's (a plain counter with the window's expiry), so leased and exact hits share it.

/**
 * Two ends of a window this close name the same window: each is the store's clock plus a TTL read
 * a moment apart, while a later window ends at least a period (≥ 1s) later.
 */
export const SAME_WINDOW_MS = 500;

/**
 * KEYS[1]: the window's key. ARGV: limit, period in ms (the expiry of a new window), divisor
 * (spread × live instances), max, need (the smallest slice worth taking). The slice is
 * src/limits/window-maths/lease.ts's leaseSlice; 0 when not worth it (nothing counted then).
 * Returns: slice, the count after it, the ms until the window resets, and the window's end in
 * Redis' clock (the give-back's proof that the window is still the same one).
 */
export const LEASE_LUA = `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local period = tonumber(ARGV[2])
local c = tonumber(redis.call('GET', key) or '0')
local slice = math.min(tonumber(ARGV[4]), math.floor((limit - c) / tonumber(ARGV[3])))
if slice < math.max(${MIN_SLICE}, tonumber(ARGV[5])) then slice = 0 end
local ttl
if slice > 0 then
  c = redis.call('INCRBY', key, slice)
  if c == slice then
    redis.call('PEXPIRE', key, period)
    ttl = period
  end
end
if not ttl then
  ttl = redis.call('PTTL', key)
  if ttl < 0 then
    if c > 0 then redis.call('PEXPIRE', key, period) end
    ttl = period
  end
end
local t = redis.call('TIME')
return { slice, c, ttl, tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + ttl }
`;

/**
 * KEYS[1]: the window's key. ARGV: unspent, the window's end as the lease reported it. Gives back
 * min(unspent, count) when the key still holds that window (its end within SAME_WINDOW_MS);
 * nothing when the window ended. Returns what it gave back.
 */
export const RETURN_LUA = `
local key = KEYS[1]
local c = tonumber(redis.call('GET', key) or '0')
local ttl = redis.call('PTTL', key)
if c <= 0 or ttl < 0 then return 0 end
local t = redis.call('TIME')
local ends = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + ttl
if math.abs(ends - tonumber(ARGV[2])) > ${SAME_WINDOW_MS} then return 0 end
local back = math.min(tonumber(ARGV[1]), c)
if back > 0 then redis.call('DECRBY', key, back) end
return back
`;

const sha = (lua: string) => createHash('sha1').update(lua).digest('hex');
const LEASE_SHA = sha(LEASE_LUA);
const RETURN_SHA = sha(RETURN_LUA);

/** A lease's answer (LEASE_LUA). */
export interface LeaseGrant {
  /** The slice granted and counted; 0: none (count the request exactly). */
  readonly slice: number;
  /** The window's count after the grant (every instance's slices included). */
  readonly count: number;
  /** Milliseconds until the window resets. */
  readonly ttlMs: number;
  /** The window's end in the store's clock: names the window when the slice is given back. */
  readonly endsAt: number;
}

/** What a lease asks (LEASE_LUA's ARGV). */
export interface LeaseAsk {
  readonly key: string;
  readonly limit: number;
  readonly periodMs: number;
  /** spread × live instances. */
  readonly divisor: number;
  readonly max: number;
  /** The smallest slice worth taking: the asking request's cost (at least 2). */
  readonly need: number;
}

/** A store that grants leases (RedisStore, RedisClusterStore). */
export interface LeaseBackend {
  lease(ask: LeaseAsk): Promise<LeaseGrant>;
  /** Gives `unspent` of a slice back to the window ending at `endsAt`; resolves what was given back. */
  returnLease(key: string, unspent: number, endsAt: number): Promise<number>;
  /** Tells when a Redis came back without the data slices were leased from (redis-connection.ts). */
  readonly dataset?: Pick<DatasetWatch, 'checking' | 'onLost'>;
}

/** Errors that mean the script did not run, so sending it again cannot count twice. */
const DID_NOT_RUN = /^(?:NOSCRIPT|MOVED|ASK|TRYAGAIN|CLUSTERDOWN) /;

/** EVALSHA (routed by its key on a cluster), then EVAL once when the script did not run. */
async function run(client: Redis | Cluster, lua: string, hash: string, key: string, args: number[]) {
  try {
    return (await client.evalsha(hash, 1, key, ...args)) as unknown;
  } catch (err) {
    if (!DID_NOT_RUN.test((err as Error).message)) throw err;
  }
  return (await client.eval(lua, 1, key, ...args)) as unknown;
}

/** Takes a lease on `client` (LEASE_LUA). */
export async function leaseOn(client: Redis | Cluster, a: LeaseAsk): Promise<LeaseGrant> {
  const reply = await run(client, LEASE_LUA, LEASE_SHA, a.key, [
    a.limit,
    a.periodMs,
    a.divisor,
    a.max,
    a.need,
  ]);
  if (!Array.isArray(reply) || reply.length !== 4) throw new Error('lease script: unexpected reply');
  const [slice, count, ttlMs, endsAt] = reply.map(Number) as [number, number, number, number];
  return { slice, count, ttlMs, endsAt };
}

/** Gives an unspent slice back on `client` (RETURN_LUA). */
export async function returnLeaseOn(
  client: Redis | Cluster,
  key: string,
  unspent: number,
  endsAt: number,
): Promise<number> {
  return Number(await run(client, RETURN_LUA, RETURN_SHA, key, [unspent, endsAt]));
}
