-- heartbeat.lua: one instance says it is alive and reads what the fleet shares, in one call of
-- rate_limit.lua with operation h (ARGV[1]).
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

local time = redis.call('TIME')
local now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
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
