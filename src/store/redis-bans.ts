import type { Cluster, Redis } from 'ioredis';
import type { BanEntry } from './window-store.js';

/**
 * Listing and lifting bans in Redis (one node, or every master of a cluster). Listing SCANs for the
 * ban keys rather than keeping an index: an index would cost a write on the hot path and, in a
 * cluster, one per slot (a ban key lives in its limiter's slot), and need its own expiry cleanup;
 * bans are few and listing is an operator's occasional read. SCAN is bounded: at most
 * MAX_SCAN_CALLS calls of SCAN_COUNT per node, and `max` bans; past either the list says truncated.
 */
export const SCAN_COUNT = 1000;
export const MAX_SCAN_CALLS = 100;

/** SCAN MATCH takes a glob: the prefix's own glob characters are escaped. */
const globEscape = (s: string) => s.replace(/[*?[\]\\]/g, '\\$&');

export async function listBansOn(
  nodes: readonly Redis[],
  prefix: string,
  max: number,
  nowMs: number,
): Promise<{ bans: BanEntry[]; truncated: boolean }> {
  const bans: BanEntry[] = [];
  const pattern = `${globEscape(prefix)}{*}:*:ban`;
  for (const node of nodes) {
    let cursor = '0';
    let calls = 0;
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT);
      cursor = next;
      calls++;
      const ttls = keys.length > 0 ? await node.pipeline(keys.map((k) => ['pttl', k])).exec() : [];
      for (let i = 0; i < keys.length; i++) {
        const [err, ttl] = ttls?.[i] ?? [null, -2];
        if (err || typeof ttl !== 'number' || ttl <= 0) continue; // gone meanwhile
        if (bans.length === max) return { bans, truncated: true };
        bans.push({ key: keys[i]!, untilMs: nowMs + ttl });
      }
    } while (cursor !== '0' && calls < MAX_SCAN_CALLS);
    if (cursor !== '0') return { bans, truncated: true };
  }
  return { bans, truncated: false };
}

/** Deletes a ban and its strikes (one slot: they share a hash tag); true when the ban was there. */
export async function liftBanOn(client: Redis | Cluster, key: string, strikesKey: string): Promise<boolean> {
  const [ban] = await Promise.all([client.del(key), client.del(strikesKey)]);
  return ban > 0;
}
