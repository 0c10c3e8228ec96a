-- schedule.lua — torch.profiler's schedule: which steps are recorded, and its transition table.
local core = require "prof.core"
local paths = require "prof.util.paths"

local M = {}

-- torch.profiler.ProfilerAction, as strings (they print as torch spells them).
M.NONE, M.WARMUP, M.RECORD, M.RECORD_AND_SAVE = "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE"
local WARMUP, RECORD = M.WARMUP, M.RECORD

-- Where warnings go (torch's warn()); specs replace it to watch them.
function M.warn(msg)
  io.stderr:write("profrun: warning: ", msg, "\n")
end

local function nonneg(o, k, default, min)
  local v = o[k]
  if v == nil then return default end
  if math.type(v) ~= "integer" and not (type(v) == "number" and v == math.floor(v)) then
    error(string.format("schedule: %s must be an integer, got %s", k, tostring(v)), 3)
  end
  v = math.tointeger(v)
  if v < min then error(string.format("schedule: %s must be >= %d, got %d", k, min, v), 3) end
  return v
end

--[[
prof.schedule{wait=, warmup=, active=, ["repeat"]=, skip_first=, skip_first_wait=} -> fn(step)
-> action, torch's schedule() to the letter (torch/profiler/profiler.py, 1.13): skip_first steps first; a non-zero
skip_first_wait skips the first cycle's wait; then cycles of wait NONE, warmup WARMUP, active-1
RECORD and one RECORD_AND_SAVE; after `repeat` cycles (float division, as torch) NONE forever,
and repeat=0 cycles until the profiler stops.
]]
local function machine(o)
  local wait = nonneg(o, "wait", 0, 0)
  local warmup = nonneg(o, "warmup", 0, 0)
  local active = nonneg(o, "active", nil, 1)
  if active == nil then error("schedule: active is required (>= 1)", 2) end
  local rep = nonneg(o, "repeat", 0, 0)
  local skip_first = nonneg(o, "skip_first", 0, 0)
  local skip_first_wait = nonneg(o, "skip_first_wait", 0, 0)
  -- the core's machine (prof_schedule_torch): C hosts and Lua run the same one
  local action = core.schedule_action
  return function(step)
    return action(step, wait, warmup, active, rep, skip_first, skip_first_wait)
  end, warmup
end

local SCHEDULE_KEYS = { "wait", "warmup", "active", "repeat", "skip_first", "skip_first_wait" }

function M.schedule(o)
  if type(o) ~= "table" then error("schedule: expects {wait=, warmup=, active=, ...}", 2) end
  require("prof.util.options").check(o, SCHEDULE_KEYS, "schedule")
  local fn, warmup = machine(o)
  if warmup == 0 then
    M.warn("Profiler won't be using warmup, this can skew profiler results")
  end
  return fn
end

--[[
The flops profiler's window as a schedule: step k alone is RECORD_AND_SAVE (DeepSpeed's
profile_step), every other step NONE. The engine asks it at each optimizer step; no warmup is
wanted (the flops profiler counts, it does not time a cold start), so none is warned about.
]]
function M.at_step(k)
  return (machine{ skip_first = k, active = 1, ["repeat"] = 1 })
end

-- Without a schedule every step records (torch's _default_schedule_fn).
function M.default(_)
  return RECORD
end

--[[
torch's transition table (profiler.py, _transit_action): what the profiler does when the action
goes from prev to cur; cur == "exit" is leaving the profiler (torch's None). Items: prepare (set
up), start (open the recording window), stop (close it), trace_ready (hand the window to
on_trace_ready), warn (a schedule that skips a phase). Entries absent do nothing.
]]
local WARN_W = "Incorrect schedule: WARMUP followed by NONE"
local WARN_R = "Incorrect schedule: RECORD followed by NONE or WARMUP"
M.TRANSITIONS = core.schedule_transitions()   -- the core's table (prof_schedule_transition)
M.WARNINGS = { [WARMUP] = WARN_W, [RECORD] = WARN_R }

local EMPTY = {}

-- The items of the transition prev -> cur (a shared list: do not modify).
function M.transition(prev, cur)
  local row = M.TRANSITIONS[prev]
  return row and row[cur] or EMPTY
end

-- "standard" -> scripts/schedules/standard.lua; a path is used as given. nil, msg when absent.
function M.resolve(name)
  local p = paths.script("schedules", name)
  if p ~= nil then return p end
  return nil, string.format("schedule script '%s' not found (neither a file nor "
    .. "scripts/schedules/%s.lua)", name, name)
end

--[[
Loads a schedule script: it returns function(args) -> schedule function (step[, info] -> action),
where info.step_ns is how long the step that just ended took (for schedules that react to time).
Returns the schedule function, or nil, msg when the script is missing or fails.
]]
function M.load(name, args)
  local path, err = M.resolve(name)
  if path == nil then return nil, err end
  local chunk, lerr = loadfile(path)
  if chunk == nil then return nil, "schedule script " .. lerr end
  local ok, make = pcall(chunk)
  if not ok then return nil, string.format("schedule script %s: %s", path, tostring(make)) end
  if type(make) ~= "function" then
    return nil, string.format("schedule script %s must return function(args) -> "
      .. "function(step) -> action, got %s", path, type(make))
  end
  local sok, fn = pcall(make, args or {})
  if not sok then return nil, string.format("schedule script %s: %s", path, tostring(fn)) end
  if type(fn) ~= "function" then
    return nil, string.format("schedule script %s: its function must return a schedule "
      .. "function, got %s", path, type(fn))
  end
  return fn
end

return M
