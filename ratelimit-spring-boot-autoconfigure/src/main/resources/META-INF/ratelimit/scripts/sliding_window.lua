-- sliding_window.lua: the estimate previous * (W - elapsed) / W + current, compared exactly.
-- KEYS      key: hash {w = window index, c = current count, p = previous count}; expires 2W after its window
--           starts (3W with the callers' clocks, skewed). A caller whose clock is behind the stored window
--           counts into it.
-- Defines   sliding_window(key, limit, w, op, cost, now, ttl_slack, skewed): decides (op d), peeks (p),
--           charges (c: counts the whole cost, up to a debt of one limit) or refunds (r) a request of cost
--           at now (µs), window w in µs. ttl_slack (ms) and skewed (1 when now is the callers' clock, else
--           0) lengthen the key's life.
-- Returns   d, p, c: allowed (0|1), available (permits now), retry (µs, -1 = never), delay (µs),
--           reset_now (µs until full now), reset_after (µs until full once taken); when allowed, the
--           next state as a function that stores it and its arguments after the key (save, index, current,
--           previous, the key's ttl ms; none when a charge takes nothing).
--           r: nothing; it writes the refund itself.
-- Uses      floor_mul_div, fits_under (exact_products.lua, included): count * time products reach 2^105 where
--           doubles are exact only below 2^53 (a window in µs, or a quotient smaller than one, is below
--           2^52).
-- Mirrors   io.github.ratelimit.algorithm.SlidingWindowState.java

local function sliding_window(key, limit, w, op, cost, now, ttl_slack, skewed)
  local floor, max, min = math.floor, math.max, math.min
  --+ exact_products.lua
  local index = floor(now / w)
  local state = redis.call('HMGET', key, 'w', 'c', 'p')
  local stored = tonumber(state[1])
  local current, previous = tonumber(state[2]) or 0, tonumber(state[3]) or 0
  if stored and stored > index then
    index = stored
  elseif stored ~= index then
    previous = (stored and index == stored + 1) and current or 0
    current = 0
  end
  local elapsed = max(0, now - index * w)
  local weight = w - elapsed
  if op == 'r' then
    if stored then
      local from_current = min(cost, current)
      redis.call('HSET', key, 'w', index, 'c', current - from_current, 'p',
        max(0, previous - (cost - from_current)))
    end
    return
  end
  -- The previous window's share: ceil(previous * weight / w), at most previous.
  local share = floor_mul_div(previous, weight, w)
  if not fits_under(previous, weight, share, w) then
    share = share + 1
  end
  local available, reset_now = limit - current - share, 0
  if current > 0 then
    reset_now = weight + w
  elseif previous > 0 then
    reset_now = weight
  end
  local free = limit - current - cost
  if op == 'c' then
    -- A charge counts its whole cost, up to a debt of one limit (LimitState.charged).
    cost = max(current, min(current + cost, 2 * limit, 9007199254740991)) - current
    if cost == 0 then
      return 1, available, 0, 0, reset_now, weight + w
    end
  elseif free < 0 or not fits_under(previous, weight, free, w) then
    local retry = -1
    if cost <= limit then
      -- The smallest elapsed time e in a window with previous * (w - e) <= free * w; w when only the
      -- next window helps, where current * (w - e) <= (limit - cost) * w must hold. A quotient of
      -- w or more means e = 0.
      local in_this_window = w
      if free >= 0 then
        in_this_window = (free >= previous) and 0 or (w - floor_mul_div(free, w, previous))
      end
      if in_this_window < w then
        retry = in_this_window - elapsed
      else
        retry = weight + ((limit - cost >= current) and 0 or (w - floor_mul_div(limit - cost, w, current)))
      end
    end
    return 0, available, retry, 0, reset_now, reset_now
  end
  local function save(key, window, counted, counted_before, ttl)
    redis.call('HSET', key, 'w', window, 'c', counted, 'p', counted_before)
    redis.call('PEXPIRE', key, ttl)
  end
  local reset_after = weight + w
  local ttl = max(1, -floor(-reset_after / 1000)) + ttl_slack + skewed * -floor(-w / 1000)
  return 1, available, 0, 0, reset_now, reset_after, save, index, current + cost, previous, ttl
end
