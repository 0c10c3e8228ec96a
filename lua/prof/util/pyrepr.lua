-- prof.util.pyrepr — Python's repr of floats, for text that must read exactly like PyTorch's or DeepSpeed's.
local M = {}

-- Python's str(float) (repr): the shortest digits that read back to x; fixed notation while the
-- decimal point sits within 16 digits, else d.ddde+XX; a fixed integral value keeps ".0".
function M.float(x)
  x = x * 1.0
  if x ~= x then return "nan" end
  if x == math.huge then return "inf" end
  if x == -math.huge then return "-inf" end
  if x == 0 then return (1 / x < 0) and "-0.0" or "0.0" end
  local s
  for p = 0, 16 do
    s = string.format("%." .. p .. "e", x)
    if tonumber(s) == x then break end
  end
  local sign, d1, rest, e = s:match("^(%-?)(%d)%.?(%d*)e([-+]%d+)$")
  local digits = (d1 .. rest):gsub("0+$", "")
  if digits == "" then digits = "0" end
  local decpt = tonumber(e) + 1
  if decpt > 16 or decpt <= -4 then
    local mant = digits:sub(1, 1)
    if #digits > 1 then mant = mant .. "." .. digits:sub(2) end
    local ex = decpt - 1
    return string.format("%s%se%s%02d", sign, mant, ex < 0 and "-" or "+", math.abs(ex))
  elseif decpt <= 0 then
    return sign .. "0." .. string.rep("0", -decpt) .. digits
  elseif decpt >= #digits then
    return sign .. digits .. string.rep("0", decpt - #digits) .. ".0"
  end
  return sign .. digits:sub(1, decpt) .. "." .. digits:sub(decpt + 1)
end

return M
