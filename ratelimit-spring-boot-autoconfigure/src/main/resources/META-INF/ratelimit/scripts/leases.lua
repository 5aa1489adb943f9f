-- leases.lua: the functions on a concurrency limit's permits that concurrency.lua and claim.lua share.
-- KEYS      <prefix>:{<bucket>:<key>}:cc   zset holder -> the end of its lease, µs; expires with the latest
--                                           lease (plus ttl_slack ms)
-- Defines   expire_leases(key), next_expiry(key), lease_to(key, holder, lease), locals of the block that
--           includes it, where now (µs) and ttl_slack (ms) are defined
-- Returns   each function's result, below
-- Mirrors   io.github.ratelimit.concurrency.InMemoryConcurrencyStore.java

-- A lease that ends at now has ended; a holder that neither renewed nor released it is gone. Every
-- operation of a call runs at one now, so a key is swept once.
local swept = {}
local function expire_leases(key)
  if swept[key] then
    return 0
  end
  swept[key] = true
  return redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
end
local function next_expiry(key)
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  return first[2] and (tonumber(first[2]) - now) or 0
end
-- Holds a permit until now + lease; the key lives as long as its latest lease (a lease
-- taken before a change to a shorter one may end later). Returns 1 for a new holder.
local function lease_to(key, holder, lease)
  local added = redis.call('ZADD', key, string.format('%d', now + lease), holder)
  local ttl = math.max(1, -math.floor(-lease / 1000)) + ttl_slack
  if redis.call('PTTL', key) < ttl then
    redis.call('PEXPIRE', key, ttl)
  end
  return added
end
