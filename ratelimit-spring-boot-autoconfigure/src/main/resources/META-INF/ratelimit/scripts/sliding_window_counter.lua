-- sliding_window_counter.lua: N sub-window counters; the sum over the last N sub-windows.
-- KEYS      key: hash {<sub-window index> = count}, stale fields deleted; expires W after the newest (2W
--           with the callers' clocks, skewed). A caller whose clock is behind the newest sub-window counts
--           into it.
-- Defines   sliding_window_counter(key, limit, n, length, op, cost, now, ttl_slack, skewed): decides (op
--           d), peeks (p), charges (c: counts the whole cost, up to a debt of one limit) or refunds (r) a
--           request of cost at now (µs), over n sub-windows of length µs. ttl_slack (ms) and skewed (1
--           when now is the callers' clock, else 0) lengthen the key's life.
-- Returns   d, p, c: allowed (0|1), available (permits now), retry (µs, -1 = never), delay (µs),
--           reset_now (µs until full now), reset_after (µs until full once taken); when allowed, the
--           next state as a function that stores it and its arguments after the key (save, the sub-window,
--           the permits it adds, the key's ttl ms if that sub-window is new; none when a charge takes
--           nothing). r: nothing; it writes the refund itself.
-- Mirrors   io.github.ratelimit.algorithm.SlidingWindowCounterState.java

local function sliding_window_counter(key, limit, n, length, op, cost, now, ttl_slack, skewed)
  local floor, max, min = math.floor, math.max, math.min
  local segment = floor(now / length)
  local fields = redis.call('HGETALL', key)
  local counts, stale, sum = {}, {}, 0
  for f = 1, #fields, 2 do
    local k = tonumber(fields[f])
    if k > segment then
      segment = k
    end
  end
  for f = 1, #fields, 2 do
    local k, used = tonumber(fields[f]), tonumber(fields[f + 1])
    if k <= segment - n then
      stale[#stale + 1] = fields[f]
    else
      counts[k] = used
      sum = sum + used
    end
  end
  -- Sub-windows out of the window never count again: dropping them changes no decision.
  if #stale > 0 then
    redis.call('HDEL', key, unpack(stale))
  end
  if op == 'r' then
    local left = cost
    for k = segment, segment - n + 1, -1 do
      local used = counts[k]
      if left > 0 and used and used > 0 then
        local taken = min(left, used)
        left = left - taken
        if taken == used then
          redis.call('HDEL', key, k)
        else
          redis.call('HSET', key, k, used - taken)
        end
      end
    end
    return
  end
  local available, reset_now, reset_after = limit - sum, 0, (segment + n) * length - now
  for k = segment, segment - n + 1, -1 do
    if counts[k] and counts[k] > 0 then
      reset_now = (k + n) * length - now
      break
    end
  end
  if op == 'c' then
    -- A charge counts its whole cost, up to a debt of one limit (LimitState.charged).
    cost = max(sum, min(sum + cost, 2 * limit, 9007199254740991)) - sum
    if cost == 0 then
      return 1, available, 0, 0, reset_now, reset_after
    end
  elseif cost > limit - sum then
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
    return 0, available, retry, 0, reset_now, reset_now
  end
  -- The key expires W after its newest sub-window, set when that sub-window's field is created (only a
  -- decision that takes permits creates fields): only a new field moves the expiry.
  local function save(key, sub_window, added, ttl)
    redis.call('HINCRBY', key, sub_window, added)
    if ttl then
      redis.call('PEXPIRE', key, ttl)
    end
  end
  local ttl
  if not counts[segment] then
    ttl = max(1, -floor(-reset_after / 1000)) + ttl_slack + skewed * -floor(-n * length / 1000)
  end
  return 1, available, 0, 0, reset_now, reset_after, save, segment, cost, ttl
end
