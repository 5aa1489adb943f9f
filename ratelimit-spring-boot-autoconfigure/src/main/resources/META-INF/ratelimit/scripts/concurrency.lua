-- concurrency.lua: the permits of a concurrency limit, held on leases, in one call of rate_limit.lua with
-- operation k (ARGV[1]).
-- KEYS[1]   <prefix>:{<bucket>:<key>}:cc   zset holder -> the end of its lease, µs; expires with the
--                                           latest lease (plus ttl_slack ms)
-- ARGV[2]   a = acquire, n = renew, r = release, h = holders, x = release all
-- ARGV[3]   the holder (a, n, r)   ARGV[4] permits (a)   ARGV[5] lease, µs (a, n)
-- ARGV[6]   now in µs since the epoch ("" = Redis TIME; tests)   ARGV[7] ms added to the TTL ("" = none)
-- Returns   a: { acquired 0|1, in flight, leases found expired, µs until the earliest lease ends if not
--           acquired }; n, r: { 1 when the holder held a permit, else 0 }; h: { in flight, µs until the
--           earliest lease ends (0: none) }; x: { permits that were held }
-- Mirrors   io.github.ratelimit.concurrency.InMemoryConcurrencyStore.java

local now = tonumber(ARGV[6])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end
local key, cc, holder, ttl_slack = KEYS[1], ARGV[2], ARGV[3], tonumber(ARGV[7]) or 0
-- A lease that ends at now has ended; a holder that neither renewed nor released it is gone.
local expired = redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
local function next_expiry()
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return first[2] and (tonumber(first[2]) - now) or 0
end
-- Holds a permit until now + lease; the key lives as long as its latest lease (a lease
-- taken before a change to a shorter one may end later). Returns 1 for a new holder.
local function lease_to(lease)
  local added = redis.call('ZADD', key, string.format('%d', now + lease), holder)
  local ttl = math.max(1, -math.floor(-lease / 1000)) + ttl_slack
  if redis.call('PTTL', key) < ttl then
    redis.call('PEXPIRE', key, ttl)
  end
  return added
end
if cc == 'a' then
  local held, permits = redis.call('ZCARD', key), tonumber(ARGV[4])
  if held < permits or redis.call('ZSCORE', key, holder) then
    return { 1, held + lease_to(tonumber(ARGV[5])), expired, 0 }
  end
  return { 0, held, expired, next_expiry() }
elseif cc == 'n' then
  if not redis.call('ZSCORE', key, holder) then
    return { 0 }
  end
  lease_to(tonumber(ARGV[5]))
  return { 1 }
elseif cc == 'r' then
  return { redis.call('ZREM', key, holder) }
elseif cc == 'h' then
  return { redis.call('ZCARD', key), next_expiry() }
end
local held = redis.call('ZCARD', key)
redis.call('DEL', key)
return { held }
