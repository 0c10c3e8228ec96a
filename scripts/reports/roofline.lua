-- scripts/reports/roofline.lua — each module on the roofline: intensity, achieved rates, % of peak, bound.
--
-- Peaks come from opts.peaks ({flops =, bytes_per_s =, machine =, measured_at =}), else from a
-- profile that prof.roofline.annotate has seen (peak_flops, peak_bytes_per_s), else prof.peaks
-- (measured once per machine, then cached; on meta only the cache). The profile is not modified.
-- One row per shown module in pre-order, indented by depth; DeepSpeed's units (K, M, G, T); n/a
-- where a value is unknown.
-- Columns: FLOPs and bytes (read + written) of the forward, intensity in FLOP/B, achieved FLOPS and
-- B/s over the forward latency, those as % of the peaks, % of the roof (roofline time / measured
-- time: below 10 % is overhead-bound) and the bound; a * marks a bound expected from intensity
-- alone (nothing timed, as on meta). Under deepspeed conventions the FLOPs column is theirs but the
-- roofline columns use the exact count (m.exact_flops), and say n/a where it was not measured.
local roofline = require "prof.roofline"
local units = require "prof.report.units"
local tree = require "prof.report.tree"

local M = {}

local function num(x)
  if x == nil then return "n/a" end
  return (units.number_to_string(x):gsub(" $", ""))
end

local function per_s(x, suffix)
  if x == nil then return "n/a" end
  return units.number_to_string(x) .. suffix
end

local function pct(share)
  if share == nil then return "n/a" end
  return units.g(units.round(100 * share, 2)) .. "%"
end

local function fixed(x)
  if x == nil then return "n/a" end
  return units.g(units.round(x, 2))
end

-- The peaks to judge against (see the top of this file).
function M.peaks(profile, opts)
  if opts and opts.peaks then return opts.peaks end
  if profile.peak_flops and profile.peak_bytes_per_s then
    return { flops = profile.peak_flops, bytes_per_s = profile.peak_bytes_per_s,
      machine = profile.peaks_machine }
  end
  -- the device's, in the model's dtype; never measured on meta
  local p, err = require("prof.roofline.device_peaks").for_device(profile.device, profile.dtype)
  if p == nil then error(err, 0) end
  return p
end

M.HEADERS = { "module", "type", "FLOPs", "bytes", "FLOP/B", "achieved FLOPS", "achieved B/s",
  "% peak FLOPS", "% peak B/s", "% roof", "bound" }
local LEFT = { [1] = true, [2] = true, [11] = true }

function M.render(profile, opts)
  local peaks = M.peaks(profile, opts)
  local root = tree.root(profile)
  local rows, expected = { M.HEADERS }, false
  local exact, unknown = false, false
  for _, rec in ipairs(tree.shown(profile)) do
    local m = rec.module
    if m.exact_flops == false then unknown = true elseif m.exact_flops ~= nil then exact = true end
    local d, up = 0, rec.parent
    while up do d, up = d + 1, up.parent end
    local r = roofline.classify(m, peaks)
    local path = tree.path(profile, m)
    local bound = r.bound or "n/a"
    if r.bound_expected then
      bound, expected = bound .. "*", true
    end
    rows[#rows + 1] = {
      string.rep("  ", d) .. (path == "" and "(model)" or path), m.type, num(m.flops),
      m.bytes and units.bytes_to_string(m.bytes) or "n/a", fixed(r.intensity),
      per_s(r.achieved_flops, "FLOPS"), per_s(r.achieved_bytes_per_s, "B/s"),
      pct(r.flops_share), pct(r.bytes_share), pct(r.roof_share), bound,
    }
  end
  local width = {}
  for _, row in ipairs(rows) do
    for i, cell in ipairs(row) do width[i] = math.max(width[i] or 0, utf8.len(cell) or #cell) end
  end
  local lines = {
    string.format("Roofline of %s on %s", root and root.type or "model", peaks.machine or "this machine"),
    string.format("peak %s · bandwidth %s (read + written) · ridge point %s FLOP/B%s",
      units.flops_to_string(peaks.flops), per_s(peaks.bytes_per_s, "B/s"), fixed(roofline.ridge(peaks)),
      peaks.measured_at and (" · measured " .. peaks.measured_at) or ""),
    string.format("bound: compute above the ridge point, memory at or below it, overhead under %s of the roof",
      pct(roofline.OVERHEAD_SHARE)),
    "",
  }
  for _, row in ipairs(rows) do
    local cells = {}
    for i, cell in ipairs(row) do
      local pad = string.rep(" ", width[i] - (utf8.len(cell) or #cell))
      cells[i] = LEFT[i] and cell .. pad or pad .. cell
    end
    lines[#lines + 1] = (table.concat(cells, "  "):gsub("%s+$", ""))
  end
  if expected then
    lines[#lines + 1] = ""
    lines[#lines + 1] = "* expected from intensity alone: nothing was timed"
  end
  if exact then
    lines[#lines + 1] = ""
    lines[#lines + 1] = "FLOPs as " .. tostring(profile.conventions) .. " conventions count them; FLOP/B, "
      .. "achieved FLOPS and the bound from the exact count of the same forward"
  end
  if unknown then
    lines[#lines + 1] = ""
    lines[#lines + 1] = "n/a: " .. tostring(profile.conventions) .. " conventions count some work as 0 "
      .. "(tanh, losses, operators), so the roofline needs the exact count: get_model_profile measures it, "
      .. "elsewhere set flops_profiler.conventions to exact"
  end
  return table.concat(lines, "\n") .. "\n"
end

return M.render
