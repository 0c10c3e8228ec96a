-- prof.util.options — an option table's keys checked as the config's are: a misspelt key is an
-- error naming it and the closest accepted one (prof.util.closest, the C loader's rule).
local closest = require("prof.util.closest").closest

local M = {}

-- The message for an unknown key (or value) name among accepted: the config's wording.
function M.unknown(what, name, accepted)
  local near = type(name) == "string" and closest(name, accepted) or nil
  if near == nil and type(name) == "string" and #name >= 3 then
    for _, a in ipairs(accepted) do   -- a shortened name: self_cpu_time for self_cpu_time_total
      if a:sub(1, #name) == name then near = a break end
    end
  end
  if near then return string.format('unknown %s "%s" (did you mean "%s"?)', what, tostring(name), near) end
  return string.format('unknown %s "%s" (expected one of %s)', what, tostring(name),
                       table.concat(accepted, ", "))
end

--[[
check(o, accepted, who[, level]): raises "<who>: unknown key "<k>" (did you mean "<near>"?)" at
level (default 2: the caller of the function that calls check, counted from there: 3 here) for
the first key of o, in sorted order, that accepted (a list) does not hold. o may be nil. Returns o.
]]
function M.check(o, accepted, who, level)
  if o == nil then return o end
  local set = accepted.set
  if set == nil then
    set = {}
    for _, k in ipairs(accepted) do set[k] = true end
    accepted.set = set   -- built once per list: the lists are module constants
  end
  local bad
  for k in pairs(o) do
    if not set[k] and (bad == nil or tostring(k) < tostring(bad)) then bad = k end
  end
  if bad ~= nil then
    local sorted = {}
    for i, k in ipairs(accepted) do sorted[i] = k end
    table.sort(sorted)
    error(who .. ": " .. M.unknown("key", bad, sorted), (level or 2) + 1)
  end
  return o
end

return M
