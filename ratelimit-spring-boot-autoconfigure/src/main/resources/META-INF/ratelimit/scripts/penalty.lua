-- penalty.lua: a key blocked for a limit's penalty once that limit rejects one of its requests.
-- KEYS      key: string, the time the block ends in µs; expires then (plus ttl_slack ms).
-- Defines   penalize(key, penalty, op, now, ttl_slack, blocked_until, allowed, available, retry, reset_now):
--           over the algorithm's answer to a decision (op d) or peek (p) at now (µs), its limit's penalty
--           in µs and the block found before the algorithm ran (blocked_until µs, or nil; while blocked the
--           algorithm answered without taking). Blocks the key when a decision is rejected, unless the
--           request could never be allowed (retry -1) or the key is blocked already (not lengthened).
-- Returns   allowed, available, retry, reset_now: while blocked, a rejection with no permits (allowed -1
--           for the one that starts the block, else 0), a retry at the block's end (or later, when the
--           algorithm rejects) and a reset no earlier; otherwise the algorithm's answer.
-- Mirrors   io.github.ratelimit.algorithm.PenaltyState.java (and LimitState.acquire, which starts it)

local function penalize(key, penalty, op, now, ttl_slack, blocked_until, allowed, available, retry, reset_now)
  local rejected = 0
  if not blocked_until and op == 'd' and allowed == 0 and retry >= 0 then
    blocked_until, rejected = now + penalty, -1
    redis.call('SET', key, string.format('%d', blocked_until), 'PX',
      math.max(1, -math.floor(-penalty / 1000)) + ttl_slack)
  end
  if not blocked_until then
    return allowed, available, retry, reset_now
  end
  local blocked = blocked_until - now
  if allowed == 0 and retry >= 0 and retry > blocked then
    return rejected, 0, retry, math.max(reset_now, blocked)
  end
  return rejected, 0, blocked, math.max(reset_now, blocked)
end
