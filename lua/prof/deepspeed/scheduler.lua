-- prof.deepspeed.scheduler — DeepSpeed's learning-rate schedules (the config's "scheduler" section), with
-- DeepSpeed's names, defaults and step order (deepspeed/runtime/lr_schedules.py).
--[[
The engine builds one from {type=, params=} and calls step() after every optimizer step it does
not skip, as DeepSpeed's _take_model_step does; construction already sets the lr of the first
step. `it` below is last_batch_iteration: -1 at construction, +1 per step().
  WarmupLR      gamma = log(it + 1) / log(N) ("log") or it / N ("linear") while it < N, else 1;
                lr = warmup_min_lr + (warmup_max_lr - warmup_min_lr) * gamma; N =
                max(2, warmup_num_steps); at it = -1, warmup_min_lr. warmup_max_lr defaults to
                the optimizer's lr.
  WarmupDecayLR the same warmup; after it, gamma = max(0, (total_num_steps - it) /
                max(1, total_num_steps - N)); warmup_max_lr defaults to 0.001.
  OneCycle      x = 1 + (it + 1) / T - floor(1 + (it + 1) / T), T = first + second step size;
                scale = x / r while x <= r (r = first / T), else (x - 1) / (r - 1);
                lr = cycle_min_lr + (cycle_max_lr - cycle_min_lr) * scale while it < T, then
                cycle_min_lr / (1 + decay_lr_rate * (it - T + 1) / decay_step_size) (cycle_min_lr
                when either is 0); construction sets cycle_min_lr. With cycle_momentum (default
                on) and an optimizer with betas, betas = (cycle_max_mom - (cycle_max_mom -
                cycle_min_mom) * scale, 0.99), and cycle_min_mom at construction; stair counts
                hold the values flat over floor()ed stairs.
  WarmupCosineLR, LRRangeTest: DeepSpeed's other two, as written there.
"auto" (Hugging Face's placeholder) means the default, with a note; a param without a default
("auto" included) is an error naming it.
]]
local notes = require "prof.util.notes"

local M = {}

local REQUIRED = {}

-- type -> ordered {name, default} (REQUIRED: no default)
local PARAMS = {
  WarmupLR = { { "warmup_min_lr", 0.0 }, { "warmup_max_lr", false }, { "warmup_num_steps", 1000 },
    { "warmup_type", "log" } },
  WarmupDecayLR = { { "total_num_steps", REQUIRED }, { "warmup_min_lr", 0.0 },
    { "warmup_max_lr", 0.001 }, { "warmup_num_steps", 1000 }, { "warmup_type", "log" } },
  OneCycle = { { "cycle_min_lr", REQUIRED }, { "cycle_max_lr", REQUIRED }, { "decay_lr_rate", 0.0 },
    { "cycle_first_step_size", 2000 }, { "cycle_second_step_size", false },
    { "cycle_first_stair_count", 0 }, { "cycle_second_stair_count", false },
    { "decay_step_size", 0 }, { "cycle_momentum", true }, { "cycle_min_mom", 0.8 },
    { "cycle_max_mom", 0.9 }, { "decay_mom_rate", 0.0 } },
  WarmupCosineLR = { { "total_num_steps", REQUIRED }, { "warmup_min_ratio", 0.0 },
    { "warmup_num_steps", 1000 }, { "cos_min_ratio", 0.0001 }, { "warmup_type", "log" } },
  LRRangeTest = { { "lr_range_test_min_lr", 1e-3 }, { "lr_range_test_step_size", 2000 },
    { "lr_range_test_step_rate", 1.0 }, { "lr_range_test_staircase", false } },
}

M.TYPES = { "WarmupLR", "WarmupDecayLR", "OneCycle", "WarmupCosineLR", "LRRangeTest" }

local function fail(msg)
  error(msg, 0)
end

-- The section's params with DeepSpeed's defaults filled in; errors name the key path.
function M.resolve(section)
  local kind = section.type
  local spec = PARAMS[kind]
  if spec == nil then
    fail(string.format('scheduler.type: expected one of %s, got %s', table.concat(M.TYPES, ", "),
      type(kind) == "string" and string.format("%q", kind) or tostring(kind)))
  end
  local given = type(section.params) == "table" and section.params or {}
  local known, out = {}, {}
  for _, row in ipairs(spec) do known[row[1]] = true end
  for k in pairs(given) do
    if not known[k] then fail(string.format('unknown key "scheduler.params.%s" for scheduler type "%s"', k, kind)) end
  end
  for _, row in ipairs(spec) do
    local name, default = row[1], row[2]
    local v = given[name]
    if v == "auto" then
      if default == REQUIRED then
        fail(string.format('scheduler.params.%s: "auto" has no default outside Hugging Face\'s Trainer: '
          .. "give a value", name))
      end
      notes.once("auto:scheduler." .. name, string.format('scheduler.params.%s is "auto": DeepSpeed\'s '
        .. "default is used (%s)", name, default == false and "derived" or tostring(default)))
      v = nil
    end
    if v == nil then
      if default == REQUIRED then fail(string.format("scheduler.params.%s: %s needs a value", name, kind)) end
      if default ~= false then v = default end
    elseif type(v) ~= type(default == REQUIRED and 0 or (default == false and v or default)) then
      fail(string.format("scheduler.params.%s: expected a %s, got %s", name, type(default), tostring(v)))
    end
    out[name] = v
  end
  if out.warmup_num_steps ~= nil and (math.type(out.warmup_num_steps) ~= "integer" or out.warmup_num_steps <= 0) then
    fail("scheduler.params.warmup_num_steps: expected a positive integer, got " .. tostring(out.warmup_num_steps))
  end
  return out
end

local function set_lr(optimizer, lr)
  for _, g in ipairs(optimizer.param_groups) do g.lr = lr end
end

local function warmup_gamma(s, it)
  if s.warmup_type == "linear" then return it / s.n end
  return s.inverse_log * math.log(it + 1)
end

local builders = {}

function builders.WarmupLR(s, opt)
  if s.warmup_max_lr == nil then s.warmup_max_lr = opt.param_groups[1].lr end
  s.n = math.max(2, s.warmup_num_steps)
  s.inverse_log = 1.0 / math.log(s.n)
  if s.warmup_type ~= "log" and s.warmup_type ~= "linear" then s.warmup_type = "log" end
  return function(it)
    if it < 0 then return s.warmup_min_lr end
    local gamma = 1.0
    if it < s.n then gamma = warmup_gamma(s, it) end
    return s.warmup_min_lr + (s.warmup_max_lr - s.warmup_min_lr) * gamma
  end
end

function builders.WarmupDecayLR(s, opt)
  local warm = builders.WarmupLR(s, opt)
  return function(it)
    if it < s.n then return warm(it) end
    local gamma = math.max(0.0, (s.total_num_steps - it) / math.max(1.0, s.total_num_steps - s.n))
    return s.warmup_min_lr + (s.warmup_max_lr - s.warmup_min_lr) * gamma
  end
end

function builders.WarmupCosineLR(s, opt)
  local org = opt.param_groups[1].lr
  s.n = math.max(2, s.warmup_num_steps)
  s.inverse_log = 1.0 / math.log(s.n)
  if s.warmup_type ~= "log" and s.warmup_type ~= "linear" then s.warmup_type = "log" end
  return function(it)
    if it < 0 then return 0.0 end
    local ratio
    if it < s.n then
      ratio = s.warmup_min_ratio + warmup_gamma(s, it) * (1 - s.warmup_min_ratio)
    else
      local progress = math.min(1.0, (it - s.n + 1) / math.max(1, s.total_num_steps - s.n))
      ratio = math.max(0.0, s.cos_min_ratio + (1 - s.cos_min_ratio) * (1 + math.cos(math.pi * progress)) / 2)
    end
    return org * ratio
  end
end

function builders.LRRangeTest(s)
  return function(it)
    local interval = (it + 1) / s.lr_range_test_step_size
    if s.lr_range_test_staircase then interval = math.floor(interval) end
    return s.lr_range_test_min_lr * (1 + s.lr_range_test_step_rate * interval)
  end
end

-- OneCycle's scale factor at iteration it (DeepSpeed's _get_scale_factor, stairs included).
local function one_cycle_scale(s, it)
  local b = it + 1
  local cycle = math.floor(1 + b / s.total)
  local x = 1.0 + b / s.total - cycle
  local scale, stairs
  if x <= s.ratio then
    scale, stairs = x / s.ratio, s.cycle_first_stair_count
  else
    scale, stairs = (x - 1) / (s.ratio - 1), s.second_stairs
  end
  if stairs > 0 then
    local ci = math.fmod(b, s.total)
    local pos
    if ci <= s.first then pos = ci * stairs / s.first else pos = (s.total - ci) * stairs / s.second end
    scale = math.floor(pos) / stairs
  end
  return scale
end

function builders.OneCycle(s, opt)
  s.first = s.cycle_first_step_size + 0.0
  s.second = s.cycle_second_step_size and s.cycle_second_step_size + 0.0 or s.first
  s.total = s.first + s.second
  s.ratio = s.first / s.total
  s.second_stairs = s.cycle_second_stair_count or s.cycle_first_stair_count
  local skip_decay = s.decay_step_size == 0 or s.decay_lr_rate == 0
  local skip_mom_decay = s.decay_step_size == 0 or s.decay_mom_rate == 0
  -- momentum cycles only where the optimizer has betas (DeepSpeed warns and turns it off)
  s.with_mom = s.cycle_momentum and opt.defaults.betas ~= nil
  local lr = function(it)
    if it < 0 then return s.cycle_min_lr end
    if it < s.total then return s.cycle_min_lr + (s.cycle_max_lr - s.cycle_min_lr) * one_cycle_scale(s, it) end
    if skip_decay then return s.cycle_min_lr end
    return s.cycle_min_lr / (1 + s.decay_lr_rate * (it - s.total + 1) / s.decay_step_size)
  end
  s.mom = function(it)
    if it < 0 then return s.cycle_min_mom end
    if it < s.total then return s.cycle_max_mom - (s.cycle_max_mom - s.cycle_min_mom) * one_cycle_scale(s, it) end
    if skip_mom_decay then return s.cycle_max_mom end
    return s.cycle_max_mom * (1 + s.decay_mom_rate * (it - s.total + 1) / s.decay_step_size)
  end
  return lr
end

local Scheduler = {}
Scheduler.__index = Scheduler

-- step(): the next iteration's lr (and OneCycle's momentum) into every group.
function Scheduler:step()
  self.last_batch_iteration = self.last_batch_iteration + 1
  self:apply()
end

function Scheduler:apply()
  local it = self.last_batch_iteration
  set_lr(self.optimizer, self.lr_at(it))
  if self.s.with_mom then
    for _, g in ipairs(self.optimizer.param_groups) do g.betas = { self.s.mom(it), 0.99 } end
  end
end

function Scheduler:get_last_lr()
  local out = {}
  for i, g in ipairs(self.optimizer.param_groups) do out[i] = g.lr end
  return out
end

-- build(section, optimizer) -> scheduler (the first step's lr already set), as DeepSpeed's
-- engine builds it from the config.
function M.build(section, optimizer)
  if optimizer == nil then fail("scheduler: DeepSpeed schedules an optimizer; the engine has none") end
  local s = M.resolve(section)
  local sched = setmetatable({ type = section.type, s = s, optimizer = optimizer, last_batch_iteration = -1 },
    Scheduler)
  sched.lr_at = builders[section.type](s, optimizer)
  sched:apply()
  return sched
end

return M
