-- live_limits_save.lua: sets or clears one bucket's live override and increments the version every
-- instance polls, in one step, so an instance that sees the new version reads the new override.
--
-- KEYS[1]   {<prefix>}:live-limits           hash bucket name -> override text; never expires (an
--           override lasts until it is cleared)
-- KEYS[2]   {<prefix>}:live-limits:version   string counter; never expires. Both keys share the hash
--           tag {<prefix>}, so the script runs on one Redis Cluster slot.
-- ARGV[1]   the bucket name
-- ARGV[2]   the override text, or "" to clear the bucket's override
-- Returns   the new version (integer)
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
return redis.call('INCR', KEYS[2])
