-- claim.lua: operation q of rate_limit.lua, a decision that takes a permit of the concurrency limit of the
-- same bucket and key in the same call, as a permit taken first and a decision made after it, with nothing
-- in between, would: no permit free, and the call ends before the rate limits are asked (they take
-- nothing); else they decide, and the permit is taken once they allow (in shadow mode, whatever they
-- decide: a rejected call runs). A holder that holds a permit already asks again after an answer that came
-- too late: the first ask ran and decided, so this one peeks (op becomes p) and answers allowed.
-- KEYS[#KEYS]   <prefix>:{<bucket>:<key>}:cc   the concurrency limit's permits (leases.lua)
-- ARGV[arg+3..] after d's optional arguments: the holder, permits, lease µs, and "1" when a rejection keeps
--               the permit from being taken ("" in shadow mode)
-- Sets      claim, with claim.reply(reply, count): the call's reply, from d's (or p's); op, to d (or p)
-- Returns   when no permit is free: { 0, in flight, leases found expired, µs until the earliest lease
--           ends, 0 }. claim.reply: { 1 when the holder holds a permit after the call, else 0, in flight,
--           leases found expired, 0, 1 when decided or 2 when asked again }, then d's reply.
-- Mirrors   io.github.ratelimit.concurrency.InMemoryConcurrencyStore#decideHolding

--+ leases.lua
local key, holder, lease = KEYS[#KEYS], ARGV[arg + 3], tonumber(ARGV[arg + 5])
local expired = expire_leases(key)
local held = redis.call('ZCARD', key)
local again = redis.call('ZSCORE', key, holder) ~= false
if not again and held >= tonumber(ARGV[arg + 4]) then
  return { 0, held, expired, next_expiry(key), 0 }
end
op = again and 'p' or 'd'
local enforced = ARGV[arg + 6] == '1'
claim = {}
function claim.reply(reply, count)
  -- Asked again: the first ask allowed and took the permit; its peek answers allowed, with no delay.
  local allowed = true
  for i = 1, count do
    if again then
      reply[4 * i - 3], reply[4 * i] = 1, 0
    end
    allowed = allowed and reply[4 * i - 3] == 1
  end
  local holds = allowed or not enforced
  local in_flight = held + (holds and lease_to(key, holder, lease) or 0)
  local result = { holds and 1 or 0, in_flight, expired, 0, again and 2 or 1 }
  for i = 1, #reply do
    result[5 + i] = reply[i]
  end
  return result
end
