-- rate_limit.lua: one call = one decision (or peek, refund, reset, charge, owe) over every limit of a
-- request, all seven algorithms, all-or-nothing; or a batch of decisions on one key and limits, decided
-- one after another as if each were a call of its own (io.github.ratelimit.redis.DecisionCoalescer).
-- The same semantics as the in-memory store; the shared contract suite and a differential test run both.
--
-- KEYS[i]   <prefix>:{<bucket>:<key>}:<algorithm code><i>[:<window µs>[/<segments>]], the state of limit
--           i (type and expiry: its algorithm's file); a limit whose algorithm, window or segments changes
--           has a key of its own. Then KEYS[i]:d for each limit, its debt (debt.lua), then KEYS[i]:p for
--           each limit with a penalty (penalty.lua), in the limits' order. All share the hash tag
--           {<bucket>:<key>} (one Redis Cluster slot); the script touches no other key (q: one more, last).
-- ARGV[1]   operation: d = decide, p = peek, r = refund, x = reset, b = decide a batch, c = charge
--           (take permits whether or not a request would be allowed), u = restore (charge only when
--           every limit is full), o = owe (take permits even past the limit, each limit on its own),
--           h = heartbeat of an instance, k = a concurrency limit (heartbeat.lua, concurrency.lua: own ARGV),
--           q = d, taking a permit of the bucket and key's concurrency limit too (claim.lua: ARGV, reply)
-- ARGV[2]   cost: permits taken (d, o), given back (r); 1 for p; up to 2^63 - 1. For b: the number of
--           decisions n. For c and u: unused (the costs follow).
-- ARGV[3..] the limits in KEYS order, each a code and its parameters: fw, sl, sw: limit, window µs; fc
--           (a calendar fixed window): limit, then three boundaries around the caller's clock, µs; swc:
--           limit, sub-windows, sub-window µs; tb, gcra, lb: burst, limit, window µs; a limit with a
--           penalty is preceded by "!" and the penalty in µs. Then three optional arguments (absent or ""
--           when unset): the longest leaky bucket delay accepted, µs; now in µs since the epoch (unset:
--           Redis TIME; set by tests and time-source=local); ms added to every TTL (tests only). For b all
--           three are sent, then the n decisions as runs of identical ones: each run's number of requests,
--           their cost and their longest delay ("" = none). For c and u all three are sent, then one cost
--           per limit (a window counts them all, up to a debt of one limit; a bucket takes what it has).
-- Returns   d, p: per limit { allowed 1, or 0, or -1 when rejected and a penalty started, remaining,
--           reset_after µs, delay µs if allowed else retry_after µs (-1 = never) }; o: per limit the permits
--           taken from what it had left (the rest is owed); r, x, c: {}; u: { 1 } when taken, else { 0 }.
--           b: per run { admitted k, records m, base, base fraction, step, step fraction }, m replies as d
--           gives them, then, if k is less than the run, its first rejection's reply, which the rest of the
--           run gets too. As n calls of d at one instant. m < k when one limit alone took the k - m after
--           the m-th at once (bucket_run.lua, fixed_window.lua): base is its state before them, step what
--           each adds (io.github.ratelimit.algorithm.RunTakenAtOnce).
--
-- Every number is exact although Lua's are doubles (exact_products.lua). Each algorithm's file defines the
-- twin of its Java state: the decision and the next state (with the function that stores it) as outputs.
-- A line "--+ <file>" is replaced by that file on loading (RedisRateLimitScript), where its function is
-- used: Redis makes a closure each time a definition runs, so a call makes only those it uses.

local op = ARGV[1]
if op == 'h' then
  --+ heartbeat.lua
elseif op == 'k' then
  --+ concurrency.lua
end
local max, cost = math.max, tonumber(ARGV[2])
--+ limits.lua
local max_delay, now, ttl_slack = tonumber(ARGV[arg]), tonumber(ARGV[arg + 1]), tonumber(ARGV[arg + 2]) or 0
-- With callers' clocks (time-source local; tests) instances may disagree on now: no algorithm goes back
-- to an older window, drops a permit another counted or gives back time for a caller that is behind, and
-- window keys live one window longer (clocks less than a window apart; 0 on Redis time, one clock).
local skewed = now and 1 or 0
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end
if op == 'x' then return redis.call('DEL', unpack(KEYS)) and {} end
-- q: the concurrency limit first; no permit free, and the rate limits are not asked.
local claim
if op == 'q' then
  --+ claim.lua
end
local charges = arg + 2 -- where the costs of a charge (c, u) start, after the optional arguments
-- A batch is n decisions in runs of identical ones, each run's count, cost and delay bound read before it.
-- A charge takes from each limit on its own what it may of its cost; a restore first peeks at all.
local batch, charging, restoring = op == 'b', op == 'c' or op == 'u', op == 'u'
local requests = batch and cost or 1
if batch or charging then
  op = batch and 'd' or (restoring and 'p' or 'c')
end
-- Decide and peek reply 4 values per limit (sized for one limit here: growing a table costs).
local reply = (op == 'd' or op == 'p') and { 0, 0, 0, 0 } or {}
-- Where the next run's arguments (b) and the next reply (b, d, p) start.
local request_arg, out = arg + 3, 0
-- The state each limit's decision leaves (5 values per limit: how to save it, then what); a bucket's is
-- kept in backlogs, fractions and limits and stored once after the call (a batch writes each key once).
local states, backlogs, fractions, limits = { false, false, false, false, false }, {}, {}, {}
--+ algorithm.lua
-- identical: the requests of the run not yet decided (another call is a run of one); admitted: how many
-- of them one decision took at once; base: that limit's state before them; step: what each added to it.
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
    -- A limit deciding alone may take the run's identical requests at once (bucket.lua, fixed_window.lua).
    local at_once = (op == 'd' and count == 1) and identical or 1
    local all_allowed, fresh = true, true
    admitted, arg = 1, 3
    local penalty_key = 2 * count
    for i = 1, count do
      -- A limit with a penalty answers without taking while its key is blocked (a rejection saves nothing).
      local penalty, blocked_until, operation = nil, nil, op
      if ARGV[arg] == '!' then
        penalty, penalty_key, arg = tonumber(ARGV[arg + 1]), penalty_key + 1, arg + 2
        blocked_until = (op == 'd' or op == 'p') and tonumber(redis.call('GET', KEYS[penalty_key])) or nil
        blocked_until = (blocked_until and blocked_until > now) and blocked_until or nil
        operation = blocked_until and 'p' or op
      end
      -- So does a limit in debt (debt.lua; its rejections start no penalty; a charge reaches its state).
      local paid_at = (op ~= 'c') and tonumber(redis.call('GET', KEYS[count + i])) or nil
      paid_at = (paid_at and paid_at > now) and paid_at or nil
      local code, a, b, c, d = ARGV[arg], tonumber(ARGV[arg + 1]), tonumber(ARGV[arg + 2]),
        tonumber(ARGV[arg + 3]), tonumber(ARGV[arg + 4])
      arg = arg + ((code == 'fw' or code == 'sw' or code == 'sl') and 3 or (code == 'fc') and 5 or 4)
      if charging then
        cost = (op == 'c') and tonumber(ARGV[charges + i]) or 1
      end
      local allowed, available, retry, delay, reset_now, reset_after, save, s1, s2, s3, s4, run, run_base,
        run_base_fraction, run_step, run_step_fraction
      if not paid_at and op ~= 'o' then
        allowed, available, retry, delay, reset_now, reset_after, save, s1, s2, s3, s4, run, run_base,
          run_base_fraction, run_step, run_step_fraction = algorithm(code, KEYS[i], a, b, c, d, operation,
          cost, now, at_once, max_delay, ttl_slack, skewed, backlogs, fractions, limits)
      else
        --+ debt.lua
        allowed, available, retry, reset_now = debt(algorithm, op, code, KEYS[i], KEYS[count + i], a, b, c,
          d, paid_at, cost, now, max_delay, ttl_slack, skewed, backlogs, fractions, limits)
      end
      if penalty and (op == 'd' or op == 'p') and (blocked_until or not paid_at) then
        --+ penalty.lua
        allowed, available, retry, reset_now = penalize(KEYS[penalty_key], penalty, op, now, ttl_slack,
          blocked_until, allowed, available, retry, reset_now)
      end
      fresh = fresh and not (reset_now and reset_now > 0)
      local at = 5 * i - 5
      states[at + 1], states[at + 2], states[at + 3], states[at + 4], states[at + 5] = save, s1, s2, s3, s4
      -- Decide and peek: allowed, remaining, reset_after, then the delay or the retry_after.
      at = out + 4 * i - 4
      if op == 'o' then
        reply[i] = allowed
      elseif allowed == 0 or allowed == -1 then
        all_allowed = false
        reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4] = allowed, max(0, available), reset_now,
          retry
      elseif op == 'd' then
        reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4] = 1, max(0, available - cost), reset_after,
          delay
        if run then
          admitted, base, base_fraction = run, run_base, run_base_fraction or 0
          step, step_fraction = run_step or 0, run_step_fraction or 0
        end
      elseif op == 'p' then
        reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4] = 1, max(0, available), reset_now, 0
      end
    end
    out = out + 4 * count
    if restoring and op == 'p' then
      if not fresh then
        return { 0 }
      end
      op = 'c'
    else
      -- A decision's states are saved when every limit allows (a rejection changes nothing, and the rest
      -- of its run would be rejected alike: its reply stands for them all); a charge's, each on its own.
      if (op == 'd' and all_allowed) or op == 'c' then
        for i = 1, count do
          local at = 5 * i - 5
          local save, s1 = states[at + 1], states[at + 2]
          if save then
            save(KEYS[i], s1, states[at + 3], states[at + 4], states[at + 5])
          elseif s1 then
            backlogs[KEYS[i]], fractions[KEYS[i]], limits[KEYS[i]] = s1, states[at + 3], states[at + 4]
          end
        end
      end
      if not all_allowed or op ~= 'd' then
        break
      end
      taken, records, identical = taken + admitted, records + 1, identical - admitted
    end
  end
  if batch then
    reply[head + 1], reply[head + 2], reply[head + 3] = taken, records, base
    reply[head + 4], reply[head + 5], reply[head + 6] = base_fraction, step, step_fraction
  end
end
for key, ahead in pairs(backlogs) do
  --+ bucket_write.lua
  bucket_write(key, ahead, fractions[key], limits[key], now, ttl_slack)
end
if claim then
  return claim.reply(reply, count)
end
return restoring and { 1 } or reply
