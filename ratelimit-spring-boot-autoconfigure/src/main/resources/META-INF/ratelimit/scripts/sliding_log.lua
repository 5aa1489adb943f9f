-- sliding_log.lua: the time of every admitted permit in the last W, oldest first.
-- KEYS      key: list of admission times in µs, oldest first; expires W after the newest (2W with the
--           callers' clocks, skewed).
-- ARGV      ARGV[arg + 1] limit, ARGV[arg + 2] window in µs.
-- In scope (rate_limit.lua): key (KEYS[i]), arg (this limit's first argument, its code), op, cost, now
--           (µs), max_delay, ttl_slack, skewed (1 when now is the caller's clock, else 0), commit, charging (a charge: count cost whatever is available),
--           floor/max/min.
-- Sets      for decide and peek: allowed (0|1), available (permits now), retry (µs, -1 = never),
--           delay (µs), reset_now (µs until full now), reset_after (µs until full once committed).
--           With commit the permits are taken when allowed; a rejection writes nothing. Refund and reset
--           set nothing.
-- Mirrors   io.github.ratelimit.algorithm.SlidingLogState.java

local limit, window = tonumber(ARGV[arg + 1]), tonumber(ARGV[arg + 2])
if op == 'x' then
  redis.call('DEL', key)
else
  local threshold = now - window
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
  if op == 'r' then
    if size <= cost then
      redis.call('DEL', key)
    else
      redis.call('LTRIM', key, 0, size - cost - 1)
    end
  else
    available, delay, reset_now = limit - size, 0, 0
    -- A charge counts its whole cost, up to a debt of one limit (LimitState.charged), and commits only
    -- a cost above zero.
    if charging then
      cost = max(size, min(size + cost, 2 * limit, 9007199254740991)) - size
      commit = commit and cost > 0
    end
    if size > 0 then
      reset_now = tonumber(redis.call('LINDEX', key, -1)) + window - now
    end
    if charging or cost <= limit - size then
      allowed, retry, reset_after = 1, 0, window
      if commit then
        -- The list stays ordered, oldest first, when the caller's clock is behind the newest entry's: its
        -- permits are recorded at that entry's time (kept a little longer, never dropped early).
        local stamp = now
        if size > 0 then
          stamp = max(now, tonumber(redis.call('LINDEX', key, -1)))
        end
        local times = {}
        for t = 1, cost do
          times[#times + 1] = stamp
          if #times == 1000 or t == cost then
            redis.call('RPUSH', key, unpack(times))
            times = {}
          end
        end
        redis.call('PEXPIRE', key, max(1, -floor(-window / 1000)) * (1 + skewed) + ttl_slack)
      end
    else
      allowed, retry, reset_after = 0, -1, reset_now
      if cost <= limit then
        -- The oldest (size + cost - limit) entries must leave the window first.
        retry = tonumber(redis.call('LINDEX', key, size + cost - limit - 1)) + window - now
      end
    end
  end
end
