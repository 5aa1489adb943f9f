-- fixed_window.lua: a counter for the window floor(t / W), or for a calendar window (a day, week, month,
-- quarter or year from local midnight in a time zone) whose bounds the caller works out: Redis has no time
-- zone rules, but its clock still decides which side of a boundary a request falls on.
-- KEYS      key: hash {w = window index (a calendar window: its start, µs), c = count}; expires at the end
--           of the window (a window later with the callers' clocks, skewed: a caller whose clock is behind
--           still counts into it).
-- Defines   fixed_window(key, limit, window, op, cost, now, at_once, ttl_slack, skewed, b0, b1, b2): decides
--           (op d), peeks (p), charges (c: counts the whole cost, up to a debt of one limit) or refunds (r) a
--           request of cost at now (µs), window in µs; for a calendar window, window is nil and b0, b1, b2
--           are three boundaries around the caller's clock (µs): the window [b0, b1) or, from b1 on,
--           [b1, b2). at_once is how many identical requests it may take at once (what is left of a batch's
--           run on one limit; else 1). ttl_slack (ms) and skewed (1 when now is the callers' clock, else
--           0) lengthen the key's life.
-- Returns   d, p, c: allowed (0|1), available (permits now), retry (µs, -1 = never), delay (µs),
--           reset_now (µs until full now), reset_after (µs until full once taken); when allowed, the
--           next state as a function that stores it and its arguments after the key (save, index, the
--           permits added, the key's ttl ms if the window is new, nil; none when a charge takes nothing),
--           then admitted (how many of at_once are taken) and base (the count before them).
--           r: nothing; it writes the refund itself.
-- Mirrors   io.github.ratelimit.algorithm.FixedWindowState.java

local function fixed_window(key, limit, window, op, cost, now, at_once, ttl_slack, skewed, b0, b1, b2)
  local floor, max, min = math.floor, math.max, math.min
  local index, finish
  if b0 then
    index, finish = b0, b1
    if now >= b1 then
      index, finish = b1, b2
    end
  else
    index = floor(now / window)
  end
  local state = redis.call('HMGET', key, 'w', 'c')
  local stored = tonumber(state[1])
  -- Never back to an older window: a caller whose clock is behind the one that opened the stored window
  -- counts into it (two callers that disagree on the window would otherwise reset each other's count).
  if stored and stored > index then
    index = stored
    finish = b0 and b2
  end
  local used = (stored == index) and tonumber(state[2]) or 0
  if finish then
    window = finish - index
  end
  local until_next = finish and (finish - now) or ((index + 1) * window - now)
  if op == 'r' then
    if used > 0 and used <= cost then
      redis.call('DEL', key)
    elseif used > 0 then
      redis.call('HSET', key, 'c', used - cost)
    end
    return
  end
  local available, reset_now = limit - used, (used > 0) and until_next or 0
  if op == 'c' then
    -- A charge counts its whole cost, up to a debt of one limit (LimitState.charged).
    cost = max(used, min(used + cost, 2 * limit, 9007199254740991)) - used
    if cost == 0 then
      return 1, available, 0, 0, reset_now, until_next
    end
  elseif cost > limit - used then
    -- cost <= limit - used decides: used may exceed a lowered limit, and cost may be rounded.
    return 0, available, (cost > limit) and -1 or until_next, 0, reset_now, reset_now
  end
  -- Each of a run is allowed while its cost still fits.
  local admitted = (at_once > 1) and min(at_once, floor((limit - used) / cost)) or 1
  -- A window's first permits set its expiry; the key already expires at the window's end after them.
  -- A window's first permits set its expiry, its end; later ones add to the count.
  local function save(key, index, added, ttl)
    if ttl then
      redis.call('HSET', key, 'w', index, 'c', added)
      redis.call('PEXPIRE', key, ttl)
    else
      redis.call('HINCRBY', key, 'c', added)
    end
  end
  local ttl
  if used == 0 then
    ttl = max(1, -floor(-until_next / 1000)) + ttl_slack + skewed * -floor(-window / 1000)
  end
  return 1, available, 0, 0, reset_now, until_next, save, index, admitted * cost, ttl, nil, admitted, used
end
