-- scripts/reports/summary.lua — one line per model: params, MACs, FLOPs, FLOPs per token, training FLOPs.
--
-- Training FLOPs use DeepSpeed's estimate, (3 + recompute_fwd_factor) x forward (backward = 2x
-- forward, plus the recomputed share), unless the backward was measured (profile.bwd_flops).
-- FLOPs per token appear when the profile knows how many tokens the forward processed.
local units = require "prof.report.units"

local M = {}

-- DeepSpeed's number_to_string without the trailing space a unitless value gets.
local function num(x)
  return (units.number_to_string(x):gsub(" $", ""))
end

function M.render(profile)
  local root = profile.modules[1]
  local r = profile.recompute_fwd_factor or 0
  local fwd = profile.fwd_flops
  local parts = {
    "params " .. units.params_to_string(profile.params),
    "fwd MACs " .. units.macs_to_string(profile.fwd_macs),
    "fwd FLOPs " .. num(fwd),
  }
  if profile.tokens and profile.tokens > 0 then
    parts[#parts + 1] = "FLOPs/token " .. num(fwd / profile.tokens)
  end
  if profile.bwd_flops then
    parts[#parts + 1] = "training FLOPs (measured) " .. num(fwd + profile.bwd_flops)
  else
    parts[#parts + 1] = string.format("training FLOPs (%s x fwd) %s", units.g(3 + r),
      num((3 + r) * fwd))
  end
  if profile.mp_size and profile.mp_size > 1 then
    parts[#parts + 1] = string.format("(per GPU; model x %d)", profile.mp_size)
  end
  if profile.saturated then parts[#parts + 1] = "warning: counts saturated at 2^63 - 1 (lower bounds)" end
  return string.format("%s: %s\n", root and root.type or "model", table.concat(parts, " · "))
end

return M.render
