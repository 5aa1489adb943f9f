-- bucket.lua: token bucket, GCRA and leaky bucket, one function over one time.
-- KEYS      key: string, the time the bucket is full again in µs, "<µs>", or "<µs>+<n>/<L>" when it
--           is n/L µs later (L the limit the fraction was counted under); expires then.
-- ARGV      ARGV[arg + 1] burst, ARGV[arg + 2] limit, ARGV[arg + 3] window in µs.
-- In scope (rate_limit.lua): key (KEYS[i]), arg (this limit's first argument, its code), op, cost,
--           now (µs), max_delay, ttl_slack, commit, charging (a charge: take what is available),
--           floor/max/min; written, written_fraction and written_limit (key -> the backlog this call
--           leaves: whole µs, the fraction and the limit it is counted under, which rate_limit.lua stores
--           after the call's last decision); at_once (how many requests this decision may take: what is
--           left of a batch's run of identical ones, this one included, when the call has one limit;
--           else 1).
-- Sets      for decide and peek: allowed (0|1), available (permits now), retry (µs, -1 = never),
--           delay (µs), reset_now (µs until full now), reset_after (µs until full once committed).
--           With commit the permits are taken when allowed; a rejection writes nothing (a bucket
--           whose backlog exceeds a lowered capacity stores the cut backlog). Refund and reset set nothing.
--           A committed decision with at_once > 1 takes, at once, as many of the run as one after
--           another would be allowed (bucket_run.lua): admitted, base, step and their fractions.
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
local shaping = code == 'lb'
if op == 'x' then
  redis.call('DEL', key)
elseif op ~= 'r' or not shaping then
  local burst, limit, window = tonumber(ARGV[arg + 1]), tonumber(ARGV[arg + 2]), tonumber(ARGV[arg + 3])
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
  local ahead, ahead_fraction -- the new backlog to store, if any
  if written[key] then
    -- A decision of a batch reads the backlog the one before it left (on the same now), not Redis:
    -- only the last one is stored.
    backlog, backlog_fraction = written[key], written_fraction[key]
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
          ahead, ahead_fraction = capacity, capacity_fraction
        elseif op ~= 'r' then
          backlog, backlog_fraction = capacity, capacity_fraction
        end
      end
    end
  end
  if op == 'r' then
    if backlog > 0 or backlog_fraction > 0 then
      ahead, ahead_fraction = 0, 0
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
    end
  else
    local bound = shaping and max_delay
    local spare, spare_fraction = capacity - backlog, capacity_fraction - backlog_fraction
    if spare_fraction < 0 then
      spare, spare_fraction = spare - 1, spare_fraction + limit
    end
    if permits_in then
      available = permits_in(spare, spare_fraction)
    else
      -- T is whole µs: the fraction, below one, adds no permit.
      available = floor(spare / whole)
    end
    -- A charge takes what is available, up to its cost (a bucket owes no more than its capacity:
    -- BucketState), and commits only a cost above zero.
    if charging then
      cost = min(cost, max(0, available))
      commit = commit and cost > 0
    end
    reset_now = backlog + ((backlog_fraction > 0) and 1 or 0)
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
    if cost <= available and not (bound and reset_now > bound) then
      allowed, retry, reset_after = 1, 0, after + ((after_fraction > 0) and 1 or 0)
      delay = shaping and reset_now or 0
      if commit then
        ahead, ahead_fraction = after, after_fraction
        if at_once > 1 then
          --+ bucket_run.lua
        end
      end
    else
      allowed, retry, delay, reset_after = 0, -1, 0, reset_now
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
    end
  end
  if ahead then
    written[key], written_fraction[key], written_limit[key] = ahead, ahead_fraction, limit
  end
end
