import { scriptWindowResult, type WindowRequest, type WindowResult } from './window-store.js';

// The one fixed-window script: many requests in one script run, in order (a single request is a
// batch of one).
export const BATCH_WINDOW_LUA = `
-- Checks and counts the fixed windows of several requests, one request after the other, so a
-- request sees the hits of those before it. Each request is all-or-nothing: when any of its
-- enforced windows is spent, none of its windows is incremented. The window starts at a key's
-- first hit and its expiry lives in Redis (PEXPIRE), so gateway instances never need to agree on
-- the clock.
-- KEYS: every request's window keys, request after request.
-- ARGV[1]: the number of requests; then per request: its window count n, then limit, period in
-- ms, enforce (1/0) and cost (hits to add) for each of its n windows. A window has room when
-- count + cost <= limit.
-- Returns, per request: blocked, then count and ttl per window.
local out = {}
local o = 0
local k = 0
local a = 2
for _ = 1, tonumber(ARGV[1]) do
  local n = tonumber(ARGV[a])
  a = a + 1
  local counts = {}
  local blocked = 0
  for i = 1, n do
    local c = tonumber(redis.call('GET', KEYS[k + i]) or '0')
    counts[i] = c
    local at = a + 4 * (i - 1)
    if c + tonumber(ARGV[at + 3]) > tonumber(ARGV[at]) and ARGV[at + 2] == '1' then blocked = 1 end
  end
  o = o + 1
  out[o] = blocked
  for i = 1, n do
    local key = KEYS[k + i]
    local period = tonumber(ARGV[a + 4 * (i - 1) + 1])
    local cost = tonumber(ARGV[a + 4 * (i - 1) + 3])
    local c = counts[i]
    local ttl
    if blocked == 0 then
      c = redis.call('INCRBY', key, cost)
      if c == cost then
        redis.call('PEXPIRE', key, period)
        ttl = period
      else
        ttl = redis.call('PTTL', key)
        if ttl < 0 then
          redis.call('PEXPIRE', key, period)
          ttl = period
        end
      end
    else
      ttl = redis.call('PTTL', key)
      if ttl < 0 then ttl = period end
    end
    out[o + 1] = c
    out[o + 2] = ttl
    o = o + 2
  end
  k = k + n
  a = a + 4 * n
end
return out
`;

/** One request's windows, as the batch script takes them. */
export type BatchedRequest = readonly WindowRequest[];

/** The batch script's key count, then its KEYS and ARGV (see BATCH_WINDOW_LUA). */
export function batchScriptArgs(batch: readonly BatchedRequest[]): [number, ...(string | number)[]] {
  const keys: string[] = [];
  const argv: number[] = [batch.length];
  for (const windows of batch) {
    argv.push(windows.length);
    for (const w of windows) {
      keys.push(w.key);
      argv.push(w.limit, w.periodMs, w.enforce ? 1 : 0, w.cost ?? 1);
    }
  }
  return [keys.length, ...keys, ...argv];
}

/** Splits the batch script's flat reply into each request's results. */
export function parseBatchReply(
  batch: readonly BatchedRequest[],
  reply: readonly unknown[],
  nowMs: number,
): WindowResult[][] {
  const expected = batch.reduce((n, windows) => n + 1 + 2 * windows.length, 0);
  if (reply.length !== expected)
    throw new Error(`batch script replied ${reply.length} values, not ${expected}`);
  let at = 0;
  return batch.map((windows) => {
    const blocked = Number(reply[at++]) === 1;
    return windows.map((w) => {
      const count = Number(reply[at++]);
      return scriptWindowResult(w, count, Number(reply[at++]), blocked, nowMs);
    });
  });
}
