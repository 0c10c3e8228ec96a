-- prof.profiler — torch.profiler over profrun's core: profile, step, record_function, trace handler.
local core = require "prof.core"
local module = require "prof.nn.module"
local schedule = require "prof.schedule"
local key_averages = require "prof.report.key_averages"
local op_names = require "prof.report.op_names"
local memory_timeline = require "prof.report.memory_timeline"
local capture = require "prof.profiler.capture"
local options = require "prof.util.options"

local M = {}

local hooks = module.hooks
local now_ns = core.now_ns

M.DEFAULT_CAPACITY = 1 << 20   -- events per thread and window (about 150 MB at most)

-- {========== record_function: the hot path ==========}

-- The scope stack is C's (core.new_scopes, core/bind/lscopes.c): a range reaches the core only
-- inside a recording window, and a scope opened before the window (or in an earlier one) never
-- pops one of its ranges. Ranges go to the recording session itself, not to whichever session
-- is the runtime's recorder: the engine's flops profiler may hold that for a step while a range
-- is open.
local scopes = core.new_scopes()
local pop, push = scopes.pop, scopes.push

-- ProfilerStep#n: one interned name for every step (a name per step would grow the session's
-- name table by one string a step, for as long as the run lasts)
local push_numbered = scopes.push_numbered
local function push_step(n) push_numbered("ProfilerStep", n) end

--[[
prof.record_function(name): a scope for `local _ <close> = prof.record_function("model_forward")`
(torch's `with record_function(...)`); prof.record_function(name, fn, ...): runs fn(...) inside
the range and returns what it returns (the range closes on errors too; fn runs here, in Lua, so
ranges may nest as deep as Lua calls do). Outside a recording window it costs a counter.
]]
function M.record_function(name, fn, ...)
  if fn == nil then return push(name) end
  local _ <close> = push(name)
  return fn(...)
end

-- Open record_function scopes and step ranges, in a window or not.
M.open_scopes = scopes.depth

-- {========== module scopes: registered lazily, on a module's first call ==========}

-- nn.Module calls consult hooks.ids[module]; this table registers a module the first time a
-- recording window meets it, under the module whose frame is open (its parent), with the name
-- the parent knows it by. No model argument is needed, and modules never called cost nothing.
local function lazy_ids(S, objects)
  return setmetatable({}, { __index = function(ids, m)
    local parent = S:current()
    local name = ""
    local pm = parent and objects[parent]
    if pm ~= nil then
      for _, pair in ipairs(pm:named_children()) do
        if pair[2] == m then name = pair[1] break end
      end
      if name == "" then name = m.__name end
    end
    local id = S:add_module(parent, name, m.__name, m:num_parameters())
    rawset(ids, m, id)
    objects[id] = m
    return id
  end })
end

-- {========== the profile object ==========}

local Profile = {}
Profile.__index = Profile

local function check_activities(list)
  local out = { cpu = false, cuda = false }
  for _, a in ipairs(list) do
    a = tostring(a):lower()
    if a ~= "cpu" and a ~= "cuda" then
      error(string.format("profile: activities: expected \"cpu\" or \"cuda\", got %q", a), 3)
    end
    out[a] = true
  end
  return out
end

-- A script asked for the cuda activity where CUPTI cannot run: say why, record the CPU only
-- (a config that demands it is refused before the script runs: prof.cli).
local function cuda_unavailable(p, why)
  schedule.warn(string.format('profile: activities "cuda": %s; recording the CPU only', tostring(why)))
  p.activities.cuda = false
end

--[[
prof.profile{activities={"cpu"}, schedule=, on_trace_ready=, record_shapes=, profile_memory=,
with_stack=, stack_depth=, stack_skip=, with_flops=, with_modules=, capacity=} -> a profile, as
torch.profiler.profile.
It starts at once (torch's `with profile(...) as p`), so `local p <close> = prof.profile{...}`
records until the scope ends; with start=false it waits for p:start(). p:stop() ends it.
With a schedule, every step is a "ProfilerStep#N" range. capacity: events per thread and window
(further ones are counted as dropped). record_shapes: ops keep their inputs' shapes and dtypes
(the Input Shapes column, group_by_input_shape, the trace's "Input Dims"). with_stack: ops and
ranges keep the innermost stack_depth (default 16) frames of the script, profrun's own Lua files
and sources starting with a prefix of stack_skip (e.g. {"@/usr/share/lua/"}) left out (the Source
Location column, group_by_stack_n, export_stacks, the trace's "Call stack" and lua_function
slices, which are exact while the stack fits stack_depth and split where it does not).
"cuda" also captures the device's activity through CUPTI (kernels, copies, memsets, runtime
calls, each attributed to the op and range that launched it: the CUDA columns of key_averages,
the trace's GPU tracks); where CUPTI cannot run (no driver, no device, a build without it) a
warning says why and the profile records the CPU only. capture = "replay" opens the replay
source instead (recorded CUPTI activity fed through the same decoding: specs, saved captures).
]]
local PROFILE_KEYS = { "activities", "schedule", "on_trace_ready", "record_shapes", "profile_memory",
  "with_stack", "stack_depth", "stack_skip", "with_flops", "with_modules", "capacity", "start",
  "log", "capture" }

function M.profile(o)
  o = o or {}
  if type(o) ~= "table" then error("profile: expects a table of options", 2) end
  options.check(o, PROFILE_KEYS, "profile")
  if o.schedule ~= nil and type(o.schedule) ~= "function" then
    error("profile: schedule must be a function(step) -> action (prof.schedule{...})", 2)
  end
  if o.on_trace_ready ~= nil and type(o.on_trace_ready) ~= "function" then
    error("profile: on_trace_ready must be a function(prof)", 2)
  end
  local p = setmetatable({
    activities = check_activities(o.activities or { "cpu" }),
    schedule = o.schedule or schedule.default,
    record_steps = o.schedule ~= nil,
    on_trace_ready = o.on_trace_ready,
    record_shapes = o.record_shapes == true,
    profile_memory = o.profile_memory == true,
    with_stack = o.with_stack == true,
    stack_depth = o.stack_depth or 16,
    stack_skip = o.stack_skip or {},
    with_flops = o.with_flops == true,
    with_modules = o.with_modules == true,
    capacity = o.capacity or M.DEFAULT_CAPACITY,
    step_num = 0,
    current_action = nil,
    running = false,
    S = core.new(),
    objects = {},
    names = {},           -- record_function's interned names (valid while S lives)
    log = o.log,          -- a list: transitions are appended (specs read it)
    capture = o.capture,  -- the capture kind for "cuda": "cupti" (nil) or "replay"
  }, Profile)
  if p.activities.cuda and p.capture ~= "replay" then
    local ok, why = capture.available()
    if not ok then cuda_unavailable(p, why) end
  end
  p.ids = lazy_ids(p.S, p.objects)
  if o.start ~= false then p:start() end
  return p
end

-- The window's actions (the transition table's items).
local actions = {}

function actions.warn(p, prev)
  schedule.warn(schedule.WARNINGS[prev] or "Incorrect schedule")
  return p
end

-- profrun's own Lua files (lua/prof/...): with_stack locations skip their frames
local OWN_SOURCES = debug.getinfo(1, "S").source:gsub("[^/]*$", "")

function actions.prepare(p)
  local S = p.S
  S:set_event_capacity(p.capacity)
  S:set_memory_events(p.profile_memory)
  S:set_record_shapes(p.record_shapes)
  local skip = { OWN_SOURCES }
  for _, prefix in ipairs(p.stack_skip) do skip[#skip + 1] = prefix end
  S:set_with_stack(p.with_stack, skip, p.stack_depth)
  -- CUPTI is enabled before the window (its one-time costs land outside it, as in Kineto)
  if p.activities.cuda then
    local ok, why = capture.open(S, p.capture)
    if not ok then cuda_unavailable(p, why) end
  end
end

function actions.start(p)
  local S = p.S
  local held = core.recorder()
  if held ~= nil and held ~= S then
    -- one recorder at a time: another session (the flops profiler) records now
    schedule.warn("profile: another profiler session records; this window records nothing")
    p.skipped = true
    return
  end
  p.saved_hooks = { hooks.S, hooks.ids, hooks.rules, hooks.apply_rule }
  hooks.S, hooks.ids, hooks.rules, hooks.apply_rule = S, p.ids, {}, nil
  core.set_recorder(S)
  p.cache, p.sorted = nil, nil
  S:start()
  scopes.start(S, p.names)
  p.window = true
end

function actions.stop(p)
  if p.skipped then p.skipped = nil return end
  if not p.window then return end
  local S = p.S
  scopes.stop()   -- no range reaches a stopped window; the state is let go
  if p.activities.cuda then capture.synchronize() end   -- the window's kernels, completed
  S:stop()
  -- disabled between windows: nothing lingers (the decoded events stay until the next start)
  if p.activities.cuda then capture.close(S) end
  p.window = false
  -- give back only what is still ours (the flops profiler may have taken and released it)
  if hooks.S == S then
    local h = p.saved_hooks
    hooks.S, hooks.ids, hooks.rules, hooks.apply_rule = h[1], h[2], h[3], h[4]
  end
  if core.recorder() == S then core.set_recorder(nil) end
  p.stack_error = S:check()
end

function actions.trace_ready(p)
  if p.on_trace_ready then p.on_trace_ready(p) end
end

local function transit(p, prev, cur)
  for _, item in ipairs(schedule.transition(prev, cur)) do
    if p.log then p.log[#p.log + 1] = item end
    actions[item](p, prev)
  end
end

-- p:start(): enters the schedule at step 0 (torch's __enter__); nothing when already running
-- (prof.profile started it). Returns p.
function Profile:start()
  if self.running then return self end
  self.running = true
  self.step_num = 0
  self.current_action = self.schedule(0, {})
  self.t_step = now_ns()
  transit(self, schedule.NONE, self.current_action)
  if self.record_steps then push_step(0) self.step_open = true end
  return self
end

-- p:stop(): leaves the schedule (torch's __exit__): a window still recording is delivered.
function Profile:stop()
  if not self.running then return end
  if self.step_open then pop() self.step_open = false end
  self.running = false
  transit(self, self.current_action, "exit")
  -- a capture opened at warmup whose window never recorded (skipped, or left in warmup) is
  -- closed too: nothing of CUPTI outlives the profile
  if self.activities.cuda then capture.close(self.S) end
end

Profile.__close = Profile.stop

-- p:step(): ends the current step and moves the schedule on (torch's step()).
function Profile:step()
  if not self.running then error("profile: step() before start()", 2) end
  if self.step_open then pop() self.step_open = false end
  if self.window and core.recorder() == nil then
    -- the engine's flops profiler took the recorder for its step and released it: take it back
    hooks.S, hooks.ids, hooks.rules, hooks.apply_rule = self.S, self.ids, {}, nil
    core.set_recorder(self.S)
  end
  local prev = self.current_action
  local t = now_ns()
  local info = { step_ns = t - self.t_step }
  self.t_step = t
  self.step_num = self.step_num + 1
  self.current_action = self.schedule(self.step_num, info)
  transit(self, prev, self.current_action)
  if self.record_steps then push_step(self.step_num) self.step_open = true end
end

-- The last window's events as the core buffered them (each thread's in the order they closed):
-- op names as torch spells them (prof.report.op_names); under record_shapes an op's
-- input_shapes and input_types; under with_stack ops and ranges carry stack, their Lua frames
-- ("file(line)"), innermost first. The reports read these; read again after every window.
function Profile:recorded_events()
  if self.cache then return self.cache end
  local evs = self.S:events()
  for _, e in ipairs(evs) do
    if e.kind == "op" then e.name = op_names.torch(e.name) end
    if e.stack then
      local frames = {}
      for f in e.stack:gmatch("[^;]+") do frames[#frames + 1] = f end
      e.stack = frames
    end
  end
  self.cache = evs
  return evs
end

-- torch's Interval: time_range.start, time_range["end"] (µs) and :elapsed_us()
local Interval = { __index = { elapsed_us = function(r) return r["end"] - r.start end } }

--[[
p:events(): the last window's events in start order (torch's), each an op, range, module,
memory or device event as p:recorded_events() gives it, ops and ranges with torch's
FunctionEvent fields as well: name, key, id (its External id), time_range (µs from the window's
first event, the trace's ts), cpu_time_total and self_cpu_time_total (µs), cpu_children,
cpu_parent, cpu_memory_usage and self_cpu_memory_usage (with profile_memory), input_shapes,
stack, sequence_nr (the autograd sequence number joining a forward op to its backward, -1 for
none). The list has torch's total_average() and self_cpu_time_total.
]]
function Profile:events()
  if self.sorted then return self.sorted end
  local evs = self:recorded_events()
  local base
  for _, e in ipairs(evs) do
    if e.t_begin_ns and (base == nil or e.t_begin_ns < base) then base = e.t_begin_ns end
  end
  for _, it in ipairs(key_averages.items(evs, { profile_memory = self.profile_memory })) do
    if it.kind == "op" or it.kind == "range" then
      local e = evs[it.idx]
      e.key, e.id = e.name, e.correlation
      e.time_range = setmetatable({ start = (e.t_begin_ns - base) / 1000,
                                    ["end"] = (e.t_end_ns - base) / 1000 }, Interval)
      e.cpu_time_total = (it.t1 - it.t0) / 1000
      e.self_cpu_time_total = math.max(0, it.t1 - it.t0 - it.child_ns) / 1000
      e.cpu_memory_usage, e.self_cpu_memory_usage = it.total_mem, it.self_mem
      e.sequence_nr = e.kind == "op" and (e.value or 0) > 0 and e.value or -1
      e.cpu_children = e.cpu_children or {}
      local up = it.parent and evs[it.parent.idx]
      e.cpu_parent = up
      if up then
        up.cpu_children = up.cpu_children or {}
        up.cpu_children[#up.cpu_children + 1] = e
      end
    end
  end
  -- start order; equal starts: the longer first (it encloses), an equal interval's enclosing
  -- event (it closed later) first, instants in the order they were recorded
  local pos, sorted = {}, {}
  for i, e in ipairs(evs) do pos[e], sorted[i] = i, e end
  table.sort(sorted, function(a, b)
    if a.t_begin_ns ~= b.t_begin_ns then return a.t_begin_ns < b.t_begin_ns end
    if a.t_end_ns ~= b.t_end_ns then return a.t_end_ns > b.t_end_ns end
    if a.t_end_ns > a.t_begin_ns then return pos[a] > pos[b] end
    return pos[a] < pos[b]
  end)
  self.sorted = key_averages.event_list(sorted)
  return self.sorted
end

function Profile:events_dropped()
  return self.S:events_dropped()
end

-- p:capture_stats(): the GPU capture's counters for the last window (records, kernels, drops,
-- out-of-window records, attribution_rate...: prof_CaptureStats in prof.h), nil when "cuda" was not captured.
function Profile:capture_stats()
  if not self.activities.cuda or self.S.capture_stats == nil then return nil end
  return self.S:capture_stats()
end

function Profile:memory_peak(device)
  return self.S:memory_peak(device or "cpu")
end

-- What the memory timeline knows besides the events: opts is a device name (torch's second
-- argument) or {device=, model=, optimizer=, inputs=} naming the tensors it categorises.
local TIMELINE_KEYS = { "device", "model", "optimizer", "inputs", "layout" }

local function timeline_of(p, opts, who)
  if not p.profile_memory then error(who .. ": record with profile_memory=true", 3) end
  local o = type(opts) == "string" and { device = opts } or opts or {}
  if type(o) ~= "table" then error(who .. ": expected a device name or an options table", 3) end
  options.check(o, TIMELINE_KEYS, who, 3)
  return memory_timeline.build(p:recorded_events(), o), o
end

-- p:export_memory_timeline(path[, opts]): torch 2.1's memory timeline JSON (categories over
-- time) with, beyond torch, the per-module table of the peak; opts.layout = "torch" writes
-- torch's bare [times, sizes]. Returns the timeline (prof.report.memory_timeline.build's).
function Profile:export_memory_timeline(path, opts)
  if type(path) ~= "string" then error("export_memory_timeline: path must be a string", 2) end
  if path:match("%.html$") or path:match("%.gz$") then
    error("export_memory_timeline: writes .json (torch's .html and .json.gz are not made yet)", 2)
  end
  local tl, o = timeline_of(self, opts, "export_memory_timeline")
  local text = memory_timeline.json(tl, o.layout, self:memory_peak(tl.device), self:events_dropped())
  local ok, err = core.write_atomic(path, text)
  if not ok then error("export_memory_timeline: " .. tostring(err), 2) end
  return tl
end

-- p:memory_peak_by_module([opts]): at the peak, the live bytes per module and category, rows
-- sorted by bytes; rows:table() prints them.
function Profile:memory_peak_by_module(opts)
  local tl = timeline_of(self, opts, "memory_peak_by_module")
  return setmetatable(tl.by_module, { __index = { table = memory_timeline.table } })
end

-- Device records the capture lost in the last window (its buffers or event store were full).
local function device_dropped(p)
  local st = p:capture_stats()
  if st == nil then return 0 end
  return (st.dropped_cupti or 0) + (st.dropped_pool or 0) + (st.dropped_events or 0)
end

-- p:key_averages{group_by_input_shape=, group_by_stack_n=}: rows with :table{...}.
local KEY_AVERAGES_KEYS = { "group_by_input_shape", "group_by_stack_n" }

function Profile:key_averages(o)
  o = options.check(o or {}, KEY_AVERAGES_KEYS, "key_averages")
  return key_averages.build(self:recorded_events(), {
    group_by_input_shape = o.group_by_input_shape,
    group_by_stack_n = o.group_by_stack_n or 0,
    profile_memory = self.profile_memory,
    with_flops = self.with_flops,
    dropped = self:events_dropped(),
    device_dropped = device_dropped(self),
  })
end

-- Writes the trace (atomically, in place when it is complete; gzip-compressed for ".gz"), ops
-- named as in p:events() (PyTorch's names). Returns true, or nil, message (and "exists" when
-- opts.keep_existing kept a file at path).
local function export(self, path, opts)
  local S = self.S
  local f = S.export_chrome_trace
  if f == nil then error("export_chrome_trace: not available in this build", 3) end
  local o = { op_name = op_names.torch }
  for k, v in pairs(opts or {}) do o[k] = v end
  return f(S, path, o)
end

-- p:export_chrome_trace(path[, opts]): the C trace writer's, when this build has it. Raises at
-- the caller's line when the file cannot be written, as torch's does.
function Profile:export_chrome_trace(path, opts)
  if type(path) ~= "string" then error("export_chrome_trace: path must be a string", 2) end
  local ok, err = export(self, path, opts)
  if not ok then error("export_chrome_trace: " .. tostring(err), 2) end
  return true
end

-- p:export_stacks(path[, metric]): collapsed stacks for flame graphs (flamegraph.pl, speedscope)
-- from a window recorded with_stack; metric defaults to self_cpu_time_total, as torch's.
function Profile:export_stacks(path, metric)
  if type(path) ~= "string" then error("export_stacks: path must be a string", 2) end
  if not self.with_stack then
    error("export_stacks: record with with_stack=true to have stacks", 2)
  end
  local text = key_averages.collapsed_stacks(self:recorded_events(), metric or "self_cpu_time_total")
  local ok, err = core.write_atomic(path, text)
  if not ok then error("export_stacks: " .. tostring(err), 2) end
  return true
end

function Profile:__tostring()
  return string.format("prof.profile (step %d, %s)", self.step_num, tostring(self.current_action))
end

-- {========== tensorboard_trace_handler ==========}

local function default_worker()
  local host = os.getenv("HOSTNAME")
  if host == nil then
    local f = io.open("/etc/hostname", "r")
    host = f and f:read("l") or "localhost"
    if f then f:close() end
  end
  local f = io.open("/proc/self/stat", "r")
  local pid = f and f:read("n") or 0
  if f then f:close() end
  return string.format("%s_%d", host, pid)
end

-- The most names one trace tries after its own (each a millisecond later) when others are taken.
local NAME_TRIES = 1000

--[==[
prof.tensorboard_trace_handler(dir[, worker_name[, use_gzip]]) -> on_trace_ready handler that
writes <dir>/<worker>.<time_ms>.pt.trace.json[.gz] (torch 1.13's naming: time_ms is the wall
clock's milliseconds, worker defaults to host_pid; dir is made as needed). A trace never replaces
a file: a name already taken (by another handler, process or run) moves on to the next
millisecond. Returns the path written; a write that fails raises at the step that delivered the
window, as torch's does.
]==]
function M.tensorboard_trace_handler(dir, worker_name, use_gzip)
  if type(dir) ~= "string" then error("tensorboard_trace_handler: dir must be a string", 2) end
  if worker_name ~= nil and type(worker_name) ~= "string" then
    error("tensorboard_trace_handler: worker_name must be a string", 2)
  end
  local worker = worker_name or default_worker()
  local suffix = use_gzip and ".pt.trace.json.gz" or ".pt.trace.json"
  local last = 0
  return function(p)
    local ms = math.max(core.wall_ms(), last + 1)
    for _ = 1, NAME_TRIES do
      local path = string.format("%s/%s.%d%s", dir, worker, ms, suffix)
      local ok, err, exists = export(p, path, { keep_existing = true })
      if ok then
        last = ms
        return path
      end
      if exists == nil then error("tensorboard_trace_handler: " .. tostring(err), 2) end
      ms = ms + 1
    end
    error(string.format("tensorboard_trace_handler: %d names after %s.%d%s are taken in %s",
      NAME_TRIES, worker, ms - NAME_TRIES, suffix, dir), 2)
  end
end

-- {========== the global profiler (profrun's config) ==========}

local global, user_steps

-- prof.step(): steps the profiler profrun started from the config; nothing without one.
function M.step()
  user_steps = true
  if global ~= nil and global.running then global:step() end
end

-- The engine's optimizer step: steps the global profiler, unless the script steps it itself
-- (then the script's prof.step() calls are the steps, and nothing is counted twice).
function M.engine_step()
  if not user_steps and global ~= nil and global.running then global:step() end
end

function M.global()
  return global
end

local function default_schedule(sc)
  return (sc.wait or 0) == 0 and (sc.warmup or 0) == 0 and (sc.active or 1) == 1
    and (sc["repeat"] or 0) == 0 and (sc.skip_first or 0) == 0
end

--[[
Starts the global profiler from the config's profiler section (profrun calls it before the
script when profiler.enabled). A schedule section left at its defaults means no schedule: the
whole run is one window. Each delivered window is printed as a key_averages table (sorted by
cpu_time_total, or cuda_time_total when the GPU is captured) to out, and written as a trace
under output_dir (tensorboard_trace_handler's naming) or, for the last window, to trace_file,
when the build has the trace writer.
]]
function M.start_global(section, out)
  out = out or io.stdout
  local sc = section.schedule or {}
  -- profiler.schedule.script (found and tried when the config was loaded) replaces the rows
  local sched
  if sc.script ~= nil then
    local err
    sched, err = schedule.load(sc.script, sc.args)
    if sched == nil then error("profiler.schedule.script: " .. err, 2) end
  elseif not default_schedule(sc) then
    sched = schedule.schedule(sc)
  end
  local handler
  if section.output_dir ~= nil then
    handler = M.tensorboard_trace_handler(section.output_dir, nil, false)
  end
  local windows = 0
  local p = M.profile{
    activities = section.activities,
    schedule = sched,
    record_shapes = section.record_shapes, profile_memory = section.profile_memory,
    with_stack = section.with_stack, with_flops = section.with_flops,
    with_modules = section.with_modules,
    capture = section.capture,   -- not a config key: "replay" for specs that drive this directly
    on_trace_ready = function(q)
      windows = windows + 1
      out:write(string.format("profrun: activity profiler, window %d (to step %d)\n", windows,
        q.step_num))
      -- with the GPU captured, by CUDA time (the tutorial's sort_by="cuda_time_total")
      local by = q.activities.cuda and "cuda_time_total" or "cpu_time_total"
      out:write(q:key_averages():table{ sort_by = by, row_limit = 20 })
      if handler and q.S.export_chrome_trace then
        local ok, err = pcall(handler, q)
        if not ok then error("profiler.output_dir: " .. tostring(err), 0) end
      end
    end,
  }
  global, user_steps = p, false
  p.trace_file = section.trace_file
  return p
end

-- Stops the global profiler after the script (ok: it succeeded; a failed run reports nothing).
function M.stop_global(ok)
  local p = global
  global = nil
  if p == nil then return end
  if not ok then p.on_trace_ready = nil end
  p:stop()
  if ok and p.trace_file ~= nil and p.S.export_chrome_trace then
    local tok, err = export(p, p.trace_file, nil)
    if not tok then error("profiler.trace_file: " .. tostring(err), 0) end
  end
end

return M
