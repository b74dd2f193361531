// The window maths of the batch script (batch-window-lua.ts), the sums of src/limits/window-maths/
// in Lua: the clock, and reading, using, resetting and retrying sliding windows and token buckets.
// Defined once per library load; they read the call's `now` and `given` (ARGV[2]), which
// BATCH_WINDOW_CORE declares before them and sets at each call's start.
export const WINDOW_MATHS_LUA = `
local function clock()
  if not now then
    if given ~= '' then
      now = given + 0
    else
      local t = call('TIME')
      now = t[1] * 1000 + floor(t[2] / 1000)
    end
  end
  return now
end
-- Sliding: the key holds "window current previous"; rolled to now.
local function sliding(key, period)
  local w = floor(clock() / period)
  local cur, prev = 0, 0
  local v = call('GET', key)
  if v then
    local sw, sc, sp = match(v, '^(%d+) (%d+) (%d+)$')
    sw = sw + 0
    if sw == w then
      cur = sc + 0
      prev = sp + 0
    elseif sw == w - 1 then
      prev = sc + 0
    end
  end
  return w, cur, prev
end
local function sliding_used(w, cur, prev, period)
  return ceil(prev * (period - (now - w * period)) / period) + cur
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
    return w * period + period - floor((limit - cur - cost) * period / prev)
  end
  return w * period + 2 * period - floor((limit - cost) * period / cur)
end
-- Token bucket (GCRA): the key holds "tat frac", the TAT being tat + frac / rate ms.
local function bucket(key)
  local tat, frac = clock(), 0
  local v = call('GET', key)
  if v then
    local t, f = match(v, '^(%d+) (%d+)$')
    t = t + 0
    f = f + 0
    if t > now or (t == now and f > 0) then
      tat = t
      frac = f
    end
  end
  return tat, frac
end
local function bucket_used(tat, frac, period, rate, burst)
  return burst - floor((burst * period - ((tat - now) * rate + frac)) / period)
end
local function bucket_reset(tat, frac)
  if frac > 0 then tat = tat + 1 end
  return max(now, tat)
end
local function bucket_retry(tat, frac, period, rate, burst, cost)
  if cost > burst then return bucket_reset(tat, frac) end
  return max(now, tat + ceil((frac - (burst - cost) * period) / rate))
end
`;
