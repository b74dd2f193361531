import { BAN_LUA, banReplyCount, pushBanArgs, readBanReply } from './ban-script.js';
import {
  scriptAlgorithmResult,
  scriptWindowResult,
  type WindowRequest,
  type WindowResult,
} from './window-store.js';

// The one window script, for every algorithm: many requests in one script run, in order (a single
// request is a batch of one).
export const BATCH_WINDOW_LUA = `
-- Checks and counts the windows of several requests, one request after the other, so a request
-- sees the hits of those before it. Each request is all-or-nothing: when any of its enforced
-- windows is spent, none of its windows is counted.
-- Fixed windows start at a key's first hit and their expiry lives in Redis (PEXPIRE), so gateway
-- instances never need to agree on the clock. Sliding windows and token buckets need the time:
-- Redis' own (TIME, read once per call, only when such a window is in the call), so again the
-- instances need not agree; ARGV[2] may give it instead (tests replaying a clock). Their sums are
-- those of src/limits/window-maths/, in integers below 2^53 (the config checks the bounds).
-- KEYS: every request's window keys, request after request.
-- ARGV[1]: the number of requests; ARGV[2]: '' or the time in ms; then per request: its window
-- count n, then for each of its n windows: limit, period in ms, mode, cost (hits to add), and for
-- a token bucket its rate. mode: '1'/'0' fixed enforced/shadow, 's1'/'s0' sliding, 'b1'/'b0'
-- token bucket (limit is then its burst). A window has room when used + cost <= limit.
-- Returns, per request: blocked, then per window count and ttl (fixed), or count, ms until
-- reset and ms until a request of that cost passes (sliding, token bucket).
local out = {}
local o = 0
local k = 0
local a = 3
local now
local function clock()
  if not now then
    if ARGV[2] ~= '' then
      now = tonumber(ARGV[2])
    else
      local t = redis.call('TIME')
      now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    end
  end
  return now
end
-- Sliding: the key holds "window current previous"; rolled to now.
local function sliding(key, period)
  local w = math.floor(clock() / period)
  local cur, prev = 0, 0
  local v = redis.call('GET', key)
  if v then
    local sw, sc, sp = string.match(v, '^(%d+) (%d+) (%d+)$')
    sw = tonumber(sw)
    if sw == w then
      cur = tonumber(sc)
      prev = tonumber(sp)
    elseif sw == w - 1 then
      prev = tonumber(sc)
    end
  end
  return w, cur, prev
end
local function sliding_used(w, cur, prev, period)
  return math.ceil(prev * (period - (now - w * period)) / period) + cur
end
local function sliding_reset(w, cur, prev, period)
  if cur > 0 then return (w + 2) * period end
  if prev > 0 then return (w + 1) * period end
  return now
end
local function sliding_retry(w, cur, prev, period, limit, cost)
  if cost > limit then return sliding_reset(w, cur, prev, period) end
  if sliding_used(w, cur, prev, period) + cost <= limit then return now end
  if cur + cost <= limit then
    return w * period + period - math.floor((limit - cur - cost) * period / prev)
  end
  return w * period + 2 * period - math.floor((limit - cost) * period / cur)
end
-- Token bucket (GCRA): the key holds "tat frac", the TAT being tat + frac / rate ms.
local function bucket(key)
  local tat, frac = clock(), 0
  local v = redis.call('GET', key)
  if v then
    local t, f = string.match(v, '^(%d+) (%d+)$')
    t = tonumber(t)
    f = tonumber(f)
    if t > now or (t == now and f > 0) then
      tat = t
      frac = f
    end
  end
  return tat, frac
end
local function bucket_used(tat, frac, period, rate, burst)
  return burst - math.floor((burst * period - ((tat - now) * rate + frac)) / period)
end
local function bucket_reset(tat, frac)
  if frac > 0 then tat = tat + 1 end
  return math.max(now, tat)
end
local function bucket_retry(tat, frac, period, rate, burst, cost)
  if cost > burst then return bucket_reset(tat, frac) end
  return math.max(now, tat + math.ceil((frac - (burst - cost) * period) / rate))
end
${BAN_LUA}
for _ = 1, tonumber(ARGV[1]) do
  local n = tonumber(ARGV[a])
  a = a + 1
  local first = a
  local used = {}
  local st -- the state of sliding windows and token buckets, made only when the request has one
  local blocked = 0
  for i = 1, n do
    local mode = ARGV[a + 2]
    local u
    if mode == '1' or mode == '0' then
      u = tonumber(redis.call('GET', KEYS[k + i]) or '0')
      if mode == '1' and u + tonumber(ARGV[a + 3]) > tonumber(ARGV[a]) then blocked = 1 end
      a = a + 4
    else
      st = st or {}
      local limit = tonumber(ARGV[a])
      local period = tonumber(ARGV[a + 1])
      local cost = tonumber(ARGV[a + 3])
      if mode == 's1' or mode == 's0' then
        local w, cur, prev = sliding(KEYS[k + i], period)
        st[i] = { w, cur, prev }
        u = sliding_used(w, cur, prev, period)
        a = a + 4
      else
        local tat, frac = bucket(KEYS[k + i])
        st[i] = { tat, frac }
        u = bucket_used(tat, frac, period, tonumber(ARGV[a + 4]), limit)
        a = a + 5
      end
      if (mode == 's1' or mode == 'b1') and u + cost > limit then blocked = 1 end
    end
    used[i] = u
  end
  blocked = ban_check(used, blocked) -- [bans]
  o = o + 1
  out[o] = blocked
  local b = first
  for i = 1, n do
    local key = KEYS[k + i]
    local period = tonumber(ARGV[b + 1])
    local mode = ARGV[b + 2]
    local cost = tonumber(ARGV[b + 3])
    local c = used[i]
    if mode == '1' or mode == '0' then
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
      b = b + 4
    elseif mode == 's1' or mode == 's0' then
      local limit = tonumber(ARGV[b])
      local w, cur, prev = st[i][1], st[i][2], st[i][3]
      if blocked == 0 then
        cur = cur + cost
        c = c + cost
        redis.call('SET', key, string.format('%d %d %d', w, cur, prev), 'PX', (w + 2) * period - now)
      end
      out[o + 1] = c
      out[o + 2] = sliding_reset(w, cur, prev, period) - now
      out[o + 3] = sliding_retry(w, cur, prev, period, limit, cost) - now
      o = o + 3
      b = b + 4
    else
      local limit = tonumber(ARGV[b])
      local rate = tonumber(ARGV[b + 4])
      local tat, frac = st[i][1], st[i][2]
      if blocked == 0 then
        frac = frac + cost * period
        tat = tat + math.floor(frac / rate)
        frac = frac % rate
        c = c + cost
        local px = math.max(1, bucket_reset(tat, frac) - now)
        redis.call('SET', key, string.format('%d %d', tat, frac), 'PX', px)
      end
      out[o + 1] = c
      out[o + 2] = bucket_reset(tat, frac) - now
      out[o + 3] = bucket_retry(tat, frac, period, rate, limit, cost) - now
      o = o + 3
      b = b + 5
    end
  end
  ban_count(blocked) -- [bans]
  k = k + n
end
return out
`;

/** One request's windows, as the batch script takes them. */
export type BatchedRequest = readonly WindowRequest[];

/**
 * The batch script's key count, then its KEYS and ARGV (see BATCH_WINDOW_LUA). `nowMs`: the time
 * the script counts sliding windows and token buckets at; absent, Redis' own clock (the gateway
 * never passes it).
 */
export function batchScriptArgs(
  batch: readonly BatchedRequest[],
  nowMs?: number,
): [number, ...(string | number)[]] {
  const keys: string[] = [];
  const argv: (number | string)[] = [batch.length, nowMs ?? ''];
  for (const windows of batch) {
    argv.push(windows.length);
    for (const w of windows) {
      keys.push(w.key);
      if (w.algorithm === undefined) argv.push(w.limit, w.periodMs, w.enforce ? 1 : 0, w.cost ?? 1);
      else if (w.algorithm === 'sliding')
        argv.push(w.limit, w.periodMs, w.enforce ? 's1' : 's0', w.cost ?? 1);
      else argv.push(w.limit, w.periodMs, w.enforce ? 'b1' : 'b0', w.cost ?? 1, w.rate!);
    }
  }
  pushBanArgs(batch, keys, argv);
  return [keys.length, ...keys, ...argv];
}

/** Splits the batch script's flat reply into each request's results. */
export function parseBatchReply(
  batch: readonly BatchedRequest[],
  reply: readonly unknown[],
  nowMs: number,
): WindowResult[][] {
  let expected = 0;
  for (const windows of batch) {
    expected++;
    for (const w of windows) expected += w.algorithm === undefined ? 2 : 3;
    expected += banReplyCount(windows);
  }
  if (reply.length !== expected)
    throw new Error(`batch script replied ${reply.length} values, not ${expected}`);
  let at = 0;
  return batch.map((windows) => {
    const blocked = Number(reply[at++]) === 1;
    const results = windows.map((w) => {
      const count = Number(reply[at++]);
      if (w.algorithm === undefined) return scriptWindowResult(w, count, Number(reply[at++]), blocked, nowMs);
      const resetIn = Number(reply[at++]);
      return scriptAlgorithmResult(w, count, resetIn, Number(reply[at++]), blocked, nowMs);
    });
    at = readBanReply(windows, results, reply, at, nowMs); // [bans]
    return results;
  });
}
