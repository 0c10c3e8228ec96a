-- prof.flops_profiler.ignore — which modules an ignore list names: by class, type name, exact path, prefix or pattern.
local paths = require "prof.util.paths"

local M = {}

--[[
Entries of an ignore list:
  nn.Dropout (a class)        every module of that class
  "Dropout"                   every module whose type name is Dropout
  "encoder.layer.0"           the module at that exact path
  "encoder.layer.*"           every module below encoder.layer (not encoder.layer itself)
  "^encoder%.layer%.%d+$"     paths matching a Lua pattern (entries starting with ^)
  "leaves.lua"                a script (a path, or a name under scripts/ignore/) returning a list
                              of entries, or function(model) returning one: computed lists
]]

local function script_entries(e, model, i)
  local path, tried = paths.find("ignore", e)
  if path == nil then
    error(string.format("ignore_modules[%d]: script '%s' not found (searched %s)", i, e,
      paths.searched(tried)), 0)
  end
  local chunk, err = loadfile(path)
  if chunk == nil then error(string.format("ignore_modules[%d]: %s", i, err), 0) end
  local ok, r = pcall(chunk)
  if ok and type(r) == "function" then ok, r = pcall(r, model) end
  if not ok then error(string.format("ignore_modules[%d]: script %s failed: %s", i, path, tostring(r)), 0) end
  if type(r) ~= "table" then
    error(string.format("ignore_modules[%d]: script %s must return a list of entries or "
      .. "function(model) returning one, got %s", i, path, type(r)), 0)
  end
  return r
end

function M.matcher(list, model)
  local types, exact, prefixes, patterns = {}, {}, {}, {}
  local function add(e, i)
    if type(e) == "table" and type(e.__name) == "string" then
      types[e.__name] = true
    elseif type(e) ~= "string" then
      error(string.format("ignore_modules[%d]: expected a class or a string, got %s", i, type(e)), 0)
    elseif e:match("%.lua$") then
      for _, sub in ipairs(script_entries(e, model, i)) do add(sub, i) end
    elseif e:sub(1, 1) == "^" then
      -- Lua checks a pattern only as far as a match reads it: try it on every path it will see
      for _, pair in ipairs(model and model:named_modules() or { { "" } }) do
        local ok, err = pcall(string.find, pair[1], e)
        if not ok then
          error(string.format("ignore_modules[%d]: invalid Lua pattern '%s': %s", i, e,
            tostring(err):gsub("^.-:%d+: ", "")), 0)
        end
      end
      patterns[#patterns + 1] = e
    elseif e:sub(-2) == ".*" then
      prefixes[#prefixes + 1] = e:sub(1, -2)
    else
      types[e] = true
      exact[e] = true
    end
  end
  for i, e in ipairs(list or {}) do add(e, i) end
  return function(path, m)
    if types[m.__name] or exact[path] then return true end
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
