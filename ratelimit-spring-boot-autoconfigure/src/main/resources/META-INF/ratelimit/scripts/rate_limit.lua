-- rate_limit.lua: one call = one decision (or peek, refund, reset) over every limit of a request,
-- all seven algorithms, all-or-nothing. The same semantics as the in-memory store (the README's
-- "Algorithms" and "When a limit changes"); the shared contract suite and a differential test run both.
--
-- KEYS[i]   <prefix>:{<bucket>:<key>}:<algorithm code><i>[:<window µs>[/<segments>]]   state of limit i;
--           every key of a call shares the hash tag {<bucket>:<key>}, so the call runs on one Redis
--           Cluster slot. The window algorithms name their window (and the counter its segments) in
--           the key: a limit whose algorithm, window or segments changes has a state of its own.
--           The script touches no key but these.
--             fw    hash {w = window index, c = count}; expires at the end of the window
--             sl    list of admission times (µs), oldest first; expires W after the newest
--             sw    hash {w = window index, c = current count, p = previous count}; expires 2W after its window starts
--             swc   hash {<sub-window index> = count}; stale fields deleted; expires W after the newest sub-window
--             tb    string: time in ns the bucket is full again; expires at that time
--             gcra  string: theoretical arrival time in ns (the same state); expires at that time
--             lb    string time the queue drains, ns; expires at that time
-- ARGV[1]   operation: d = decide, p = peek, r = refund, x = reset
-- ARGV[2]   cost: permits taken (decide), given back (refund); 1 for peek. Up to 2^63 - 1.
-- ARGV[3..]  the limits in KEYS order, each an algorithm code and its parameters:
--             fw, sl, sw       limit, window µs
--             swc              limit, sub-windows, sub-window µs
--             tb, gcra, lb     burst, emission interval ns
-- then three optional arguments (absent or "" when unset):
--             longest leaky bucket delay accepted, µs (unset: no bound)
--             now in µs since the epoch (unset: Redis TIME; set by tests and time-source=local)
--             ms added to every TTL (set only by tests, whose manual clock runs ahead of Redis's)
-- Returns   d, p: per limit { allowed 0|1, remaining, reset_after µs, delay µs if allowed else
--                             retry_after µs (-1 = never) }
--           r, x: {}
-- Exactness: every limit, burst, window, interval and count is an integer below 2^53, exact in Lua's
-- doubles (LimitSpec bounds them), and so is floor(a / b) of two of them: a correctly rounded quotient
-- never crosses an integer. A cost may be larger and rounded, but every comparison is written as
-- cost <= limit - used, whose right side is exact and below 2^53, so a rounded cost decides alike. Only
-- the sliding window multiplies two such numbers (count * time); it does so in 26-bit limbs.
--
-- Redis runs this whole chunk on every call, and every function it defines is a new closure each time:
-- with seven algorithms that cost more than the algorithm itself. So the algorithms are written inline,
-- as branches of one loop, and the common case (no optional argument) sends no argument it does not use.

local op = ARGV[1]
local cost = tonumber(ARGV[2])
local count = #KEYS

-- A first walk over the limits' arguments checks every code before any limit runs, and finds the
-- optional arguments after them.
local arg = 3
for i = 1, count do
  local code = ARGV[arg]
  if code == 'swc' then
    arg = arg + 4
  elseif code == 'tb' or code == 'gcra' or code == 'lb' or code == 'fw' or code == 'sw' or code == 'sl' then
    arg = arg + 3
  else
    return redis.error_reply('ERR rate_limit.lua: unknown algorithm code ' .. tostring(code))
  end
end
local max_delay = tonumber(ARGV[arg])
local now = tonumber(ARGV[arg + 1])
local ttl_slack = tonumber(ARGV[arg + 2]) or 0
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end
local floor, max, min = math.floor, math.max, math.min

-- Decide and peek reply 4 values per limit (sized for one limit here: growing a table costs).
local reply = (op == 'd' or op == 'p') and { 0, 0, 0, 0 } or {}
-- One limit decides and commits in one pass (a rejection changes nothing); several are all checked in
-- a first pass, and committed in a second only if all allow.
local commit = op == 'd' and count == 1
for _ = 1, 2 do
  local all_allowed = true
  arg = 3
  for i = 1, count do
    local key, code = KEYS[i], ARGV[arg]
    -- Decide and peek set: allowed (0|1), permits available now, retry_after (-1 never), delay,
    -- reset_after now, reset_after once this request is committed. With commit the permits are taken
    -- when allowed; a rejected request changes nothing. Refund and reset set nothing.
    local allowed, available, retry, delay, reset_now, reset_after

    if code == 'tb' or code == 'gcra' or code == 'lb' then
      -- Token bucket, GCRA and leaky bucket are one meter, kept in one integer: the time,
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
        local full_at = redis.call('GET', key)
        if full_at then
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
          reset_now = -floor(-backlog / 1000)
          if cost <= burst and cost * interval <= capacity - backlog and not (bound and reset_now > bound) then
            local after = backlog + cost * interval
            allowed, retry, reset_after = 1, 0, -floor(-after / 1000)
            delay = shaping and reset_now or 0
            if commit then
              ahead = after
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
        if ahead and ahead <= 0 then
          redis.call('DEL', key)
        elseif ahead then
          local whole_us = floor(ahead / 1000)
          redis.call('SET', key, string.format('%d%03d', now + whole_us, ahead - whole_us * 1000), 'PX',
            max(1, -floor(-ahead / 1000000)) + ttl_slack)
        end
      end

    elseif code == 'fw' then
      local limit, window = tonumber(ARGV[arg + 1]), tonumber(ARGV[arg + 2])
      if op == 'x' then
        redis.call('DEL', key)
      else
        local index = floor(now / window)
        local state = redis.call('HMGET', key, 'w', 'c')
        local used = (tonumber(state[1]) == index) and tonumber(state[2]) or 0
        local until_next = (index + 1) * window - now
        if op == 'r' then
          if used > 0 and used <= cost then
            redis.call('DEL', key)
          elseif used > 0 then
            redis.call('HSET', key, 'c', used - cost)
          end
        else
          available, delay = limit - used, 0
          reset_now = (used > 0) and until_next or 0
          -- cost <= limit - used: used may exceed a lowered limit, and cost may be rounded.
          if cost <= limit - used then
            allowed, retry, reset_after = 1, 0, until_next
            if commit and used > 0 then
              -- The key already expires at the window's end.
              redis.call('HINCRBY', key, 'c', cost)
            elseif commit then
              redis.call('HSET', key, 'w', index, 'c', cost)
              redis.call('PEXPIRE', key, max(1, -floor(-until_next / 1000)) + ttl_slack)
            end
          else
            allowed, reset_after = 0, reset_now
            retry = (cost > limit) and -1 or until_next
          end
        end
      end

    elseif code == 'swc' then
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
          for k = segment, segment - n + 1, -1 do
            if counts[k] and counts[k] > 0 then
              reset_now = (k + n) * length - now
              break
            end
          end
          if cost <= limit - sum then
            allowed, retry, reset_after = 1, 0, (segment + n) * length - now
            -- The key expires W after its newest sub-window, set when that sub-window's field was created
            -- (only a commit creates fields): only a new field moves the expiry.
            if commit and redis.call('HINCRBY', key, segment, cost) == cost then
              redis.call('PEXPIRE', key, max(1, -floor(-reset_after / 1000)) + ttl_slack)
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

    elseif code == 'sw' then
      local limit, w = tonumber(ARGV[arg + 1]), tonumber(ARGV[arg + 2])
      -- count * time products reach 2^105 where doubles are exact only below 2^53, so they are compared
      -- exactly: a * b as three 26-bit limbs, for a, b < 2^53 and one of them below 2^52 (a window in µs,
      -- or a quotient smaller than one).
      local function product(a, b)
        if a < b then
          a, b = b, a
        end
        local a1, b1 = floor(a / 67108864), floor(b / 67108864)
        local a0, b0 = a - a1 * 67108864, b - b1 * 67108864
        local low, cross1, cross2 = a0 * b0, a1 * b0, a0 * b1
        local carry = floor(low / 67108864)
        local c1, c2 = floor(cross1 / 67108864), floor(cross2 / 67108864)
        local mid = (cross1 - c1 * 67108864) + (cross2 - c2 * 67108864) + carry
        local mid_carry = floor(mid / 67108864)
        return a1 * b1 + c1 + c2 + mid_carry, mid - mid_carry * 67108864, low - carry * 67108864
      end
      -- a * b <= c * d, exactly.
      local function fits_under(a, b, c, d)
        local h1, m1, l1 = product(a, b)
        local h2, m2, l2 = product(c, d)
        if h1 ~= h2 then
          return h1 < h2
        end
        if m1 ~= m2 then
          return m1 < m2
        end
        return l1 <= l2
      end
      -- floor(a * b / c) for a result below 2^52, exactly: the rounded quotient corrected by exact products.
      local function floor_mul_div(a, b, c)
        local q = floor(a * b / c)
        while q > 0 and not fits_under(q, c, a, b) do
          q = q - 1
        end
        while fits_under(q + 1, c, a, b) do
          q = q + 1
        end
        return q
      end
      if op == 'x' then
        redis.call('DEL', key)
      else
        local index = floor(now / w)
        local state = redis.call('HMGET', key, 'w', 'c', 'p')
        local stored = tonumber(state[1])
        local current, previous = tonumber(state[2]) or 0, tonumber(state[3]) or 0
        if stored and stored > index then
          index = stored
        elseif stored ~= index then
          previous = (stored and index == stored + 1) and current or 0
          current = 0
        end
        local elapsed = max(0, now - index * w)
        local weight = w - elapsed
        if op == 'r' then
          if stored then
            local from_current = min(cost, current)
            redis.call('HSET', key, 'w', index, 'c', current - from_current, 'p',
              max(0, previous - (cost - from_current)))
          end
        else
          -- The previous window's share: ceil(previous * weight / w), at most previous.
          local share = floor_mul_div(previous, weight, w)
          if not fits_under(previous, weight, share, w) then
            share = share + 1
          end
          available, delay = limit - current - share, 0
          reset_now = 0
          if current > 0 then
            reset_now = weight + w
          elseif previous > 0 then
            reset_now = weight
          end
          local free = limit - current - cost
          if free >= 0 and fits_under(previous, weight, free, w) then
            allowed, retry, reset_after = 1, 0, weight + w
            if commit then
              redis.call('HSET', key, 'w', index, 'c', current + cost, 'p', previous)
              redis.call('PEXPIRE', key, max(1, -floor(-reset_after / 1000)) + ttl_slack)
            end
          else
            allowed, retry, reset_after = 0, -1, reset_now
            if cost <= limit then
              -- The smallest elapsed time e in a window with previous * (w - e) <= free * w; w when only the
              -- next window helps, where current * (w - e) <= (limit - cost) * w must hold. A quotient of
              -- w or more means e = 0.
              local in_this_window = w
              if free >= 0 then
                in_this_window = (free >= previous) and 0 or (w - floor_mul_div(free, w, previous))
              end
              if in_this_window < w then
                retry = in_this_window - elapsed
              else
                retry = weight + ((limit - cost >= current) and 0 or (w - floor_mul_div(limit - cost, w, current)))
              end
            end
          end
        end
      end

    else -- sl
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
          if size > 0 then
            reset_now = tonumber(redis.call('LINDEX', key, -1)) + window - now
          end
          if cost <= limit - size then
            allowed, retry, reset_after = 1, 0, window
            if commit then
              local times = {}
              for t = 1, cost do
                times[#times + 1] = now
                if #times == 1000 or t == cost then
                  redis.call('RPUSH', key, unpack(times))
                  times = {}
                end
              end
              redis.call('PEXPIRE', key, max(1, -floor(-window / 1000)) + ttl_slack)
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
    end

    arg = arg + ((code == 'swc') and 4 or 3)
    -- Decide and peek: allowed, remaining, reset_after, then the delay or the retry_after.
    if allowed then
      local at = 4 * i - 4
      if allowed == 0 then
        all_allowed = false
        reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4] = 0, max(0, available), reset_now, retry
      elseif op == 'd' then
        reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4] = 1, max(0, available - cost), reset_after, delay
      else
        reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4] = 1, max(0, available), reset_now, 0
      end
    end
  end
  if commit or op ~= 'd' or not all_allowed then
    break
  end
  commit = true
end
return reply
