-- rate_limit.lua: one call = one decision (or peek, refund, reset, charge) over every limit of a
-- request, all-or-nothing; or a batch of decisions on the same key and limits, decided one after another
-- as if each were a call of its own (io.github.ratelimit.redis.DecisionCoalescer). The same semantics as
-- the in-memory store (docs/algorithms.md); the shared contract suite and a differential test run both.
--
-- KEYS[i]   <prefix>:{<bucket>:<key>}:<algorithm code><i>[:<window µs>[/<segments>]]   state of limit i;
--           every key of a call shares the hash tag {<bucket>:<key>}, so the call runs on one Redis
--           Cluster slot. The window algorithms name their window (and segments) in the key: a limit
--           whose algorithm, window or segments changes has a state of its own. Modules say what it holds.
-- ARGV[1]   operation: d = decide, p = peek, r = refund, x = reset, b = decide a batch, c = charge (take
--           permits whether or not a request would be allowed), u = restore (charge only when no limit has
--           a state that still matters), h = heartbeat of an instance (heartbeat.lua: own KEYS and ARGV)
-- ARGV[2]   cost: permits taken (decide), given back (refund); 1 for peek. Up to 2^63 - 1.
--           For b: the number of decisions n in the batch. For c and u: unused (the costs follow).
-- ARGV[3..] the limits in KEYS order, each an algorithm code and its parameters ("Args" in its module)
-- then three optional arguments (absent or "" when unset):
--             longest leaky bucket delay accepted, µs (unset: no bound)
--             now in µs since the epoch (unset: Redis TIME; set by tests and time-source=local, where
--             callers' clocks may disagree: no algorithm goes back because a caller's now is behind)
--             ms added to every TTL (set only by tests, whose manual clock runs ahead of Redis's)
--           For b all three are sent ("" when unset; the delay bound is the requests' own, below), then
--           the n decisions in order, as runs of identical ones: each run its number of requests, their
--           cost, and their longest leaky bucket delay ("" = none).
--           For c and u all three are sent, then one cost per limit: the permits to take from it, each
--           limit on its own (a window counts them all, up to a debt of one limit; a bucket what it has).
-- Returns   d, p: per limit { allowed 0|1, remaining, reset_after µs, delay µs if allowed else
--                             retry_after µs (-1 = never) }
--           r, x, c: {}
--           u: { 1 } when the permits were taken, { 0 } when a limit had a state and nothing changed
--           b: per run, { admitted k, records m, base, base fraction, step, step fraction }, m replies as
--              d's; m < k when the last of them took the k - m after it at once: base is then its limit's
--              state before them (a bucket's backlog in whole µs and a fraction in 1/L µs; a window's
--              count), step what each adds (io.github.ratelimit.algorithm.RunTakenAtOnce expands it into
--              each one's reply). Then, if k < run, the reply of its first rejection, which the rest of the
--              run gets too (a rejection changes nothing). As n calls of d at one instant.
--
-- Each algorithm is a module (bucket.lua, fixed_window.lua, sliding_log.lua, sliding_window.lua,
-- sliding_window_counter.lua) with the functions of its Java twin's state (io.github.ratelimit.algorithm):
--   spec(ARGV, at): the limit's spec, and where the next limit's arguments start
--   load(key, spec, now, ttl_slack): the key's state (what has expired dropped)
--   acquire(state, spec, now, cost, max_delay, run): the decision (allowed, available: permits now,
--     reset_now, reset_after, wait: the delay if allowed, else the retry-after, -1 = never), the state
--     once the permits are taken and the state if they are not (LimitState's Transition). With run > 1
--     a limit deciding alone may take up to run identical requests at once (the batch closed form):
--     then taken, the state before them and what each adds (base, base fraction, step, step fraction)
--   refund(state, spec, now, cost), charge(state, spec, now, cost): the state after
--   save(key, spec, state, now, ttl_slack, skewed): writes a state other than the one loaded
-- Modules share no locals. require('<module>') is not Lua's (Redis has none): the loader
-- (io.github.ratelimit.redis.RedisRateLimitScript) joins the module's file in its place, as a function
-- called there. Redis runs the whole chunk on every call and makes each function anew every time its
-- definition runs, so a module is required only where a limit uses it. Exactness: exact_products.lua.

local op = ARGV[1]
if op == 'h' then
  return require('heartbeat')(KEYS, ARGV)
end
local max = math.max
local count = #KEYS

-- Each limit's module, spec and state (as loaded, and as it is now). Every limit's arguments are read,
-- and every code checked, before any limit runs.
local algorithms, limits, loaded, states, arg = {}, {}, {}, {}, 3
local bucket, fixed_window, sliding_log, sliding_window, sliding_window_counter
for i = 1, count do
  local code = ARGV[arg]
  if code == 'tb' or code == 'gcra' or code == 'lb' then
    bucket = bucket or require('bucket')
    algorithms[i] = bucket
  elseif code == 'fw' then
    fixed_window = fixed_window or require('fixed_window')
    algorithms[i] = fixed_window
  elseif code == 'sl' then
    sliding_log = sliding_log or require('sliding_log')
    algorithms[i] = sliding_log
  elseif code == 'sw' then
    sliding_window = sliding_window or require('sliding_window')
    algorithms[i] = sliding_window
  elseif code == 'swc' then
    sliding_window_counter = sliding_window_counter or require('sliding_window_counter')
    algorithms[i] = sliding_window_counter
  else
    return redis.error_reply('ERR rate_limit.lua: unknown algorithm code ' .. tostring(code))
  end
  limits[i], arg = algorithms[i].spec(ARGV, arg)
end
if op == 'x' then
  redis.call('DEL', unpack(KEYS))
  return {}
end
local max_delay = tonumber(ARGV[arg])
local now = tonumber(ARGV[arg + 1])
local ttl_slack = tonumber(ARGV[arg + 2]) or 0
-- With the callers' clocks (time-source local; tests) a key must not expire before the slowest clock is
-- done with it: the window algorithms keep their keys one window longer (clocks less than a window apart).
local skewed = now and 1 or 0
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end
for i = 1, count do
  loaded[i] = algorithms[i].load(KEYS[i], limits[i], now, ttl_slack)
  states[i] = loaded[i]
end

-- Puts a limit's decision in the reply at at: allowed, remaining once cost is taken, reset_after, delay; or
-- rejected, remaining, reset_after now, retry_after.
local function answer(reply, at, allowed, available, reset_now, reset_after, wait, cost)
  if allowed then
    reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4] = 1, max(0, available - cost), reset_after, wait
  else
    reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4] = 0, max(0, available), reset_now, wait
  end
end

local reply = {}
if op == 'u' then
  -- A restore charges only when no limit has a state that still matters, and writes nothing else.
  for i = 1, count do
    local _, _, reset_now = algorithms[i].acquire(states[i], limits[i], now, 1, nil, 1)
    if reset_now > 0 then
      return { 0 }
    end
  end
  reply = { 1 }
end
if op == 'r' or op == 'c' or op == 'u' then
  for i = 1, count do
    if op == 'r' then
      states[i] = algorithms[i].refund(states[i], limits[i], now, tonumber(ARGV[2]))
    else
      states[i] = algorithms[i].charge(states[i], limits[i], now, tonumber(ARGV[arg + 2 + i]))
    end
  end
elseif op == 'p' then
  -- What a request of cost 1 would get, with the permits available now; only a cut state is kept.
  for i = 1, count do
    local allowed, available, reset_now, _, wait, _, kept = algorithms[i].acquire(states[i], limits[i], now, 1, nil, 1)
    states[i] = kept
    answer(reply, 4 * i - 4, allowed, available, reset_now, reset_now, allowed and 0 or wait, 0)
  end
else
  -- d: a run of one request. b: n requests in runs of identical ones.
  local batch = op == 'b'
  local requests, run, cost, bound, next_run = 1, 1, tonumber(ARGV[2]), max_delay, arg + 3
  if batch then
    requests = cost
  end
  -- Each limit's state once the request's permits are taken, and if they are not.
  local next_states, kept_states = {}, {}
  while requests > 0 do
    if batch then
      run, cost, bound = tonumber(ARGV[next_run]), tonumber(ARGV[next_run + 1]), tonumber(ARGV[next_run + 2])
      next_run = next_run + 3
    end
    requests = requests - run
    local header = #reply
    if batch then
      for h = 1, 6 do
        reply[header + h] = 0
      end
    end
    local admitted, records, run_base = 0, 0, nil
    while admitted < run do
      -- A limit deciding alone may take the rest of the run at once (bucket.lua, fixed_window.lua).
      local at_once = (count == 1) and (run - admitted) or 1
      local all_allowed, at_once_taken, base, base_fraction, step, step_fraction = true, 1, 0, 0, 0, 0
      for i = 1, count do
        local allowed, available, reset_now, reset_after, wait
        allowed, available, reset_now, reset_after, wait, next_states[i], kept_states[i], at_once_taken, base,
          base_fraction, step, step_fraction = algorithms[i].acquire(states[i], limits[i], now, cost, bound, at_once)
        all_allowed = all_allowed and allowed
        answer(reply, #reply, allowed, available, reset_now, reset_after, wait, cost)
      end
      for i = 1, count do
        states[i] = all_allowed and next_states[i] or kept_states[i]
      end
      -- The rest of the run would be rejected alike: its reply stands for them all.
      if not all_allowed then
        break
      end
      admitted, records = admitted + at_once_taken, records + 1
      if at_once_taken > 1 then
        run_base = { base, base_fraction, step, step_fraction }
      end
    end
    if batch then
      reply[header + 1], reply[header + 2] = admitted, records
      for h = 1, run_base and 4 or 0 do
        reply[header + 2 + h] = run_base[h]
      end
    end
  end
end

for i = 1, count do
  if states[i] ~= loaded[i] then
    algorithms[i].save(KEYS[i], limits[i], states[i], now, ttl_slack, skewed)
  end
end
return reply
