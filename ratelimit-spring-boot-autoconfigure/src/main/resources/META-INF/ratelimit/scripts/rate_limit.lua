-- rate_limit.lua: one call = one decision (or peek, refund, reset) over every limit of a request,
-- all seven algorithms, all-or-nothing; or a batch of decisions on the same key and limits, decided
-- one after another as if each were a call of its own (io.github.ratelimit.redis.DecisionCoalescer). The same semantics as the in-memory store (the README's
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
--             tb    string: time in µs the bucket is full again, "<µs>" or "<µs>+<n>/<L>" (n/L µs later,
--                   L the limit); expires at that time
--             gcra  string: theoretical arrival time (the same state); expires at that time
--             lb    string: time the queue drains (the same state); expires at that time
-- ARGV[1]   operation: d = decide, p = peek, r = refund, x = reset, b = decide a batch,
--           c = charge (take permits whether or not a request would be allowed), u = restore (charge
--           only when every limit is full: no state, or none that still matters), h = heartbeat of an
--           instance (below)
-- ARGV[2]   cost: permits taken (decide), given back (refund); 1 for peek. Up to 2^63 - 1.
--           For b: the number of decisions n in the batch. For c and u: unused (the costs follow).
-- ARGV[3..]  the limits in KEYS order, each an algorithm code and its parameters:
--             fw, sl, sw       limit, window µs
--             swc              limit, sub-windows, sub-window µs
--             tb, gcra, lb     burst, limit, window µs
-- then three optional arguments (absent or "" when unset):
--             longest leaky bucket delay accepted, µs (unset: no bound)
--             now in µs since the epoch (unset: Redis TIME; set by tests and time-source=local). The
--             callers' clocks may then disagree: no algorithm goes back to an older window, drops a
--             permit another caller counted or gives back time because a caller's now is behind, and
--             the window algorithms' keys live one window longer (skewed)
--             ms added to every TTL (set only by tests, whose manual clock runs ahead of Redis's)
--           For b all three are sent ("" when unset; the delay bound is the requests' own, below), then
--           the n decisions in order, as runs of identical ones: each run its number of requests, their
--           cost, and their longest leaky bucket delay ("" = none).
--           For c and u all three are sent, then one cost per limit: the permits to take from it, each limit
--           on its own (a window counts them all, up to a debt of one limit; a bucket takes what it has).
-- Returns   d, p: per limit { allowed 0|1, remaining, reset_after µs, delay µs if allowed else
--                             retry_after µs (-1 = never) }
--           r, x, c: {}
--           u: { 1 } when the permits were taken, { 0 } when a limit had a state and nothing changed
--           b: per run, { admitted k, records m, base, base fraction, step, step fraction } then m
--              replies as d would reply them, then, if k is less than the run, the reply of its first
--              rejection, which every request after it in the run gets too (a rejection changes nothing,
--              so the next identical request sees what it saw). The decisions see one now and each other's
--              permits, exactly as n calls of d at that instant would. m < k when one limit alone took m's last and the k - m after it at once
--              (bucket.lua, fixed_window.lua): base is then that limit's state before them (the backlog,
--              whole µs and a fraction in 1/L µs; the count), and step what each of them adds to it (the
--              backlog of its cost; 0), from which each one's reply follows (io.github.ratelimit.algorithm.RunTakenAtOnce).
-- Heartbeat (h): one instance says it is alive and reads what the fleet shares, in one call.
-- KEYS[1]   {<prefix>}:instances                zset instance id -> last heartbeat (ms, Redis time);
--                                                 expires after the time-to-live of a heartbeat
-- KEYS[2]   {<prefix>}:live-limits:version      the live limit changes' version (live_limits_save.lua)
-- KEYS[3]   {<prefix>}:epoch                    a value set once and kept while instances beat: a new
--                                                 one means Redis lost its data (restarted empty, flushed)
-- KEYS[4]   {<prefix>}:resets                   a counter of key resets, so every instance forgets what
--                                                 it remembered of the keys
-- ARGV[2]   the instance's id   ARGV[3] time-to-live of a heartbeat, ms (0: the instance leaves)
--           ARGV[4] an epoch to set if none is   ARGV[5] "1" to count a reset, else ""
-- Returns   { live instances, live limits version, epoch, resets }; {} when the instance leaves
--
-- Exactness: every limit, burst, window, time and count is an integer below 2^53, exact in Lua's
-- doubles (LimitSpec bounds them), and so is floor(a / b) of two of them: a correctly rounded quotient
-- never crosses an integer. A cost may be larger and rounded, but every comparison is written as
-- cost <= limit - used, whose right side is exact and below 2^53, so a rounded cost decides alike. A
-- product of two such numbers (count * time, in the sliding window and the buckets) is taken in 26-bit
-- limbs (exact_products.lua).
--
-- Each algorithm is a file of its own next to this one (bucket.lua, fixed_window.lua, sliding_log.lua,
-- sliding_window.lua, sliding_window_counter.lua), with its own header, and reads like its Java twin in
-- io.github.ratelimit.algorithm. A line "--+ <file>" is replaced by that file when the script is loaded
-- (RedisRateLimitScript), so Redis gets one chunk: Redis runs the whole chunk on every call, and every
-- function it defines is a new closure each time, which with seven algorithms cost more than the
-- algorithm itself. So the algorithms are inlined as branches of one loop, a helper function is
-- defined only inside the branch that needs it (exact_products.lua), and the common case (no
-- optional argument) sends no argument it does not use.

local op = ARGV[1]
local floor, max, min = math.floor, math.max, math.min
if op == 'h' then
  local time = redis.call('TIME')
  local now_ms = tonumber(time[1]) * 1000 + floor(tonumber(time[2]) / 1000)
  local ttl = tonumber(ARGV[3])
  if ttl == 0 then
    redis.call('ZREM', KEYS[1], ARGV[2])
    return {}
  end
  redis.call('ZADD', KEYS[1], now_ms, ARGV[2])
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms - ttl)
  redis.call('PEXPIRE', KEYS[1], ttl)
  -- The epoch and the resets outlive any pause of the fleet's heartbeats that matters: a day.
  redis.call('SET', KEYS[3], ARGV[4], 'NX')
  redis.call('PEXPIRE', KEYS[3], 86400000)
  local resets = (ARGV[5] == '1') and redis.call('INCR', KEYS[4]) or tonumber(redis.call('GET', KEYS[4]) or 0)
  redis.call('PEXPIRE', KEYS[4], 86400000)
  return { redis.call('ZCARD', KEYS[1]), tonumber(redis.call('GET', KEYS[2]) or 0), redis.call('GET', KEYS[3]),
    resets }
end
local cost = tonumber(ARGV[2])
local count = #KEYS
-- A batch is n decisions in runs of identical ones, each run's count, cost and delay bound read before it.
local batch = op == 'b'
local requests = 1
if batch then
  op, requests = 'd', cost
end
-- A charge takes from each limit on its own what it has, up to its cost: one pass that commits. A
-- restore first peeks at every limit, and charges in a second pass only if all are full.
local charging = op == 'c' or op == 'u'
local restoring = op == 'u'

-- A first walk over the limits' arguments checks every code before any limit runs, and finds the
-- optional arguments after them.
local arg = 3
for i = 1, count do
  local code = ARGV[arg]
  if code == 'tb' or code == 'gcra' or code == 'lb' or code == 'swc' then
    arg = arg + 4
  elseif code == 'fw' or code == 'sw' or code == 'sl' then
    arg = arg + 3
  else
    return redis.error_reply('ERR rate_limit.lua: unknown algorithm code ' .. tostring(code))
  end
end
local max_delay = tonumber(ARGV[arg])
local now = tonumber(ARGV[arg + 1])
local ttl_slack = tonumber(ARGV[arg + 2]) or 0
-- With the caller's clock (time-source local; tests), instances may disagree on now. A key must not
-- expire before the slowest clock is done with it: the window algorithms keep their keys one window
-- longer (in ms; 0 on Redis time, one clock for all). Correct for clocks less than a window apart.
local skewed = now and 1 or 0
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end
-- Where a charge's cost of each limit is (c, u): after the optional arguments.
local charges = arg + 2
if charging then
  op = restoring and 'p' or 'd'
end

-- Decide and peek reply 4 values per limit (sized for one limit here: growing a table costs).
local reply = (op == 'd' or op == 'p') and { 0, 0, 0, 0 } or {}
-- Where the next run's arguments (b) and the next reply (b, d, p) start.
local request_arg, out = arg + 3, 0
-- The backlog each token bucket, GCRA and leaky bucket key is left with (bucket.lua): whole µs, the
-- fraction and the limit it is counted in (1/L µs), stored after the last decision: a batch writes
-- each key once.
local written, written_fraction, written_limit = {}, {}, {}
-- identical: the requests of the run not yet decided (a call of d, p, r or x is a run of one);
-- admitted: how many of them one decision took at once, base (and base_fraction): that limit's state
-- before them, step (and step_fraction): what each of them added to it.
local identical, admitted, base, base_fraction, step, step_fraction = 1, 1, 0, 0, 0, 0
while requests > 0 do
  local head = out
  if batch then
    identical, cost, max_delay = tonumber(ARGV[request_arg]), tonumber(ARGV[request_arg + 1]),
      tonumber(ARGV[request_arg + 2])
    request_arg, out = request_arg + 3, out + 6
    base, base_fraction, step, step_fraction = 0, 0, 0, 0
  end
  requests = requests - identical
  local taken, records = 0, 0
  while identical > 0 do
    admitted = 1
    -- One limit decides and commits in one pass (a rejection changes nothing); several are all checked
    -- in a first pass, and committed in a second only if all allow. (The Java twins return each limit's
    -- next state, which the in-memory store keeps only if all allow; a script cannot hold a state
    -- without writing it, so it decides twice.)
    local commit = charging or (op == 'd' and count == 1)
    -- A limit deciding alone may take the run's identical requests at once (bucket.lua, fixed_window.lua).
    local at_once = commit and identical or 1
    local all_allowed, fresh
    for _ = 1, 2 do
      all_allowed, fresh = true, true
      arg = 3
      for i = 1, count do
        local key, code = KEYS[i], ARGV[arg]
        if charging then
          -- The algorithm takes what it may of it (LimitState.charge), and commits only above zero.
          cost, commit = tonumber(ARGV[charges + i]), op == 'd'
        end
        -- Decide and peek set: allowed (0|1), permits available now, retry_after (-1 never), delay,
        -- reset_after now, reset_after once this request is committed. With commit the permits are
        -- taken when allowed; a rejected request changes nothing. Refund and reset set nothing.
        local allowed, available, retry, delay, reset_now, reset_after

        if code == 'tb' or code == 'gcra' or code == 'lb' then
          --+ bucket.lua
        elseif code == 'fw' then
          --+ fixed_window.lua
        elseif code == 'swc' then
          --+ sliding_window_counter.lua
        elseif code == 'sw' then
          --+ sliding_window.lua
        else -- sl
          --+ sliding_log.lua
        end

        arg = arg + ((code == 'fw' or code == 'sw' or code == 'sl') and 3 or 4)
        if reset_now and reset_now > 0 then
          fresh = false
        end
        -- Decide and peek: allowed, remaining, reset_after, then the delay or the retry_after.
        if allowed then
          local at = out + 4 * i - 4
          if allowed == 0 then
            all_allowed = false
            reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4] = 0, max(0, available), reset_now, retry
          elseif op == 'd' then
            reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4] = 1, max(0, available - cost), reset_after,
              delay
          else
            reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4] = 1, max(0, available), reset_now, 0
          end
        end
      end
      if restoring and op == 'p' then
        if not fresh then
          return { 0 }
        end
        op = 'd'
      elseif charging or commit or op ~= 'd' or not all_allowed then
        break
      else
        commit = true
      end
    end
    out = out + 4 * count
    -- The rest of the run would be rejected alike: its reply stands for them all.
    if not all_allowed then
      break
    end
    taken, records, identical = taken + admitted, records + 1, identical - admitted
  end
  if batch then
    reply[head + 1], reply[head + 2], reply[head + 3] = taken, records, base
    reply[head + 4], reply[head + 5], reply[head + 6] = base_fraction, step, step_fraction
  end
end
-- A bucket's state is the time it is full again, "<µs>" or "<µs>+<n>/<L>", and expires then.
for key, ahead in pairs(written) do
  local fraction = written_fraction[key]
  if ahead == 0 and fraction == 0 then
    redis.call('DEL', key)
  else
    local full_at
    if fraction > 0 then
      -- Full again within the µs after now + ahead: the key expires after it.
      full_at, ahead = string.format('%d+%d/%d', now + ahead, fraction, written_limit[key]), ahead + 1
    else
      full_at = string.format('%d', now + ahead)
    end
    redis.call('SET', key, full_at, 'PX', max(1, -floor(-ahead / 1000)) + ttl_slack)
  end
end
if charging then
  return (ARGV[1] == 'u') and { 1 } or {}
end
return reply
