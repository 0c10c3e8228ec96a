-- scripts/reports/markdown.lua — the profile as a GitHub-flavoured Markdown table, one row per module.
--
-- Rows follow the shown tree in pre-order (ignored modules give their rows to their children),
-- indented by depth; opts.module_depth = N >= 0 keeps depths below N (as DeepSpeed's aggregated
-- view does), the model's own row always. Units are
-- DeepSpeed's (K, M, G, T; B for billions of parameters). Besides the forward's counts each row has
-- the bytes the forward moved and the measured backward (FLOPs, latency), as the JSON has;
-- unknown values are "n/a".
local units = require "prof.report.units"
local tree = require "prof.report.tree"

local M = {}

-- DeepSpeed's number_to_string without the trailing space a unitless value gets.
local function num(x)
  return (units.number_to_string(x):gsub(" $", ""))
end

local function cell(s)
  return (tostring(s):gsub("|", "\\|"))
end

function M.render(profile, opts)
  opts = opts or {}
  local depth_limit = opts.module_depth or -1
  local root = tree.root(profile)
  local total_params, total_macs = root.params, root.macs
  local total_time = tree.duration(profile, root)
  local lines = {
    string.format("### %s — flops profile", root.type),
    "",
    string.format("device `%s` · conventions `%s` · params %s · fwd MACs %s · fwd FLOPs %s",
      profile.device, profile.conventions, units.params_to_string(profile.params),
      units.macs_to_string(profile.fwd_macs), units.number_to_string(profile.fwd_flops)),
    "",
    "| module | type | params | % params | MACs | % MACs | FLOPs | bytes | fwd latency | % latency "
      .. "| bwd FLOPs | bwd latency |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  }
  local function depth_of(rec)
    local d = 0
    while rec.parent do
      d, rec = d + 1, rec.parent
    end
    return d
  end
  for _, rec in ipairs(tree.shown(profile)) do
    local m = rec.module
    local d = depth_of(rec)
    if depth_limit < 0 or d < depth_limit or d == 0 then
      local path = tree.path(profile, m)
      local t = tree.duration(profile, m)
      lines[#lines + 1] = string.format("| %s%s | %s | %s | %s%% | %s | %s%% | %s | %s | %s | %s | %s | %s |",
        string.rep("&nbsp;&nbsp;", d), cell(path == "" and "(model)" or path), cell(m.type),
        units.params_to_string(m.params), units.pct(m.params, total_params),
        units.macs_to_string(m.macs), units.pct(m.macs, total_macs),
        num(m.flops), m.bytes and units.bytes_to_string(m.bytes) or "n/a",
        t and units.duration_to_string(t) or "n/a",
        (t and total_time) and (units.pct(t, total_time) .. "%") or "n/a",
        m.bwd_flops and num(m.bwd_flops) or "n/a",
        m.bwd_latency_s and units.duration_to_string(m.bwd_latency_s) or "n/a")
    end
  end
  return table.concat(lines, "\n") .. "\n"
end

return M.render
