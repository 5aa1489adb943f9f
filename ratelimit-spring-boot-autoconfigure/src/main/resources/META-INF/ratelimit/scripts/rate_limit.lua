-- rate_limit.lua: one call = one decision (or peek, refund, reset, charge) over every limit of a
-- request, all seven algorithms, all-or-nothing; or a batch of decisions on one key and limits, decided
-- one after another as if each were a call of its own (io.github.ratelimit.redis.DecisionCoalescer).
-- The same semantics as the in-memory store; the shared contract suite and a differential test run both.
--
-- KEYS[i]   <prefix>:{<bucket>:<key>}:<algorithm code><i>[:<window µs>[/<segments>]], the state of
--           limit i; its type and expiry are in the algorithm's file (bucket.lua, fixed_window.lua,
--           sliding_log.lua, sliding_window.lua, sliding_window_counter.lua). Every key of a call shares
--           the hash tag {<bucket>:<key>} (one Redis Cluster slot); a limit whose algorithm, window or
--           segments changes has a key of its own. The script touches no other key.
-- ARGV[1]   operation: d = decide, p = peek, r = refund, x = reset, b = decide a batch, c = charge
--           (take permits whether or not a request would be allowed), u = restore (charge only when
--           every limit is full), h = heartbeat of an instance (heartbeat.lua: its own KEYS and ARGV)
-- ARGV[2]   cost: permits taken (d), given back (r); 1 for p; up to 2^63 - 1. For b: the number of
--           decisions n. For c and u: unused (the costs follow).
-- ARGV[3..] the limits in KEYS order, each a code and its parameters: fw, sl, sw: limit, window µs;
--           swc: limit, sub-windows, sub-window µs; tb, gcra, lb: burst, limit, window µs. Then three
--           optional arguments (absent or "" when unset): the longest leaky bucket delay accepted, µs;
--           now in µs since the epoch (unset: Redis TIME; set by tests and time-source=local: callers'
--           clocks may then disagree, and no algorithm goes back to an older window, drops a permit
--           another counted or gives back time for a caller that is behind; window keys live one window
--           longer); ms added to every TTL (tests only, whose manual clock runs ahead of Redis's).
--           For b all three are sent, then the n decisions as runs of identical ones: each run's number
--           of requests, their cost and their longest delay ("" = none). For c and u all three are sent,
--           then one cost per limit (a window counts them all, up to a debt of one limit; a bucket takes
--           what it has).
-- Returns   d, p: per limit { allowed 0|1, remaining, reset_after µs, delay µs if allowed else
--           retry_after µs (-1 = never) }; r, x, c: {}; u: { 1 } when taken, { 0 } when a limit had a
--           state. b: per run { admitted k, records m, base, base fraction, step, step fraction }, m
--           replies as d gives them, then, if k is less than the run, its first rejection's reply, which
--           the rest of the run gets too (a rejection changes nothing). As n calls of d at one instant.
--           m < k when one limit alone took the k - m after the m-th at once (bucket_run.lua,
--           fixed_window.lua): base is its state before them, step what each adds, from which each
--           reply follows (io.github.ratelimit.algorithm.RunTakenAtOnce).
--
-- Exactness: every limit, burst, window, time and count is an integer below 2^53, exact in Lua's
-- doubles (LimitSpec bounds them), and so is floor(a / b) of two of them. A cost may be larger and
-- rounded, but every comparison is written as cost <= limit - used, whose right side is exact, so a
-- rounded cost decides alike. A product of two such numbers is taken in 26-bit limbs (exact_products.lua).
--
-- A line "--+ <file>" is replaced by that file when the script is loaded (RedisRateLimitScript): Redis
-- gets one chunk, runs all of it on every call and makes every function it defines a new closure each
-- time, which with seven algorithms cost more than the algorithm itself. So the algorithms are branches
-- of one loop, each in a file that reads like its Java twin in io.github.ratelimit.algorithm, a helper
-- function is defined only in the branch that needs it, and the common case sends no optional argument.

local op = ARGV[1]
local floor, max, min = math.floor, math.max, math.min
if op == 'h' then
  --+ heartbeat.lua
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
-- The buckets' backlogs, stored once after the call's last decision.
--+ bucket_write.lua
if charging then
  return (ARGV[1] == 'u') and { 1 } or {}
end
return reply
