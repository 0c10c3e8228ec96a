-- prof.config.check — the checks of a loaded config that need the runtime or the file system.
--[[
The C loader checks types and ranges; what it cannot know is checked here, when the config is
loaded, so that a mistake is a config error (exit 2) before the script runs, not a traceback
after it: the device must be usable in this build, flops_profiler.format a report that exists,
and every script the config names (flop rules, ignore lists, report scripts, the schedule) must
be found; a schedule script is also built once with its args, so a broken one fails here.
A script path written in the config file is read against that file's folder first, then
scripts/<kind>/ (DeepSpeed users keep their configs beside their code); one given by --set is
read against the current directory. Found paths replace the names, so later stages open exactly
what was checked.
]]
local core = require "prof.core"
local paths = require "prof.util.paths"

local M = {}

-- Finds the script at key (value name) or returns nil, message; base: the folder to try first.
local function find(kind, what, key, name, base)
  local p, tried = paths.find(kind, name, base)
  if p ~= nil then return p end
  return nil, string.format("%s: %s '%s' not found (searched %s)", key, what, name,
    paths.searched(tried))
end

local function check_device(cfg)
  if cfg.device == nil then return true end
  local ok, why = core.device_status(cfg.device)
  if ok then return true end
  return nil, "device: " .. why
end

local function check_format(fp, base)
  local f = fp.format
  if f == nil or f == "" then return true end
  if not f:find("/", 1, true) and not f:match("%.lua$") then
    local builtin = require("prof.report").BUILTIN   -- lazy: prof.report requires prof.config
    for _, name in ipairs(builtin) do
      if name == f then return true end
    end
    return nil, string.format("flops_profiler.format: unknown report format '%s' (built in: %s; "
      .. "or the path of a .lua report script)", f, table.concat(builtin, ", "))
  end
  local p, err = find("reports", "report script", "flops_profiler.format", f, base)
  if p == nil then return nil, err end
  fp.format = p
  return true
end

local function check_rules(fp, base)
  for i, name in ipairs(fp.rules or {}) do
    local p, err = find("rules", "flop rule script", string.format("flops_profiler.rules[%d]", i),
      name, base)
    if p == nil then return nil, err end
    fp.rules[i] = p
  end
  return true
end

-- Only entries naming a script (ending in .lua) are files; the others are types and paths.
local function check_ignore(fp, base)
  for i, e in ipairs(fp.ignore_modules or {}) do
    if e:match("%.lua$") then
      local p, err = find("ignore", "ignore script",
        string.format("flops_profiler.ignore_modules[%d]", i), e, base)
      if p == nil then return nil, err end
      fp.ignore_modules[i] = p
    end
  end
  return true
end

local function check_report(report, base)
  if report == nil or report.script == nil then return true end
  local p, err = find("reports", "report script", "report.script", report.script, base)
  if p == nil then return nil, err end
  report.script = p
  return true
end

-- The schedule's rows at their defaults (torch.profiler.schedule's but active, which is required
-- there): a schedule script replaces them, so values given beside one would be silently unused.
local ROW_DEFAULTS = { wait = 0, warmup = 0, active = 1, ["repeat"] = 0, skip_first = 0 }

local function check_schedule(profiler, base)
  local sc = profiler ~= nil and profiler.schedule or nil
  if sc == nil then return true end
  if sc.script == nil then
    if sc.args ~= nil then
      return nil, "profiler.schedule.args: given without profiler.schedule.script (the wait, "
        .. "warmup, active, repeat and skip_first keys take no args)"
    end
    return true
  end
  for k, default in pairs(ROW_DEFAULTS) do
    if sc[k] ~= nil and sc[k] ~= default then
      return nil, string.format("profiler.schedule.%s: not used with profiler.schedule.script "
        .. "(give it to the script in profiler.schedule.args)", k)
    end
  end
  local p, err = find("schedules", "schedule script", "profiler.schedule.script", sc.script, base)
  if p == nil then return nil, err end
  -- built once and dropped (schedules keep state): its warnings are for the run, not the check
  local schedule = require "prof.schedule"
  local warn = schedule.warn
  schedule.warn = function() end
  local fn, lerr = schedule.load(p, sc.args)
  schedule.warn = warn
  if fn == nil then
    return nil, string.format("profiler.schedule.script: %s (with profiler.schedule.args %s)",
      lerr, sc.args == nil and "not set" or "as given")
  end
  sc.script = p
  return true
end

--[[
Checks cfg (core.load_config's table, loaded from file, nil: defaults only) in place, resolving
script names to paths. blame(key) says where key's value came from: the "--set ..." that gave
it, else nil (the file). Returns true, or nil and "KEY: what is wrong" with the place blamed.
]]
function M.check(cfg, file, blame)
  local folder = file ~= nil and paths.dirname(file) or nil
  -- the folder a key's script paths are read against
  local function base(key)
    if blame(key) ~= nil then return nil end
    return folder
  end
  local fp = cfg.flops_profiler or {}
  local checks = {
    { "device", function() return check_device(cfg) end },
    { "flops_profiler.format", function() return check_format(fp, base("flops_profiler.format")) end },
    { "flops_profiler.rules", function() return check_rules(fp, base("flops_profiler.rules")) end },
    { "flops_profiler.ignore_modules",
      function() return check_ignore(fp, base("flops_profiler.ignore_modules")) end },
    { "report.script", function() return check_report(cfg.report, base("report.script")) end },
    { "profiler.schedule",
      function() return check_schedule(cfg.profiler, base("profiler.schedule.script")) end },
  }
  for _, c in ipairs(checks) do
    local ok, err = c[2]()
    if not ok then
      local ov = blame(c[1])
      return nil, (ov and "--set " .. ov or file or "config") .. ": " .. err
    end
  end
  return true
end

return M
