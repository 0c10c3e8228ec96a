-- optim.lua — prof.optim: torch.optim's SGD, Adam and AdamW (param groups, state, zero_grad; C does
-- the updates) and DeepSpeed's Lamb (FusedLamb's update, in tensor ops).
local core = require "prof.core"
local T = require "prof.tensor"
local record_function = require("prof.profiler").record_function
local fmt = require("prof.nn.args").fmt

local M = {}

-- Optimizer: what torch.optim.Optimizer does in Python. Subclasses give DEFAULTS (nil marks a
-- required option), check(defaults) and update(group) (one C call per group and step).
local Optimizer = {}
Optimizer.__index = Optimizer
Optimizer.__name = "Optimizer"
M.Optimizer = Optimizer

local REQUIRED = setmetatable({}, { __tostring = function() return "<required parameter>" end })

local function class(name, base)
  local cls = setmetatable({}, { __index = base, __call = function(c, ...) return c:new(...) end,
                                 __tostring = function() return "class " .. name end })
  cls.__index, cls.__name, cls.__tostring = cls, name, base.__tostring
  return cls
end

local function is_group(v)
  return type(v) == "table" and not core.is_tensor(v) and v.params ~= nil
end

-- cls(params, opts): params is a list of tensors (model:parameters()) or of groups {params=, ...}.
-- Errors name the caller's line: level counts frames from the function that raises.
function Optimizer:new(params, opts, level)
  level = level or 2
  local defaults = {}
  for k, v in pairs(self.DEFAULTS) do defaults[k] = v end
  for k, v in pairs(opts or {}) do
    if self.DEFAULTS[k] == nil then
      error(string.format("%s: unexpected keyword argument '%s'", self.__name, tostring(k)), level)
    end
    defaults[k] = v
  end
  self.check(defaults, level + 1)   -- the caller is one frame further from check
  local obj = setmetatable({ defaults = defaults, state = {}, param_groups = {} }, self)
  if core.is_tensor(params) or type(params) ~= "table" then
    error(string.format("%s: params argument given to the optimizer should be a list of tensors "
                        .. "or of groups, but got %s", self.__name,
                        core.is_tensor(params) and "a tensor" or type(params)), level)
  end
  if #params == 0 then error(self.__name .. ": optimizer got an empty parameter list", level) end
  local groups = is_group(params[1]) and params or { { params = params } }
  for _, g in ipairs(groups) do obj:add_param_group(g, level + 1) end
  return obj
end

-- add_param_group{params=, lr=, ...}: options the group leaves out come from the defaults.
function Optimizer:add_param_group(group, level)
  level = level or 2
  if not is_group(group) then error("add_param_group: expected a table with params", level) end
  local params = core.is_tensor(group.params) and { group.params } or group.params
  local g, seen = { params = {} }, {}
  for _, other in ipairs(self.param_groups) do
    for _, p in ipairs(other.params) do seen[p] = true end
  end
  for i, p in ipairs(params) do
    if not core.is_tensor(p) then
      error(string.format("optimizer can only optimize tensors, but parameter %d is a %s", i, type(p)),
            level)
    end
    if not p.is_leaf then error("can't optimize a non-leaf tensor", level) end
    -- a tensor twice would be stepped twice: torch only warns, here it is an error
    if seen[p] then error("some parameters appear more than once in the parameter groups", level) end
    seen[p] = true
    g.params[i] = p
  end
  for k, v in pairs(group) do
    if k ~= "params" then g[k] = v end
  end
  for k, v in pairs(self.defaults) do
    if g[k] == nil then
      if v == REQUIRED then
        error("parameter group didn't specify a value of required optimization parameter " .. k, level)
      end
      -- groups own their lists (betas): changing one group's must not change another's
      g[k] = type(v) == "table" and { table.unpack(v) } or v
    end
  end
  self.param_groups[#self.param_groups + 1] = g
end

-- Runs fn with gradient recording on (torch.enable_grad), restoring the mode even on error.
local function enable_grad(fn)
  local prev = core.set_grad_enabled(true)
  local r = table.pack(pcall(fn))
  core.set_grad_enabled(prev)
  if not r[1] then error(r[2], 0) end
  return table.unpack(r, 2, r.n)
end

-- step(closure): one update of every group (closure re-evaluates the loss first; its result is
-- returned). Parameters without a gradient are skipped, as torch does.
-- Inside torch's range "Optimizer.step#SGD.step" (the closure's work included, as torch's hook).
function Optimizer:step(closure)
  local _ <close> = record_function("Optimizer.step#" .. self.__name .. ".step")
  local loss
  if closure ~= nil then loss = enable_grad(closure) end
  for _, group in ipairs(self.param_groups) do self:update(group) end
  return loss
end

-- Zeroes one tensor's gradient: dropped (set_to_none), else zeroed in place where it can be.
local function zero_grad_of(p, set_to_none)
  if set_to_none then
    p.grad = nil
    return
  end
  local g = p.grad
  if g == nil then return end
  if g.device ~= "cpu" or (g.dtype == "float32" and g:is_contiguous()) then
    g:fill_(0)
  else
    p.grad = T.zeros(g.shape, { dtype = g.dtype, device = g.device })
  end
end

-- zero_grad(set_to_none = true): torch 2's default (1.13 zeroes in place by default).
function Optimizer:zero_grad(set_to_none)
  local _ <close> = record_function("Optimizer.zero_grad#" .. self.__name .. ".zero_grad")
  if set_to_none == nil then set_to_none = true end
  for _, group in ipairs(self.param_groups) do
    for _, p in ipairs(group.params) do zero_grad_of(p, set_to_none) end
  end
end

-- torch's Optimizer.__repr__: each group's options in sorted order.
function Optimizer:__tostring()
  local lines = { self.__name .. " (" }
  for i, group in ipairs(self.param_groups) do
    lines[#lines + 1] = "Parameter Group " .. (i - 1)
    local keys = {}
    for k in pairs(group) do
      if k ~= "params" then keys[#keys + 1] = k end
    end
    table.sort(keys)
    for _, k in ipairs(keys) do lines[#lines + 1] = "    " .. k .. ": " .. fmt(group[k]) end
  end
  return table.concat(lines, "\n") .. "\n)"
end

local function invalid(what, v, level)
  error(string.format("Invalid %s: %s", what, fmt(v)), level + 1)
end

-- {====================== SGD ======================}

-- SGD(params, {lr=, momentum=0, dampening=0, weight_decay=0, nesterov=false, maximize=false})
local SGD = class("SGD", Optimizer)
SGD.DEFAULTS = { lr = REQUIRED, momentum = 0, dampening = 0, weight_decay = 0, nesterov = false,
                 maximize = false }
M.SGD = SGD

function SGD.check(d, level)
  if d.lr ~= REQUIRED and d.lr < 0 then invalid("learning rate", d.lr, level) end
  if d.momentum < 0 then invalid("momentum value", d.momentum, level) end
  if d.weight_decay < 0 then invalid("weight_decay value", d.weight_decay, level) end
  if d.nesterov and (d.momentum <= 0 or d.dampening ~= 0) then
    error("Nesterov momentum requires a momentum and zero dampening", level)
  end
end

function SGD:update(group)
  core.sgd_step(group.params, self.state, group)
end

-- {====================== Adam and AdamW ======================}

local function adam_check(d, level)
  if d.lr < 0 then invalid("learning rate", d.lr, level) end
  if d.eps < 0 then invalid("epsilon value", d.eps, level) end
  for i = 1, 2 do
    local b = d.betas[i]
    if type(b) ~= "number" or b < 0 or b >= 1 then
      error(string.format("Invalid beta parameter at index %d: %s", i - 1, fmt(b)), level)
    end
  end
  if d.weight_decay < 0 then invalid("weight_decay value", d.weight_decay, level) end
end

-- Adam(params, {lr=1e-3, betas={0.9, 0.999}, eps=1e-8, weight_decay=0, amsgrad=false,
-- maximize=false, bias_correction=true}); weight decay is added to the gradient (L2).
-- bias_correction is DeepSpeed FusedAdam's (torch's Adam always corrects): false divides the raw
-- moments, m / (sqrt(v) + eps), as its kernel does then.
local Adam = class("Adam", Optimizer)
Adam.DEFAULTS = { lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8, weight_decay = 0, amsgrad = false,
                  maximize = false, bias_correction = true }
Adam.check = adam_check
M.Adam = Adam

function Adam:update(group)
  core.adam_step(group.params, self.state, group, false)
end

-- AdamW: the same options, weight_decay 1e-2 by default and decoupled (p *= 1 - lr·weight_decay).
local AdamW = class("AdamW", Optimizer)
AdamW.DEFAULTS = { lr = 1e-3, betas = { 0.9, 0.999 }, eps = 1e-8, weight_decay = 1e-2,
                   amsgrad = false, maximize = false, bias_correction = true }
AdamW.check = adam_check
M.AdamW = AdamW

function AdamW:update(group)
  core.adam_step(group.params, self.state, group, true)
end

-- {====================== Lamb ======================}

--[[
Lamb(params, {lr=1e-3, bias_correction=true, betas={0.9, 0.999}, eps=1e-8, eps_inside_sqrt=false,
weight_decay=0, max_grad_norm=0, max_coeff=10, min_coeff=0.01}): DeepSpeed's FusedLamb
(deepspeed/ops/lamb/fused_lamb.py and csrc/lamb/fused_lamb_cuda_kernel.cu), per parameter p with
gradient g at step t:
  m = b1·m + (1 − b1)·g;   v = b2·v + (1 − b2)·g²
  u = m / (sqrt(v) + eps)   (eps_inside_sqrt: m / sqrt(v + eps)) + weight_decay·p
  trust = clamp(‖p‖ / ‖u‖, min_coeff, max_coeff), 1 when either norm is 0
  p = p − step_size·trust·u,  step_size = lr·sqrt(1 − b2^t) / (1 − b1^t)  (lr without bias_correction)
The bias correction is folded into step_size, as the kernel does, not applied to m and v.
max_grad_norm only scales gradients that DeepSpeed's engine never passes (step(grad_norms=)), so
it is accepted and has no effect, as there. No AMSGrad (FusedLamb refuses it).
]]
local Lamb = class("Lamb", Optimizer)
Lamb.DEFAULTS = { lr = 1e-3, bias_correction = true, betas = { 0.9, 0.999 }, eps = 1e-8,
                  eps_inside_sqrt = false, weight_decay = 0, max_grad_norm = 0, max_coeff = 10,
                  min_coeff = 0.01 }
M.Lamb = Lamb

function Lamb.check(d, level)
  adam_check(d, level + 1)
  if d.max_grad_norm < 0 then invalid("max_grad_norm value", d.max_grad_norm, level) end
  if not (d.min_coeff >= 0 and d.min_coeff <= d.max_coeff) then
    error(string.format("Invalid min_coeff/max_coeff: %s, %s (0 <= min_coeff <= max_coeff)",
      fmt(d.min_coeff), fmt(d.max_coeff)), level)
  end
end

local function norm(t)
  return math.sqrt(T.sum(T.mul(t, t)):item())
end

function Lamb:update(group)
  local b1, b2 = group.betas[1], group.betas[2]
  local prev = core.set_grad_enabled(false)
  local ok, err = pcall(function()
    for _, p in ipairs(group.params) do
      local g = p.grad
      if g ~= nil then
        local st = self.state[p]
        if st == nil then
          st = { step = 0, exp_avg = T.zeros(p.shape, { dtype = p.dtype, device = p.device }),
                 exp_avg_sq = T.zeros(p.shape, { dtype = p.dtype, device = p.device }) }
          self.state[p] = st
        end
        st.step = st.step + 1
        st.exp_avg = T.add(T.mul(st.exp_avg, b1), T.mul(g, 1 - b1))
        st.exp_avg_sq = T.add(T.mul(st.exp_avg_sq, b2), T.mul(T.mul(g, g), 1 - b2))
        local denom = group.eps_inside_sqrt and T.sqrt(T.add(st.exp_avg_sq, group.eps))
          or T.add(T.sqrt(st.exp_avg_sq), group.eps)
        local u = T.div(st.exp_avg, denom)
        if group.weight_decay ~= 0 then u = T.add(u, T.mul(p, group.weight_decay)) end
        local w_norm, u_norm = norm(p), norm(u)
        local trust = 1
        if w_norm ~= 0 and u_norm ~= 0 then
          trust = math.min(math.max(w_norm / u_norm, group.min_coeff), group.max_coeff)
        end
        local step_size = group.lr
        if group.bias_correction then
          step_size = group.lr * math.sqrt(1 - b2 ^ st.step) / (1 - b1 ^ st.step)
        end
        p:copy_(T.sub(p, T.mul(u, step_size * trust)))
      end
    end
  end)
  core.set_grad_enabled(prev)
  if not ok then error(err, 0) end
end

return M
