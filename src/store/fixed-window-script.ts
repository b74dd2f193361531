// Checks and counts fixed windows atomically, in one round trip (loaded once, run with EVALSHA).
export const FIXED_WINDOW_LUA = `
-- Checks and counts fixed windows atomically. The window starts at a key's first hit and its
-- expiry lives in Redis (PEXPIRE), so gateway instances never need to agree on the clock.
-- KEYS[i]: the window keys. ARGV[4i-3], ARGV[4i-2], ARGV[4i-1], ARGV[4i]: limit, period in ms,
-- enforce (1/0), cost (hits to add). A window has room when count + cost <= limit.
-- Returns {blocked, count1, ttl1, count2, ttl2, ...}. When any enforced window is spent,
-- no window is incremented.
local n = #KEYS
local counts = {}
local blocked = 0
for i = 1, n do
  local c = tonumber(redis.call('GET', KEYS[i]) or '0')
  counts[i] = c
  if c + tonumber(ARGV[4 * i]) > tonumber(ARGV[4 * i - 3]) and ARGV[4 * i - 1] == '1' then blocked = 1 end
end
local out = { blocked }
for i = 1, n do
  local period = tonumber(ARGV[4 * i - 2])
  local cost = tonumber(ARGV[4 * i])
  local c = counts[i]
  local ttl
  if blocked == 0 then
    c = redis.call('INCRBY', KEYS[i], cost)
    if c == cost then
      redis.call('PEXPIRE', KEYS[i], period)
      ttl = period
    else
      ttl = redis.call('PTTL', KEYS[i])
      if ttl < 0 then
        redis.call('PEXPIRE', KEYS[i], period)
        ttl = period
      end
    end
  else
    ttl = redis.call('PTTL', KEYS[i])
    if ttl < 0 then ttl = period end
  end
  out[2 * i] = c
  out[2 * i + 1] = ttl
end
return out
`;
