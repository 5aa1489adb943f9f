-- bucket.lua: token bucket, GCRA and leaky bucket, one function over one number.
-- KEYS      key: string, the time in ns the bucket is full again, as "<µs><3 digits of ns>"; expires then.
-- ARGV      ARGV[arg + 1] burst, ARGV[arg + 2] emission interval in ns.
-- In scope (rate_limit.lua): key (KEYS[i]), arg (this limit's first argument, its code), op, cost, now
--           (µs), max_delay, ttl_slack, commit, charging (a charge: lower cost to what is available),
--           floor/max/min; written (key -> the backlog in ns this call leaves, which rate_limit.lua
--           stores after the call's last decision); at_once (how many requests this decision may take:
--           what is left of a batch's run of identical ones, this one included, when the call has one
--           limit; else 1).
-- Sets      for decide and peek: allowed (0|1), available (permits now), retry (µs, -1 = never),
--           delay (µs), reset_now (µs until full now), reset_after (µs until full once committed).
--           With commit the permits are taken when allowed; a rejection writes nothing (a bucket
--           whose backlog exceeds a lowered capacity stores the cut backlog). Refund and reset set nothing.
--           A committed decision with at_once > 1 takes, at once, as many of the run as one after
--           another would be allowed: it sets admitted (their number) and base (the backlog before them).
-- Mirrors   io.github.ratelimit.algorithm.BucketState.java

-- Token bucket, GCRA and leaky bucket are one function over one integer: the time,
-- in ns, at which the bucket is full again (GCRA's theoretical arrival time; for the leaky bucket,
-- when its queue has drained). Tokens at t are (burst * interval - (full_at - t)) / interval, the
-- credit the in-memory token bucket keeps. Shaping (leaky bucket) differs only in making the caller
-- wait for its slot (the delay is the backlog), bounding that wait by max_delay, and in refusing
-- refunds: a slot once handed out is already being waited for. full_at exceeds 2^53: it is stored
-- as an integer string, split into µs and the last three digits, and only the backlog
-- (full_at - now, small) is computed. The backlog is capped at the capacity of the current spec: a
-- change of limit, window or burst keeps the time to refill, up to the new capacity.
local shaping = code == 'lb'
if op == 'x' then
  redis.call('DEL', key)
elseif op ~= 'r' or not shaping then
  local burst, interval = tonumber(ARGV[arg + 1]), tonumber(ARGV[arg + 2])
  local capacity = burst * interval
  local backlog = 0
  local ahead -- the new backlog to store, if any
  -- A decision of a batch reads the backlog the one before it left (on the same now), not Redis:
  -- only the last one is stored.
  local full_at = written[key] or redis.call('GET', key)
  if type(full_at) == 'number' then
    backlog = full_at
  elseif full_at then
    -- At least four digits (%d%03d below); 5328 = 111 * ('0' = 48). The digits are summed first: a
    -- backlog near 2^53 plus the bytes' offset would pass 2^53 and be rounded.
    local hundreds, tens, ones = string.byte(full_at, -3, -1)
    backlog = max(0, (tonumber(string.sub(full_at, 1, -4)) - now) * 1000
      + (hundreds * 100 + tens * 10 + ones - 5328))
    if backlog > capacity then
      -- Taken under a larger capacity (the spec changed): cut to this one and kept so, or a
      -- retry-after computed from the cut backlog would not come true.
      backlog, ahead = capacity, capacity
    end
  end
  if op == 'r' then
    if backlog > 0 then
      ahead = (cost >= burst) and 0 or max(0, backlog - cost * interval)
    end
  else
    local bound = shaping and max_delay
    available = floor((capacity - backlog) / interval)
    -- A charge takes what is available, up to its cost (a bucket owes no more than its capacity:
    -- BucketState), and commits only a cost above zero.
    if charging then
      cost = min(cost, max(0, available))
      commit = commit and cost > 0
    end
    reset_now = -floor(-backlog / 1000)
    if cost <= burst and cost * interval <= capacity - backlog and not (bound and reset_now > bound) then
      local step = cost * interval
      if commit and at_once > 1 then
        -- Each of the run adds step to the backlog, and is allowed while its step still fits and,
        -- shaping, its delay ceil(backlog / 1000) stays within the bound, that is backlog <= bound * 1000:
        -- how many are is a quotient. (A bound * 1000 at or above the capacity bounds nothing, and is
        -- not formed exactly when it is beyond 2^53.)
        admitted, base = min(at_once, floor((capacity - backlog - step) / step) + 1), backlog
        if bound and bound * 1000 < capacity then
          admitted = min(admitted, floor((bound * 1000 - backlog) / step) + 1)
        end
      end
      local after = backlog + step
      allowed, retry, reset_after = 1, 0, -floor(-after / 1000)
      delay = shaping and reset_now or 0
      if commit then
        ahead = backlog + admitted * step
      end
    else
      allowed, retry, delay, reset_after = 0, -1, 0, reset_now
      if cost <= burst then
        retry = max(0, -floor((capacity - backlog - cost * interval) / 1000))
        if bound then
          -- The wait until the delay is short enough; bound (a long) is never multiplied.
          retry = max(retry, reset_now - bound)
        end
      end
    end
  end
  if ahead then
    written[key] = max(0, ahead)
  end
end
