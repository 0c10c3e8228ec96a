-- prof.deepspeed.optimizer — DeepSpeed's optimizer policy: which optimizer the config's section builds.
--[[
deepspeed.initialize without an optimizer builds one from the config's optimizer section; profrun
follows its rules (deepspeedai/DeepSpeed main @ edaa7221: DeepSpeedConfig.__init__ in
runtime/config.py, DeepSpeedEngine._configure_basic_optimizer in runtime/engine.py,
ops/adam/fused_adam.py):
  * The type is lower-cased when it names one of DeepSpeed's own optimizers ("Adam", "ADAMW");
    any other name is looked up in torch.optim as written, so "SGD" works and "sgd" does not.
  * Without a type nothing is built and params are not read (the C loader then lists the section
    among the unused keys and leaves it out of the config table).
  * Adam and AdamW: torch_adam (default false) and adam_w_mode (default TRUE) are taken out, the
    rest goes to the constructor. Adam with adam_w_mode is AdamW (decoupled weight decay); AdamW
    stays AdamW whatever adam_w_mode says, so DeepSpeed's plain "Adam" is AdamW. Without
    torch_adam the constructor is FusedAdam (weight_decay 0 by default where torch.optim.AdamW's
    is 1e-2, no AMSGrad, no maximize; bias_correction false divides the raw moments); with it
    torch.optim.Adam or AdamW (no bias_correction). Either way the update is torch's formula, so
    profrun builds prof.optim.Adam or AdamW.
  * max_grad_norm among Adam's or SGD's params is an error that points to gradient_clipping.
  * Lamb is FusedLamb (ops/lamb/fused_lamb.py: lr, bias_correction, betas, eps, eps_inside_sqrt,
    weight_decay, max_grad_norm, max_coeff, min_coeff): prof.optim.Lamb.
  * OneBitAdam, ZeroOneAdam and OneBitLamb compress the gradients they exchange between processes;
    on one process what is left is their base optimizer, which profrun runs with a note: Adam's
    update with decoupled weight decay (AdamW) and no bias correction for the two Adams (their
    step divides the raw moments whatever bias_correction says), Lamb for OneBitLamb. Their
    communication and schedule params (freeze_step, cuda_aware, comm_backend_name, ...) are
    accepted and have no effect; the first step, which DeepSpeed spends making its compression
    buffers (the moments move, the weights do not), and 0/1 Adam's variance and local-step
    intervals are not reproduced.
The C loader has checked the section's own keys (type, params, legacy_fusion) and duplicates;
each param is checked here against the constructor it would reach.
]]
local core = require "prof.core"
local notes = require "prof.util.notes"

local M = {}

local EXPECTED = 'expected "Adam", "AdamW", "Lamb", "OneBitAdam", "ZeroOneAdam", "OneBitLamb" (in any case) '
  .. 'or "SGD"'

-- DeepSpeed's own optimizers that profrun does not build (runtime/config.py DEEPSPEED_OPTIMIZERS).
local DEEPSPEED_ONLY = { "adagrad", "muadam", "muadamw", "musgd", "lion", "muon" }

-- DeepSpeed's lower-cased names profrun builds, and what each runs as on one process.
local BUILT = { adam = true, adamw = true, lamb = true, onebitadam = "AdamW", zerooneadam = "AdamW",
  onebitlamb = "Lamb" }

-- Params per constructor and how each is checked: FusedAdam's (lr, bias_correction, betas,
-- eps, weight_decay, amsgrad), torch.optim.Adam's maximize and DeepSpeed's two switches; the
-- keyword arguments of torch.optim.SGD that profrun's SGD implements. In checking order.
local PARAMS = {
  { "lr", "number", 0 }, { "betas", "betas" }, { "eps", "number", 0 },
  { "weight_decay", "number", 0 }, { "amsgrad", "bool" }, { "maximize", "bool" },
  { "bias_correction", "bool" }, { "torch_adam", "bool" }, { "adam_w_mode", "bool" },
  { "momentum", "number", 0 }, { "dampening", "number", -math.huge },  -- torch: unchecked
  { "nesterov", "bool" }, { "eps_inside_sqrt", "bool" }, { "max_grad_norm", "number", 0 },
  { "max_coeff", "number", 0 }, { "min_coeff", "number", 0 },
}
local ADAM_KEYS = { "lr", "betas", "eps", "weight_decay", "amsgrad", "maximize",
  "bias_correction", "torch_adam", "adam_w_mode" }
local LAMB_KEYS = { "lr", "bias_correction", "betas", "eps", "eps_inside_sqrt", "weight_decay",
  "max_grad_norm", "max_coeff", "min_coeff" }
-- the 1-bit optimizers' own params (onebit/adam.py, zoadam.py, lamb.py): single-process no-ops
local ONEBIT_EXTRA = { "freeze_step", "cuda_aware", "comm_backend_name", "var_freeze_step",
  "var_update_scaler", "local_step_scaler", "local_step_clipper", "coeff_beta", "factor_max",
  "factor_min", "factor_threshold", "amsgrad" }
local SGD_KEYS = { "lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize" }
local function keys_of(kind)
  if kind == "SGD" then return SGD_KEYS end
  if kind == "adam" or kind == "adamw" then return ADAM_KEYS end
  local base = (kind == "lamb" or kind == "onebitlamb") and LAMB_KEYS
    or { "lr", "bias_correction", "betas", "eps", "eps_inside_sqrt", "weight_decay", "max_grad_norm" }
  if kind == "lamb" then return base end
  local all = { table.unpack(base) }
  for _, k in ipairs(ONEBIT_EXTRA) do all[#all + 1] = k end
  return all
end

-- What a JSON value is, in the C loader's words: string "x", number 1.5, true, null, ...
local function describe(v)
  if type(v) == "string" then
    local cut = #v > 32 and v:sub(1, 32) .. "..." or v
    return string.format('string "%s"', cut)
  elseif math.type(v) == "integer" then
    return "number " .. v
  elseif type(v) == "number" then
    return string.format("number %.15g", v)
  elseif v == core.null or v == nil then
    return "null"
  elseif type(v) == "table" then
    return next(v) ~= nil and v[1] == nil and "an object" or "an array"
  end
  return tostring(v)
end

local closest = require("prof.util.closest").closest

-- DeepSpeed's name for a type ("adam", "adamw" or "SGD"), or nil, message.
local function type_name(t)
  if type(t) ~= "string" then
    return nil, string.format("optimizer.type: %s, got %s", EXPECTED, describe(t))
  end
  local lower = t:lower()
  if BUILT[lower] then return lower end
  if t == "SGD" then return t end
  for _, name in ipairs(DEEPSPEED_ONLY) do
    if lower == name then
      return nil, string.format("optimizer.type: %s, got %s (DeepSpeed's %s is not built by profrun)",
        EXPECTED, describe(t), name)
    end
  end
  local near = closest(t, { "Adam", "AdamW", "Lamb", "OneBitAdam", "ZeroOneAdam", "OneBitLamb", "SGD" })
  if near then
    return nil, string.format('optimizer.type: %s, got %s (did you mean "%s"?)', EXPECTED,
      describe(t), near)
  end
  return nil, string.format("optimizer.type: %s, got %s", EXPECTED, describe(t))
end

-- nil, or the key path and message of what is wrong with value v of param key.
local function check_value(key, kind, min, v)
  local path = "optimizer.params." .. key
  if kind == "bool" then
    if type(v) ~= "boolean" then
      return path, string.format("%s: expected true or false, got %s", path, describe(v))
    end
  elseif kind == "number" then
    if type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge then
      return path, string.format("%s: expected a number, got %s", path, describe(v))
    elseif v < min then
      return path, string.format("%s: expected a number >= %g, got %s", path, min, describe(v))
    end
  elseif type(v) ~= "table" or describe(v) == "an object" then
    return path, string.format("%s: expected an array of 2 numbers, got %s", path, describe(v))
  elseif #v ~= 2 then
    return path, string.format("%s: expected 2 numbers, got an array of %d", path, #v)
  else
    for i = 1, 2 do   -- Adam's betas: two numbers in [0, 1), as torch checks them
      local b = v[i]
      if type(b) ~= "number" or not (b >= 0 and b < 1) then
        return path .. "[" .. (i - 1) .. "]", string.format("%s[%d]: expected a number in [0, 1), got %s",
          path, i - 1, describe(b))
      end
    end
  end
end

local function refuse(key, msg)
  return nil, "optimizer.params." .. key, "optimizer.params." .. key .. ": " .. msg
end

-- What DeepSpeed's constructor would refuse among values that are each fine on their own.
local function check_combination(kind, p)
  if kind == "SGD" then
    if p.lr == nil then
      return refuse("lr", "SGD needs a learning rate (profrun's SGD, like torch 1.13's, has no default)")
    end
    if p.nesterov == true and ((p.momentum or 0) <= 0 or (p.dampening or 0) ~= 0) then
      return refuse("nesterov", "Nesterov momentum requires a momentum and zero dampening")
    end
  elseif kind ~= "adam" and kind ~= "adamw" then
    if p.amsgrad == true then
      return refuse("amsgrad", "DeepSpeed's " .. kind .. " does not support AMSGrad")
    end
    if (p.min_coeff or 0.01) > (p.max_coeff or 10) then
      return refuse("min_coeff", "must not exceed max_coeff")
    end
  elseif p.torch_adam ~= true then
    if p.maximize ~= nil then
      return refuse("maximize", "DeepSpeed's FusedAdam has no maximize (torch's Adam has: set "
        .. '"torch_adam": true)')
    end
    if p.amsgrad == true then
      return refuse("amsgrad", "DeepSpeed's FusedAdam does not support AMSGrad (torch's Adam "
        .. 'does: set "torch_adam": true)')
    end
  elseif p.bias_correction ~= nil then
    return refuse("bias_correction", "torch's Adam has no bias_correction (DeepSpeed's FusedAdam "
      .. 'has: leave "torch_adam" false)')
  end
  return true
end

--[[
Checks an optimizer section {type=, params=} (from the config loader, type not nil) as DeepSpeed
would. Returns the section with DeepSpeed's type name and params (an empty table when absent),
or nil, the key path to blame, the message (the loader's form, without the file or --set prefix).
]]
function M.check(section)
  local kind, err = type_name(section.type)
  if kind == nil then return nil, "optimizer.type", err end
  local params = section.params
  if params == nil or params == core.null then params = {} end  -- DeepSpeed: `or {}`
  if type(params) ~= "table" or describe(params) == "an array" and next(params) ~= nil then
    return nil, "optimizer.params", "optimizer.params: expected an object, got " .. describe(params)
  end
  if params.max_grad_norm ~= nil and (kind == "SGD" or kind == "adam" or kind == "adamw") then
    return nil, "optimizer.params.max_grad_norm", "optimizer.params.max_grad_norm: not an optimizer "
      .. 'parameter in DeepSpeed: use the top-level "gradient_clipping"'
  end
  -- "auto" (Hugging Face's placeholder): DeepSpeed's default, with a note
  local explicit = {}
  for k, v in pairs(params) do
    if v == "auto" then
      notes.once("auto:optimizer.params." .. k, string.format('optimizer.params.%s is "auto": the '
        .. "optimizer's default is used", k))
    else
      explicit[k] = v
    end
  end
  params = explicit
  local allowed = keys_of(kind)
  local given = {}
  for k in pairs(params) do given[#given + 1] = k end
  table.sort(given)   -- one message whatever the table's order
  for _, k in ipairs(given) do
    local ok = false
    for _, a in ipairs(allowed) do ok = ok or a == k end
    if not ok then
      local path = "optimizer.params." .. k
      local near = closest(k, allowed)
      -- as the file spells the type: "adam" would not be found there
      local msg = string.format('unknown key "%s" for optimizer type "%s"', path, section.type)
      if near then msg = msg .. string.format(' (did you mean "%s"?)', near) end
      return nil, path, msg
    end
  end
  for _, row in ipairs(PARAMS) do
    local v = params[row[1]]
    if v ~= nil then
      local path, msg = check_value(row[1], row[2], row[3], v)
      if path then return nil, path, msg end
    end
  end
  local ok, path, msg = check_combination(kind, params)
  if not ok then return nil, path, msg end
  local out = {}
  for k, v in pairs(section) do out[k] = v end
  out.type, out.params = kind, params
  return out
end

--[[
The optimizer a checked section builds: its prof.optim class name ("Adam", "AdamW", "Lamb" or
"SGD"), the constructor's options, with DeepSpeed's switches taken out and FusedAdam's defaults
in, and for the 1-bit optimizers a note saying what runs instead.
]]
function M.plan(section)
  local opts = {}
  for k, v in pairs(section.params or {}) do opts[k] = v end
  if section.type == "SGD" then return "SGD", opts end
  if section.type == "lamb" then return "Lamb", opts end
  local base = BUILT[section.type]
  if type(base) == "string" then
    for _, k in ipairs(ONEBIT_EXTRA) do opts[k] = nil end
    -- the 1-bit Adams have Lamb's eps_inside_sqrt and max_grad_norm, not Adam's; their step
    -- (onebit/adam.py, zoadam.py) divides the raw moments whatever bias_correction says
    if base == "AdamW" then
      opts.eps_inside_sqrt, opts.max_grad_norm = nil, nil
      opts.bias_correction = false
      if opts.weight_decay == nil then opts.weight_decay = 0 end
    end
    return base, opts, string.format("optimizer %s runs as %s on one process (its 1-bit gradient "
      .. "compression works between processes; its communication params have no effect)",
      section.type, base)
  end
  local torch_adam = opts.torch_adam == true
  local adamw = section.type == "adamw" or opts.adam_w_mode ~= false
  opts.torch_adam, opts.adam_w_mode = nil, nil
  if not torch_adam and opts.weight_decay == nil then opts.weight_decay = 0 end
  return adamw and "AdamW" or "Adam", opts
end

return M
