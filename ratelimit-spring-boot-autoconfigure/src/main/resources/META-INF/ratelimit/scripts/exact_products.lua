-- exact_products.lua: products of two numbers below 2^53, compared and divided exactly.
-- Every limit, burst, window, time and count is an integer below 2^53, exact in Lua's doubles (LimitSpec
-- bounds them), and so is floor(a / b) of two of them. A cost may be larger and rounded, but every
-- comparison is written as cost <= limit - used, whose right side is exact, so a rounded cost decides
-- alike. A product of two such numbers is taken here.
-- Lua's numbers are doubles, exact only below 2^53, and a count times a time reaches 2^106: such
-- a product is taken as three 26-bit limbs. Included (a line "--+ exact_products.lua") inside the
-- function that needs it, and only there: Redis makes a new closure of each function every time its
-- definition runs, so a call that never needs them never defines them.
-- Defines   product(a, b), fits_under(a, b, c, d), floor_mul_div(a, b, c), locals
--           of the block that includes it; they use nothing of it.
-- Returns   each function's result, below.

-- a * b as three 26-bit limbs (high, middle, low), for a, b at most 2^53 with the smaller below
-- 2^52 (a window in µs, a remainder of one, or a quotient smaller than one).
local function product(a, b)
  local floor = math.floor
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
-- floor(a * b / c), exactly, for a quotient q whose products q * c and (q + 1) * c product() takes:
-- the rounded quotient corrected by exact products.
local function floor_mul_div(a, b, c)
  local floor = math.floor
  local q = floor(a * b / c)
  while q > 0 and not fits_under(q, c, a, b) do
    q = q - 1
  end
  while fits_under(q + 1, c, a, b) do
    q = q + 1
  end
  return q
end

