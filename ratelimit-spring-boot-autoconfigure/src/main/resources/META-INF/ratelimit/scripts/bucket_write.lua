-- bucket_write.lua: stores the backlog each token bucket, GCRA and leaky bucket key of the call is
-- left with, once, after the call's last decision (a batch decides many times on one key).
-- KEYS      the bucket keys bucket.lua wrote down: string, the time the bucket is full again in µs,
--           "<µs>", or "<µs>+<n>/<L>" when it is n/L µs later (L the limit the fraction was counted
--           under); expires then, plus ttl_slack ms. A bucket full now has no key.
-- ARGV      none of its own.
-- In scope (rate_limit.lua): written, written_fraction, written_limit (key -> whole µs, fraction,
--           limit), now (µs), ttl_slack (ms), floor/max.
-- Sets      nothing.
-- Mirrors   io.github.ratelimit.algorithm.BucketState.java (its fullAt and fraction)

for key, ahead in pairs(written) do
  local fraction = written_fraction[key]
  if ahead == 0 and fraction == 0 then
    redis.call('DEL', key)
  else
    local full_at
    if fraction > 0 then
      -- Full again within the µs after now + ahead: the key expires after it.
      full_at, ahead = string.format('%d+%d/%d', now + ahead, fraction, written_limit[key]), ahead + 1
    else
      full_at = string.format('%d', now + ahead)
    end
    redis.call('SET', key, full_at, 'PX', max(1, -floor(-ahead / 1000)) + ttl_slack)
  end
end
