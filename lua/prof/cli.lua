-- cli.lua — profrun's command line: options, config loading, running the script, exit codes.
local core = require "prof.core"
local config = require "prof.config"
local errors = require "prof.errors"
local output = require "prof.output"

local M = {}

M.USAGE = [[
usage: profrun [--set KEY=VALUE]... [--device cpu|cuda|meta] [--verbose] CONFIG.json SCRIPT.lua [ARGS...]

Runs a Lua script under a DeepSpeed-style JSON config and profiles what it runs.

  --set KEY=VALUE  override a config key (dotted path; VALUE parsed as JSON, else a string)
  --device NAME    the device of every tensor the script creates: meta, cpu or cuda
  --verbose        list the DeepSpeed keys of the config that profrun accepts but does not use
  --help-config    list every config key profrun reads (type, default, what it does) and exit
  --version        print the version and exit
  --help           print this help and exit

Exit status: 0 success, 1 script error (traceback on stderr), 2 usage or config error.
Settings: built-in defaults < config file < arguments in the script < --set/--device.
]]

local function usage_error(msg)
  io.stderr:write("profrun: ", msg, "\n", "Try 'profrun --help'.\n")
  return 2
end

-- Parses argv (argv[0] is the program); returns an options table or nil, message.
function M.parse(argv)
  local o = { sets = {}, args = {} }
  local i = 1
  while argv[i] ~= nil do
    local a = argv[i]
    if a == "--help" or a == "-h" then
      o.help = true
    elseif a == "--help-config" then
      o.help_config = true
    elseif a == "--version" then
      o.version = true
    elseif a == "--verbose" or a == "-v" then
      o.verbose = true
    elseif a == "--set" or a == "--device" then
      local v = argv[i + 1]
      if v == nil then return nil, a .. " needs a value" end
      if a == "--set" then o.sets[#o.sets + 1] = v else o.device = v end
      i = i + 1
    elseif a:match("^%-%-set=") then
      o.sets[#o.sets + 1] = a:sub(7)
    elseif a:match("^%-%-device=") then
      o.device = a:sub(10)
    elseif a == "--" then
      i = i + 1
      break
    elseif a:sub(1, 1) == "-" and a ~= "-" then
      return nil, "unknown option '" .. a .. "'"
    else
      break
    end
    i = i + 1
  end
  o.config, o.script = argv[i], argv[i + 1]
  for k = i + 2, #argv do o.args[#o.args + 1] = argv[k] end
  return o
end

local function run_script(o)
  local f = io.open(o.script, "r")
  if f == nil then
    return usage_error(string.format("cannot open script '%s'", o.script))
  end
  f:close()
  local chunk, err = loadfile(o.script)
  if chunk == nil then
    io.stderr:write("profrun: ", err, "\n")
    return 1
  end
  -- the standalone interpreter's convention: arg[0] is the script, arg[1..] its arguments
  local arg = { [0] = o.script }
  for k, v in ipairs(o.args) do arg[k] = v end
  _G.arg = arg
  output.begin()
  -- profiler.enabled: the activity profiler records the whole script (prof.step() or the
  -- engine's steps drive its schedule), started here so the script needs no change
  local profiler = config.value("profiler.enabled") and require("prof.profiler") or nil
  if profiler then profiler.start_global(config.value("profiler")) end
  local ok, e = xpcall(chunk, errors.traceback, table.unpack(o.args))
  if profiler then
    local pok, perr = pcall(profiler.stop_global, ok)
    if ok and not pok then ok, e = false, perr end
  end
  io.stdout:flush()
  if not ok then
    output.abort()
    io.stderr:write("profrun: ", tostring(e), "\n")
    return 1
  end
  local cok, cerr = output.commit()
  if not cok then
    io.stderr:write("profrun: ", tostring(cerr), "\n")
    return 1
  end
  return 0
end

function M.main(argv)
  local o, err = M.parse(argv)
  if o == nil then return usage_error(err) end
  if o.help then
    io.stdout:write(M.USAGE)
    return 0
  end
  if o.help_config then
    io.stdout:write(core.config_help())
    return 0
  end
  if o.version then
    io.stdout:write("profrun ", core.VERSION, " (Lua ", _VERSION:match("%d.%d"), ")\n")
    return 0
  end
  if o.config == nil or o.script == nil then
    return usage_error("expected CONFIG.json and SCRIPT.lua")
  end
  if o.device ~= nil then
    if o.device ~= "meta" and o.device ~= "cpu" and o.device ~= "cuda" then
      return usage_error(string.format("--device: expected meta, cpu or cuda, got '%s'", o.device))
    end
    o.sets[#o.sets + 1] = "device=" .. o.device
  end
  local cfg, cerr = config.load(o.config, o.sets)
  if cfg == nil then
    io.stderr:write("profrun: ", cerr, "\n")
    return 2
  end
  config.set(cfg)
  if o.verbose and #cfg.unused_keys > 0 then
    io.stderr:write("profrun: DeepSpeed keys accepted but not used: ",
      table.concat(cfg.unused_keys, ", "), "\n")
  end
  return run_script(o)
end

return M
