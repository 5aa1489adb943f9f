-- sliding_window_counter.lua: N sub-window counters; the sum over the last N sub-windows.
-- KEYS      key: hash {<sub-window index> = count}, stale fields deleted; expires W after the newest (2W
--           with the callers' clocks, skewed). A caller whose clock is behind the newest sub-window counts
--           into it.
-- ARGV      ARGV[arg + 1] limit, ARGV[arg + 2] sub-windows N, ARGV[arg + 3] sub-window length in µs.
-- In scope (rate_limit.lua): key (KEYS[i]), arg (this limit's first argument, its code), op, cost, now
--           (µs), max_delay, ttl_slack, skewed (1 when now is the caller's clock, else 0), commit, charging (a charge: count cost whatever is available),
--           floor/max/min.
-- Sets      for decide and peek: allowed (0|1), available (permits now), retry (µs, -1 = never),
--           delay (µs), reset_now (µs until full now), reset_after (µs until full once committed).
--           With commit the permits are taken when allowed; a rejection writes nothing. Refund and reset
--           set nothing.
-- Mirrors   io.github.ratelimit.algorithm.SlidingWindowCounterState.java

local limit, n, length = tonumber(ARGV[arg + 1]), tonumber(ARGV[arg + 2]), tonumber(ARGV[arg + 3])
if op == 'x' then
  redis.call('DEL', key)
else
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
  else
    available, delay, reset_now = limit - sum, 0, 0
    -- A charge counts its whole cost, up to a debt of one limit (LimitState.charged), and commits only
    -- a cost above zero.
    if charging then
      cost = max(sum, min(sum + cost, 2 * limit, 9007199254740991)) - sum
      commit = commit and cost > 0
    end
    for k = segment, segment - n + 1, -1 do
      if counts[k] and counts[k] > 0 then
        reset_now = (k + n) * length - now
        break
      end
    end
    if charging or cost <= limit - sum then
      allowed, retry, reset_after = 1, 0, (segment + n) * length - now
      -- The key expires W after its newest sub-window, set when that sub-window's field was created
      -- (only a commit creates fields): only a new field moves the expiry.
      if commit and redis.call('HINCRBY', key, segment, cost) == cost then
        redis.call('PEXPIRE', key, max(1, -floor(-reset_after / 1000)) + ttl_slack + skewed * -floor(-n * length / 1000))
      end
    else
      allowed, retry, reset_after = 0, -1, reset_now
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
    end
  end
end
