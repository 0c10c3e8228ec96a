-- prof.profiler.launch — prof.launch{"./app", args...}: an unmodified program under libprof_inject.so -> its profile.
local paths = require "prof.util.paths"
local json = require "prof.util.json_decode"
local config = require "prof.config"

local M = {}

-- Single-quoted for sh: any byte but ' is literal inside '...'.
local function q(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

local function read_file(path)
  local f = io.open(path, "rb")
  if f == nil then return nil end
  local s = f:read("a")
  f:close()
  return s
end

-- The injection library: PROFRUN_INJECT_LIB, else the build tree's, else the installed one.
function M.library()
  local env = os.getenv("PROFRUN_INJECT_LIB")
  if env ~= nil and env ~= "" then
    if paths.readable(env) then return env end
    return nil, string.format("PROFRUN_INJECT_LIB names '%s', which is not a readable file", env)
  end
  local tried = { paths.root .. "/build/lib/libprof_inject.so", paths.root .. "/../../lib/libprof_inject.so" }
  for _, p in ipairs(tried) do
    if paths.readable(p) then return p end
  end
  return nil, "libprof_inject.so not found (searched " .. table.concat(tried, ", ") .. "; run make)"
end

-- The program as sh will run it: a path must be an executable file, a bare name is found on PATH.
local function resolve(prog)
  if prog:find("/", 1, true) then
    if not paths.readable(prog) then return nil, string.format("program '%s' not found", prog) end
    if not os.execute("test -x " .. q(prog)) then
      return nil, string.format("program '%s' is not executable", prog)
    end
    return prog
  end
  local p = io.popen("command -v " .. q(prog) .. " 2>/dev/null")
  local found = p and p:read("l")
  if p then p:close() end
  if found == nil or found == "" then return nil, string.format("program '%s' not found on PATH", prog) end
  return prog
end

-- The JSON profile (profrun.profile/1) -> the tables report scripts read (FlopsProfiler:profile's
-- shape): 1-based modules with parent, children, attribute name and dotted path.
function M.to_report(doc)
  local modules, index = {}, {}
  for i, m in ipairs(doc.modules or {}) do
    index[m.id] = i
    local parent = m.parent ~= nil and index[m.parent] or nil
    local path = m.name or ""
    local name = path
    if parent ~= nil then
      local pp = modules[parent].path
      if pp ~= "" and path:sub(1, #pp + 1) == pp .. "." then name = path:sub(#pp + 2) end
    end
    modules[i] = {
      index = i, parent = parent, children = {}, name = name, path = path, type = m.type,
      depth = m.depth, params = m.params or 0, macs = m.macs or 0, flops = m.flops or 0,
      bytes = m.bytes, calls = m.calls or 0, fwd_latency_s = m.fwd_latency_s,
      bwd_latency_s = m.bwd_latency_s, extra_repr = "", hidden = false, fold = false,
    }
    if parent ~= nil then table.insert(modules[parent].children, i) end
  end
  local p = {}
  for k, v in pairs(doc) do p[k] = v end
  p.modules = modules
  p.engine = false
  p.profile_step = 1
  p.recompute_fwd_factor = 0
  return p
end

local function cleanup(dir)
  os.execute("rm -rf " .. q(dir))
end

--[[
prof.launch{"./app", "arg", ..., config = "cfg.json", out_dir = "dir", events = N}
Runs the program with NVTX_INJECTION64_PATH and CUDA_INJECTION64_PATH naming libprof_inject.so
and waits for it. Returns its profile (the tables report scripts read, plus exit_status, pid,
notes = what the injection counted and missed, trace_file when out_dir keeps the files), or nil
and a message: no such program, a non-zero exit (the profile, when written, is the third
result), no profile written (the program crashed, called _exit, or never reached NVTX or CUDA).
]]
function M.launch(spec)
  if type(spec) ~= "table" or type(spec[1]) ~= "string" or spec[1] == "" then
    error('prof.launch: expected {"program", args..., config = ...}', 2)
  end
  for k, v in pairs(spec) do
    if math.type(k) == "integer" then
      if type(v) ~= "string" and type(v) ~= "number" then
        error(string.format("prof.launch: argument %d is a %s, not a string", k, type(v)), 2)
      end
    elseif k ~= "config" and k ~= "out_dir" and k ~= "events" then
      error(string.format("prof.launch: unknown option '%s' (config, out_dir, events)", tostring(k)), 2)
    end
  end
  if spec.config ~= nil and not paths.readable(spec.config) then
    return nil, string.format("prof.launch: config '%s' not found", tostring(spec.config))
  end
  local prog, err = resolve(spec[1])
  if prog == nil then return nil, "prof.launch: " .. err end
  local lib, lerr = M.library()
  if lib == nil then return nil, "prof.launch: " .. lerr end
  local dir = spec.out_dir
  local temp = dir == nil
  if temp then
    local p = io.popen("mktemp -d 2>/dev/null")
    dir = p and p:read("l")
    if p then p:close() end
    if dir == nil or dir == "" then return nil, "prof.launch: could not make a temporary directory" end
  elseif not os.execute("mkdir -p " .. q(dir)) then
    return nil, string.format("prof.launch: could not make out_dir '%s'", dir)
  end
  local args = {}
  for i = 1, #spec do args[#args + 1] = q(spec[i]) end
  local env = "NVTX_INJECTION64_PATH=" .. q(lib) .. " CUDA_INJECTION64_PATH=" .. q(lib) ..
    " PROFRUN_INJECT_OUT=" .. q(dir) ..
    (spec.config and " PROFRUN_INJECT_CONFIG=" .. q(spec.config)
      -- without one, the running profrun's conventions (its config and --set) apply
      or " PROFRUN_INJECT_CONVENTIONS=" .. q(config.value("flops_profiler.conventions") or "exact")) ..
    (spec.events and " PROFRUN_INJECT_EVENTS=" .. q(math.tointeger(spec.events) or spec.events) or "")
  -- the child's pid names its outputs: sh writes its own and execs the program in place
  local cmd = env .. " sh -c 'echo $$ > \"$0\"; exec \"$@\"' " .. q(dir .. "/pid") .. " " ..
    table.concat(args, " ")
  local ok, how, code = os.execute(cmd)
  local status = (how == "exit" and code) or (how == "signal" and 128 + code) or (ok and 0 or 1)
  local pid = (read_file(dir .. "/pid") or ""):match("%d+")
  local function finish(profile, msg)
    if temp then cleanup(dir) end
    return profile, msg
  end
  if pid == nil then return finish(nil, "prof.launch: could not start " .. spec[1]) end
  local notes_text = read_file(dir .. "/inject." .. pid .. ".json")
  local text = read_file(dir .. "/profile." .. pid .. ".json")
  local function fail(msg, profile)
    if temp then cleanup(dir) end
    return nil, msg, profile
  end
  if text == nil or notes_text == nil then
    local why = how == "signal" and string.format("killed by signal %d", code)
      or string.format("exit status %d", status)
    return fail(string.format("prof.launch: %s wrote no profile (%s; it must make an NVTX or CUDA call and " ..
      "exit normally)", spec[1], why))
  end
  local doc, derr = json.decode(text, dir .. "/profile." .. pid .. ".json")
  if doc == nil then return fail("prof.launch: " .. derr) end
  local notes = json.decode(notes_text, "inject notes") or {}
  local profile = M.to_report(doc)
  profile.exit_status = status
  profile.pid = math.tointeger(tonumber(pid))
  profile.notes = notes
  if not temp then profile.trace_file = dir .. "/trace." .. pid .. ".json" end
  if notes.error ~= nil and notes.error ~= "" then
    return fail("prof.launch: the injection failed: " .. notes.error, profile)
  end
  if status ~= 0 then
    return fail(string.format("prof.launch: %s exited with status %d", spec[1], status), profile)
  end
  return finish(profile)
end

return M
