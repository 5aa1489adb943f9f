-- fixed_window.lua: a counter for the window floor(t / W).
-- KEYS      key: hash {w = window index, c = count}; expires at the end of the window (a window later
--           with the callers' clocks, skewed: a caller whose clock is behind still counts into it).
-- ARGV      ARGV[arg + 1] limit, ARGV[arg + 2] window in µs.
-- In scope (rate_limit.lua): key (KEYS[i]), arg (this limit's first argument, its code), op, cost, now
--           (µs), max_delay, ttl_slack, skewed (1 when now is the caller's clock, else 0), commit, charging (a charge: count cost whatever is available),
--           floor/max/min; at_once (how many requests this decision may take: what is left of a batch's
--           run of identical ones, this one included, when the call has one limit; else 1).
-- Sets      for decide and peek: allowed (0|1), available (permits now), retry (µs, -1 = never),
--           delay (µs), reset_now (µs until full now), reset_after (µs until full once committed).
--           With commit the permits are taken when allowed; a rejection writes nothing. Refund and reset
--           set nothing.
--           A committed decision with at_once > 1 takes, at once, as many of the run as one after
--           another would be allowed: it sets admitted (their number) and base (the count before them).
-- Mirrors   io.github.ratelimit.algorithm.FixedWindowState.java

local limit, window = tonumber(ARGV[arg + 1]), tonumber(ARGV[arg + 2])
if op == 'x' then
  redis.call('DEL', key)
else
  local index = floor(now / window)
  local state = redis.call('HMGET', key, 'w', 'c')
  local stored = tonumber(state[1])
  -- Never back to an older window: a caller whose clock is behind the one that opened the stored window
  -- counts into it (two callers that disagree on the window would otherwise reset each other's count).
  if stored and stored > index then
    index = stored
  end
  local used = (stored == index) and tonumber(state[2]) or 0
  local until_next = (index + 1) * window - now
  if op == 'r' then
    if used > 0 and used <= cost then
      redis.call('DEL', key)
    elseif used > 0 then
      redis.call('HSET', key, 'c', used - cost)
    end
  else
    available, delay = limit - used, 0
    -- A charge counts its whole cost, up to a debt of one limit (LimitState.charged), and commits only
    -- a cost above zero.
    if charging then
      cost = max(used, min(used + cost, 2 * limit, 9007199254740991)) - used
      commit = commit and cost > 0
    end
    reset_now = (used > 0) and until_next or 0
    -- cost <= limit - used: used may exceed a lowered limit, and cost may be rounded.
    if charging or cost <= limit - used then
      if commit and at_once > 1 then
        -- Each of the run is allowed while its cost still fits.
        admitted, base = min(at_once, floor((limit - used) / cost)), used
      end
      allowed, retry, reset_after = 1, 0, until_next
      if commit and used > 0 then
        -- The key already expires at the window's end.
        redis.call('HINCRBY', key, 'c', admitted * cost)
      elseif commit then
        redis.call('HSET', key, 'w', index, 'c', admitted * cost)
        redis.call('PEXPIRE', key, max(1, -floor(-until_next / 1000)) + ttl_slack + skewed * -floor(-window / 1000))
      end
    else
      allowed, reset_after = 0, reset_now
      retry = (cost > limit) and -1 or until_next
    end
  end
end
