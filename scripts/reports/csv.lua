-- scripts/reports/csv.lua: one CSV row per shown module in pre-order (RFC 4180 quoting, LF line ends).
--
-- Header: path,type,depth,params,macs,flops,bytes,fwd_latency_s,bwd_latency_s,calls,bwd_flops: the
-- JSON profile's module keys in its order (bytes read + written by the forward; bwd_flops the
-- measured backward). An unknown value is an empty field; integers print exactly, floats as the
-- shortest %g that round-trips; hidden (ignored) modules have no row.
local enc = require "prof.report.json_encode"
local units = require "prof.report.units"
local tree = require "prof.report.tree"

local M = {}

M.COLUMNS = { "path", "type", "depth", "params", "macs", "flops", "bytes", "fwd_latency_s", "bwd_latency_s",
  "calls", "bwd_flops" }

-- RFC 4180: a field holding a comma, a double quote, CR or LF is quoted, quotes doubled.
function M.field(v)
  if v == nil then return "" end
  if type(v) == "number" then
    local s = enc.number(v)
    if s == "null" then return "" end
    if s:find("[.e]") then s = units.shortest(v) end
    return s
  end
  v = tostring(v)
  if v:find('[,"\r\n]') then return '"' .. v:gsub('"', '""') .. '"' end
  return v
end

function M.render(profile)
  local lines = { table.concat(M.COLUMNS, ",") }
  for _, rec in ipairs(tree.shown(profile)) do
    local m = rec.module
    local row = { tree.path(profile, m), m.type, m.depth, m.params, m.macs, m.flops, m.bytes,
      m.fwd_latency_s, m.bwd_latency_s, m.calls, m.bwd_flops }
    local fields = {}
    for i = 1, #M.COLUMNS do fields[i] = M.field(row[i]) end
    lines[#lines + 1] = table.concat(fields, ",")
  end
  return table.concat(lines, "\n") .. "\n"
end

return M.render
