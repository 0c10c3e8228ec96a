-- prof.flops_profiler — DeepSpeed's FlopsProfiler and get_model_profile over profrun's C core.
local core = require "prof.core"
local module = require "prof.nn.module"
local key_name = module.key_name
local config = require "prof.config"
local errors = require "prof.util.errors"
local ignore = require "prof.flops_profiler.ignore"
local report = require "prof.report"
local rules = require "prof.flops_profiler.rules"
local units = require "prof.report.units"
local capture = require "prof.profiler.capture"
local profile_view = require "prof.flops_profiler.view"
local options = require "prof.util.options"

local M = {}

local hooks = module.hooks

local FlopsProfiler = {}
FlopsProfiler.__index = FlopsProfiler

-- prof.FlopsProfiler(model[, ds_engine[, recompute_fwd_factor]]), as deepspeed's class.
function M.FlopsProfiler(model, ds_engine, recompute_fwd_factor)
  if not module.is_module(model) then error("FlopsProfiler: model must be an nn.Module", 2) end
  return setmetatable({
    model = model,
    ds_engine = ds_engine,
    recompute_fwd_factor = recompute_fwd_factor,
    started = false,
  }, FlopsProfiler)
end

-- The columns the profile's rows are built from (prof.profile_view reads them a slice at a
-- time); the times only where something ran (nothing is timed on meta).
local BASE_COLUMNS = { "id", "parent", "name", "type", "depth", "children", "params_counted", "hidden",
  "fwd.macs", "fwd.flops", "fwd.bytes_read", "fwd.bytes_written", "fwd.calls", "bwd.calls", "bwd.flops" }
local TIME_COLUMNS = { "fwd.time_ns", "fwd.device_time_ns", "bwd.time_ns", "bwd.device_time_ns" }

-- A row keeps only the fields that differ from these (most rows have no children, and are
-- neither hidden nor folded): reads of the others find them here.
local ROW = { __index = { children = profile_view.EMPTY, hidden = false, fold = false, extra_repr = "" } }

-- The device and dtype the model lives in: its first parameter's, else the runtime's default
-- device and float32.
local function model_placement(model)
  local p = model:first_parameter()
  if p == nil then return core.default_device(), "float32" end
  return p.device, p.dtype
end

-- Parameter elements of every module's subtree by pre-order position, in one pass from the
-- leaves up (num_parameters per module walks each subtree again: quadratic in depth). It agrees
-- with num_parameters only where no module and no parameter is reached twice; a model that
-- shares any (tied embeddings) gets nil, and num_parameters per module, as before.
local function subtree_params(model)
  -- arrays by position, not tables keyed by module: a million modules' four hash tables were
  -- 160 bytes of garbage a module. The children and parameters are read from the module's own
  -- lists (module.lua's _modules, _params and _slots).
  local order, up, n = {}, {}, 0
  local stack, stack_up, top = { model }, { 0 }, 1
  while top > 0 do
    local m, parent = stack[top], stack_up[top]
    stack[top], stack_up[top], top = nil, nil, top - 1
    n = n + 1
    order[n], up[n] = m, parent
    -- read raw: a leaf has no _modules (module.lua), and most of a large model are leaves
    local keys = rawget(m, "_modules")
    if keys ~= nil then
      local slots = rawget(m, "_slots")
      for i = #keys, 1, -1 do
        local kid = rawget(slots, keys[i])
        -- a child kept under another parent or name (module.lua's adopt) is reached twice
        if rawget(kid, "_parent") ~= m or rawget(kid, "_name") ~= key_name(keys[i]) then return nil end
        top = top + 1
        stack[top], stack_up[top] = kid, n
      end
    end
  end
  local total, seen = {}, {}
  for i = 1, n do total[i] = 0 end
  for i = n, 1, -1 do
    local m = order[i]
    local sum = total[i]
    local keys = rawget(m, "_params")
    if keys ~= nil then
      local slots = rawget(m, "_slots")
      for j = 1, #keys do
        local p = rawget(slots, keys[j])
        if seen[p] then return nil end
        seen[p] = true
        sum = sum + p:numel()
      end
    end
    total[i] = sum
    if up[i] > 0 then total[up[i]] = total[up[i]] + sum end
  end
  return total
end

-- Registers the model's tree with the core: each module once, at its first path, and the Lua
-- rules into the core's rule registry (one trampoline per type). Returns module -> id,
-- id -> module and module -> flop rule.
local function register(S, model, matcher, type_rules, old_types)
  for _, typename in ipairs(old_types) do S:register_rule(typename, nil) end
  for typename, rule in pairs(type_rules) do
    S:register_rule(typename, function(m, inputs, output, conventions)
      local id = hooks.ids[m]
      local path = S:path(id)
      return rules.apply(rule, m, path, inputs, output, rules.context(conventions, path, m.__name))
    end)
  end
  local ids, objects, ruled = {}, {}, {}
  local params, position = subtree_params(model), 0
  -- pre-order with an explicit stack (a deep model must not exhaust Lua's): each module once, at
  -- its first path; the core refuses a module nested deeper than it holds, naming the place
  local sm, sparent, sname = { model }, { false }, { "" }   -- the stack, by field
  while #sm > 0 do
    local top = #sm
    local m, parent, name = sm[top], sparent[top] or nil, sname[top]
    sm[top], sparent[top], sname[top] = nil, nil, nil
    if ids[m] == nil then
      -- the same walk as subtree_params': the n-th module registered is its position n
      position = position + 1
      local id = S:add_module(parent, name, m.__name, params and params[position] or m:num_parameters())
      ids[m] = id
      objects[id] = m
      ruled[m] = type_rules[m.__name]
      local keys = rawget(m, "_modules")   -- nil for a leaf (module.lua)
      if keys ~= nil then
        local slots = rawget(m, "_slots")
        for i = #keys, 1, -1 do
          local n = #sm + 1
          sm[n], sparent[n], sname[n] = rawget(slots, keys[i]), id, key_name(keys[i])
        end
      end
    end
  end
  -- the ignore list through the core's filter (prof_ignore_apply, what a C host calls): one
  -- mechanism for both; an empty list costs no pass
  if matcher ~= nil then
    S:apply_ignore(function(id, path) return matcher(path, objects[id]) end)
  end
  return ids, objects, ruled
end

-- Runs module id's rule for one call through the core's registry (called by nn.Module inside the
-- call's frame, with the call's values).
local function apply_rule(_, m, id, inputs, output)
  hooks.S:apply_rule(id, m, inputs, output)
end

-- On cuda a module's latency is its GPU time: the kernels, copies and memsets the capture
-- attributes to it (the snapshot's device_time_ns), never host time around a synchronisation
-- per module (that would serialise the very launches being measured). self.capture = "replay"
-- takes recorded activity instead of CUPTI (specs). Where CUPTI cannot run, a warning says why
-- and the latencies are n/a: host time on cuda is launch time, not the work.
local function open_capture(self, S)
  self.device_timed = nil
  if self.device ~= "cuda" and self.capture == nil then return end
  local ok, why = capture.open(S, self.capture)
  if ok then
    self.device_timed = true
  else
    self.device_timed = false
    require("prof.schedule").warn("flops profiler: no GPU time on cuda: " .. tostring(why)
      .. "; module latencies are n/a")
  end
end

-- A phase's latency in seconds from a module row: GPU time where the capture ran, host time
-- elsewhere (nil on meta, where nothing runs, and for a phase that took no time).
local function latency(self, host_ns, device_ns)
  if self.device_timed ~= nil then
    local ns = self.device_timed and device_ns or 0
    return ns > 0 and ns / 1e9 or nil
  end
  if self.device == "meta" then return nil end
  return host_ns > 0 and host_ns / 1e9 or nil
end

-- The conventions a session of self counts under. force_conventions: the exact re-count for the
-- roofline verdict, whatever --set says.
local function conventions_of(self)
  return self.force_conventions or config.pick("flops_profiler.conventions", self.conventions, "exact")
end

-- start_profile([ignore_list]): zeroes the counts and starts recording this model's calls.
function FlopsProfiler:start_profile(ignore_list)
  if type(ignore_list) == "table" and ignore_list.ignore_list ~= nil then
    ignore_list = ignore_list.ignore_list
  end
  self:stop_profile()
  local S = self.S or core.new()
  self.S = S
  S:clear()
  S:set_conventions(conventions_of(self))
  local list = config.pick("flops_profiler.ignore_modules", ignore_list, {})
  local type_rules = rules.load(config.pick("flops_profiler.rules", self.rules, {}))
  local matcher = ignore.matcher(list, self.model)
  self.ids, self.objects, self.ruled = register(S, self.model, next(list) ~= nil and matcher or nil,
    type_rules, self.rule_types or {})
  require("prof.flops_profiler.unmatched").check(self.model, list, type_rules)
  self.rule_types = {}
  for typename in pairs(type_rules) do table.insert(self.rule_types, typename) end
  self.device, self.dtype = model_placement(self.model)
  open_capture(self, S)
  hooks.S, hooks.ids, hooks.rules, hooks.apply_rule = S, self.ids, self.ruled, apply_rule
  core.set_recorder(S)
  S:start()
  self.started = true
end

-- stop_profile(): stops counting; the counts stay readable until end_profile.
function FlopsProfiler:stop_profile()
  local S = self.S
  if S == nil or not S:active() then return end
  if self.device_timed then capture.synchronize() end   -- one wait, at the end
  S:stop()
  if self.device_timed ~= nil then capture.close(S) end
  if hooks.S == S then
    hooks.S, hooks.ids, hooks.rules = nil, nil, nil
    core.set_recorder(nil)
  end
  self.stack_error = S:check()
  -- a type with parameters that counted nothing is a blind spot: say so (once per run)
  if self.objects ~= nil then require("prof.flops_profiler.opaque").report(S, self.objects) end
  -- the counts are read from the snapshot from now on: the recorders' per-module counters go
  -- (100 bytes a module). Refused while a module call is open (a stop inside a forward): they
  -- stay then, which costs only memory.
  pcall(S.trim, S)
end

-- reset_profile(): zeroes every count, keeping the session.
function FlopsProfiler:reset_profile()
  if self.S ~= nil then self.S:reset() end
end

-- end_profile(): stops and releases everything the profiler attached.
function FlopsProfiler:end_profile()
  self:stop_profile()
  if self.S ~= nil then self.S:close() end
  self.S, self.ids, self.objects = nil, nil, nil
  self.started = false
end

local function root_counts(self)
  if self.S == nil then error("FlopsProfiler: call start_profile first", 3) end
  return self.S:modules(1, 1)[1]
end

function FlopsProfiler:get_total_flops(as_string)
  local n = root_counts(self).fwd.flops
  return as_string and units.number_to_string(n) or n
end

function FlopsProfiler:get_total_macs(as_string)
  local n = root_counts(self).fwd.macs
  return as_string and units.macs_to_string(n) or n
end

-- The params the profile counts: under exact conventions an ignored subtree's leave the total,
-- as they leave the root row and the JSON summary.
function FlopsProfiler:get_total_params(as_string)
  local n = root_counts(self).params_counted
  return as_string and units.params_to_string(n) or n
end

-- Seconds of the model's forward calls; nil on meta, where nothing ran.
function FlopsProfiler:get_total_duration(as_string)
  local r = root_counts(self)
  local s
  if r.fwd.calls > 0 then
    if self.device_timed ~= nil then s = latency(self, r.fwd.time_ns, r.fwd.device_time_ns)
    elseif self.device ~= "meta" then s = r.fwd.time_ns / 1e9 end
  end
  if as_string then return s and units.duration_to_string(s) or "n/a" end
  return s
end

-- a * b for counts: Lua integers wrap (2^62 params x mp_size 4 would print negative), so the
-- product stops at math.maxinteger; the second result says whether it did.
local function sat_mul(a, b)
  if a == nil or b == nil then return nil, false end
  if a ~= 0 and b ~= 0 and math.abs(a) > math.maxinteger // math.abs(b) then
    return ((a < 0) ~= (b < 0)) and math.mininteger or math.maxinteger, true
  end
  return a * b, false
end

-- The profile as plain tables (report scripts' input; see scripts/reports/).
-- extra: summary facts the engine knows (world_size, batch_size, bwd_latency_s, ...); exact_flops
-- (pre-order position -> flops), the same forward counted under exact conventions when the
-- profile's are not. view = true: the modules are a view over the open session
-- (prof.profile_view: rows built when read, none kept), for a report rendered before the session
-- closes; else plain rows that outlive it.
function FlopsProfiler:profile(extra, view)
  extra = extra or {}
  local S = self.S
  if S == nil then error("FlopsProfiler: call start_profile first", 2) end
  local objects, exact_flops = self.objects, extra.exact_flops
  local not_exact = S:conventions() ~= "exact"
  local columns = { table.unpack(BASE_COLUMNS) }
  local timed = self.device ~= "meta" or self.device_timed ~= nil   -- else latency() is nil
  if timed then
    for _, name in ipairs(TIME_COLUMNS) do columns[#columns + 1] = name end
  end
  local modules = profile_view.new(S, columns, function(c, k, i, parent, path, children)
    local typename = c.type[k]
    local r = setmetatable({
      index = i, parent = parent, name = c.name[k], type = typename, depth = c.depth[k], path = path,
      params = c.params_counted[k], macs = c["fwd.macs"][k], flops = c["fwd.flops"][k],
      bytes = c["fwd.bytes_read"][k] + c["fwd.bytes_written"][k], calls = c["fwd.calls"][k],
    }, ROW)
    if children ~= profile_view.EMPTY then r.children = children end
    if timed then
      r.fwd_latency_s = latency(self, c["fwd.time_ns"][k], c["fwd.device_time_ns"][k])
      r.bwd_latency_s = latency(self, c["bwd.time_ns"][k], c["bwd.device_time_ns"][k])
    end
    if c["bwd.calls"][k] > 0 then r.bwd_flops = c["bwd.flops"][k] end
    local m = objects[c.id[k]]
    local repr = m and m:extra_repr() or ""
    if repr ~= "" then r.extra_repr = repr end
    -- the core's snapshot says what is hidden and which params count (one snapshot, made in C, serves every report)
    if c.hidden[k] then r.hidden = true end
    if typename == "ModuleList" then r.fold = true end
    -- what the roofline verdict reads when conventions are not exact: the exact count, or false
    -- (not measured: no verdict, as a deepspeed 0 for tanh would be a wrong one)
    if not_exact then r.exact_flops = exact_flops and exact_flops[i] or false end
    return r
  end)
  if not view then modules = modules:rows() end
  local root = modules[1] or { params = 0, macs = 0, flops = 0 }
  local mp = extra.mp_size or config.value("parallel.model_parallel_size") or 1
  local params_model, sat_p = sat_mul(root.params, mp)
  local flops_model, sat_f = sat_mul(root.flops, mp)
  local p = {
    schema = "profrun.profile/1",
    device = self.device,
    dtype = self.dtype,   -- the parameters': which of the device's peaks is the roof
    conventions = S:conventions(),
    engine = extra.engine or false,
    profile_step = extra.profile_step or 1,
    world_size = extra.world_size or 1,
    dp_size = extra.dp_size or 1,
    mp_size = mp,
    batch_size = extra.batch_size,
    gradient_accumulation_steps = extra.gradient_accumulation_steps,
    params = root.params,
    params_model = params_model,
    fwd_macs = root.macs,
    fwd_flops = root.flops,
    fwd_flops_model = flops_model,
    -- the root row's measured backward when the window held one (a FlopsProfiler around
    -- loss:backward()); the engine's own facts win (they cover the step it timed)
    bwd_flops = extra.bwd_flops or root.bwd_flops,
    recompute_fwd_factor = self.recompute_fwd_factor
      or config.value("flops_profiler.recompute_fwd_factor") or 0,
    fwd_latency_s = extra.fwd_latency_s or root.fwd_latency_s,
    bwd_latency_s = extra.bwd_latency_s or root.bwd_latency_s,
    step_latency_s = extra.step_latency_s,
    iter_latency_s = extra.iter_latency_s,
    samples_per_s = extra.samples_per_s,
    tokens = extra.tokens,
    modules = modules,
    -- some count passed 2^63 - 1 and stopped there: reports say the numbers are lower bounds
    saturated = S:counts_saturated() or sat_p or sat_f or nil,
  }
  return p
end

-- print_model_profile{profile_step=, module_depth=, top_modules=, detailed=, output_file=} and
-- profrun's mfu = true (the deepspeed text gets MFU on cpu too) and peaks = {flops =,
-- bytes_per_s =, machine =} (judge against these instead of the measured ones). DeepSpeed's
-- positional order is accepted too. The config supplies what the call leaves out.
local PRINT_KEYS = { "profile_step", "module_depth", "top_modules", "detailed", "output_file",
  "format", "mfu", "peaks", "detailed_backward", "exact_flops", "extra" }

function FlopsProfiler:print_model_profile(opts, module_depth, top_modules, detailed, output_file)
  -- after end_profile nothing is left to print: raise as get_total_flops does, not print nothing
  if self.S == nil then error("FlopsProfiler: call start_profile first", 2) end
  if type(opts) ~= "table" then
    opts = { profile_step = opts, module_depth = module_depth, top_modules = top_modules,
             detailed = detailed, output_file = output_file }
  end
  options.check(opts, PRINT_KEYS, "print_model_profile")
  local out = config.pick("flops_profiler.output_file", opts.output_file, nil)
  local extra = opts.extra or {}
  extra.profile_step = extra.profile_step or opts.profile_step
  local format = report.format_for(config.pick("flops_profiler.format", opts.format, nil), out)
  extra.exact_flops = extra.exact_flops or opts.exact_flops
  -- a view over the session: rendered here, dropped before the session closes
  local profile = self:profile(extra, true)
  -- the roofline verdict and MFU need the device's peaks: opts.peaks when given (a spec, a host
  -- that knows its machine), else measured once and cached (never on meta, where the JSON goes
  -- without them); the json and roofline reports always carry them, the deepspeed text on cuda
  -- or with opts.mfu (on cpu it stays DeepSpeed's, character for character)
  local want = opts.peaks ~= nil or opts.mfu == true
  if format == "json" or format == "roofline" or want or (self.device == "cuda" and format == "deepspeed") then
    local peaks, err = opts.peaks, nil
    if peaks == nil then peaks, err = require("prof.roofline.device_peaks").for_device(self.device, self.dtype) end
    if peaks ~= nil then
      require("prof.roofline").annotate(profile, peaks)
    elseif format == "roofline" or (self.device ~= "meta" and format == "json") or want then
      error("roofline: " .. tostring(err), 0)
    elseif self.device ~= "meta" then
      io.stderr:write("profrun: no MFU in the report: ", tostring(err), "\n")
    end
  end
  local ropts = {
    format = format,
    output_file = out,
    module_depth = config.pick("flops_profiler.module_depth", opts.module_depth, -1),
    top_modules = config.pick("flops_profiler.top_modules", opts.top_modules, 1),
    detailed = config.pick("flops_profiler.detailed", opts.detailed, true),
    detailed_backward = config.pick("flops_profiler.detailed_backward", opts.detailed_backward, false),
  }
  if out ~= nil and out ~= "" and format == "json" then
    -- streamed into the staged file: a million modules' JSON is never one string
    require("prof.util.output").write_stream(out, "flops_profiler.output_file", function(emit)
      ropts.emit = emit
      report.render_profile(profile, ropts)
    end)
    return
  end
  local text = report.render_profile(profile, ropts)
  if out ~= nil and out ~= "" then
    require("prof.util.output").write(out, text, "flops_profiler.output_file")
  else
    io.stdout:write(text)
  end
end

-- Tokens in the forward when its input is token ids (an integer tensor), for FLOPs per token.
local function count_tokens(args, kwargs)
  local x = kwargs and kwargs.input_ids or args[1]
  if core.is_tensor(x) and (x.dtype == "int64" or x.dtype == "int32") then return x:numel() end
  return nil
end

-- Runs model(args..., kwargs) with errors naming the module they happened in. Inference needs no
-- autograd graph (DeepSpeed builds one anyway): gradient recording is off during the call.
local function call_model(model, args, kwargs)
  local n = #args
  local call_args = { table.unpack(args, 1, n) }
  if kwargs ~= nil then
    n = n + 1
    call_args[n] = kwargs
  end
  local prev = core.set_grad_enabled(false)
  local ok, err = xpcall(model, errors.with_module_context, table.unpack(call_args, 1, n))
  core.set_grad_enabled(prev)
  if not ok then error(err, 0) end
end

-- True when the report will carry roofline verdicts (the json and roofline formats).
local function verdict_wanted(o)
  local out = config.pick("flops_profiler.output_file", o.output_file, nil)
  local format = report.format_for(config.pick("flops_profiler.format", o.format, nil), out)
  return format == "json" or format == "roofline"
end

-- A full collection between the phases of get_model_profile: each phase's garbage (the exact
-- re-count's session tables, a forward's tensors) is freed before the next phase allocates, so
-- the peak is one phase's, not the collector's lag over two.
-- It costs a mark of what is live: a few milliseconds for a model of a few thousand modules,
-- half a second for a million.
local function settle()
  collectgarbage("collect")
end

-- The forward counted once more under exact conventions: pre-order position -> flops. The
-- roofline verdict is about the work the machine did, whatever conventions the report prints.
local function count_exact(model, args, o)
  local p = M.FlopsProfiler(model)
  p.force_conventions, p.rules = "exact", o.rules
  p:start_profile(o.ignore_modules)
  settle()
  local ok, err = pcall(call_model, model, args, o.kwargs)
  -- no blind-spot notes from the re-count: the profile's own stop made them (once per type, and
  -- a type silent under exact is silent under deepspeed too); reading every row again cost a second
  p.objects = nil
  p:stop_profile()
  -- by pre-order position: both sessions registered the same model with the same ignore list
  -- (a path -> flops map was a million strings)
  local out = ok and p.S:module_columns({ "fwd.flops" })["fwd.flops"] or nil
  p:end_profile()
  if not ok then error(err, 0) end
  return out
end

-- prof.get_model_profile{model=, input_shape= | args= | kwargs=, print_profile=, detailed=,
-- module_depth=, top_modules=, warm_up=, as_string=, output_file=, ignore_modules=} and profrun's
-- conventions=, rules=, format=, mfu=, peaks= (print_model_profile's)
-- returns flops, macs, params (strings unless as_string = false), as DeepSpeed does.
local GET_KEYS = { "model", "input_shape", "args", "kwargs", "print_profile", "detailed",
  "module_depth", "top_modules", "warm_up", "as_string", "output_file", "ignore_modules", "mode",
  "conventions", "rules", "format", "mfu", "peaks" }

function M.get_model_profile(o)
  if type(o) == "table" then options.check(o, GET_KEYS, "get_model_profile") end
  if type(o) ~= "table" or not module.is_module(o.model) then
    error("get_model_profile: expects {model = <nn.Module>, ...}", 2)
  end
  if o.mode ~= nil and o.mode ~= "forward" then
    error(string.format('get_model_profile: mode "%s": profiles the forward only (mode = "forward")',
                        tostring(o.mode)), 2)
  end
  local model = o.model
  model:eval()
  local args = o.args or {}
  if o.input_shape ~= nil then
    require("prof.nn.args").check_shape("get_model_profile", "input_shape", o.input_shape)
    local p = model:first_parameter()
    args = { core.empty(o.input_shape, p and p.dtype, p and p.device) }
  end
  if #args == 0 and o.kwargs == nil then
    error("get_model_profile: give input_shape, args or kwargs", 2)
  end
  local warm_up = o.warm_up or 1
  for _ = 1, warm_up do call_model(model, args, o.kwargs) end
  settle()
  local prof = M.FlopsProfiler(model)
  prof.conventions, prof.rules = o.conventions, o.rules
  local print_profile = o.print_profile
  if print_profile == nil then print_profile = true end
  -- the exact re-count first, its session closed before the profile's opens: the two sessions
  -- of a million modules are never held at once
  local exact
  if print_profile and conventions_of(prof) ~= "exact" and verdict_wanted(o) then
    exact = count_exact(model, args, o)
    settle()
  end
  prof:start_profile(o.ignore_modules)
  settle()   -- the registration's walks
  local ok, err = pcall(call_model, model, args, o.kwargs)
  if not ok then
    prof:end_profile()
    error(err, 0)
  end
  prof:stop_profile()
  settle()
  local flops, macs, params = prof:get_total_flops(), prof:get_total_macs(), prof:get_total_params()
  if print_profile then
    ok, err = pcall(prof.print_model_profile, prof, {
      exact_flops = exact,
      profile_step = warm_up, module_depth = o.module_depth, top_modules = o.top_modules,
      detailed = o.detailed, output_file = o.output_file, format = o.format,
      mfu = o.mfu, peaks = o.peaks,
      extra = { profile_step = warm_up, tokens = count_tokens(args, o.kwargs) },
    })
    if not ok then
      prof:end_profile()
      error(err, 0)
    end
  end
  prof:end_profile()
  local as_string = o.as_string
  if as_string == nil then as_string = true end
  if as_string then
    return units.number_to_string(flops), units.macs_to_string(macs), units.params_to_string(params)
  end
  return flops, macs, params
end

return M
