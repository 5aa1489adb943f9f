-- sliding_window.lua: the estimate previous * (W - elapsed) / W + current, compared exactly.
-- Key      hash {w = window index, c = current count, p = previous count}; expires 2W after its window
--          starts (3W with the callers' clocks, skewed).
-- Args     sw, limit, window in µs.
-- State    { index = the window of current (nil when fresh), current, previous, expire = true|nil (set the
--          key's expiry when saved: permits were taken) }
-- Returns  the module: spec, load, acquire, refund, charge, save (rate_limit.lua says what each does).
-- Mirrors  io.github.ratelimit.algorithm.SlidingWindowState

local floor, max, min = math.floor, math.max, math.min
-- count * time products reach 2^105 where doubles are exact only below 2^53, so they are compared
-- exactly (a window in µs, or a quotient smaller than one, is below 2^52).
local exact = require('exact_products')

-- The window now falls in and its counts: a window later the current count is the previous one. A caller
-- whose clock is behind the stored window counts into it.
local function roll(state, spec, now)
  local index = floor(now / spec.window)
  local stored, current, previous = state.index, state.current, state.previous
  if stored and stored > index then
    index = stored
  elseif stored ~= index then
    previous = (stored and index == stored + 1) and current or 0
    current = 0
  end
  return index, current, previous
end

-- The time from now until a state of the window index with permits in it is fresh again.
local function lifetime(spec, index, now)
  return 2 * spec.window - max(0, now - index * spec.window)
end

local function spec(args, at)
  return { code = 'sw', limit = tonumber(args[at + 1]), window = tonumber(args[at + 2]) }, at + 3
end

local function load(key)
  local stored = redis.call('HMGET', key, 'w', 'c', 'p')
  return { index = tonumber(stored[1]), current = tonumber(stored[2]) or 0, previous = tonumber(stored[3]) or 0,
    expire = false }
end

local function acquire(state, spec, now, cost)
  local limit, w = spec.limit, spec.window
  local index, current, previous = roll(state, spec, now)
  local elapsed = max(0, now - index * w)
  local weight = w - elapsed
  -- The previous window's share: ceil(previous * weight / w), at most previous.
  local share = exact.floor_mul_div(previous, weight, w)
  if not exact.fits_under(previous, weight, share, w) then
    share = share + 1
  end
  local reset_now = 0
  if current > 0 then
    reset_now = weight + w
  elseif previous > 0 then
    reset_now = weight
  end
  local free = limit - current - cost
  if free >= 0 and exact.fits_under(previous, weight, free, w) then
    return true, limit - current - share, reset_now, weight + w, 0,
      { index = index, current = current + cost, previous = previous, expire = true }, state, 1
  end
  local retry = -1
  if cost <= limit then
    -- The smallest elapsed time e in a window with previous * (w - e) <= free * w; w when only the next
    -- window helps, where current * (w - e) <= (limit - cost) * w must hold. A quotient of w or more
    -- means e = 0.
    local in_this_window = w
    if free >= 0 then
      in_this_window = (free >= previous) and 0 or (w - exact.floor_mul_div(free, w, previous))
    end
    if in_this_window < w then
      retry = in_this_window - elapsed
    else
      retry = weight + ((limit - cost >= current) and 0 or (w - exact.floor_mul_div(limit - cost, w, current)))
    end
  end
  return false, limit - current - share, reset_now, reset_now, retry, state, state, 0
end

local function refund(state, spec, now, cost)
  if not state.index then
    return state
  end
  local index, current, previous = roll(state, spec, now)
  local from_current = min(cost, current)
  return { index = index, current = current - from_current, previous = max(0, previous - (cost - from_current)),
    expire = false }
end

local function charge(state, spec, now, cost)
  local index, current, previous = roll(state, spec, now)
  local after = require('charged')(current, cost, spec.limit)
  if after == current then
    return state
  end
  return { index = index, current = after, previous = previous, expire = true }
end

local function save(key, spec, state, now, ttl_slack, skewed)
  redis.call('HSET', key, 'w', state.index, 'c', state.current, 'p', state.previous)
  if state.expire then
    redis.call('PEXPIRE', key, max(1, -floor(-lifetime(spec, state.index, now) / 1000)) + ttl_slack
      + skewed * -floor(-spec.window / 1000))
  end
end

return { spec = spec, load = load, acquire = acquire, refund = refund, charge = charge, save = save }
