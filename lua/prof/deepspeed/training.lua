-- prof.deepspeed.training — the DeepSpeed sections the engine applies around the optimizer step: fp16 /
-- bf16 (dtype, loss scaling), gradient_clipping, scheduler; and the note on those it accepts but
-- cannot apply on one process.
--[[
* fp16.enabled / bf16.enabled (or bfloat16.enabled): on meta the model's floating parameters and
  buffers, and the floating tensors given to engine(...), become float16 / bfloat16, so that
  every byte count is in the configured dtype (DeepSpeed's module.half() / bfloat16()). The cpu
  computes float32 only: there the model stays float32 and a note says so; fp16's loss scaling
  (lua/prof/deepspeed/loss_scaler.lua) applies wherever the engine trains.
* gradient_clipping > 0: the gradients' global L2 norm is clipped before the optimizer step, as
  DeepSpeed's clip_grad_norm_ (and torch's): coef = max_norm / (norm + 1e-6), applied when < 1.
* scheduler: lua/prof/deepspeed/scheduler.lua, stepped after every optimizer step that is not skipped.
* "auto" (Hugging Face's placeholder) is read as DeepSpeed's default, with a note.
]]
local core = require "prof.core"
local nn_module = require "prof.nn.module"
local config = require "prof.config"
local ds_scheduler = require "prof.deepspeed.scheduler"
local loss_scaler = require "prof.deepspeed.loss_scaler"
local notes = require "prof.util.notes"

local M = {}

local function enabled(section, name)
  if type(section) ~= "table" then return false end
  if section.enabled == "auto" and name then
    notes.once("auto:" .. name .. ".enabled", name .. '.enabled is "auto": DeepSpeed\'s default is used (false)')
  end
  return section.enabled == true
end

-- The DeepSpeed sections the engine applies around the optimizer step (setup below): a config
-- that has them uses them, so --verbose does not list them among the accepted-but-unused keys.
M.APPLIED = { scheduler = true, fp16 = true, bf16 = true, gradient_clipping = true }

-- Sections DeepSpeed applies that change nothing on one profrun process, and why.
local NOT_APPLIED = {
  { "zero_optimization", function(s) return type(s) == "table" and (s.stage or 0) ~= 0 end,
    function(s) return "zero_optimization (stage " .. tostring(s.stage) .. ": partitions across processes)" end },
  { "tensorboard", enabled, function() return "tensorboard" end },
  { "wandb", enabled, function() return "wandb" end },
  { "csv_monitor", enabled, function() return "csv_monitor" end },
  { "comet", enabled, function() return "comet" end },
  { "comms_logger", enabled, function() return "comms_logger" end },
  { "activation_checkpointing", function(s) return type(s) == "table" and next(s) ~= nil end,
    function() return "activation_checkpointing (say flops_profiler.recompute_fwd_factor instead)" end },
  { "progressive_layer_drop", enabled,
    function() return "progressive_layer_drop (the model's forward takes its keep probability in DeepSpeed)" end },
  { "sparse_attention", function(s) return type(s) == "table" and next(s) ~= nil end,
    function() return "sparse_attention (a model built from DeepSpeed's sparse attention layers)" end },
}

-- The accepted-but-not-applied sections present in the config, in words (for the note).
function M.not_applied()
  local out = {}
  for _, row in ipairs(NOT_APPLIED) do
    local s = config.value(row[1])
    if s ~= nil and row[2](s) then out[#out + 1] = row[3](s) end
  end
  return out
end

-- gradient_clipping's value v as a number (0: off); "auto" is the default 0, with a note.
local function clipping(v)
  if v == "auto" then
    notes.once("auto:gradient_clipping", 'gradient_clipping is "auto": DeepSpeed\'s default is used (0: no clipping)')
    return 0
  end
  if v == nil or v == core.null then return 0 end
  if type(v) ~= "number" or v ~= v or v < 0 then
    error("gradient_clipping: expected a number >= 0, got " .. tostring(v), 0)
  end
  return v
end

-- The dtype the fp16 / bf16 sections ask for, or nil.
local function dtype(fp16, bf16)
  local f, b = enabled(fp16, "fp16"), enabled(bf16, "bf16")
  if f and b then error("fp16 and bf16 cannot both be enabled (DeepSpeed refuses it)", 0) end
  if f then return "float16" end
  if b then return "bfloat16" end
  return nil
end

-- The section at key of cfg (a loaded config table, or the active config when nil).
local function section(cfg, key)
  if cfg == nil then return config.value(key) end
  local v = cfg
  for part in key:gmatch("[^.]+") do
    if type(v) ~= "table" then return nil end
    v = v[part]
  end
  return v
end

local function bf16_of(cfg)
  local b = section(cfg, "bf16")
  if b == nil then b = section(cfg, "bfloat16") end
  return b
end

local function is_float(t)
  return t.dtype == "float32" or t.dtype == "float64" or t.dtype == "float16" or t.dtype == "bfloat16"
end

-- Casts model's floating parameters and buffers to dt in place (shared ones once). Each cast
-- parameter is a new leaf (detached first: a cast that autograd records would send the gradients
-- back to the float32 original); returns the map original -> cast.
local function cast_module(model, dt)
  local nn = require "prof.nn"
  local done = {}
  for _, pair in ipairs(model:named_modules()) do
    local m = pair[2]
    local slots = nn_module.slots(m)
    for _, key in ipairs(nn_module.order(m, "_params")) do
      local p = rawget(slots, key)
      if p ~= nil and is_float(p) then
        done[p] = done[p] or nn.Parameter(core.to(p:detach(), dt), p.requires_grad)
        m[key] = done[p]
      end
    end
    for _, key in ipairs(nn_module.order(m, "_buffers")) do
      local b = rawget(m, key)
      if b ~= nil and core.is_tensor(b) and is_float(b) then rawset(m, key, core.to(b, dt)) end
    end
  end
  return done
end

-- DeepSpeed's module.half() changes the parameters the optimizer already holds; here the cast
-- ones are new tensors, so the optimizer's groups (and any state) move to them.
local function rebind_optimizer(opt, cast)
  if opt == nil or opt.param_groups == nil then return end
  for _, group in ipairs(opt.param_groups) do
    for i, p in ipairs(group.params) do
      local q = cast[p]
      if q ~= nil then
        group.params[i] = q
        if opt.state ~= nil and opt.state[p] ~= nil then opt.state[q], opt.state[p] = opt.state[p], nil end
      end
    end
  end
end

-- setup(engine): reads the sections, casts the model where it applies, builds the loss scaler and
-- the scheduler, and says once what is accepted but not applied.
function M.setup(e)
  e.clip = clipping(config.value("gradient_clipping"))
  local dt = dtype(config.value("fp16"), bf16_of(nil))
  local device = (e.module:first_parameter() or {}).device or core.default_device()
  if dt ~= nil then
    if device == "meta" then
      rebind_optimizer(e.optimizer, cast_module(e.module, dt))
      e.dtype = dt
    else
      notes.once("dtype:" .. dt, string.format("%s: the %s device computes in float32 (its kernels' only "
        .. "float type); the model trains in float32%s", dt == "float16" and "fp16" or "bf16", device,
        dt == "float16" and " with DeepSpeed's fp16 loss scaling" or ""))
    end
    if dt == "float16" then e.scaler = loss_scaler.new(config.value("fp16")) end
  end
  local sched = config.value("scheduler")
  if sched ~= nil and sched ~= core.null then e.scheduler = ds_scheduler.build(sched, e.optimizer) end
  local skipped = M.not_applied()
  if #skipped > 0 then
    notes.once("not_applied", "DeepSpeed sections accepted but not applied on one process: "
      .. table.concat(skipped, ", "))
  end
end

--[[
Checks cfg's sections that setup applies (a loaded config table), with setup's own checks, when
the config is loaded: a mistake there (a scheduler param, an fp16 key, gradient_clipping, fp16
with bf16) is then a config error before the script runs, as the optimizer's is, not a
traceback from prof.initialize. Says no note (setup says them). Returns true, or nil, the key to
blame and the message.
]]
function M.check(cfg)
  local sched = section(cfg, "scheduler")
  local rows = {
    { "gradient_clipping", function() clipping(section(cfg, "gradient_clipping")) end },
    { "fp16", function()
      if dtype(section(cfg, "fp16"), bf16_of(cfg)) == "float16" then loss_scaler.new(section(cfg, "fp16")) end
    end },
    { "scheduler", function()
      if sched ~= nil and sched ~= core.null then ds_scheduler.resolve(sched) end
    end },
  }
  local once = notes.once
  notes.once = function() return false end
  for _, row in ipairs(rows) do
    local ok, err = pcall(row[2])
    if not ok then
      notes.once = once
      return nil, row[1], tostring(err)
    end
  end
  notes.once = once
  return true
end

-- The forward's inputs in the engine's dtype (meta only: there the bytes are what counts).
function M.cast_inputs(e, inputs)
  if e.dtype == nil then return inputs end
  local out = { n = inputs.n }
  for i = 1, inputs.n do
    local x = inputs[i]
    if core.is_tensor(x) and is_float(x) and x.dtype ~= e.dtype then x = core.to(x, e.dtype) end
    out[i] = x
  end
  return out
end

-- The loss backward runs on: divided over the micro-batches, times the fp16 scale.
function M.scale_loss(e, loss)
  if e.gradient_accumulation_steps > 1 then loss = loss / e.gradient_accumulation_steps end
  if e.scaler ~= nil then loss = loss * e.scaler.cur_scale end
  return loss
end

local function scale_grads(params, factor)
  for _, p in ipairs(params) do
    local g = p.grad
    if g ~= nil then g:copy_(g * factor) end
  end
end

-- clip_grad_norm_: the global L2 norm of the gradients, clipped to max_norm; returns the norm.
function M.clip_grad_norm(params, max_norm)
  local sq = 0
  for _, p in ipairs(params) do
    if p.grad ~= nil then sq = sq + (p.grad * p.grad):sum():item() end
  end
  local norm = math.sqrt(sq)
  local coef = max_norm / (norm + 1e-6)
  if coef < 1 then scale_grads(params, coef) end
  return norm
end

--[[
The optimizer step at a gradient-accumulation boundary, in DeepSpeed's order: with fp16, an inf or
NaN gradient skips the step (and the schedule's), halving the scale as loss_scaler says; else the
scale updates, the gradients are unscaled and clipped, the optimizer steps, the schedule steps.
Returns true when the step was skipped.
]]
function M.optimizer_step(e)
  local opt = e.optimizer
  if opt == nil then return false end
  local params = {}
  for _, g in ipairs(opt.param_groups) do
    for _, p in ipairs(g.params) do params[#params + 1] = p end
  end
  -- on meta nothing has values: no overflow to find, no norm to clip (shapes still flow)
  local valued = (params[1] or {}).device ~= "meta"
  local prev = core.set_grad_enabled(false)
  local ok, skipped = pcall(function()
    if e.scaler ~= nil then
      local overflow = valued and loss_scaler.has_overflow(params)
      local before = e.scaler.cur_scale
      e.scaler:update(overflow)
      if overflow then
        io.stderr:write(string.format("profrun: fp16 overflow at step %d: step skipped, loss scale %g -> %g\n",
          e.global_steps, before, e.scaler.cur_scale))
        return true
      end
      scale_grads(params, 1 / e.scaler.cur_scale)
    end
    if e.clip > 0 and valued then M.clip_grad_norm(params, e.clip) end
    opt:step()
    return false
  end)
  core.set_grad_enabled(prev)
  if not ok then error(skipped, 0) end
  opt:zero_grad()
  if skipped then
    e.skipped_steps = (e.skipped_steps or 0) + 1
  elseif e.scheduler ~= nil then
    e.scheduler:step()
  end
  return skipped
end

return M
