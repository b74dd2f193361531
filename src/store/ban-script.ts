import type { BanRequest, WindowRequest, WindowResult } from './window-store.js';

/**
 * The penalty boxes (config `ban`, see BanRequest) in the window script, in their own section so
 * that a ban costs no round trip of its own. The window script calls two hooks per request:
 * ban_check after its windows are read (a banned key blocks the request: nothing is counted), and
 * ban_count after they are counted (a refusal by the limiter's own windows is a strike).
 * A call without bans passes nothing more: its ARGV and reply are the window script's alone.
 * BAN_SETUP_LUA runs at the start of every call (it reads KEYS and ARGV); BAN_LUA, the hooks, is
 * defined once, before the call's function.
 */
export const BAN_SETUP_LUA = `
-- [bans] src/store/ban-script.ts. When the last ARGV is 'bans', ARGV[#ARGV - 1] is where the ban
-- entries start, each: request number, its first window (1-based in the request), the number of
-- the limiter's windows from there, after, within ms, for ms, then each window's limit and cost.
-- Their keys end KEYS, two per entry (ban, strikes), in order. Each entry adds one reply value
-- after its request's windows: ms the ban has left when it refused the request, -1 when this
-- request's refusal started the ban, else 0.
ban_request = 0
bans_of = NO_BANS
if ARGV[#ARGV] == 'bans' then
  bans_of, ban_ttl = {}, {}
  local p = tonumber(ARGV[#ARGV - 1])
  local entries = {}
  while p < #ARGV - 1 do
    local e = { r = tonumber(ARGV[p]), at = tonumber(ARGV[p + 1]), span = tonumber(ARGV[p + 2]),
      after = tonumber(ARGV[p + 3]), within = tonumber(ARGV[p + 4]), len = tonumber(ARGV[p + 5]),
      limits = {}, costs = {} }
    for s = 1, e.span do
      e.limits[s] = tonumber(ARGV[p + 4 + 2 * s])
      e.costs[s] = tonumber(ARGV[p + 5 + 2 * s])
    end
    p = p + 6 + 2 * e.span
    entries[#entries + 1] = e
  end
  local first = #KEYS - 2 * #entries
  for j, e in ipairs(entries) do
    e.key = KEYS[first + 2 * j - 1]
    e.strikes = KEYS[first + 2 * j]
    local list = bans_of[e.r]
    if not list then
      list = {}
      bans_of[e.r] = list
    end
    list[#list + 1] = e
  end
end
`;

/** The ban hooks and their state, defined once (a function library's load; see BAN_SETUP_LUA). */
export const BAN_LUA = `
-- [bans] The state of one call's bans, set by its setup: by request number, its entries;
-- the number of the request being decided; by ban key, its PTTL, read once per call (and set
-- when a ban starts). A call without bans shares NO_BANS, which nothing writes.
local NO_BANS = {}
local bans_of, ban_request, ban_ttl
-- Before counting: a live ban blocks the request. used: each window's use before it, by index.
local function ban_check(used, blocked)
  ban_request = ban_request + 1
  local list = bans_of[ban_request]
  if not list then return blocked end
  list.banned = false
  for _, e in ipairs(list) do
    local t = ban_ttl[e.key]
    if not t then
      t = redis.call('PTTL', e.key)
      ban_ttl[e.key] = t
    end
    e.ttl = t
    if e.ttl > 0 then list.banned = true end
    e.spent = false
    for s = 1, e.span do
      if used[e.at + s - 1] + e.costs[s] > e.limits[s] then e.spent = true end
    end
  end
  if list.banned then return 1 end
  return blocked
end
-- After counting: the strike of a request its limiter's windows refused; the after-th bans.
local function ban_count(blocked)
  local list = bans_of[ban_request]
  if not list then return end
  for _, e in ipairs(list) do
    local v = 0
    if list.banned then
      if e.ttl > 0 then v = e.ttl end
    elseif blocked == 1 and e.spent then
      local s = redis.call('INCR', e.strikes)
      if s == 1 or redis.call('PTTL', e.strikes) < 0 then redis.call('PEXPIRE', e.strikes, e.within) end
      if s >= e.after then
        redis.call('SET', e.key, '1', 'PX', e.len)
        ban_ttl[e.key] = e.len
        redis.call('DEL', e.strikes)
        v = -1
      end
    end
    o = o + 1
    out[o] = v
  end
end
`;

/** Appends the ban entries of a batch to the script's KEYS and ARGV; nothing when none has a ban. */
export function pushBanArgs(
  batch: readonly (readonly WindowRequest[])[],
  keys: string[],
  argv: (number | string)[],
): void {
  const start = argv.length + 1; // ARGV is 1-based
  let any = false;
  batch.forEach((windows, r) => {
    for (let i = 0; i < windows.length; i++) {
      const ban: BanRequest | undefined = windows[i]!.ban;
      if (!ban) continue;
      any = true;
      keys.push(ban.key, ban.strikesKey);
      argv.push(r + 1, i + 1, ban.span, ban.after, ban.withinMs, ban.forMs);
      for (let s = 0; s < ban.span; s++) argv.push(windows[i + s]!.limit, windows[i + s]!.cost ?? 1);
    }
  });
  if (any) argv.push(start, 'bans');
}

/** The reply values the ban entries of one request add. */
export function banReplyCount(windows: readonly WindowRequest[]): number {
  let n = 0;
  for (const w of windows) if (w.ban) n++;
  return n;
}

/** Reads a request's ban values (from `at` in the reply) into its results; returns the next position. */
export function readBanReply(
  windows: readonly WindowRequest[],
  results: WindowResult[],
  reply: readonly unknown[],
  at: number,
  nowMs: number,
): number {
  for (let i = 0; i < windows.length; i++) {
    if (!windows[i]!.ban) continue;
    const v = Number(reply[at++]);
    if (v > 0) results[i] = { ...results[i]!, bannedUntilMs: nowMs + v };
    else if (v === -1) results[i] = { ...results[i]!, banStarted: true };
  }
  return at;
}
