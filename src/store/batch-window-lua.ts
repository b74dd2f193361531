import { BAN_LUA, BAN_SETUP_LUA } from './ban-script.js';
import { WINDOW_MATHS_LUA } from './batch-window-maths-lua.js';
import { RUN_MARK } from './batch-window-runs.js';

// The one window script, for every algorithm: many requests in one script run, in order (a single
// request is a batch of one). Its arguments and reply: batch-window-script.ts.
// BATCH_WINDOW_CORE defines `batch(KEYS, ARGV)` and all it uses. Loaded as a function library
// (redis-function.ts), its helpers and constants are defined once, at the load; run as a script
// (BATCH_WINDOW_LUA, for a Redis without functions) they are defined again on every call.
export const BATCH_WINDOW_CORE = `
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
-- ARGV[1]: the number of entries; ARGV[2]: '' or the time in ms; ARGV[3]: the number of window
-- specs, negative when no two share a key (a spec: a key and how a window on it counts, shared by
-- the requests of the call that have that window), then each spec's limit, period in ms, mode,
-- cost (hits to add), and for a token bucket its rate. mode: '1'/'0' fixed enforced/shadow,
-- 's1'/'s0' sliding, 'b1'/'b0' token bucket (limit is then its burst). A window has room when
-- used + cost <= limit.
-- Then per entry, a request: v > 0, its one window's spec; or v <= 0, then -v spec numbers, its
-- windows. Or a run of n identical requests (same specs, each on its own key, no ban): RUN_MARK + n
-- (${RUN_MARK} + n), then the request.
-- Returns, per request: blocked, then per window count and ttl (fixed), or count, ms until
-- reset and ms until a request of that cost passes (sliding, token bucket). Per run: how many of
-- its requests were counted (the first ones: once one is refused, the next sees the same windows
-- and is refused too), the time in ms (0 when the call has not read it), then per window its
-- state before the run: count and PTTL (fixed), window, current and previous (sliding), TAT and
-- remainder (token bucket). A run's hits move every algorithm's use by exactly its cost.
-- One call's state. A library's locals outlive its calls, so its tables are made once and reused
-- (making and growing tables was most of a call's Lua): each call sets what it reads, and clears
-- a key's slot before its first use. The reply, and its length (out[o + 1] is nil); the time, read
-- at the first need (given: ARGV[2]); the specs, in parallel arrays (no table per spec): kind 'f',
-- 's' or 'b', enforced, limit, period, cost, rate, and slot: the first spec on the same key, whose
-- slot holds its state; each key's state by slot, read at the key's first use: fixed x = count,
-- y = ttl (PTTL: -2 none, -1 no expiry), sliding x, y, z = window, current, previous, token
-- bucket x, y = tat, frac; add: a fixed key's hits to add; expire: its PEXPIRE; changed: the
-- slots to write, in order; per window of the request being decided, its use before the request
-- (ban_check reads it) and its spec.
-- The runtime's functions, bound at the first call (a library's load sees only \`redis\`): a
-- local costs less than a global, which a function looks up through a metatable. Numbers in
-- ARGV are read with \`+ 0\` (one conversion) rather than tonumber (a call, and two conversions).
local call, floor, ceil, max, format, match
local out, o, now, given = {}
local kind, enforced, limit, period, cost, rate, slot = {}, {}, {}, {}, {}, {}, {}
local x, y, z, add, expire, changed, nchanged = {}, {}, {}, {}, {}, {}
local used, sp = {}, {}
${WINDOW_MATHS_LUA}
${BAN_LUA}
-- Counts \`hits\` more on the slot of spec s (a request's, or a run's requests' summed).
local function count(s, hits)
  local k = slot[s]
  if not add[k] then
    add[k] = 0
    nchanged = nchanged + 1
    changed[nchanged] = k
  end
  local kd = kind[s]
  if kd == 'f' then
    -- As INCRBY, then PEXPIRE when the key was new (or had no expiry), per request would.
    if x[k] == 0 or y[k] < 0 then
      y[k] = period[s]
      expire[k] = period[s]
    end
    x[k] = x[k] + hits
    add[k] = add[k] + hits
  elseif kd == 's' then
    y[k] = y[k] + hits
  else
    local frac = y[k] + hits * period[s]
    x[k] = x[k] + floor(frac / rate[s])
    y[k] = frac % rate[s]
  end
end
local function batch(KEYS, ARGV)
  if not call then
    call, floor, ceil, max, format, match = redis.call, math.floor, math.ceil, math.max, string.format, string.match
  end
  o, now, given, nchanged = 0, nil, ARGV[2], 0
  ${BAN_SETUP_LUA}
  -- ARGV[3] < 0: every spec is on a key of its own (no slot to look up).
  local slot_of
  local specs = ARGV[3] + 0
  local own_keys = specs < 0
  if own_keys then specs = -specs else slot_of = {} end
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
    limit[s] = ARGV[a] + 0
    period[s] = ARGV[a + 1] + 0
    cost[s] = ARGV[a + 3] + 0
    x[s], add[s], expire[s] = nil, nil, nil
    if kd == 'b' then
      rate[s] = ARGV[a + 4] + 0
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
  for _ = 1, ARGV[1] + 0 do
    local runs = 1
    local v = ARGV[a] + 0
    if v >= ${RUN_MARK} then
      runs = v - ${RUN_MARK}
      a = a + 1
      v = ARGV[a] + 0
    end
    a = a + 1
    local n = 1
    if v <= 0 then n = -v end
    local blocked = 0
    for i = 1, n do
      local s = v
      if v <= 0 then
        s = ARGV[a] + 0
        a = a + 1
      end
      local k = slot[s]
      local kd = kind[s]
      if not x[k] then
        local key = KEYS[k]
        if kd == 'f' then
          x[k] = (call('GET', key) or 0) + 0
          y[k] = call('PTTL', key)
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
    if runs > 1 then
      -- A run: how many fit in every enforced window (each counted request adds its cost to the
      -- window's use), its state before, then the counted requests' hits, summed.
      local fit = runs
      for i = 1, n do
        local s = sp[i]
        if enforced[s] then
          local c, room = cost[s], limit[s] - used[i]
          local f = runs
          if room < c then
            f = 0
          elseif c > 0 then
            f = floor(room / c)
            if f * c > room then f = f - 1 end -- a quotient rounded up
          end
          if f < fit then fit = f end
        end
      end
      out[o + 1] = fit
      out[o + 2] = now or 0
      o = o + 2
      for i = 1, n do
        local s = sp[i]
        local k = slot[s]
        out[o + 1] = x[k]
        out[o + 2] = y[k]
        o = o + 2
        if kind[s] == 's' then
          o = o + 1
          out[o] = z[k]
        end
        if fit > 0 then count(s, cost[s] * fit) end
      end
      ban_request = ban_request + runs -- [bans] a run has none
    else
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
        if blocked == 0 then
          count(s, hits)
          c = c + hits
          if kd == 'f' then c = x[k] end -- with the hits of this request's windows before on the key
        end
        if kd == 'f' then
          local ttl = y[k]
          if ttl < 0 then ttl = p end
          out[o + 1] = c
          out[o + 2] = ttl
          o = o + 2
        elseif kd == 's' then
          out[o + 1] = c
          out[o + 2] = sliding_reset(x[k], y[k], z[k], p) - now
          out[o + 3] = sliding_retry(x[k], y[k], z[k], p, limit[s], hits) - now
          o = o + 3
        else
          out[o + 1] = c
          out[o + 2] = bucket_reset(x[k], y[k]) - now
          out[o + 3] = bucket_retry(x[k], y[k], p, rate[s], limit[s], hits) - now
          o = o + 3
        end
      end
      ban_count(blocked) -- [bans]
    end
  end
  -- One write per key changed: what the requests counted, summed.
  for j = 1, nchanged do
    local k = changed[j]
    local key = KEYS[k]
    if kind[k] == 'f' then
      call('INCRBY', key, add[k])
      if expire[k] then call('PEXPIRE', key, expire[k]) end
    elseif kind[k] == 's' then
      call('SET', key, format('%d %d %d', x[k], y[k], z[k]), 'PX', (x[k] + 2) * period[k] - now)
    else
      call('SET', key, format('%d %d', x[k], y[k]), 'PX', max(1, bucket_reset(x[k], y[k]) - now))
    end
  end
  out[o + 1] = nil
  return out
end
`;

/** The batch script as a script (EVAL, EVALSHA): the core, then its one call. */
export const BATCH_WINDOW_LUA = `${BATCH_WINDOW_CORE}
return batch(KEYS, ARGV)
`;
