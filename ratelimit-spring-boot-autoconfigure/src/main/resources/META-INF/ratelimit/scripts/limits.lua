-- limits.lua: rate_limit.lua's first walk over the limits' arguments, which checks every code before any
-- limit runs, counts the limits and finds the optional arguments after them.
-- KEYS      rate_limit.lua's: two per limit and one per penalty (then, for q, the concurrency limit's)
-- Uses      ARGV[3..] the limits, each a code and its parameters (rate_limit.lua's header), and op
-- Sets      count (the limits), penalties (those with a penalty), arg (where the optional arguments
--           start); or returns an error naming an unknown code
local count, penalties, arg = 0, 0, 3
while true do
  local code = ARGV[arg]
  if code == '!' then
    penalties, arg = penalties + 1, arg + 2
  elseif code == 'tb' or code == 'gcra' or code == 'lb' or code == 'swc' or code == 'fc' then
    count, arg = count + 1, arg + ((code == 'fc') and 5 or 4)
  elseif code == 'fw' or code == 'sw' or code == 'sl' then
    count, arg = count + 1, arg + 3
  elseif 2 * count + penalties < #KEYS - ((op == 'q') and 1 or 0) then
    return redis.error_reply('ERR rate_limit.lua: unknown algorithm code ' .. tostring(code))
  else
    break
  end
end
