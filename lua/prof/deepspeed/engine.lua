-- prof.deepspeed.engine — prof.initialize: DeepSpeed's engine (forward, backward, step) with the flops
-- profiler and wall-clock breakdown driven by the config alone, no change to the training script.
local core = require "prof.core"
local config = require "prof.config"
local ds_optimizer = require "prof.deepspeed.optimizer"
local ds_training = require "prof.deepspeed.training"
local errors = require "prof.util.errors"
local flops_profiler = require "prof.flops_profiler"
local module = require "prof.nn.module"
local notes = require "prof.util.notes"
local optim = require "prof.optim"
local profiler = require "prof.profiler"
local schedule = require "prof.schedule"

local M = {}

local Engine = {}
Engine.__index = Engine

local function now_s()
  return core.now_ns() / 1e9
end

-- The batch size of one forward: config's micro batch, else the first tensor's leading dim.
local function batch_size_of(inputs)
  local mb = config.value("train_micro_batch_size_per_gpu")
  if mb ~= nil then return mb end
  for _, x in ipairs(inputs) do
    if core.is_tensor(x) and x.ndim > 0 then return x:size(0) end
    if type(x) == "table" and not core.is_tensor(x) then
      for _, v in pairs(x) do
        if core.is_tensor(v) and v.ndim > 0 then return v:size(0) end
      end
    end
  end
  return nil
end

-- The optimizer deepspeed.initialize builds from the config's optimizer section when the script
-- passes none: the policy (DeepSpeed's rules and FusedAdam's defaults) is lua/prof/deepspeed/optimizer.lua,
-- which also checks a config table written by hand (the loader has not seen it).
local function build_optimizer(model, section)
  local checked, _, err = ds_optimizer.check(section)
  if checked == nil then error(err, 3) end
  local cls, opts, note = ds_optimizer.plan(checked)
  if note then notes.once("optimizer", note) end
  -- level 4: errors name the line that called prof.initialize (new, here, initialize, caller)
  return optim[cls]:new(model:parameters(), opts, 4)
end

--[[
prof.initialize{model=, optimizer=, config=} -> engine, optimizer, as deepspeed.initialize returns
(engine first). config: a table from prof.config.load, else profrun's config. Without
optimizer=, the config's optimizer section builds one (above); without either the engine steps
no optimizer. The engine:
  engine(...)            forward (the model's own arguments; in the fp16/bf16 dtype on meta)
  engine:backward(loss)  (loss / gradient_accumulation_steps x the fp16 loss scale):backward()
  engine:step()          at a gradient-accumulation boundary: the optimizer step (skipped on an
                         fp16 overflow; unscaled, clipped, then the scheduler), zero_grad; profiles
                         and prints at flops_profiler.profile_step (profile_window_opens)
The DeepSpeed sections around the step are lua/prof/deepspeed/training.lua's.
]]
-- The engines made in this run whose flops profiler is enabled (weak: a dropped engine goes).
local profiled = setmetatable({}, { __mode = "k" })

--[[
The engines whose flops_profiler.profile_step was never reached (the run ended first), in words:
DeepSpeed prints nothing then, and a user waiting for the profile sees nothing either.
]]
function M.unreached()
  local out = {}
  for e in pairs(profiled) do
    if not e.printed then
      out[#out + 1] = string.format("flops_profiler.profile_step %d was never reached (the run took %d "
        .. "optimizer step%s, numbered from 0): no flops profile was printed", e.profile_step,
        e.global_steps, e.global_steps == 1 and "" or "s")
    end
  end
  table.sort(out)
  return out
end

function M.initialize(o)
  if type(o) ~= "table" or not module.is_module(o.model) then
    error("initialize: expects {model = <nn.Module>, optimizer = ..., config = ...}", 2)
  end
  if o.config ~= nil then config.set(o.config) end
  local fp = config.value("flops_profiler") or {}
  local optimizer = o.optimizer
  -- a script's optimizer wins over the config's, as deepspeed.initialize documents
  if optimizer == nil and config.value("optimizer") ~= nil then
    optimizer = build_optimizer(o.model, config.value("optimizer"))
  end
  local e = setmetatable({
    module = o.model,
    optimizer = optimizer,
    global_steps = 0,
    micro_steps = 0,
    gradient_accumulation_steps = config.value("gradient_accumulation_steps") or 1,
    profile_enabled = fp.enabled == true,
    profile_step = fp.profile_step or 1,
    flops_schedule = schedule.at_step(fp.profile_step or 1),
    wall_clock_breakdown = config.value("wall_clock_breakdown") == true or fp.enabled == true,
    mp_size = config.value("parallel.model_parallel_size") or 1,
    world_size = config.world_size(),
    timers = { forward = 0, backward = 0, step = 0 },      -- the last micro-batch's
    accumulated = { forward = 0, backward = 0 },           -- this optimizer step's micro-batches
  }, Engine)
  e.dp_size = e.world_size // e.mp_size > 0 and e.world_size // e.mp_size or 1
  -- fp16 / bf16, gradient_clipping, scheduler; notes for what one process cannot apply
  ds_training.setup(e)
  if e.profile_enabled then profiled[e] = true end
  o.model:train()
  return e, optimizer
end

-- True while the current optimizer step is the one to profile.
function Engine:profiling()
  return self.profiler ~= nil
end

--[[
The flops profiler's window, in one place: schedule.at_step(profile_step) on the schedule machinery
the activity profiler uses (step profile_step is RECORD_AND_SAVE). What it
covers, under gradient accumulation (GAS micro-batches per optimizer step):
* the LAST micro-batch of optimizer step profile_step: its forward, its backward and the optimizer
  step that follows. Module counts and fwd/bwd latency are one micro-batch's, as in DeepSpeed,
  whose forward restarts the profile at every micro-batch, so the counts it prints at the step are
  the last micro-batch's;
* iter latency is the whole optimizer step (every micro-batch's forward and backward, and the
  step), and samples/s = micro batch x GAS x world size / iter latency. The report's iteration
  FLOPS multiply the one-micro-batch work by GAS to match.
Returns true when the forward about to run opens the window.
]]
function Engine:profile_window_opens()
  return self.profile_enabled and self.profiler == nil
    and self.flops_schedule(self.global_steps) == schedule.RECORD_AND_SAVE
    and self.micro_steps % self.gradient_accumulation_steps == self.gradient_accumulation_steps - 1
end

function Engine:__call(...)
  local inputs = ds_training.cast_inputs(self, table.pack(...))
  if self:profile_window_opens() then
    self.profiler = flops_profiler.FlopsProfiler(self.module, self,
      config.value("flops_profiler.recompute_fwd_factor"))
    self.profiler:start_profile()
  end
  self.batch_size = self.batch_size or batch_size_of(inputs)
  local t0 = now_s()
  local r = table.pack(xpcall(self.module, errors.with_module_context, table.unpack(inputs, 1, inputs.n)))
  self.timers.forward = now_s() - t0
  self.accumulated.forward = self.accumulated.forward + self.timers.forward
  if not r[1] then
    if self.profiler then self.profiler:end_profile() self.profiler = nil end
    error(r[2], 0)
  end
  return table.unpack(r, 2, r.n)
end

function Engine:backward(loss)
  local t0 = now_s()
  loss = ds_training.scale_loss(self, loss)
  loss:backward()
  self.timers.backward = now_s() - t0
  self.accumulated.backward = self.accumulated.backward + self.timers.backward
end

function Engine:step()
  self.micro_steps = self.micro_steps + 1
  local boundary = self.micro_steps % self.gradient_accumulation_steps == 0
  local t0 = now_s()
  local S = self.profiler and self.profiler.S
  if boundary and self.optimizer ~= nil then
    if S then S:set_phase("step") end
    ds_training.optimizer_step(self)
    if S then S:set_phase("forward") end
  end
  self.timers.step = now_s() - t0
  if self.wall_clock_breakdown and config.value("wall_clock_breakdown") then
    io.stdout:write(string.format("step %d: forward %.2f ms | backward %.2f ms | step %.2f ms\n",
      self.global_steps, self.timers.forward * 1e3, self.timers.backward * 1e3, self.timers.step * 1e3))
  end
  if not boundary then return end
  if self.profiler ~= nil then self:print_profile() end
  self.accumulated = { forward = 0, backward = 0 }   -- the next optimizer step's micro-batches
  self.global_steps = self.global_steps + 1
  -- steps towards the profiled one have an end, hence an ETA; others just a rate
  self.progress = self.progress or require("prof.util.progress").new({
    total = self.profile_enabled and self.profile_step + 1 or nil })
  self.progress:tick(self.global_steps)
  profiler.engine_step()   -- the config's activity profiler, when profrun started one
end

-- The summary facts DeepSpeed's engine knows, for the report: fwd/bwd latency of the profiled
-- micro-batch, step latency of the optimizer step, iter latency and samples/s of the whole
-- optimizer step (profile_window_opens says why).
function Engine:summary()
  local t, gas = self.timers, self.gradient_accumulation_steps
  local iter = self.accumulated.forward + self.accumulated.backward + t.step
  local S = self.profiler.S
  local bwd = S:totals("backward")
  local timed = self.profiler.device ~= "meta"   -- on meta nothing ran: no latencies
  if not timed then t, iter = {}, nil end
  return {
    engine = true, profile_step = self.global_steps,
    world_size = self.world_size, dp_size = self.dp_size, mp_size = self.mp_size,
    batch_size = self.batch_size, gradient_accumulation_steps = gas,
    fwd_latency_s = t.forward, bwd_latency_s = t.backward, step_latency_s = t.step,
    iter_latency_s = iter,
    -- DeepSpeed's formula (micro batch x world size over the iteration), times the micro-batches
    -- the iteration ran
    samples_per_s = self.batch_size and iter and iter > 0
      and self.batch_size * gas * self.world_size / iter or nil,
    bwd_flops = bwd.calls > 0 and bwd.flops or nil,
  }
end

function Engine:print_profile()
  if self.progress then self.progress:finish() end   -- the report starts on a clean line
  local p = self.profiler
  p:stop_profile()
  local ok, err = pcall(p.print_model_profile, p, { extra = self:summary() })
  p:end_profile()
  self.profiler = nil
  self.printed = true
  if not ok then error(err, 0) end
end

return M
