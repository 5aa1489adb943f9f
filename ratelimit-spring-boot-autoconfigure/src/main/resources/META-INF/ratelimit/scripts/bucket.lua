-- bucket.lua: token bucket, GCRA and leaky bucket, one function over one time.
-- Key      string: the time the bucket is full again in µs, "<µs>", or "<µs>+<n>/<L>" when it is n/L µs
--          later (L the limit the fraction is counted under); expires then.
-- Args     code (tb, gcra or lb), burst, limit, window in µs.
-- State    { backlog = whole µs, fraction = 1/L µs, skew = true|nil }: the credit taken and not yet
--          restored, at the call's now (so the functions below need no now).
-- Returns  the module: spec, load, acquire, refund, charge, save (rate_limit.lua says what each does).
-- Mirrors  io.github.ratelimit.algorithm.BucketState
--
-- The time is when the bucket is full again (GCRA's theoretical arrival time; when the leaky bucket's
-- queue has drained). A request of cost c adds c * T to the backlog (T = W / L) and is allowed while it
-- stays within the capacity B * T. Shaping (leaky bucket) makes the caller wait for its slot (the delay
-- is the backlog), bounds that wait by max_delay, and refuses refunds. Exact for every spec: each time
-- is whole µs plus a fraction in 1 / L µs (bucket_time.lua). A change of limit, window or burst keeps
-- the time to refill, up to the new capacity; a fraction under another limit is rounded up to the µs.

local floor, max, min = math.floor, math.max, math.min
local span, permits_in, plus, minus, ceil = require('bucket_time')
-- Whether a backlog exceeds the spec's capacity (it was taken under a larger one).
local function over(backlog, fraction, spec)
  return backlog > spec.capacity or (backlog == spec.capacity and fraction > spec.capacity_fraction)
end

local FRESH = { backlog = 0, fraction = 0, skew = false }

local function spec(args, at)
  local limit, window = tonumber(args[at + 2]), tonumber(args[at + 3])
  local whole = floor(window / limit)
  local limit_spec = { code = args[at], burst = tonumber(args[at + 1]), limit = limit, window = window,
    whole = whole, remainder = window - whole * limit, capacity = 0, capacity_fraction = 0 }
  limit_spec.capacity, limit_spec.capacity_fraction = span(limit_spec, limit_spec.burst)
  return limit_spec, at + 4
end

local function load(key, spec, now, ttl_slack)
  local stored = redis.call('GET', key)
  if not stored then
    return FRESH
  end
  local full_at, fraction = tonumber(stored), 0
  if not full_at then
    local at, numerator, under = string.match(stored, '^(%d+)%+(%d+)/(%d+)$')
    full_at, fraction = tonumber(at), tonumber(numerator)
    if tonumber(under) ~= spec.limit then
      -- Counted in another limit's 1 / L µs: the next whole µs.
      full_at, fraction = full_at + 1, 0
    end
  end
  if full_at < now then
    return FRESH
  end
  local state = { backlog = full_at - now, fraction = fraction, skew = false }
  if over(state.backlog, fraction, spec) then
    -- Over the capacity: taken under a larger one (to be cut), or seen by a caller whose clock is behind
    -- the writer's (time-source local), whose cut, stored, would give every other caller the skew back.
    -- Redis's clock tells them apart: the key expires when the writer's backlog has passed (plus
    -- ttl_slack, under a ms of rounding). On a skew, decisions see the cut backlog without storing it,
    -- and a refund gives back from the stored one.
    state.skew = (redis.call('PTTL', key) - ttl_slack - 1) * 1000 <= spec.capacity
  end
  return state
end

local function acquire(state, spec, now, cost, max_delay, run)
  local shaping = spec.code == 'lb'
  local limit, burst = spec.limit, spec.burst
  local capacity, capacity_fraction = spec.capacity, spec.capacity_fraction
  local backlog, backlog_fraction = state.backlog, state.fraction
  local kept = state
  if over(backlog, backlog_fraction, spec) then
    -- Cut and kept so, or a retry-after computed from the cut backlog would not come true.
    backlog, backlog_fraction = capacity, capacity_fraction
    if not state.skew then
      kept = { backlog = capacity, fraction = capacity_fraction, skew = false }
    end
  end
  local available = permits_in(spec, minus(capacity, capacity_fraction, backlog, backlog_fraction, limit))
  local reset_now = ceil(backlog, backlog_fraction)
  local bound = shaping and max_delay
  -- The backlog once the permits are taken (a cost above the burst never is).
  local credit, credit_fraction, after, after_fraction = 0, 0, 0, 0
  if cost <= burst then
    credit, credit_fraction = span(spec, cost)
    after, after_fraction = plus(backlog, backlog_fraction, credit, credit_fraction, limit)
  end
  if cost <= available and not (bound and reset_now > bound) then
    local reset_after, taken = ceil(after, after_fraction), 1
    if run > 1 then
      -- The batch closed form: each of the run takes cost more of the available permits, and is allowed
      -- while they last and, shaping, while its delay ceil(backlog) stays within the bound: the j-th
      -- after this one while backlog + j * cost * T <= bound, that is j * cost <= the permits in
      -- bound - backlog. (A bound beyond the capacity bounds nothing.)
      taken = min(run, floor(available / cost))
      if bound and bound <= capacity then
        local in_room = permits_in(spec, minus(bound, 0, backlog, backlog_fraction, limit))
        taken = min(taken, floor(in_room / cost) + 1)
      end
      -- The run's permits at once (at most the available ones, so their product stays exact).
      local credits, credits_fraction = span(spec, taken * cost)
      after, after_fraction = plus(backlog, backlog_fraction, credits, credits_fraction, limit)
    end
    -- For the batch reply: the backlog before them, and what each of them adds to it.
    return true, available, reset_now, reset_after, shaping and reset_now or 0,
      { backlog = after, fraction = after_fraction, skew = false }, kept, taken, backlog, backlog_fraction, credit,
      credit_fraction
  end
  local retry = -1
  if cost <= burst then
    -- The wait until the backlog with the permits taken fits the capacity.
    retry = max(0, ceil(minus(after, after_fraction, capacity, capacity_fraction, limit)))
    if bound then
      -- The wait until the delay is short enough; bound (a long) is never multiplied.
      retry = max(retry, reset_now - bound)
    end
  end
  return false, available, reset_now, reset_now, retry, kept, kept, 0
end

local function refund(state, spec, now, cost)
  local backlog, fraction = state.backlog, state.fraction
  if spec.code == 'lb' or (backlog == 0 and fraction == 0) then
    return state
  end
  if over(backlog, fraction, spec) and not state.skew then
    backlog, fraction = spec.capacity, spec.capacity_fraction
  end
  if cost >= spec.burst then
    return FRESH
  end
  local given, given_fraction = span(spec, cost)
  local after, after_fraction = minus(backlog, fraction, given, given_fraction, spec.limit)
  if after < 0 then
    return FRESH
  end
  return { backlog = after, fraction = after_fraction, skew = false }
end

local function charge(state, spec, now, cost)
  -- A bucket owes no more than its capacity: it takes what is available, up to the cost.
  local _, available, _, _, _, _, kept = acquire(state, spec, now, 1, nil, 1)
  local taken = min(cost, max(0, available))
  if taken <= 0 then
    return kept
  end
  local allowed, _, _, _, _, next = acquire(kept, spec, now, taken, nil, 1)
  return allowed and next or kept
end

local function save(key, spec, state, now, ttl_slack)
  local ahead, fraction = state.backlog, state.fraction
  if ahead == 0 and fraction == 0 then
    redis.call('DEL', key)
    return
  end
  local full_at
  if fraction > 0 then
    -- Full again within the µs after now + ahead: the key expires after it.
    full_at, ahead = string.format('%d+%d/%d', now + ahead, fraction, spec.limit), ahead + 1
  else
    full_at = string.format('%d', now + ahead)
  end
  redis.call('SET', key, full_at, 'PX', max(1, -floor(-ahead / 1000)) + ttl_slack)
end

return { spec = spec, load = load, acquire = acquire, refund = refund, charge = charge, save = save }
