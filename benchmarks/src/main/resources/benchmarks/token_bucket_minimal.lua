-- token_bucket_minimal.lua: the least a token bucket decision can do in Redis, the ceiling our
-- rate_limit.lua is compared against. Same state (hash {c = credit ns, t = µs}), same commands
-- (TIME, HMGET, HSET, PEXPIRE), no generality: one limit, cost 1 or more, no peek/refund/reset.
-- KEYS[1]   the bucket's hash
-- ARGV[1]   capacity in ns (burst x emission interval)   ARGV[2]  emission interval ns   ARGV[3]  cost
-- Returns   { allowed 0|1, remaining }
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local capacity, interval, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'c', 't')
local credit = capacity
if state[1] then
  credit = math.min(capacity, tonumber(state[1]) + math.max(0, now - tonumber(state[2])) * 1000)
end
if credit < cost * interval then
  return { 0, math.floor(credit / interval) }
end
credit = credit - cost * interval
redis.call('HSET', KEYS[1], 'c', credit, 't', now)
redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil((capacity - credit) / 1000000)))
return { 1, math.floor(credit / interval) }
