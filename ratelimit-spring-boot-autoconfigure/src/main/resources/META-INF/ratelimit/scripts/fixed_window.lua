-- fixed_window.lua: a counter for the window floor(t / W).
-- Key      hash {w = window index, c = count}; expires at the end of the window (a window later with the
--          callers' clocks, skewed: a caller whose clock is behind still counts into it).
-- Args     fw, limit, window in µs.
-- State    { stored = the window index in Redis, index = the state's window, used = its count }
-- Returns  the module: spec, load, acquire, refund, charge, save (rate_limit.lua says what each does).
-- Mirrors  io.github.ratelimit.algorithm.FixedWindowState

local floor, max, min = math.floor, math.max, math.min

-- The window now falls in and what it has used. Never back to an older window: a caller whose clock is
-- behind the one that opened the stored window counts into it (two callers that disagree on the window
-- would otherwise reset each other's count).
local function current(state, spec, now)
  local index = floor(now / spec.window)
  if state.index and state.index > index then
    index = state.index
  end
  return index, (state.index == index) and state.used or 0
end

local function spec(args, at)
  return { code = 'fw', limit = tonumber(args[at + 1]), window = tonumber(args[at + 2]) }, at + 3
end

local function load(key)
  local stored = redis.call('HMGET', key, 'w', 'c')
  local index = tonumber(stored[1])
  return { stored = index, index = index, used = tonumber(stored[2]) or 0 }
end

local function acquire(state, spec, now, cost, max_delay, run)
  local limit = spec.limit
  local index, used = current(state, spec, now)
  local until_next = (index + 1) * spec.window - now
  local reset_now = (used > 0) and until_next or 0
  -- cost <= limit - used: used may exceed a lowered limit, and cost may be rounded.
  if cost > limit - used then
    return false, limit - used, reset_now, reset_now, (cost > limit) and -1 or until_next, state, state, 0
  end
  -- The batch closed form: each of the run is allowed while its cost still fits. For the batch reply: the
  -- count before them (each adds its cost, and resets with the window).
  local taken = (run > 1) and min(run, floor((limit - used) / cost)) or 1
  return true, limit - used, reset_now, until_next, 0, { stored = state.stored, index = index, used = used + taken * cost },
    state, taken, used, 0, 0, 0
end

local function refund(state, spec, now, cost)
  local index, used = current(state, spec, now)
  if used == 0 then
    return state
  end
  return { stored = state.stored, index = index, used = max(0, used - cost) }
end

local function charge(state, spec, now, cost)
  local index, used = current(state, spec, now)
  local after = require('charged')(used, cost, spec.limit)
  if after == used then
    return state
  end
  return { stored = state.stored, index = index, used = after }
end

local function save(key, spec, state, now, ttl_slack, skewed)
  if state.used <= 0 then
    redis.call('DEL', key)
  elseif state.index == state.stored then
    -- The key already expires at the window's end.
    redis.call('HSET', key, 'c', state.used)
  else
    local until_next = (state.index + 1) * spec.window - now
    redis.call('HSET', key, 'w', state.index, 'c', state.used)
    redis.call('PEXPIRE', key, max(1, -floor(-until_next / 1000)) + ttl_slack + skewed * -floor(-spec.window / 1000))
  end
end

return { spec = spec, load = load, acquire = acquire, refund = refund, charge = charge, save = save }
