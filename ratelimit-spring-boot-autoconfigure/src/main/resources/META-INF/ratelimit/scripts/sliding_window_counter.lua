-- sliding_window_counter.lua: N sub-window counters; the sum over the last N sub-windows.
-- Key      hash {<sub-window index> = count}, stale fields deleted; expires W after the newest (2W with
--          the callers' clocks, skewed).
-- Args     swc, limit, sub-windows N, sub-window length in µs.
-- State    { segment = the newest sub-window, counts = {<sub-window index> = count}, sum = their sum,
--          stored = the counts in Redis }
-- Returns  the module: spec, load, acquire, refund, charge, save (rate_limit.lua says what each does).
-- Mirrors  io.github.ratelimit.algorithm.SlidingWindowCounterState

local floor, max, min = math.floor, math.max, math.min

-- The state with cost more counted in its newest sub-window.
local function take(state, cost)
  local counts = {}
  for k, used in pairs(state.counts) do
    counts[k] = used
  end
  counts[state.segment] = (counts[state.segment] or 0) + cost
  return { segment = state.segment, counts = counts, sum = state.sum + cost, stored = state.stored }
end

local function spec(args, at)
  return { code = 'swc', limit = tonumber(args[at + 1]), n = tonumber(args[at + 2]), length = tonumber(args[at + 3]) },
    at + 4
end

-- Reads the sub-windows still in the window and deletes the stale ones. A caller whose clock is behind the
-- newest sub-window counts into it.
local function load(key, spec, now)
  local segment = floor(now / spec.length)
  local fields = redis.call('HGETALL', key)
  for f = 1, #fields, 2 do
    segment = max(segment, tonumber(fields[f]))
  end
  local counts, stale, sum = {}, {}, 0
  for f = 1, #fields, 2 do
    local k, used = tonumber(fields[f]), tonumber(fields[f + 1])
    if k <= segment - spec.n then
      stale[#stale + 1] = fields[f]
    else
      counts[k] = used
      sum = sum + used
    end
  end
  if #stale > 0 then
    redis.call('HDEL', key, unpack(stale))
  end
  return { segment = segment, counts = counts, sum = sum, stored = counts }
end

local function acquire(state, spec, now, cost)
  local limit, n, length = spec.limit, spec.n, spec.length
  local segment, counts, sum = state.segment, state.counts, state.sum
  local reset_now = 0
  for k = segment, segment - n + 1, -1 do
    if counts[k] and counts[k] > 0 then
      reset_now = (k + n) * length - now
      break
    end
  end
  if cost <= limit - sum then
    return true, limit - sum, reset_now, (segment + n) * length - now, 0, take(state, cost), state, 1
  end
  local retry = -1
  if cost <= limit then
    -- Sub-window k leaves the window at (k + n) * length; the oldest leave first.
    local released = 0
    for k = segment - n + 1, segment do
      released = released + (counts[k] or 0)
      if cost <= limit - (sum - released) then
        retry = (k + n) * length - now
        break
      end
    end
  end
  return false, limit - sum, reset_now, reset_now, retry, state, state, 0
end

-- Gives back from the newest sub-window first.
local function refund(state, spec, now, cost)
  local counts, left = {}, cost
  for k = state.segment, state.segment - spec.n + 1, -1 do
    local used = state.counts[k]
    if used then
      local given = min(left, used)
      left = left - given
      counts[k] = (used > given) and used - given or nil
    end
  end
  return { segment = state.segment, counts = counts, sum = max(0, state.sum - cost), stored = state.stored }
end

local function charge(state, spec, now, cost)
  local taken = require('charged')(state.sum, cost, spec.limit) - state.sum
  return (taken > 0) and take(state, taken) or state
end

-- Writes the sub-windows that changed. The key expires W after its newest sub-window, set when that
-- sub-window's field is created (only a commit creates fields): only a new field moves the expiry.
local function save(key, spec, state, now, ttl_slack, skewed)
  local stored, counts = state.stored, state.counts
  for k in pairs(stored) do
    if not counts[k] then
      redis.call('HDEL', key, k)
    end
  end
  for k, used in pairs(counts) do
    if stored[k] ~= used then
      redis.call('HSET', key, k, used)
    end
  end
  if counts[state.segment] and not stored[state.segment] then
    local lifetime = (state.segment + spec.n) * spec.length - now
    redis.call('PEXPIRE', key, max(1, -floor(-lifetime / 1000)) + ttl_slack + skewed * -floor(-spec.n * spec.length / 1000))
  end
end

return { spec = spec, load = load, acquire = acquire, refund = refund, charge = charge, save = save }
