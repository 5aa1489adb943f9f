-- live_limits_save.lua: sets or clears one bucket's live override if it is still the one the caller
-- read (compare-and-set), and increments the version every instance polls, in one step: two changes
-- of one bucket made at the same time cannot overwrite each other (the caller of the one that finds
-- another override reads, merges and checks again), and an instance that sees the new version reads
-- the new override.
--
-- KEYS[1]   {<prefix>}:live-limits           hash bucket name -> override text; never expires (an
--           override lasts until it is cleared)
-- KEYS[2]   {<prefix>}:live-limits:version   string counter; never expires. Both keys share the hash
--           tag {<prefix>}, so the script runs on one Redis Cluster slot.
-- ARGV[1]   the bucket name
-- ARGV[2]   the override text the caller read, or "" when the bucket had none
-- ARGV[3]   the new override text, or "" to clear the bucket's override
-- Returns   the new version (integer, 1 or more), or 0 when the stored override is not ARGV[2]:
--           nothing changed, the version neither
local stored = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if stored ~= ARGV[2] then
  return 0
end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
end
return redis.call('INCR', KEYS[2])
