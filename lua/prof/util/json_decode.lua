-- prof.util.json_decode — a strict JSON reader for the documents profrun writes: text -> Lua tables.
local M = {}

local ESC = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" }

-- Decodes s; returns the value (JSON null is nil, inside tables too), or nil and a message naming
-- the byte offset. Integers stay Lua integers (counts up to 2^63 - 1).
function M.decode(s, origin)
  origin = origin or "JSON"
  if type(s) ~= "string" then return nil, origin .. ": not a string" end
  local pos = 1
  local function fail(what)
    error({ msg = string.format("%s: %s at byte %d", origin, what, pos) }, 0)
  end
  local function ws() pos = s:find("[^ \t\r\n]", pos) or #s + 1 end
  local value
  local function str()
    local parts, i = {}, pos + 1
    while true do
      local j = s:find('["\\%c]', i)
      if j == nil then fail("unterminated string") end
      parts[#parts + 1] = s:sub(i, j - 1)
      local c = s:sub(j, j)
      if c == '"' then
        pos = j + 1
        return table.concat(parts)
      elseif c == "\\" then
        local e = s:sub(j + 1, j + 1)
        if e == "u" then
          local hex = s:match("^%x%x%x%x", j + 2)
          if hex == nil then pos = j; fail("bad \\u escape") end
          parts[#parts + 1] = utf8.char(tonumber(hex, 16))
          i = j + 6
        elseif ESC[e] then
          parts[#parts + 1] = ESC[e]
          i = j + 2
        else
          pos = j
          fail("bad escape")
        end
      else
        pos = j
        fail("raw control character in a string")
      end
    end
  end
  local function num()
    local text = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
    if text == nil or text == "" or text == "-" then fail("bad number") end
    pos = pos + #text
    local v = tonumber(text)
    if v == nil then fail("bad number") end
    if not text:find("[.eE]") then v = math.tointeger(v) or v end
    return v
  end
  function value()
    ws()
    local c = s:sub(pos, pos)
    if c == "{" then
      local t = {}
      pos = pos + 1
      ws()
      if s:sub(pos, pos) == "}" then pos = pos + 1; return t end
      while true do
        ws()
        if s:sub(pos, pos) ~= '"' then fail("expected a key") end
        local k = str()
        ws()
        if s:sub(pos, pos) ~= ":" then fail("expected ':'") end
        pos = pos + 1
        t[k] = value()
        ws()
        local d = s:sub(pos, pos)
        pos = pos + 1
        if d == "}" then return t end
        if d == "" then pos = pos - 1; fail("unexpected end") end
        if d ~= "," then pos = pos - 1; fail("expected ',' or '}'") end
      end
    elseif c == "[" then
      local t, n = {}, 0
      pos = pos + 1
      ws()
      if s:sub(pos, pos) == "]" then pos = pos + 1; return t end
      while true do
        n = n + 1
        t[n] = value()
        ws()
        local d = s:sub(pos, pos)
        pos = pos + 1
        if d == "]" then return t end
        if d == "" then pos = pos - 1; fail("unexpected end") end
        if d ~= "," then pos = pos - 1; fail("expected ',' or ']'") end
      end
    elseif c == '"' then
      return str()
    elseif s:find("^true", pos) then pos = pos + 4; return true
    elseif s:find("^false", pos) then pos = pos + 5; return false
    elseif s:find("^null", pos) then pos = pos + 4; return nil
    elseif c:match("[-%d]") then return num()
    end
    fail(pos > #s and "unexpected end" or "unexpected character")
  end
  local ok, v = pcall(function()
    local r = value()
    ws()
    if pos <= #s then fail("trailing text") end
    return r
  end)
  if not ok then
    if type(v) == "table" then return nil, v.msg end
    error(v, 0)
  end
  return v
end

return M
