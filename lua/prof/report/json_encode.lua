-- prof.report.json_encode: a small pretty JSON encoder (2-space indent, ordered keys) for report scripts.
--
-- Values: nil or M.null -> null; booleans; numbers (integers, and integral floats below 2^63, print
-- as integers; other floats as %.17g, enough to round-trip; NaN and infinities -> null); strings
-- (escaped per RFC 8259: \" \\ \n \r \t, other control characters as \u00xx, bytes >= 0x20 as is,
-- like core/prof/json_writer.c); M.object(keys, values) -> an object whose keys print in the order given
-- (a key whose value is nil prints null); a plain table -> an array of t[1..n] (n = t.n or #t);
-- a plain table with string keys only -> an object with its keys sorted.
local M = {}

M.null = setmetatable({}, { __name = "json.null", __tostring = function() return "null" end })

local OBJECT = {}
local RAW_ARRAY = {}

-- An array whose items are JSON texts already, each encoded (encode_at) at the indentation of the
-- array's items: a profile's million modules become a million strings, not 26 million pieces.
function M.raw_array(items)
  return setmetatable({ items = items }, RAW_ARRAY)
end

-- An object that prints keys in this order; values[key] == nil prints null.
function M.object(keys, values)
  return setmetatable({ keys = keys, values = values or {} }, OBJECT)
end

-- An object that leaves out nil values (keys still in the given order).
function M.object_skip_nil(keys, values)
  local kept = {}
  for _, k in ipairs(keys) do
    if values[k] ~= nil then kept[#kept + 1] = k end
  end
  return M.object(kept, values)
end

local ESC = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }

function M.string(s)
  -- most strings need no escape: one scan, no per-character callback
  if not s:find('[%z\1-\31"\\]') then return '"' .. s .. '"' end
  return '"' .. s:gsub('[%z\1-\31"\\]', function(c)
    return ESC[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end

function M.number(x)
  if math.type(x) == "integer" then return string.format("%d", x) end
  if x ~= x or x == math.huge or x == -math.huge then return "null" end
  local i = math.tointeger(x)
  if i and x > -2 ^ 63 and x < 2 ^ 63 then return string.format("%d", i) end
  return string.format("%.17g", x)
end

local function is_plain_object(t)
  local n = 0
  for k in pairs(t) do
    if type(k) ~= "string" then return false end
    n = n + 1
  end
  return n > 0
end

-- ",\n" .. inner .. '"key": ' by indentation and key: the same dozen keys repeat for every
-- module of a profile, and building them anew was most of a large document's time.
local key_text = setmetatable({}, { __mode = "k" })
local function key_prefix(inner, k, first)
  local by = key_text[inner]
  if by == nil then
    by = { [true] = {}, [false] = {} }
    key_text[inner] = by
  end
  local t = by[first][k]
  if t == nil then
    t = (first and "\n" or ",\n") .. inner .. M.string(k) .. ": "
    by[first][k] = t
  end
  return t
end

local function encode(v, indent, buf)
  local tv = type(v)
  if v == nil or v == M.null then
    buf[#buf + 1] = "null"
  elseif tv == "boolean" then
    buf[#buf + 1] = v and "true" or "false"
  elseif tv == "number" then
    buf[#buf + 1] = M.number(v)
  elseif tv == "string" then
    buf[#buf + 1] = M.string(v)
  elseif tv == "table" and getmetatable(v) == RAW_ARRAY then
    local items = v.items
    if #items == 0 then buf[#buf + 1] = "[]" return end
    local inner = indent .. "  "
    buf[#buf + 1] = "[\n" .. inner
    buf[#buf + 1] = table.concat(items, ",\n" .. inner)
    buf[#buf + 1] = "\n" .. indent .. "]"
  elseif tv == "table" then
    local keys, values
    if getmetatable(v) == OBJECT then
      keys, values = v.keys, v.values
    elseif is_plain_object(v) then
      keys, values = {}, v
      for k in pairs(v) do keys[#keys + 1] = k end
      table.sort(keys)
    end
    local inner = indent .. "  "
    if keys then
      if #keys == 0 then buf[#buf + 1] = "{}" return end
      buf[#buf + 1] = "{"
      for i, k in ipairs(keys) do
        buf[#buf + 1] = key_prefix(inner, k, i == 1)
        encode(values[k], inner, buf)
      end
      buf[#buf + 1] = "\n" .. indent .. "}"
    else
      local n = v.n or #v
      if n == 0 then buf[#buf + 1] = "[]" return end
      buf[#buf + 1] = "["
      for i = 1, n do
        buf[#buf + 1] = (i > 1 and ",\n" or "\n") .. inner
        encode(v[i], inner, buf)
      end
      buf[#buf + 1] = "\n" .. indent .. "]"
    end
  else
    error("json_encode: cannot encode a " .. tv, 3)
  end
end

-- The JSON text of v as an item of an array indented by indent (see raw_array).
function M.encode_at(v, indent)
  local buf = {}
  encode(v, indent, buf)
  return table.concat(buf)
end

-- The JSON text of v (no trailing newline).
function M.encode(v)
  local buf = {}
  encode(v, "", buf)
  return table.concat(buf)
end

return M
