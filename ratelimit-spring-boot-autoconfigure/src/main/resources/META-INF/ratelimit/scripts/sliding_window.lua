-- sliding_window.lua: the estimate previous * (W - elapsed) / W + current, compared exactly.
-- KEYS      key: hash {w = window index, c = current count, p = previous count}; expires 2W after its window
--           starts (3W with the callers' clocks, skewed). A caller whose clock is behind the stored window
--           counts into it.
-- ARGV      ARGV[arg + 1] limit, ARGV[arg + 2] window in µs.
-- In scope (rate_limit.lua): key (KEYS[i]), arg (this limit's first argument, its code), op, cost, now
--           (µs), max_delay, ttl_slack, skewed (1 when now is the caller's clock, else 0), commit, charging (a charge: count cost whatever is available),
--           floor/max/min.
-- Sets      for decide and peek: allowed (0|1), available (permits now), retry (µs, -1 = never),
--           delay (µs), reset_now (µs until full now), reset_after (µs until full once committed).
--           With commit the permits are taken when allowed; a rejection writes nothing. Refund and reset
--           set nothing.
-- Mirrors   io.github.ratelimit.algorithm.SlidingWindowState.java

local limit, w = tonumber(ARGV[arg + 1]), tonumber(ARGV[arg + 2])
-- count * time products reach 2^105 where doubles are exact only below 2^53, so they are compared
-- exactly (a window in µs, or a quotient smaller than one, is below 2^52).
--+ exact_products.lua
if op == 'x' then
  redis.call('DEL', key)
else
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
  else
    -- The previous window's share: ceil(previous * weight / w), at most previous.
    local share = floor_mul_div(previous, weight, w)
    if not fits_under(previous, weight, share, w) then
      share = share + 1
    end
    available, delay = limit - current - share, 0
    -- A charge counts its whole cost, up to a debt of one limit (LimitState.charged), and commits only
    -- a cost above zero.
    if charging then
      cost = max(current, min(current + cost, 2 * limit, 9007199254740991)) - current
      commit = commit and cost > 0
    end
    reset_now = 0
    if current > 0 then
      reset_now = weight + w
    elseif previous > 0 then
      reset_now = weight
    end
    local free = limit - current - cost
    if charging or (free >= 0 and fits_under(previous, weight, free, w)) then
      allowed, retry, reset_after = 1, 0, weight + w
      if commit then
        redis.call('HSET', key, 'w', index, 'c', current + cost, 'p', previous)
        redis.call('PEXPIRE', key, max(1, -floor(-reset_after / 1000)) + ttl_slack + skewed * -floor(-w / 1000))
      end
    else
      allowed, retry, reset_after = 0, -1, reset_now
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
    end
  end
end
