-- debt.lua: a key in debt, once a settlement charged it more permits than its limit had left: it is
-- rejected until the limit is full again and the permits owed have come back at its rate (window / limit
-- each). The debt is a time, so that it is paid while nobody asks, in every algorithm alike.
-- KEYS      debt_key: string, the time the debt is paid in µs; expires then (plus ttl_slack ms).
-- Defines   debt(algorithm, op, code, key, debt_key, a, b, c, d, paid_at, permits, now, max_delay,
--           ttl_slack, skewed, backlogs, fractions, limits): for the limit of code and parameters a, b, c, d
--           (rate_limit.lua's ARGV) whose state is at key, in debt until paid_at (µs; nil when not in
--           debt); algorithm is the algorithms' function (algorithm.lua). Op o takes permits even past the
--           limit: while in debt they lengthen it; otherwise what the limit has left is taken (its state
--           saved) and the rest is owed from when the limit is full again. Op r (a refund while in debt)
--           pays the debt off by the permits' time; what is left once it is paid is not given back. Ops d
--           and p (in debt) ask the algorithm about a request of permits (max_delay µs: the leaky bucket's
--           bound), taking nothing.
-- Returns   d, p: allowed, available, retry, reset_now: a rejection with no permits, a retry once the
--           debt is paid (or later, when the algorithm rejects) and a reset no earlier. o: the permits
--           taken from what the limit had left (0 while in debt; the caller subtracts them from its exact
--           count to know what is owed). r: nothing.
-- Mirrors   io.github.ratelimit.algorithm.DebtState.java (and LimitState.owe)

-- Two of the longest windows (100 years): a debt is paid once the limit is full again, and no time
-- passes 2^53.
local max_debt = 3153600000000000
local function debt(algorithm, op, code, key, debt_key, a, b, c, d, paid_at, permits, now, max_delay,
    ttl_slack, skewed, backlogs, fractions, limits)
  local floor, min, max = math.floor, math.min, math.max
  if op == 'd' or op == 'p' then
    local allowed, _, retry, _, reset_now = algorithm(code, key, a, b, c, d, 'p', permits, now, 1, max_delay,
      ttl_slack, skewed, backlogs, fractions, limits)
    local owed = paid_at - now
    if allowed == 0 and retry >= 0 and retry > owed then
      return 0, 0, retry, max(reset_now, owed)
    end
    return 0, 0, owed, max(reset_now, owed)
  end
  local limit, window = a, b
  if code == 'swc' then
    window = b * c
  elseif code == 'fc' then
    -- A calendar window's permits come back over its real length.
    window = (now >= c) and (d - c) or (c - b)
  elseif code ~= 'fw' and code ~= 'sw' and code ~= 'sl' then
    limit, window = b, c
  end
  -- The time permits take to come back, rounded up (owed) or down (repaid), at most max_debt. A larger
  -- count than 2^53 - 1 would pass max_debt anyway; the cap is found in doubles, as Java finds it.
  local function micros(up)
    permits = min(permits, 9007199254740991)
    if permits * window / limit >= max_debt then
      return max_debt
    end
    local n = permits * window
    if n < 9007199254740992 then
      local q = floor(n / limit)
      return (up and n - q * limit > 0) and q + 1 or q
    end
    --+ exact_products.lua
    local q = floor_mul_div(permits, window, limit)
    return (up and not fits_under(permits, window, q, limit)) and q + 1 or q
  end
  local wait, taken = nil, 0
  if op == 'r' then
    local credit = micros(false)
    if credit >= paid_at - now then
      redis.call('DEL', debt_key)
      return
    end
    paid_at = paid_at - credit
  elseif paid_at then
    paid_at = now + min(max_debt, paid_at - now + micros(true))
  else
    local _, available, _, _, reset_now = algorithm(code, key, a, b, c, d, 'p', 1, now, 1, nil, ttl_slack,
      skewed, backlogs, fractions, limits)
    taken = min(permits, max(0, available))
    wait = reset_now
    if taken > 0 then
      local allowed, _, _, _, _, reset_after, save, s1, s2, s3, s4 = algorithm(code, key, a, b, c, d, 'd',
        taken, now, 1, nil, ttl_slack, skewed, backlogs, fractions, limits)
      if allowed == 1 then
        wait = reset_after
        if save then
          save(key, s1, s2, s3, s4)
        elseif s1 then
          backlogs[key], fractions[key], limits[key] = s1, s2, s3
        end
      else
        taken = 0
      end
    end
    if permits <= taken then
      return taken
    end
    permits = permits - taken
    paid_at = now + min(max_debt, wait + micros(true))
  end
  redis.call('SET', debt_key, string.format('%d', paid_at), 'PX',
    max(1, -floor(-(paid_at - now) / 1000)) + ttl_slack)
  if op == 'o' then
    return taken
  end
end
