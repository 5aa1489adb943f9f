-- rate_limit.lua: one call = one decision (or peek, refund, reset) over every limit of a request,
-- all seven algorithms, all-or-nothing. The same semantics as the in-memory store (see DESIGN.md §3);
-- the shared contract suite runs both.
--
-- KEYS[i]   <prefix>:{<bucket>:<key>}:<algorithm code><i>   state of limit i; every key of a call shares
--           the hash tag {<bucket>:<key>}, so the call runs on one Redis Cluster slot.
--             fw    string count, under KEYS[i]..":"..<window index>; expires at the end of the window
--             sl    list of admission times (µs), oldest first; expires W after the newest
--             sw    hash {w = window index, c = current count, p = previous count}; expires 2W after its window starts
--             swc   hash {<sub-window index> = count}; stale fields deleted; expires W after the newest sub-window
--             tb    string: time in ns the bucket is full again; expires at that time
--             gcra  string: theoretical arrival time in ns (the same state); expires at that time
--             lb    string time the queue drains, ns; expires at that time
-- ARGV[1]   operation: d = decide, p = peek, r = refund, x = reset
-- ARGV[2]   cost: permits taken (decide), given back (refund); 1 for peek
-- ARGV[3]   longest leaky bucket delay accepted, µs, or "" for no bound
-- ARGV[4]   now in µs since the epoch, or "" to read Redis TIME (set only by tests and time-source=local)
-- ARGV[5]   ms added to every TTL: 0, except for tests whose manual clock runs ahead of Redis's
-- ARGV[6+7(i-1)..]  limit i: algorithm code, limit, window µs, burst, segments, segment µs, emission interval ns
-- Returns   d, p: per limit { allowed 0|1, remaining, reset_after µs, retry_after µs (-1 = never), delay µs }
--           r, x: {}
-- Every number handled is an integer below 2^53, exact in Lua's doubles (LimitSpec validates the bounds).

local op = ARGV[1]
local cost = tonumber(ARGV[2])
local max_delay = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
local ttl_slack = tonumber(ARGV[5])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end

-- a / b is rounded to a double; correct the rare off-by-one so that q * b <= a < (q + 1) * b.
local function floor_div(a, b)
  local q = math.floor(a / b)
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  return q
end

local function ceil_div(a, b)
  return -floor_div(-a, b)
end

-- PEXPIRE takes ms; round up so a key never expires before its state is fresh.
local function ttl_ms(micros)
  return math.max(1, ceil_div(micros, 1000)) + ttl_slack
end

local function expire_in(key, micros)
  redis.call('PEXPIRE', key, ttl_ms(micros))
end

-- Nanosecond timestamps exceed 2^53: they are stored as integer strings and split into µs and a
-- remainder, and only differences (small) are computed.
local function ns_ahead_of_now(value)
  if not value then
    return 0
  end
  local us = tonumber(string.sub(value, 1, -4)) or 0
  local rem = tonumber(string.sub(value, -3))
  return math.max(0, (us - now) * 1000 + rem)
end

local function set_ns_ahead(key, ahead)
  if ahead <= 0 then
    redis.call('DEL', key)
    return
  end
  local us = now + floor_div(ahead, 1000)
  local rem = ahead - floor_div(ahead, 1000) * 1000
  redis.call('SET', key, string.format('%d%03d', us, rem), 'PX', ttl_ms(ceil_div(ahead, 1000)))
end

-- Each algorithm returns: allowed (0|1), permits available now, retry_after (-1 never),
-- delay, reset_after now, reset_after once this request is committed.
-- With commit it takes the permits when allowed; a rejected request changes nothing.

local function fixed_window(key, s, commit)
  local index = floor_div(now, s.window)
  local window_key = key .. ':' .. index
  if op == 'x' then
    redis.call('DEL', window_key)
    return
  end
  local used = tonumber(redis.call('GET', window_key) or '0')
  local until_next = (index + 1) * s.window - now
  if op == 'r' then
    if used > 0 then
      if used <= cost then
        redis.call('DEL', window_key)
      else
        redis.call('SET', window_key, used - cost, 'KEEPTTL')
      end
    end
    return
  end
  local reset_now = (used > 0) and until_next or 0
  if used + cost <= s.limit then
    if commit then
      redis.call('SET', window_key, used + cost, 'PX', ttl_ms(until_next))
    end
    return 1, s.limit - used, 0, 0, reset_now, until_next
  end
  return 0, s.limit - used, (cost > s.limit) and -1 or until_next, 0, reset_now, reset_now
end

local function sliding_log(key, s, commit)
  local threshold = now - s.window
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
  if op == 'x' then
    redis.call('DEL', key)
    return
  end
  if op == 'r' then
    if size <= cost then
      redis.call('DEL', key)
    else
      redis.call('LTRIM', key, 0, size - cost - 1)
    end
    return
  end
  local reset_now = 0
  if size > 0 then
    reset_now = tonumber(redis.call('LINDEX', key, -1)) + s.window - now
  end
  if size + cost <= s.limit then
    if commit then
      local times = {}
      for i = 1, cost do
        times[#times + 1] = now
        if #times == 1000 or i == cost then
          redis.call('RPUSH', key, unpack(times))
          times = {}
        end
      end
      expire_in(key, s.window)
    end
    return 1, s.limit - size, 0, 0, reset_now, s.window
  end
  local retry = -1
  if cost <= s.limit then
    -- The oldest (size + cost - limit) entries must leave the window first.
    retry = tonumber(redis.call('LINDEX', key, size + cost - s.limit - 1)) + s.window - now
  end
  return 0, s.limit - size, retry, 0, reset_now, reset_now
end

-- Smallest elapsed time e in a window with count * (w - e) <= free * w; w when only the next window helps.
local function earliest_elapsed(count, free, w)
  if count == 0 then
    return 0
  end
  return math.max(0, w - floor_div(free * w, count))
end

local function sliding_window(key, s, commit)
  if op == 'x' then
    redis.call('DEL', key)
    return
  end
  local w = s.window
  local index = floor_div(now, w)
  local state = redis.call('HMGET', key, 'w', 'c', 'p')
  local stored = tonumber(state[1])
  local current, previous = tonumber(state[2]) or 0, tonumber(state[3]) or 0
  if stored and stored > index then
    index = stored
  elseif stored ~= index then
    previous = (stored and index == stored + 1) and current or 0
    current = 0
  end
  local elapsed = math.max(0, now - index * w)
  local weight = w - elapsed
  if op == 'r' then
    if stored then
      local from_current = math.min(cost, current)
      redis.call('HSET', key, 'w', index, 'c', current - from_current, 'p',
        math.max(0, previous - (cost - from_current)))
    end
    return
  end
  local available = s.limit - current - ceil_div(previous * weight, w)
  local reset_now = 0
  if current > 0 then
    reset_now = weight + w
  elseif previous > 0 then
    reset_now = weight
  end
  local free = s.limit - current - cost
  if free >= 0 and previous * weight <= free * w then
    if commit then
      redis.call('HSET', key, 'w', index, 'c', current + cost, 'p', previous)
      expire_in(key, weight + w)
    end
    return 1, available, 0, 0, reset_now, weight + w
  end
  local retry = -1
  if cost <= s.limit then
    local in_this_window = w
    if free >= 0 then
      in_this_window = earliest_elapsed(previous, free, w)
    end
    if in_this_window < w then
      retry = in_this_window - elapsed
    else
      retry = weight + earliest_elapsed(current, s.limit - cost, w)
    end
  end
  return 0, available, retry, 0, reset_now, reset_now
end

local function sliding_window_counter(key, s, commit)
  if op == 'x' then
    redis.call('DEL', key)
    return
  end
  local n, length = s.segments, s.segment
  local segment = floor_div(now, length)
  local fields = redis.call('HGETALL', key)
  local counts, stale, sum = {}, {}, 0
  for i = 1, #fields, 2 do
    local k = tonumber(fields[i])
    if k > segment then
      segment = k
    end
  end
  for i = 1, #fields, 2 do
    local k, count = tonumber(fields[i]), tonumber(fields[i + 1])
    if k <= segment - n then
      stale[#stale + 1] = fields[i]
    else
      counts[k] = count
      sum = sum + count
    end
  end
  if #stale > 0 then
    redis.call('HDEL', key, unpack(stale))
  end
  if op == 'r' then
    local left = cost
    for k = segment, segment - n + 1, -1 do
      local count = counts[k]
      if left > 0 and count and count > 0 then
        local taken = math.min(left, count)
        left = left - taken
        if taken == count then
          redis.call('HDEL', key, k)
        else
          redis.call('HSET', key, k, count - taken)
        end
      end
    end
    return
  end
  local reset_now = 0
  for k = segment, segment - n + 1, -1 do
    if counts[k] and counts[k] > 0 then
      reset_now = (k + n) * length - now
      break
    end
  end
  if sum + cost <= s.limit then
    if commit then
      redis.call('HINCRBY', key, segment, cost)
      expire_in(key, (segment + n) * length - now)
    end
    return 1, s.limit - sum, 0, 0, reset_now, (segment + n) * length - now
  end
  local retry = -1
  if cost <= s.limit then
    -- Sub-window k leaves the window at (k + n) * length; the oldest leave first.
    local released = 0
    for k = segment - n + 1, segment do
      released = released + (counts[k] or 0)
      if sum - released + cost <= s.limit then
        retry = (k + n) * length - now
        break
      end
    end
  end
  return 0, s.limit - sum, retry, 0, reset_now, reset_now
end

-- Token bucket, GCRA and leaky bucket are one meter (DESIGN.md §3), kept in one integer: the time, in
-- ns, at which the bucket is full again (GCRA's theoretical arrival time; for the leaky bucket, when its
-- queue has drained). Tokens at t are (burst * interval - (full_at - t)) / interval, the credit the
-- in-memory token bucket keeps. Shaping (leaky bucket) differs only in making the caller wait for its
-- slot (the delay is the backlog), bounding that wait by max_delay, and in refusing refunds.
local function time_meter(key, s, commit, shaping)
  if op == 'x' then
    redis.call('DEL', key)
    return
  end
  if op == 'r' and shaping then
    -- A slot once handed out is already being waited for: nothing to give back.
    return
  end
  local interval = s.interval
  local capacity = s.burst * interval
  local backlog = ns_ahead_of_now(redis.call('GET', key) or nil)
  if op == 'r' then
    if backlog > 0 then
      set_ns_ahead(key, (cost >= s.burst) and 0 or math.max(0, backlog - cost * interval))
    end
    return
  end
  local available = floor_div(capacity - backlog, interval)
  local reset_now = ceil_div(backlog, 1000)
  local delay = shaping and reset_now or 0
  local fits = cost <= s.burst and backlog + cost * interval <= capacity
  if fits and not (shaping and max_delay and delay > max_delay) then
    local ahead = backlog + cost * interval
    if commit then
      set_ns_ahead(key, ahead)
    end
    return 1, available, 0, delay, reset_now, ceil_div(ahead, 1000)
  end
  local retry = -1
  if cost <= s.burst then
    retry = math.max(0, ceil_div(backlog + cost * interval - capacity, 1000))
    if shaping and max_delay then
      retry = math.max(retry, ceil_div(backlog - max_delay * 1000, 1000))
    end
  end
  return 0, available, retry, 0, reset_now, reset_now
end

local function token_bucket_or_gcra(key, s, commit)
  return time_meter(key, s, commit, false)
end

local function leaky_bucket(key, s, commit)
  return time_meter(key, s, commit, true)
end

local algorithms = {
  fw = fixed_window,
  sl = sliding_log,
  sw = sliding_window,
  swc = sliding_window_counter,
  tb = token_bucket_or_gcra,
  gcra = token_bucket_or_gcra,
  lb = leaky_bucket
}

local specs = {}
for i = 1, #KEYS do
  local base = 6 + (i - 1) * 7
  local algorithm = algorithms[ARGV[base]]
  if not algorithm then
    return redis.error_reply('ERR rate_limit.lua: unknown algorithm code ' .. tostring(ARGV[base]))
  end
  specs[i] = {
    algorithm = algorithm,
    limit = tonumber(ARGV[base + 1]),
    window = tonumber(ARGV[base + 2]),
    burst = tonumber(ARGV[base + 3]),
    segments = tonumber(ARGV[base + 4]),
    segment = tonumber(ARGV[base + 5]),
    interval = tonumber(ARGV[base + 6])
  }
end

if op == 'r' or op == 'x' then
  for i = 1, #KEYS do
    specs[i].algorithm(KEYS[i], specs[i], false)
  end
  return {}
end

local results, all_allowed = {}, true
-- One limit commits in one pass (a rejection changes nothing); several are all checked first.
local single = (op == 'd') and (#KEYS == 1)
for i = 1, #KEYS do
  results[i] = { specs[i].algorithm(KEYS[i], specs[i], single) }
  all_allowed = all_allowed and results[i][1] == 1
end
if op == 'd' and all_allowed and not single then
  for i = 1, #KEYS do
    results[i] = { specs[i].algorithm(KEYS[i], specs[i], true) }
  end
end

local reply = {}
for i = 1, #KEYS do
  local allowed, available, retry, delay, reset_now, reset_after = unpack(results[i])
  local remaining, reset = available, reset_now
  if op == 'd' and allowed == 1 then
    remaining, reset = available - cost, reset_after
  end
  if op == 'p' then
    delay = 0
  end
  reply[#reply + 1] = allowed
  reply[#reply + 1] = math.max(0, remaining)
  reply[#reply + 1] = reset
  reply[#reply + 1] = retry
  reply[#reply + 1] = delay
end
return reply
