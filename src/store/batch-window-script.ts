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
-- Each key is read once per call (its first use) into a Lua table, the requests are applied to
-- that table in order, and each key changed is written once at the end: a batch of many requests
-- on one key costs Redis a few commands, not a few per request. Nothing else runs between (a
-- script is atomic, and Redis' clock stands still for its keys while it runs), so this answers
-- exactly what a read and write per request would.
-- Fixed windows start at a key's first hit and their expiry lives in Redis (PEXPIRE), so gateway
-- instances never need to agree on the clock. Sliding windows and token buckets need the time:
-- Redis' own (TIME, read once per call, only when such a window is in the call), so again the
-- instances need not agree; ARGV[2] may give it instead (tests replaying a clock). Their sums are
-- those of src/limits/window-maths/, in integers below 2^53 (the config checks the bounds).
-- KEYS: each window spec's key (then the bans' keys, see below).
-- ARGV[1]: the number of requests; ARGV[2]: '' or the time in ms; ARGV[3]: the number of window
-- specs, negative when no two share a key (a spec: a key and how a window on it counts, shared by the requests of the call that
-- have that window), then each spec's limit, period in ms, mode, cost (hits to add), and for a
-- token bucket its rate. mode: '1'/'0' fixed enforced/shadow, 's1'/'s0' sliding, 'b1'/'b0' token
-- bucket (limit is then its burst). A window has room when used + cost <= limit.
-- Then per request: v > 0, its one window's spec; or v <= 0, then -v spec numbers, its windows.
-- Returns, per request: blocked, then per window count and ttl (fixed), or count, ms until
-- reset and ms until a request of that cost passes (sliding, token bucket).
local out = {}
local o = 0
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
-- The specs, read once, in parallel arrays (no table per spec): kind 'f', 's' or 'b'; enforced;
-- limit, period, cost, rate; slot: the first spec on the same key, whose slot holds its state.
local kind, enforced, limit, period, cost, rate, slot = {}, {}, {}, {}, {}, {}, {}
-- ARGV[3] < 0: every spec is on a key of its own (no slot to look up).
local slot_of = {}
local specs = tonumber(ARGV[3])
local own_keys = specs < 0
if own_keys then specs = -specs end
local a = 4
for s = 1, specs do
  local mode = ARGV[a + 2]
  local kd, e = 'f', true
  if mode == '0' then e = false
  elseif mode == 's1' then kd = 's'
  elseif mode == 's0' then kd, e = 's', false
  elseif mode == 'b1' then kd = 'b'
  elseif mode == 'b0' then kd, e = 'b', false end
  kind[s] = kd
  enforced[s] = e
  limit[s] = tonumber(ARGV[a])
  period[s] = tonumber(ARGV[a + 1])
  cost[s] = tonumber(ARGV[a + 3])
  if kd == 'b' then
    rate[s] = tonumber(ARGV[a + 4])
    a = a + 5
  else
    a = a + 4
  end
  if own_keys then
    slot[s] = s
  else
    local first = slot_of[KEYS[s]]
    if not first then
      first = s
      slot_of[KEYS[s]] = s
    end
    slot[s] = first
  end
end
-- Each key's state by slot, read at the key's first use: fixed x = count, y = ttl (PTTL: -2 none,
-- -1 no expiry); sliding x, y, z = window, current, previous; token bucket x, y = tat, frac.
-- add: a fixed key's hits to add; expire: its PEXPIRE; changed: the slots to write, in order.
local x, y, z, add, expire, changed = {}, {}, {}, {}, {}, {}
local nchanged = 0
local used = {} -- per window of the request: its use before the request (ban_check reads it)
local sp = {} -- per window of the request: its spec
for _ = 1, tonumber(ARGV[1]) do
  local v = tonumber(ARGV[a])
  a = a + 1
  local n = 1
  if v <= 0 then n = -v end
  local blocked = 0
  for i = 1, n do
    local s = v
    if v <= 0 then
      s = tonumber(ARGV[a])
      a = a + 1
    end
    local k = slot[s]
    local kd = kind[s]
    if not x[k] then
      local key = KEYS[k]
      if kd == 'f' then
        x[k] = tonumber(redis.call('GET', key) or '0')
        y[k] = redis.call('PTTL', key)
      elseif kd == 's' then
        x[k], y[k], z[k] = sliding(key, period[s])
      else
        x[k], y[k] = bucket(key)
      end
    end
    local u
    if kd == 'f' then
      u = x[k]
    elseif kd == 's' then
      u = sliding_used(x[k], y[k], z[k], period[s])
    else
      u = bucket_used(x[k], y[k], period[s], rate[s], limit[s])
    end
    if enforced[s] and u + cost[s] > limit[s] then blocked = 1 end
    used[i] = u
    sp[i] = s
  end
  blocked = ban_check(used, blocked) -- [bans]
  o = o + 1
  out[o] = blocked
  for i = 1, n do
    local s = sp[i]
    local k = slot[s]
    local kd = kind[s]
    local c = used[i]
    local p = period[s]
    local hits = cost[s]
    if blocked == 0 and not add[k] then
      add[k] = 0
      nchanged = nchanged + 1
      changed[nchanged] = k
    end
    if kd == 'f' then
      -- As INCRBY, then PEXPIRE when the key was new (or had no expiry), per request would.
      if blocked == 0 then
        c = x[k] + hits
        x[k] = c
        add[k] = add[k] + hits
        if c == hits or y[k] < 0 then
          y[k] = p
          expire[k] = p
        end
      end
      local ttl = y[k]
      if ttl < 0 then ttl = p end
      out[o + 1] = c
      out[o + 2] = ttl
      o = o + 2
    elseif kd == 's' then
      if blocked == 0 then
        y[k] = y[k] + hits
        c = c + hits
      end
      out[o + 1] = c
      out[o + 2] = sliding_reset(x[k], y[k], z[k], p) - now
      out[o + 3] = sliding_retry(x[k], y[k], z[k], p, limit[s], hits) - now
      o = o + 3
    else
      if blocked == 0 then
        local frac = y[k] + hits * p
        x[k] = x[k] + math.floor(frac / rate[s])
        y[k] = frac % rate[s]
        c = c + hits
      end
      out[o + 1] = c
      out[o + 2] = bucket_reset(x[k], y[k]) - now
      out[o + 3] = bucket_retry(x[k], y[k], p, rate[s], limit[s], hits) - now
      o = o + 3
    end
  end
  ban_count(blocked) -- [bans]
end
-- One write per key changed: what the requests counted, summed.
for j = 1, nchanged do
  local k = changed[j]
  local key = KEYS[k]
  if kind[k] == 'f' then
    redis.call('INCRBY', key, add[k])
    if expire[k] then redis.call('PEXPIRE', key, expire[k]) end
  elseif kind[k] == 's' then
    redis.call('SET', key, string.format('%d %d %d', x[k], y[k], z[k]), 'PX', (x[k] + 2) * period[k] - now)
  else
    redis.call('SET', key, string.format('%d %d', x[k], y[k]), 'PX', math.max(1, bucket_reset(x[k], y[k]) - now))
  end
end
return out
`;

/** One request's windows, as the batch script takes them. */
export type BatchedRequest = readonly WindowRequest[];

/** The script's mode of a window: fixed '1'/'0', sliding 's1'/'s0', token bucket 'b1'/'b0'. */
const modeOf = (w: WindowRequest): string =>
  w.algorithm === undefined
    ? w.enforce
      ? '1'
      : '0'
    : (w.algorithm === 'sliding' ? 's' : 'b') + (w.enforce ? '1' : '0');

/** A window spec of one call: sent once, however many requests of the batch share it. */
interface Spec {
  readonly number: number;
  readonly limit: number;
  readonly periodMs: number;
  readonly mode: string;
  readonly cost: number;
  readonly rate: number | undefined;
}

/**
 * The batch script's key count, then its KEYS and ARGV (see BATCH_WINDOW_LUA): each distinct
 * window spec once (its key in KEYS, the rest in ARGV), then each request as the numbers of its
 * specs (one value for a request of one window). `nowMs`: the time the script counts sliding
 * windows and token buckets at; absent, Redis' own clock (the gateway never passes it).
 */
export function batchScriptArgs(
  batch: readonly BatchedRequest[],
  nowMs?: number,
): [number, ...(string | number)[]] {
  const keys: string[] = [];
  const specsOf = new Map<string, Spec[]>(); // by key
  const specArgs: (number | string)[] = [];
  const requestArgs: number[] = [];
  let count = 0;
  const specNumber = (w: WindowRequest): number => {
    const mode = modeOf(w);
    const cost = w.cost ?? 1;
    let specs = specsOf.get(w.key);
    if (specs === undefined) specsOf.set(w.key, (specs = []));
    else
      for (const s of specs)
        if (
          s.limit === w.limit &&
          s.periodMs === w.periodMs &&
          s.mode === mode &&
          s.cost === cost &&
          s.rate === w.rate
        )
          return s.number;
    specs.push({ number: ++count, limit: w.limit, periodMs: w.periodMs, mode, cost, rate: w.rate });
    keys.push(w.key);
    specArgs.push(w.limit, w.periodMs, mode, cost);
    if (mode[0] === 'b') specArgs.push(w.rate!);
    return count;
  };
  for (const windows of batch) {
    if (windows.length === 1) {
      requestArgs.push(specNumber(windows[0]!));
      continue;
    }
    requestArgs.push(-windows.length);
    for (const w of windows) requestArgs.push(specNumber(w));
  }
  // A negative spec count tells the script that no two specs share a key.
  const ownKeys = specsOf.size === count;
  const argv = [batch.length, nowMs ?? '', ownKeys ? -count : count, ...specArgs, ...requestArgs];
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
