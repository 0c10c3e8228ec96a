-- config.lua — the run's configuration and the precedence of settings.
-- Precedence: built-in defaults < config file < arguments written in the script < --set/--device.
local core = require "prof.core"

local M = {}

local current, forced

local function install(cfg)
  current = cfg
  forced = {}
  for _, k in ipairs(cfg.forced_keys or {}) do forced[k] = true end
end

-- Installs a config table from core.load_config (profrun does this before the script runs); its
-- device becomes the default device (meta when it names none).
function M.set(cfg)
  install(cfg)
  core.set_default_device(cfg.device or "meta")
  core.set_forced_device(forced.device and cfg.device or nil)
end

-- The active config; without profrun, the defaults a config file would have (the runtime's
-- default device is left as the script set it).
function M.get()
  if current == nil then install(assert(core.load_config(nil, {}))) end
  return current
end

-- The config's value at a dotted path ("flops_profiler.top_modules"), or nil.
function M.value(path)
  local v = M.get()
  for part in path:gmatch("[^.]+") do
    if type(v) ~= "table" then return nil end
    v = v[part]
  end
  return v
end

function M.is_forced(path)
  M.get()
  return forced[path] == true
end

-- The setting to use for path, given what the script passed and the API's own default.
function M.pick(path, script_value, builtin)
  M.get()
  local v
  if forced[path] then
    v = M.value(path)
  elseif script_value ~= nil then
    v = script_value
  else
    v = M.value(path)
  end
  if v == nil then return builtin end
  return v
end

return M
