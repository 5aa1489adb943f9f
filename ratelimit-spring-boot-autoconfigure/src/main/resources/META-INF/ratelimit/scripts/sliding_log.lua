-- sliding_log.lua: the time of every admitted permit in the last W, oldest first.
-- KEYS      key: list of admission times in µs, oldest first; expires W after the newest (2W with the
--           callers' clocks, skewed).
-- Defines   sliding_log(key, limit, window, op, cost, now, ttl_slack, skewed): decides (op d), peeks (p),
--           charges (c: counts the whole cost, up to a debt of one limit) or refunds (r) a request of cost
--           at now (µs), window in µs. ttl_slack (ms) and skewed (1 when now is the callers' clock, else
--           0) lengthen the key's life.
-- Returns   d, p, c: allowed (0|1), available (permits now), retry (µs, -1 = never), delay (µs),
--           reset_now (µs until full now), reset_after (µs until full once taken); when allowed, the
--           next state as a function that stores it and its arguments after the key (save, the time its
--           permits are recorded at, their number, the key's ttl ms; none when a charge takes nothing).
--           r: nothing; it writes the refund itself.
-- Mirrors   io.github.ratelimit.algorithm.SlidingLogState.java

local function sliding_log(key, limit, window, op, cost, now, ttl_slack, skewed)
  local floor, max, min = math.floor, math.max, math.min
  -- Times out of the window never count again: dropping them changes no decision.
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
    return
  end
  local available, reset_now, newest = limit - size, 0, nil
  if size > 0 then
    newest = tonumber(redis.call('LINDEX', key, -1))
    reset_now = newest + window - now
  end
  if op == 'c' then
    -- A charge counts its whole cost, up to a debt of one limit (LimitState.charged).
    cost = max(size, min(size + cost, 2 * limit, 9007199254740991)) - size
    if cost == 0 then
      return 1, available, 0, 0, reset_now, window
    end
  elseif cost > limit - size then
    local retry = -1
    if cost <= limit then
      -- The oldest (size + cost - limit) entries must leave the window first.
      retry = tonumber(redis.call('LINDEX', key, size + cost - limit - 1)) + window - now
    end
    return 0, available, retry, 0, reset_now, reset_now
  end
  -- The list stays ordered, oldest first, when the caller's clock is behind the newest entry's: its
  -- permits are recorded at that entry's time (kept a little longer, never dropped early).
  local function save(key, at, added, ttl)
    local times = {}
    for t = 1, added do
      times[#times + 1] = at
      if #times == 1000 or t == added then
        redis.call('RPUSH', key, unpack(times))
        times = {}
      end
    end
    redis.call('PEXPIRE', key, ttl)
  end
  local stamp = newest and max(now, newest) or now
  return 1, available, 0, 0, reset_now, window, save, stamp, cost,
    max(1, -floor(-window / 1000)) * (1 + skewed) + ttl_slack
end
