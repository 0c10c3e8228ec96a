-- errors.lua — error messages that say which module of the model failed.
local module = require "prof.nn.module"

local M = {}

local hooks = module.hooks

-- The module's dotted path in the model being profiled, else through the parents it was assigned to.
function M.module_path(m)
  local S, ids = hooks.S, hooks.ids
  if S ~= nil and ids ~= nil and ids[m] ~= nil then return S:path(ids[m]) end
  return m:path()
end

-- A path as messages print it: a deep model's (thousands of levels) keeps its whole parts within
-- the first and last 60 characters around the number of levels left out, so the reason after it
-- stays readable: "0.0.0.(... 55431 more levels ...).0.0".
function M.short_path(path)
  if #path <= 160 then return path end
  local head = path:sub(1, 61):match("^(.*)%.") or path:sub(1, 60)
  local tail = path:sub(-61):match("%.(.*)$") or path:sub(-60)
  local _, left = path:sub(#head + 2, -#tail - 2):gsub("[^.]+", "")
  return string.format("%s.(... %d more levels ...).%s", head, left, tail)
end

-- Message handler: prefixes the innermost module being called ("in module 'features.0' (Conv2d): ").
function M.with_module_context(msg)
  local m = module.innermost(2)
  if m == nil or type(msg) ~= "string" or msg:find("^in module ") then return msg end
  local path = M.short_path(M.module_path(m))
  if path == "" then
    return string.format("in module %s (the model): %s", m.__name, msg)
  end
  return string.format("in module '%s' (%s): %s", path, m.__name, msg)
end

-- Message handler for whole scripts: module context plus a Lua traceback.
function M.traceback(msg)
  if type(msg) ~= "string" then msg = tostring(msg) end
  return debug.traceback(M.with_module_context(msg), 2)
end

return M
