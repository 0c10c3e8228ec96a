-- slow_steps.lua — record the steps right after one that took `percent` % longer than the median.
-- A slowdown tends to persist (a collector, a data stall, a throttled clock), so the next steps
-- show it. {percent = 50, warmup = 1, active = 2, window = 50, min_steps = 5}: the median is over
-- the last `window` step times, and no trigger fires before `min_steps` of them are known.
local schedule = require "prof.schedule"

return function(args)
  local percent = args.percent or 50
  local warmup, active = args.warmup or 1, args.active or 1
  local window, min_steps = args.window or 50, args.min_steps or 5
  local times, plan, at = {}, nil, 0
  local function median()
    local s = {}
    for i = 1, #times do s[i] = times[i] end
    table.sort(s)
    local n = #s
    if n % 2 == 1 then return s[(n + 1) // 2] end
    return (s[n // 2] + s[n // 2 + 1]) / 2
  end
  return function(_, info)
    local t = info and info.step_ns
    if plan == nil and t ~= nil then
      -- only steps that ran unrecorded feed the median: recording itself costs time
      if #times >= min_steps and t > median() * (1 + percent / 100) then
        plan, at = {}, 0
        for _ = 1, warmup do plan[#plan + 1] = schedule.WARMUP end
        for _ = 1, active - 1 do plan[#plan + 1] = schedule.RECORD end
        plan[#plan + 1] = schedule.RECORD_AND_SAVE
      else
        times[#times + 1] = t
        if #times > window then table.remove(times, 1) end
      end
    end
    if plan ~= nil then
      at = at + 1
      local a = plan[at]
      if at == #plan then plan = nil end
      return a
    end
    return schedule.NONE
  end
end
