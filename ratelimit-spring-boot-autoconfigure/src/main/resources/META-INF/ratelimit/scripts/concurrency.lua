-- concurrency.lua: the permits of concurrency limits, held on leases, in one call of rate_limit.lua with
-- operation k (ARGV[1]): one operation on one key, or a batch of them on several keys, run one after another
-- at one instant as if each were a call of its own (io.github.ratelimit.redis.ConcurrencyCoalescer).
-- KEYS[i]   <prefix>:{<bucket>:<key>}:cc   a limit's permits (leases.lua)
-- ARGV[2]   a = acquire, n = renew, r = release, h = holders, x = release all; b = a batch of these
-- ARGV[3]   the holder (a, n, r); b: the number of operations n
-- ARGV[4]   permits (a)   ARGV[5] lease, µs (a, n)
-- ARGV[6]   now in µs since the epoch ("" = Redis TIME; tests)   ARGV[7] ms added to the TTL ("" = none)
-- ARGV[8..] b: the n operations, five arguments each: its operation (a, n, r, h, x), the index of its key
--           in KEYS, then its ARGV[3], ARGV[4] and ARGV[5] as a single operation has them
-- Returns   a: { acquired 0|1, in flight, leases found expired, µs until the earliest lease ends if not
--           acquired }; n, r: { 1 when the holder held a permit, else 0 }; h: { in flight, µs until the
--           earliest lease ends (0: none) }; x: { permits that were held }; b: each operation's reply, in order
-- Mirrors   io.github.ratelimit.concurrency.InMemoryConcurrencyStore.java

local now = tonumber(ARGV[6])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end
local ttl_slack = tonumber(ARGV[7]) or 0
--+ leases.lua
local function run(key, cc, holder, permits, lease)
  local expired = expire_leases(key)
  if cc == 'a' then
    local held = redis.call('ZCARD', key)
    if held < permits or redis.call('ZSCORE', key, holder) then
      return { 1, held + lease_to(key, holder, lease), expired, 0 }
    end
    return { 0, held, expired, next_expiry(key) }
  elseif cc == 'n' then
    if not redis.call('ZSCORE', key, holder) then
      return { 0 }
    end
    lease_to(key, holder, lease)
    return { 1 }
  elseif cc == 'r' then
    return { redis.call('ZREM', key, holder) }
  elseif cc == 'h' then
    return { redis.call('ZCARD', key), next_expiry(key) }
  end
  local held = redis.call('ZCARD', key)
  redis.call('DEL', key)
  return { held }
end
if ARGV[2] ~= 'b' then
  return run(KEYS[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]))
end
local replies = {}
for i = 1, tonumber(ARGV[3]) do
  local at = 3 + 5 * i
  replies[i] = run(KEYS[tonumber(ARGV[at + 1])], ARGV[at], ARGV[at + 2], tonumber(ARGV[at + 3]),
    tonumber(ARGV[at + 4]))
end
return replies
