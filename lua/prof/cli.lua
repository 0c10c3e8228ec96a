-- cli.lua — profrun's command line: options, config loading, running the script, exit codes.
local core = require "prof.core"
local config = require "prof.config"
local errors = require "prof.util.errors"
local paths = require "prof.util.paths"

local M = {}


local function usage_error(msg)
  io.stderr:write("profrun: ", msg, "\n", "Try 'profrun --help'.\n")
  return 2
end

-- An option that takes a value: its value, or nil and a message naming the flag. A value that
-- is the config or the script shows the value was forgotten, not that it is one.
local function option_value(argv, i, flag)
  local v = argv[i + 1]
  if flag == "--set" then
    if v == nil or not v:find("=", 1, true) then
      return nil, "--set needs KEY=VALUE (e.g. --set flops_profiler.top_modules=3)"
        .. (v and ", got '" .. v .. "'" or "")
    end
  elseif v == nil or v:lower():match("%.json$") or v:lower():match("%.lua$") then
    return nil, "--device needs a value: meta, cpu or cuda"
  end
  return v
end

-- A script is named NAME.lua; the first positional argument is the config unless it is one.
local function is_script_name(a)
  return a:lower():match("%.lua$") ~= nil
end

-- Parses argv (argv[0] is the program); returns an options table or nil, message.
function M.parse(argv)
  local o = { sets = {}, args = {} }
  local i = 1
  while argv[i] ~= nil do
    local a = argv[i]
    -- --help and --version are profrun.c's: they work where this package cannot be found
    if a == "--help-config" then
      o.help_config = true
    elseif a == "--peaks" then
      o.peaks = true
    elseif a == "--verbose" or a == "-v" then
      o.verbose = true
    elseif a == "--set" or a == "--device" then
      local v, err = option_value(argv, i, a)
      if v == nil then return nil, err end
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
  if argv[i] ~= nil and not is_script_name(argv[i]) then
    o.config = argv[i]
    i = i + 1
  end
  o.script = argv[i]
  if o.script == nil and o.config ~= nil then o.missing_script = true end
  local first = i + 1
  -- `profrun s.lua c.json` with c.json a file may be a config written after the script: the run
  -- goes on (c.json is the script's argument, as written) and says so once; `profrun s.lua --
  -- c.json` hands it over without a word (an output path the script writes is not a file yet)
  if argv[first] == "--" then
    first = first + 1
  elseif o.config == nil and o.script ~= nil and argv[first] ~= nil
      and argv[first]:lower():match("%.json$") and paths.readable(argv[first]) then
    o.swapped = string.format("%s comes after the script %s, so it is the script's argument and no "
      .. "config is read; a config goes first (profrun %s %s), and profrun %s -- %s says the "
      .. "argument is meant", argv[first], o.script, argv[first], o.script, o.script, argv[first])
  end
  for k = first, #argv do o.args[#o.args + 1] = argv[k] end
  return o
end

-- The device --device names, checked against the runtime's registry: a name it does not know or
-- a backend this build lacks is a usage error before anything runs.
local function check_device(name)
  local ok, why = core.device_status(name)
  if ok then return true end
  return nil, string.format("--device %s: %s", name, why)
end

-- A config that demands the GPU's activity (profiler.enabled with "cuda" in profiler.activities)
-- where CUPTI cannot run is a config error before the script runs, saying why (the capture's
-- reason: no driver, no device, no CUPTI in the build); a script that only asks for it gets a
-- warning and a CPU-only profile instead (prof.profiler).
local function check_cuda_activity(cfg_path)
  if not config.value("profiler.enabled") then return true end
  local wants = false
  for _, a in ipairs(config.value("profiler.activities") or {}) do
    if a == "cuda" then wants = true end
  end
  if not wants then return true end
  local ok, why = require("prof.profiler.capture").available()
  if ok then return true end
  return nil, string.format('%sprofiler.activities: "cuda" needs the GPU capture: %s',
    cfg_path and cfg_path .. ": " or "", tostring(why))
end

-- A script that cannot be run as one (missing, unreadable, a directory) is a usage error.
local function check_script(path)
  local f, err = io.open(path, "r")
  if f == nil then
    return nil, string.format("cannot open script '%s': %s", path,
      (tostring(err):gsub("^.-: ", "")))
  end
  f:close()
  if paths.is_directory(path) then
    return nil, string.format("script '%s' is a directory, expected a Lua file", path)
  end
  return true
end

-- What went wrong with standard output, or nil: a full disk or a closed pipe must fail the run.
local function stdout_error()
  local guard = package.loaded["prof.exit_guard"]
  if guard then return guard.stdout_error() end
  local ok, err = io.stdout:flush()
  if not ok then return err end
  return nil
end

-- The end of a run, for the script's return and its os.exit alike: the profiler stops (on
-- success it writes what it still owes: the trace_file) and stdout is checked. Every output was
-- written when it was complete, so a failure here keeps them. Returns the exit status.
local function finish(ok, e, profiler, status)
  if profiler then
    local pok, perr = pcall(profiler.stop_global, ok)
    if ok and not pok then ok, e = false, perr end
  end
  require("prof.util.progress").finish_all()
  local serr = stdout_error()
  if ok and serr then ok, e = false, "cannot write standard output: " .. tostring(serr) end
  if not ok then
    if e ~= nil then io.stderr:write("profrun: ", tostring(e), "\n") end
    return status or 1
  end
  local engine = package.loaded["prof.deepspeed.engine"]
  for _, line in ipairs(engine and engine.unreached() or {}) do
    io.stderr:write("profrun: note: ", line, "\n")
  end
  return 0
end

-- os.exit inside the script ends the run the way returning does (exit(0) as success, any other
-- status as a failure that says nothing more); then the process exits with the status asked.
local function guard_exit(profiler)
  local real_exit = os.exit
  local function exit(code, close)
    os.exit = real_exit   -- luacheck: ignore 122 (once: an os.exit inside finish exits for real)
    local status
    if code == nil or code == true or code == 0 then
      status = finish(true, nil, profiler)
    else
      status = code == false and 1 or math.tointeger(code) or 1
      finish(false, nil, profiler, status)
    end
    real_exit(status, close)
  end
  os.exit = exit   -- luacheck: ignore 122
  return function() os.exit = real_exit end   -- luacheck: ignore 122
end

local function run_script(o)
  local chunk, err = loadfile(o.script)
  if chunk == nil then
    io.stderr:write("profrun: ", err, "\n")
    return 1
  end
  -- the standalone interpreter's convention: arg[0] is the script, arg[1..] its arguments
  local arg = { [0] = o.script }
  for k, v in ipairs(o.args) do arg[k] = v end
  _G.arg = arg
  -- profiler.enabled: the activity profiler records the whole script (prof.step() or the
  -- engine's steps drive its schedule), started here so the script needs no change
  local profiler = config.value("profiler.enabled") and require("prof.profiler") or nil
  if profiler then profiler.start_global(config.value("profiler")) end
  -- profiler.emit_nvtx: module calls as NVTX ranges (Nsight Systems, libprof_inject.so)
  if config.value("profiler.emit_nvtx") then
    local nok, nerr = core.set_emit_nvtx(true)
    if not nok then io.stderr:write("profrun: ", nerr, "\n") end
  end
  errors.verbose = o.verbose == true   -- messages inside the model's calls too
  local unguard = guard_exit(profiler)
  local ok, e = xpcall(chunk, errors.script_traceback(o.verbose), table.unpack(o.args))
  unguard()
  return finish(ok, e, profiler)
end

function M.main(argv)
  local o, err = M.parse(argv)
  if o == nil then return usage_error(err) end
  if o.help_config then
    io.stdout:write(core.config_help())
    return 0
  end
  if o.peaks then return require("prof.roofline.peaks").cli() end
  if o.script == nil then
    if o.missing_script then return usage_error("expected SCRIPT.lua after " .. o.config) end
    return usage_error("expected [CONFIG.json] SCRIPT.lua")
  end
  if o.device ~= nil then
    local ok, derr = check_device(o.device)
    if not ok then return usage_error(derr) end
    o.sets[#o.sets + 1] = "device=" .. o.device
  end
  local cfg, cerr = config.load(o.config, o.sets)
  if cfg == nil then
    io.stderr:write("profrun: ", cerr, "\n")
    return 2
  end
  local sok, serr = check_script(o.script)
  if not sok then return usage_error(serr) end
  if o.swapped then io.stderr:write("profrun: note: ", o.swapped, "\n") end
  config.set(cfg)
  local cok, cuerr = check_cuda_activity(o.config)
  if not cok then
    io.stderr:write("profrun: ", cuerr, "\n")
    return 2
  end
  if o.verbose then
    -- the loader knows DeepSpeed's keys; the engine knows which of them it applies
    local applied, unused = require("prof.deepspeed.training").APPLIED, {}
    for _, k in ipairs(cfg.unused_keys) do
      if not applied[k] then unused[#unused + 1] = k end
    end
    if #unused > 0 then
      io.stderr:write("profrun: DeepSpeed keys accepted but not used: ", table.concat(unused, ", "), "\n")
    end
  end
  return run_script(o)
end

return M
