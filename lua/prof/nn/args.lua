-- args.lua — constructor arguments of the nn classes: PyTorch's positional order, then keywords.
local M = {}

-- A trailing plain table holds keywords when it has a string key (or nothing at all): a list such
-- as {3, 5} is a value (kernel_size), a module or tensor is never a keyword table.
local function is_keywords(v)
  if type(v) ~= "table" or getmetatable(v) ~= nil then return false end
  if next(v) == nil then return true end
  for k in pairs(v) do
    if type(k) == "string" then return true end
  end
  return false
end
M.is_keywords = is_keywords

-- M.parse(who, spec, ...) reads `...` as Python would bind `def __init__(self, <spec>)`.
-- spec lists the parameters in PyTorch's order: a bare name is required, {name, default} is
-- optional. Returns a table name -> value. Errors say what Python's TypeError would say, at the
-- caller of the class (level 4: parse <- init <- Module:new <- the user's call).
function M.parse(who, spec, ...)
  local n = select("#", ...)
  local given = { ... }
  local kw
  if n > 0 and is_keywords(given[n]) then
    kw = given[n]
    n = n - 1
  end
  if n > #spec then
    error(string.format("%s: takes at most %d positional arguments (%d given)", who, #spec, n), 4)
  end
  local out, known = {}, {}
  for i, s in ipairs(spec) do
    local name = type(s) == "table" and s[1] or s
    known[name] = true
    local v
    if i <= n then v = given[i] end
    if kw ~= nil and kw[name] ~= nil then
      if v ~= nil then
        error(string.format("%s: got multiple values for argument '%s'", who, name), 4)
      end
      v = kw[name]
    end
    if v == nil then
      if type(s) ~= "table" then
        error(string.format("%s: missing required argument '%s'", who, name), 4)
      end
      v = s[2]
    end
    -- Lua would quietly read "3" as 3 where a size is expected; Python raises TypeError
    if type(v) == "string" and tonumber(v) ~= nil then
      error(string.format("%s: argument '%s' is the string \"%s\", expected a number", who, name,
        v), 4)
    end
    out[name] = v
  end
  if kw ~= nil then
    for k in pairs(kw) do
      if not known[k] then
        error(string.format("%s: unexpected keyword argument '%s'", who, tostring(k)), 4)
      end
    end
  end
  return out
end

-- Checks a shape the user wrote (get_model_profile's input_shape): a non-empty list of positive
-- integers. Errors name key and the entry, at the caller's caller (level 3 from here).
function M.check_shape(who, key, shape)
  local function fail(what)
    error(string.format("%s: %s%s", who, key, what), 3)
  end
  if type(shape) ~= "table" or getmetatable(shape) ~= nil then
    fail(string.format(" must be a list of sizes such as {1, 3, 224, 224}, got %s", type(shape)))
  end
  if #shape < 1 then fail(" must be a non-empty list of sizes such as {1, 3, 224, 224}") end
  for i = 1, #shape do
    local v = shape[i]
    if math.type(v) ~= "integer" and not (math.type(v) == "float" and v == math.floor(v)
        and v >= 1 and v < 2^53) then
      fail(string.format("[%d] must be a positive integer, got %s %s", i, type(v),
        type(v) == "string" and string.format("%q", v) or tostring(v)))
    end
    if v < 1 then fail(string.format("[%d] must be a positive integer, got %s", i, tostring(v))) end
  end
end

-- PyTorch's _single/_pair/_triple: a number repeated n times, a list copied as it is.
function M.ntuple(v, n)
  local t = {}
  if type(v) == "table" then
    for i, x in ipairs(v) do t[i] = x end
  else
    for i = 1, n do t[i] = v end
  end
  return t
end

-- Lists compared element-wise (Python's tuple ==).
function M.all_equal(list, value)
  for _, x in ipairs(list) do
    if x ~= value then return false end
  end
  return true
end

-- The {dtype=, device=} table T.empty takes, from a module's factory keywords.
function M.factory(a)
  if a.dtype == nil and a.device == nil then return nil end
  return { dtype = a.dtype, device = a.device }
end

local float_repr = require("prof.util.pyrepr").float

-- Values formatted as Python's str.format prints them: (5, 5), (3,), True, None, 1e-05.
-- Floats follow Python's repr (10.0 -> "10.0", 1e-05 -> "1e-05").
function M.fmt(v)
  if type(v) == "boolean" then return v and "True" or "False" end
  if v == nil then return "None" end
  if type(v) == "table" then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = M.fmt(x) end
    if #parts == 1 then return "(" .. parts[1] .. ",)" end
    return "(" .. table.concat(parts, ", ") .. ")"
  end
  if math.type(v) == "float" then return float_repr(v) end
  return tostring(v)
end

-- "[2, 3, 4]": shapes in error messages, as the ops print them.
function M.shape_str(x)
  return "[" .. table.concat(x.shape, ", ") .. "]"
end

return M
