-- heartbeat.lua: one instance says it is alive and reads what the fleet shares, in one call.
-- KEYS[1]  {<prefix>}:instances             zset instance id -> last heartbeat (ms, Redis time); expires
--                                            after the time-to-live of a heartbeat
-- KEYS[2]  {<prefix>}:live-limits:version   the live limit changes' version (live_limits_save.lua)
-- KEYS[3]  {<prefix>}:epoch                 a value set once and kept while instances beat: a new one
--                                            means Redis lost its data (restarted empty, flushed)
-- KEYS[4]  {<prefix>}:resets                a counter of key resets, so every instance forgets what it
--                                            remembered of the keys
-- ARGV     [1] h, [2] the instance's id, [3] time-to-live of a heartbeat in ms (0: the instance leaves),
--          [4] an epoch to set if none is, [5] "1" to count a reset, else ""
-- Returns  a function of (KEYS, ARGV) that answers { live instances, live limits version, epoch, resets };
--          {} when the instance leaves.

local floor = math.floor

return function(keys, args)
  local time = redis.call('TIME')
  local now_ms = tonumber(time[1]) * 1000 + floor(tonumber(time[2]) / 1000)
  local ttl = tonumber(args[3])
  if ttl == 0 then
    redis.call('ZREM', keys[1], args[2])
    return {}
  end
  redis.call('ZADD', keys[1], now_ms, args[2])
  redis.call('ZREMRANGEBYSCORE', keys[1], '-inf', now_ms - ttl)
  redis.call('PEXPIRE', keys[1], ttl)
  -- The epoch and the resets outlive any pause of the fleet's heartbeats that matters: a day.
  redis.call('SET', keys[3], args[4], 'NX')
  redis.call('PEXPIRE', keys[3], 86400000)
  local resets = (args[5] == '1') and redis.call('INCR', keys[4]) or tonumber(redis.call('GET', keys[4]) or 0)
  redis.call('PEXPIRE', keys[4], 86400000)
  return { redis.call('ZCARD', keys[1]), tonumber(redis.call('GET', keys[2]) or 0), redis.call('GET', keys[3]),
    resets }
end
