-- algorithm.lua: a limit's answer from its algorithm's function, chosen by the limit's code.
-- Defines   algorithm(code, key, a, b, c, d, op, cost, now, at_once, max_delay, ttl_slack, skewed, backlogs,
--           fractions, limits): a, b, c and d are the limit's parameters after its code (rate_limit.lua's
--           ARGV); each algorithm's file says which of the others it takes and what they mean.
-- Returns   what the algorithm's function returns: allowed, available, retry, delay, reset_now,
--           reset_after, then its next state (the function that saves it and up to 4 values), then the
--           fields of a run taken at once (bucket.lua, fixed_window.lua).

local function algorithm(code, key, a, b, c, d, op, cost, now, at_once, max_delay, ttl_slack, skewed,
    backlogs, fractions, limits)
  if code == 'fw' or code == 'fc' then
    --+ fixed_window.lua
    if code == 'fc' then
      return fixed_window(key, a, nil, op, cost, now, at_once, ttl_slack, skewed, b, c, d)
    end
    return fixed_window(key, a, b, op, cost, now, at_once, ttl_slack, skewed)
  elseif code == 'sw' then
    --+ sliding_window.lua
    return sliding_window(key, a, b, op, cost, now, ttl_slack, skewed)
  elseif code == 'sl' then
    --+ sliding_log.lua
    return sliding_log(key, a, b, op, cost, now, ttl_slack, skewed)
  elseif code == 'swc' then
    --+ sliding_window_counter.lua
    return sliding_window_counter(key, a, b, c, op, cost, now, ttl_slack, skewed)
  end
  --+ bucket.lua
  return bucket(key, code == 'lb', a, b, c, op, cost, now, at_once, max_delay, ttl_slack, backlogs, fractions,
    limits)
end
