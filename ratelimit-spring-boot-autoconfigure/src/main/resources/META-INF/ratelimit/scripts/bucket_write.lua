-- bucket_write.lua: stores the backlog a token bucket, GCRA or leaky bucket key is left with, once,
-- after the call's last decision (a batch decides many times on one key).
-- KEYS      key: string, the time the bucket is full again in µs, "<µs>", or "<µs>+<n>/<L>" when it is
--           n/L µs later (L the limit the fraction was counted under); expires then, plus ttl_slack ms.
--           A bucket full now has no key.
-- Defines   bucket_write(key, ahead, fraction, limit, now, ttl_slack): the backlog ahead µs plus
--           fraction / limit µs at now (µs).
-- Returns   nothing.
-- Mirrors   io.github.ratelimit.algorithm.BucketState.java (its fullAt and fraction)

local function bucket_write(key, ahead, fraction, limit, now, ttl_slack)
  local floor, max = math.floor, math.max
  if ahead == 0 and fraction == 0 then
    redis.call('DEL', key)
    return
  end
  local full_at
  if fraction > 0 then
    -- Full again within the µs after now + ahead: the key expires after it.
    full_at, ahead = string.format('%d+%d/%d', now + ahead, fraction, limit), ahead + 1
  else
    full_at = string.format('%d', now + ahead)
  end
  redis.call('SET', key, full_at, 'PX', max(1, -floor(-ahead / 1000)) + ttl_slack)
end
