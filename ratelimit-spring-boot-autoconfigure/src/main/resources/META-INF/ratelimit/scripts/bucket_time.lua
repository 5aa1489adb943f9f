-- bucket_time.lua: a bucket's times, whole µs plus a fraction in 1 / L µs, added and compared exactly.
-- T = W / L, the emission interval, is rarely a whole number of µs (3 per second, 7 per hour, 7e8 per
-- second), and a rounded T refills too fast or too slowly. So T = whole + remainder / L µs (the spec's
-- whole and remainder), and every time is whole µs plus a fraction in 1 / L µs: each part is below 2^53
-- and exact in Lua's doubles, and a count times a time (up to 2^106) is taken exactly.
-- Returns  the functions span, permits_in, plus, minus, ceil (below), as five values.
-- Mirrors  the private helpers of io.github.ratelimit.algorithm.BucketState

local floor = math.floor
local exact -- exact_products, required when a product passes 2^53

-- floor(a * b / d) and the rest, exactly.
local function mul_divmod(a, b, d)
  local n = a * b
  if n < 9007199254740992 then
    local q = floor(n / d)
    return q, n - q * d
  end
  exact = exact or require('exact_products')
  return exact.mul_divmod(a, b, d)
end

-- The whole µs of permits * T, the time the permits take to come back, and the rest in 1 / L µs.
local function span(spec, permits)
  if spec.remainder == 0 then
    return permits * spec.whole, 0
  end
  local more, fraction = mul_divmod(permits, spec.remainder, spec.limit)
  return permits * spec.whole + more, fraction
end

-- The permits that come back in micros + fraction / L µs: floor((micros * L + fraction) / W). When L
-- divides W that is micros / T, whatever the fraction (below one µs). rest + fraction may pass 2^53: the
-- fraction's whole windows are counted apart.
local function permits_in(spec, micros, fraction)
  if spec.remainder == 0 then
    return floor(micros / spec.whole)
  end
  local window = spec.window
  local quotient, rest = mul_divmod(micros, spec.limit, window)
  return quotient + floor(fraction / window) + floor((rest + fraction % window) / window)
end

-- a + b in whole µs and fractions in 1 / L µs. The fractions add up to less than 2L, which may pass 2^53
-- (and be rounded): the carry is found without forming the sum.
local function plus(a, a_fraction, b, b_fraction, limit)
  if b_fraction >= limit - a_fraction then
    return a + b + 1, b_fraction - (limit - a_fraction)
  end
  return a + b, a_fraction + b_fraction
end

-- a - b in whole µs and fractions in 1 / L µs.
local function minus(a, a_fraction, b, b_fraction, limit)
  if a_fraction < b_fraction then
    return a - b - 1, a_fraction - b_fraction + limit
  end
  return a - b, a_fraction - b_fraction
end

-- A time of whole µs and a fraction, rounded up to whole µs.
local function ceil(micros, fraction)
  return (fraction > 0) and micros + 1 or micros
end

return span, permits_in, plus, minus, ceil
