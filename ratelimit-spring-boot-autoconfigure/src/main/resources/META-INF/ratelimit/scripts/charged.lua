-- charged.lua: what a window algorithm has used once a charge of cost more is taken.
-- Returns  a function charged(used, cost, limit): used + cost, up to a debt of one limit (at most twice the
--          limit, and the largest exact limit), never less than used; so that a charge, a late refund and
--          a late decision add up whatever their order.
-- Mirrors  io.github.ratelimit.algorithm.LimitState#charged

local max, min = math.max, math.min

return function(used, cost, limit)
  return max(used, min(used + cost, 2 * limit, 9007199254740991))
end
