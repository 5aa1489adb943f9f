-- token_bucket_minimal.lua: the least a token bucket decision can do in Redis, the ceiling rate_limit.lua
-- is compared against. The same state as ours (one string per key: the time the bucket is full again,
-- expiring then) and the same commands (TIME, GET, SET ... PX), with none of the generality: one limit,
-- no peek, refund or reset, microsecond instead of nanosecond resolution, a two-value reply.
-- KEYS[1]   the bucket
-- ARGV[1]   tolerance in µs (burst x emission interval)   ARGV[2]  emission interval µs   ARGV[3]  cost
-- Returns   { allowed 0|1, remaining }
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local tolerance, interval, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local backlog = math.max(0, tonumber(redis.call('GET', KEYS[1]) or 0) - now)
if backlog + cost * interval > tolerance then
  return { 0, math.floor((tolerance - backlog) / interval) }
end
backlog = backlog + cost * interval
redis.call('SET', KEYS[1], now + backlog, 'PX', math.max(1, math.ceil(backlog / 1000)))
return { 1, math.floor((tolerance - backlog) / interval) }
