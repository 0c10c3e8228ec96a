-- ignore.lua — which modules an ignore list names: by class, type name, exact path, prefix or pattern.
local M = {}

--[[
Entries of an ignore list:
  nn.Dropout (a class)        every module of that class
  "Dropout"                   every module whose type name is Dropout
  "encoder.layer.0"           the module at that exact path
  "encoder.layer.*"           every module below encoder.layer (not encoder.layer itself)
  "^encoder%.layer%.%d+$"     paths matching a Lua pattern (entries starting with ^)
]]
function M.matcher(list)
  local types, paths, prefixes, patterns = {}, {}, {}, {}
  for i, e in ipairs(list or {}) do
    if type(e) == "table" and type(e.__name) == "string" then
      types[e.__name] = true
    elseif type(e) ~= "string" then
      error(string.format("ignore_modules[%d]: expected a class or a string, got %s", i, type(e)), 3)
    elseif e:sub(1, 1) == "^" then
      if not pcall(string.find, "", e) then
        error(string.format("ignore_modules[%d]: invalid Lua pattern '%s'", i, e), 3)
      end
      patterns[#patterns + 1] = e
    elseif e:sub(-2) == ".*" then
      prefixes[#prefixes + 1] = e:sub(1, -2)
    else
      types[e] = true
      paths[e] = true
    end
  end
  return function(path, m)
    if types[m.__name] or paths[path] then return true end
    for _, p in ipairs(prefixes) do
      if path:sub(1, #p) == p then return true end
    end
    for _, p in ipairs(patterns) do
      if path:find(p) then return true end
    end
    return false
  end
end

return M
