-- bucket_run.lua: the run of identical requests that a token bucket, GCRA or leaky bucket deciding
-- alone takes at once (a batch's run, one limit), as one after another would be allowed. Included in
-- bucket.lua where a run is taken, so that other calls do not make its closure.
-- Defines   bucket_run(at_once, cost, available, backlog, backlog_fraction, after, after_fraction,
--           capacity, limit, whole, span, permits_in, bound), for the first of the run, allowed (bucket.lua):
--           at_once is the requests of the run left, this one included; available the permits now;
--           backlog (and its fraction) the backlog before it, after (and its fraction) once it is taken;
--           capacity, limit, whole, span and permits_in (nil when the limit divides the window) bucket.lua's;
--           bound shaping's longest delay, or false.
-- Returns   admitted (how many of the run are taken, this one included), base and base_fraction (the
--           backlog before them), step and step_fraction (the backlog each of them adds), and the backlog
--           once all of them are taken (whole µs, fraction).
-- Mirrors   io.github.ratelimit.algorithm.RunTakenAtOnce.java (each request's reply from base and step)

local function bucket_run(at_once, cost, available, backlog, backlog_fraction, after, after_fraction,
    capacity, limit, whole, span, permits_in, bound)
  local floor, min = math.floor, math.min
  -- Each of the run takes cost more of the available permits, and is allowed while they last and,
  -- shaping, while its delay ceil(backlog) stays within the bound: the j-th after this one while
  -- backlog + j * cost * T <= bound, that is j * cost <= the permits in bound - backlog. How many are is
  -- a quotient. (A bound beyond the capacity bounds nothing.)
  local admitted = min(at_once, floor(available / cost))
  if bound and bound <= capacity then
    local room, room_fraction = bound - backlog, -backlog_fraction
    if room_fraction < 0 then
      room, room_fraction = room - 1, room_fraction + limit
    end
    local in_room
    if permits_in then
      in_room = permits_in(room, room_fraction)
    else
      in_room = floor(room / whole)
    end
    admitted = min(admitted, floor(in_room / cost) + 1)
  end
  local base, base_fraction = backlog, backlog_fraction
  local step, step_fraction = after - backlog, after_fraction - backlog_fraction
  if step_fraction < 0 then
    step, step_fraction = step - 1, step_fraction + limit
  end
  local ahead, ahead_fraction = after, after_fraction
  if admitted > 1 then
    -- The run's permits at once (at most the available ones, so their product stays exact).
    local credit, credit_fraction = admitted * cost * whole, 0
    if span then
      credit, credit_fraction = span(admitted * cost)
    end
    if credit_fraction >= limit - backlog_fraction then
      ahead, ahead_fraction = backlog + credit + 1, credit_fraction - (limit - backlog_fraction)
    else
      ahead, ahead_fraction = backlog + credit, backlog_fraction + credit_fraction
    end
  end
  return admitted, base, base_fraction, step, step_fraction, ahead, ahead_fraction
end
