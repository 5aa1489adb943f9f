-- sliding_log.lua: the time of every admitted permit in the last W, oldest first.
-- Key      list of admission times in µs, oldest first; expires W after the newest (2W with the callers'
--          clocks, skewed).
-- Args     sl, limit, window in µs.
-- State    { key, stored = the entries in Redis, newest = the newest one's time, size = the entries in the
--          state (those past stored are at newest) }. The log is not read whole: acquire reads the one
--          entry a retry-after needs.
-- Returns  the module: spec, load, acquire, refund, charge, save (rate_limit.lua says what each does).
-- Mirrors  io.github.ratelimit.algorithm.SlidingLogState

local floor, max = math.floor, math.max

-- The state with cost more entries. The log stays ordered, oldest first, when the caller's clock is
-- behind the newest entry's: its permits are recorded at that entry's time (kept a little longer, never
-- dropped early).
local function take(state, now, cost)
  return { key = state.key, stored = state.stored, newest = max(now, state.newest or now), size = state.size + cost }
end

-- The time of the entry at position i (0 = the oldest).
local function entry(state, i)
  return (i < state.stored) and tonumber(redis.call('LINDEX', state.key, i)) or state.newest
end

local function spec(args, at)
  return { code = 'sl', limit = tonumber(args[at + 1]), window = tonumber(args[at + 2]) }, at + 3
end

-- Drops the entries that left the window, a hundred at a time, and reads the rest's size and newest time.
local function load(key, spec, now)
  local threshold = now - spec.window
  while true do
    local head = redis.call('LRANGE', key, 0, 99)
    local expired = 0
    for _, time in ipairs(head) do
      if tonumber(time) > threshold then
        break
      end
      expired = expired + 1
    end
    if expired > 0 then
      redis.call('LTRIM', key, expired, -1)
    end
    if expired < 100 then
      break
    end
  end
  local size = redis.call('LLEN', key)
  local newest = (size > 0) and tonumber(redis.call('LINDEX', key, -1)) or nil
  return { key = key, stored = size, newest = newest, size = size }
end

local function acquire(state, spec, now, cost)
  local limit, window, size = spec.limit, spec.window, state.size
  local reset_now = (size > 0) and state.newest + window - now or 0
  if cost <= limit - size then
    return true, limit - size, reset_now, window, 0, take(state, now, cost), state, 1
  end
  local retry = -1
  if cost <= limit then
    -- The oldest (size + cost - limit) entries must leave the window first.
    retry = entry(state, size + cost - limit - 1) + window - now
  end
  return false, limit - size, reset_now, reset_now, retry, state, state, 0
end

-- Gives back the newest entries.
local function refund(state, spec, now, cost)
  return { key = state.key, stored = state.stored, newest = state.newest, size = max(0, state.size - cost) }
end

local function charge(state, spec, now, cost)
  local taken = require('charged')(state.size, cost, spec.limit) - state.size
  return (taken > 0) and take(state, now, taken) or state
end

local function save(key, spec, state, now, ttl_slack, skewed)
  local size, stored = state.size, state.stored
  if size == 0 then
    redis.call('DEL', key)
  elseif size < stored then
    redis.call('LTRIM', key, 0, size - 1)
  elseif size > stored then
    local times = {}
    for t = 1, size - stored do
      times[#times + 1] = state.newest
      if #times == 1000 or t == size - stored then
        redis.call('RPUSH', key, unpack(times))
        times = {}
      end
    end
    redis.call('PEXPIRE', key, max(1, -floor(-spec.window / 1000)) * (1 + skewed) + ttl_slack)
  end
end

return { spec = spec, load = load, acquire = acquire, refund = refund, charge = charge, save = save }
