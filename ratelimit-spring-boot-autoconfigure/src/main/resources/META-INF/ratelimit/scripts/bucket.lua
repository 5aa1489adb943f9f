-- bucket.lua: token bucket, GCRA and leaky bucket, one function over one time.
-- KEYS      key: string, the time the bucket is full again in µs, "<µs>", or "<µs>+<n>/<L>" when it
--           is n/L µs later (L the limit the fraction was counted under); expires then (bucket_write.lua).
-- Defines   bucket(key, shaping, burst, limit, window, op, cost, now, at_once, max_delay, ttl_slack,
--           backlogs, fractions, limits): decides (op d), peeks (p), charges (c: takes what is available,
--           up to cost) or refunds (r) a request of cost at now (µs); shaping (a leaky bucket) makes the
--           caller wait for its slot, up to max_delay µs (nil: no bound); at_once is how many identical
--           requests it may take at once (what is left of a batch's run on one limit; else 1); ttl_slack
--           is the ms a stored time outlives its TTL by (tests). backlogs, fractions and limits map a key
--           to the backlog this call leaves it (whole µs, the fraction and the limit it is counted in),
--           stored once after the call (bucket_write.lua): read before Redis, and written here for a
--           refund and for a backlog cut to a lowered capacity.
-- Returns   d, p, c: allowed (0|1), available (permits now), retry (µs, -1 = never), delay (µs),
--           reset_now (µs until full now), reset_after (µs until full once taken); when allowed, nil
--           (the caller keeps the backlog in backlogs, fractions and limits for bucket_write.lua), the
--           backlog (whole µs, fraction, limit), nil (none when a charge takes nothing), then for a run
--           (bucket_run.lua) admitted, base, base_fraction, step and step_fraction. r: nothing.
-- Uses      exact_products.lua and bucket_run.lua, included where needed.
-- Mirrors   io.github.ratelimit.algorithm.BucketState.java

-- Token bucket, GCRA and leaky bucket are one function over one time: when the bucket is full again
-- (GCRA's theoretical arrival time; for the leaky bucket, when its queue has drained). Only the
-- backlog (full_at - now, the credit taken and not yet restored) is computed. A request of cost c adds
-- c * T to it (T = W / L, the emission interval) and is allowed while it stays within the capacity
-- B * T; tokens at t are the permits the rest of the capacity holds. Shaping (leaky bucket) differs
-- only in making the caller wait for its slot (the delay is the backlog), bounding that wait by
-- max_delay, and in refusing refunds: a slot once handed out is already being waited for.
-- Exact for every spec: T is rarely a whole number of µs (3 per second, 7 per hour, 7e8 per second),
-- and a rounded T refills too fast or too slowly. So T = whole + remainder / limit µs, and every time
-- is whole µs plus a fraction in 1 / limit µs, which add and compare exactly (each part below 2^53).
-- When the limit divides the window every fraction is 0; otherwise a count times a time reaches 2^106
-- and is taken exactly by span and permits_in, which are only defined then.
-- The backlog is capped at the capacity of the current spec: a change of limit, window or burst keeps
-- the time to refill, up to the new capacity; a fraction counted under another limit is rounded up
-- to the next µs.
local function bucket(key, shaping, burst, limit, window, op, cost, now, at_once, max_delay, ttl_slack,
    backlogs, fractions, limits)
  local floor, max, min = math.floor, math.max, math.min
  if op == 'r' and shaping then
    return
  end
  local whole = floor(window / limit)
  local remainder = window - whole * limit
  local span, permits_in
  if remainder > 0 then
    -- floor(a * b / d) and a * b - d * floor(a * b / d), exactly, for a quotient below 2^53.
    local function mul_divmod(a, b, d)
      local n = a * b
      if n < 9007199254740992 then
        local q = floor(n / d)
        return q, n - q * d
      end
      --+ exact_products.lua
      local q = floor_mul_div(a, b, d)
      local h1, m1, l1 = product(a, b)
      local h2, m2, l2 = product(q, d)
      -- The difference is below d, so every partial sum is a multiple of 2^26 below 2^54, exact.
      return q, (h1 - h2) * 4503599627370496 + (m1 - m2) * 67108864 + (l1 - l2)
    end
    -- The whole µs of permits * T, the time the permits take to come back, and the rest in 1 / limit µs.
    span = function(permits)
      local more, fraction = mul_divmod(permits, remainder, limit)
      return permits * whole + more, fraction
    end
    -- The permits that come back in micros + fraction / limit µs: floor((micros * limit + fraction) /
    -- window). rest + fraction may pass 2^53: the fraction's whole windows are counted apart.
    permits_in = function(micros, fraction)
      local quotient, rest = mul_divmod(micros, limit, window)
      return quotient + floor(fraction / window) + floor((rest + fraction % window) / window)
    end
  end
  local capacity, capacity_fraction = burst * whole, 0
  if span then
    capacity, capacity_fraction = span(burst)
  end
  local backlog, backlog_fraction = 0, 0
  if backlogs[key] then
    -- A decision of a batch reads the backlog the one before it left (on the same now), not Redis:
    -- only the last one is stored.
    backlog, backlog_fraction = backlogs[key], fractions[key]
  else
    local state = redis.call('GET', key)
    if state then
      local full_at, fraction = tonumber(state), 0
      if not full_at then
        local at, numerator, over = string.match(state, '^(%d+)%+(%d+)/(%d+)$')
        full_at, fraction = tonumber(at), tonumber(numerator)
        if tonumber(over) ~= limit then
          -- Counted in another limit's 1 / L µs: the next whole µs.
          full_at, fraction = full_at + 1, 0
        end
      end
      if full_at >= now then
        backlog, backlog_fraction = full_at - now, fraction
      end
      if backlog > capacity or (backlog == capacity and backlog_fraction > capacity_fraction) then
        -- Taken under a larger capacity (the spec changed): cut to this one and kept so, or a
        -- retry-after computed from the cut backlog would not come true. But a caller whose clock is
        -- behind the writer's (time-source local) sees the backlog over the capacity by the skew too,
        -- and storing its cut would give every other caller that much back, again at each call. Redis's
        -- own clock tells the two apart: the key expires when the writer's backlog has passed (plus
        -- ttl_slack and under a ms of rounding), so a backlog still over the capacity by Redis's clock
        -- is a larger capacity's. Otherwise the decision sees the cut backlog (what the skew explains)
        -- and nothing is stored; a refund gives back from the stored backlog.
        if (redis.call('PTTL', key) - ttl_slack - 1) * 1000 > capacity then
          backlog, backlog_fraction = capacity, capacity_fraction
          backlogs[key], fractions[key], limits[key] = capacity, capacity_fraction, limit
        elseif op ~= 'r' then
          backlog, backlog_fraction = capacity, capacity_fraction
        end
      end
    end
  end
  if op == 'r' then
    if backlog > 0 or backlog_fraction > 0 then
      local ahead, ahead_fraction = 0, 0
      if cost < burst then
        local given, given_fraction = cost * whole, 0
        if span then
          given, given_fraction = span(cost)
        end
        ahead, ahead_fraction = backlog - given, backlog_fraction - given_fraction
        if ahead_fraction < 0 then
          ahead, ahead_fraction = ahead - 1, ahead_fraction + limit
        end
        if ahead < 0 then
          ahead, ahead_fraction = 0, 0
        end
      end
      backlogs[key], fractions[key], limits[key] = ahead, ahead_fraction, limit
    end
    return
  end
  local bound = shaping and max_delay
  local spare, spare_fraction = capacity - backlog, capacity_fraction - backlog_fraction
  if spare_fraction < 0 then
    spare, spare_fraction = spare - 1, spare_fraction + limit
  end
  local available
  if permits_in then
    available = permits_in(spare, spare_fraction)
  else
    -- T is whole µs: the fraction, below one, adds no permit.
    available = floor(spare / whole)
  end
  local reset_now = backlog + ((backlog_fraction > 0) and 1 or 0)
  -- A charge takes what is available, up to its cost (a bucket owes no more than its capacity:
  -- BucketState).
  if op == 'c' then
    cost = min(cost, max(0, available))
  end
  -- The backlog once the permits are taken (a cost above the burst never is).
  local after, after_fraction = 0, 0
  if cost <= burst then
    local credit, credit_fraction = cost * whole, 0
    if span then
      credit, credit_fraction = span(cost)
    end
    -- The fractions add up to less than 2 * limit, which may pass 2^53 (and be rounded): the carry
    -- is found without forming the sum.
    if credit_fraction >= limit - backlog_fraction then
      after, after_fraction = backlog + credit + 1, credit_fraction - (limit - backlog_fraction)
    else
      after, after_fraction = backlog + credit, backlog_fraction + credit_fraction
    end
  end
  if cost > available or (bound and reset_now > bound) then
    local retry = -1
    if cost <= burst then
      -- The wait until the backlog with the permits taken fits the capacity.
      local excess, excess_fraction = after - capacity, after_fraction - capacity_fraction
      if excess_fraction < 0 then
        excess, excess_fraction = excess - 1, excess_fraction + limit
      end
      retry = max(0, excess + ((excess_fraction > 0) and 1 or 0))
      if bound then
        -- The wait until the delay is short enough; bound (a long) is never multiplied.
        retry = max(retry, reset_now - bound)
      end
    end
    return 0, available, retry, 0, reset_now, reset_now
  end
  local reset_after, delay = after + ((after_fraction > 0) and 1 or 0), shaping and reset_now or 0
  if op == 'c' and cost == 0 then
    return 1, available, 0, delay, reset_now, reset_after
  end
  if at_once > 1 then
    --+ bucket_run.lua
    local admitted, base, base_fraction, step, step_fraction, ahead, ahead_fraction = bucket_run(at_once,
      cost, available, backlog, backlog_fraction, after, after_fraction, capacity, limit, whole, span,
      permits_in, bound)
    return 1, available, 0, delay, reset_now, reset_after, nil, ahead, ahead_fraction, limit, nil, admitted,
      base, base_fraction, step, step_fraction
  end
  return 1, available, 0, delay, reset_now, reset_after, nil, after, after_fraction, limit
end
