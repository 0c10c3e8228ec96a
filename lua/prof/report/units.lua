-- prof.report.units: DeepSpeed's number formatters (number/macs/flops/params/duration_to_string), to the character.
local M = {}

M.DEFAULT_PRECISION = 2

local MAGNITUDE = { T = 1e12, G = 1e9, M = 1e6, K = 1e3, m = 1e-3, u = 1e-6 }

local function missing(x)
  return x == nil or x ~= x
end

-- Python's round(x, nd) on a float: the exact binary value rounded half-even to nd decimals
-- (glibc's printf does exactly that), then read back as the nearest double.
function M.round(x, nd)
  nd = nd or M.DEFAULT_PRECISION
  x = x * 1.0
  if x ~= x or x == math.huge or x == -math.huge then return x end
  local s = string.format("%." .. nd .. "f", x)
  local r = tonumber(s) * 1.0
  if r == 0 and s:sub(1, 1) == "-" then r = -0.0 end
  return r
end

-- Python's f"{x:g}": six significant digits, trailing zeros stripped, exponent for < 1e-4 or >= 1e6.
function M.g(x)
  return string.format("%g", x)
end

-- Python's str(float): see prof.pyrepr.
M.float_repr = require("prof.util.pyrepr").float

-- The shortest "%.<p>g" text that reads back to the same double (for tables meant to be read).
function M.shortest(x)
  if math.type(x) == "integer" then return string.format("%d", x) end
  local s
  for p = 1, 17 do
    s = string.format("%." .. p .. "g", x)
    if tonumber(s) == x then break end
  end
  return s
end

-- Python's str() of a value printed by '{:<8}': ints as ints, floats as repr, None as "n/a".
function M.pystr(v)
  if v == nil then return "n/a" end
  if type(v) == "boolean" then return v and "True" or "False" end
  if math.type(v) == "integer" then return string.format("%d", v) end
  if type(v) == "number" then return M.float_repr(v) end
  return tostring(v)
end

-- number_to_string(num, units=None, precision=2): the unit is chosen before rounding, so
-- 999999 gives "1000 K"; negatives fall through to "u" exactly as in DeepSpeed.
function M.number_to_string(num, units, precision)
  if missing(num) then return "n/a" end
  precision = precision or M.DEFAULT_PRECISION
  local magnitude
  if units == nil then
    if num >= 1e12 then magnitude, units = 1e12, "T"
    elseif num >= 1e9 then magnitude, units = 1e9, "G"
    elseif num >= 1e6 then magnitude, units = 1e6, "M"
    elseif num >= 1e3 then magnitude, units = 1e3, "K"
    elseif num >= 1 or num == 0 then magnitude, units = 1, ""
    elseif num >= 1e-3 then magnitude, units = 1e-3, "m"
    else magnitude, units = 1e-6, "u" end
  else
    magnitude = MAGNITUDE[units] or 1
  end
  return M.g(M.round(num / magnitude, precision)) .. " " .. units
end

local function suffixed(suffix)
  return function(x, units, precision)
    if missing(x) then return "n/a" end
    return M.number_to_string(x, units, precision) .. suffix
  end
end

M.macs_to_string = suffixed("MACs")
M.flops_to_string = suffixed("FLOPS")
M.bytes_to_string = suffixed("B")
M.duration_to_string = suffixed("s")

-- params use "B" (billions) for "G" and carry no trailing space: "6.74 B", "61.71 K", "110".
function M.params_to_string(params, units, precision)
  if missing(params) then return "n/a" end
  if units then units = units:gsub("B", "G") end
  local s = M.number_to_string(params, units, precision):gsub("G", "B")
  return (s:match("^%s*(.-)%s*$"))
end

-- DeepSpeed's percentage: f"{round(100 * x / total, 2):g}", and 0 when the total is 0 (or unknown).
function M.pct(x, total)
  if missing(x) then return "n/a" end
  if missing(total) or total == 0 then return "0" end
  -- 100 * x in integers wraps for a count near 2^63 (a saturated one): then in floats
  local scaled = (math.type(x) == "integer" and math.abs(x) > math.maxinteger // 100) and 100.0 * x or 100 * x
  return M.g(M.round(scaled / total, 2))
end

return M
