-- exact_products.lua: products of two numbers below 2^53, compared and divided exactly.
-- Lua's numbers are doubles, exact only below 2^53, and a count times a time reaches 2^106: such a
-- product is taken as three 26-bit limbs.
-- Returns  a module: product(a, b), fits_under(a, b, c, d), floor_mul_div(a, b, d), mul_divmod(a, b, d)
--          Required (require('exact_products')) only where a product may pass 2^53: the loader joins
--          the module in where it is required, and Redis makes its functions anew on every call that
--          reaches it, so a call that never needs them never makes them.
-- Mirrors  io.github.ratelimit.algorithm.MulDiv
--
-- Exactness: every limit, burst, window, time and count is an integer below 2^53, exact in Lua's doubles
-- (LimitSpec bounds them), and so is floor(a / b) of two of them: a correctly rounded quotient never
-- crosses an integer. A cost may be larger and rounded, but every comparison is written as
-- cost <= limit - used, whose right side is exact and below 2^53, so a rounded cost decides alike. A
-- product of two such numbers (count * time, in the sliding window and the buckets) is taken in 26-bit
-- limbs (exact_products.lua).

local floor = math.floor

-- a * b as three 26-bit limbs (high, middle, low), for a, b at most 2^53 with the smaller below 2^52 (a
-- window in µs, a remainder of one, or a quotient smaller than one).
local function product(a, b)
  if a < b then
    a, b = b, a
  end
  local a1, b1 = floor(a / 67108864), floor(b / 67108864)
  local a0, b0 = a - a1 * 67108864, b - b1 * 67108864
  local low, cross1, cross2 = a0 * b0, a1 * b0, a0 * b1
  local carry = floor(low / 67108864)
  local c1, c2 = floor(cross1 / 67108864), floor(cross2 / 67108864)
  local mid = (cross1 - c1 * 67108864) + (cross2 - c2 * 67108864) + carry
  local mid_carry = floor(mid / 67108864)
  return a1 * b1 + c1 + c2 + mid_carry, mid - mid_carry * 67108864, low - carry * 67108864
end

-- a * b <= c * d, exactly.
local function fits_under(a, b, c, d)
  local h1, m1, l1 = product(a, b)
  local h2, m2, l2 = product(c, d)
  if h1 ~= h2 then
    return h1 < h2
  end
  if m1 ~= m2 then
    return m1 < m2
  end
  return l1 <= l2
end

-- floor(a * b / d), exactly, for a quotient q whose products q * d and (q + 1) * d product() takes: the
-- rounded quotient corrected by exact products.
local function floor_mul_div(a, b, d)
  local q = floor(a * b / d)
  while q > 0 and not fits_under(q, d, a, b) do
    q = q - 1
  end
  while fits_under(q + 1, d, a, b) do
    q = q + 1
  end
  return q
end

-- floor(a * b / d) and a * b - d * floor(a * b / d), exactly, for a product a * b of 2^53 or more (below,
-- floor(a * b / d) is exact in doubles) and a quotient below 2^53.
local function mul_divmod(a, b, d)
  local q = floor_mul_div(a, b, d)
  local h1, m1, l1 = product(a, b)
  local h2, m2, l2 = product(q, d)
  -- The difference is below d, so every partial sum is a multiple of 2^26 below 2^54, exact.
  return q, (h1 - h2) * 4503599627370496 + (m1 - m2) * 67108864 + (l1 - l2)
end

return { product = product, fits_under = fits_under, floor_mul_div = floor_mul_div, mul_divmod = mul_divmod }
