-- ds_optimizer_spec.lua — DeepSpeed's optimizer policy in Lua: type names, params, combinations,
-- with the loader's messages (file or --set prefix, key path); the cases moved from test_config.c.
local config = require "prof.config"
local core = require "prof.core"
local ds_optimizer = require "prof.deepspeed.optimizer"

local FIXTURE = "spec/fixtures/configs/optimizer_adam.json"

-- The optimizer section config.load gives for overrides over the defaults.
local function section(sets)
  return assert(config.load(nil, sets)).optimizer
end

-- The message config.load fails with for one override.
local function set_error(override)
  local cfg, msg, kind = config.load(nil, { override })
  assert.is_nil(cfg)
  assert.equal("config", kind)
  return msg
end

local EXPECTED = 'optimizer.type: expected "Adam", "AdamW", "Lamb", "OneBitAdam", "ZeroOneAdam", "OneBitLamb" '
  .. '(in any case) or "SGD", got '

describe("ds_optimizer", function()
  it("lower-cases DeepSpeed's own optimizers' names; torch.optim's are looked up as written", function()
    local cases = { Adam = "adam", adam = "adam", ADAM = "adam", AdamW = "adamw", adamW = "adamw",
      SGD = "SGD" }
    for given, want in pairs(cases) do
      local o = section({ "optimizer.type=" .. given, "optimizer.params.lr=0.5" })
      assert.same({ type = want, params = { lr = 0.5 } }, o)
    end
  end)

  it("without a type builds nothing and reads no params; null drops the section", function()
    local cfg = assert(config.load(nil, { 'optimizer={"params": {"momentum": "x"}, "type": null}' }))
    assert.is_nil(cfg.optimizer)
    assert.same({ "optimizer" }, cfg.unused_keys)
    assert.is_nil(section({ "optimizer.type=SGD", "optimizer=null" }))
  end)

  it("accepts what each constructor takes", function()
    local o = section({ 'optimizer={"type": "SGD", "legacy_fusion": false, '
      .. '"params": {"lr": 0.1, "momentum": 0.9, "dampening": -0.5, "weight_decay": 0, "maximize": true}}' })
    -- torch does not check dampening
    assert.same({ lr = 0.1, momentum = 0.9, dampening = -0.5, weight_decay = 0, maximize = true },
      o.params)
    assert.is_false(o.legacy_fusion)
    -- torch's Adam takes amsgrad and maximize; FusedAdam takes bias_correction true
    o = section({ 'optimizer={"type": "Adam", "params": {"torch_adam": true, "amsgrad": true, '
      .. '"maximize": true, "adam_w_mode": false}}' })
    assert.same({ torch_adam = true, amsgrad = true, maximize = true, adam_w_mode = false }, o.params)
    o = section({ 'optimizer={"type": "adamw", "params": {"bias_correction": true, "amsgrad": false}}' })
    assert.same({ bias_correction = true, amsgrad = false }, o.params)
  end)

  it("plans FusedAdam's defaults and takes DeepSpeed's switches out", function()
    assert.same({ "AdamW", { lr = 1, weight_decay = 0 } },
      { ds_optimizer.plan({ type = "adam", params = { lr = 1 } }) })
    assert.same({ "Adam", { lr = 1, weight_decay = 0 } },
      { ds_optimizer.plan({ type = "adam", params = { lr = 1, adam_w_mode = false } }) })
    assert.same({ "AdamW", { lr = 1 } },   -- torch's AdamW keeps its own weight_decay default
      { ds_optimizer.plan({ type = "adamw", params = { lr = 1, torch_adam = true, adam_w_mode = false } }) })
    assert.same({ "SGD", { lr = 1, nesterov = true } },
      { ds_optimizer.plan({ type = "SGD", params = { lr = 1, nesterov = true } }) })
  end)

  -- Each check with the key path it names; Adam's cases ride on a file-free Adam section.
  it("refuses what DeepSpeed's constructors would, naming the key path", function()
    local cases = {
      { "optimizer.type=sgd", EXPECTED .. 'string "sgd" (did you mean "SGD"?)' },
      { "optimizer.type=Adamw_", EXPECTED .. 'string "Adamw_" (did you mean "AdamW"?)' },
      { "optimizer.type=Lion", EXPECTED .. 'string "Lion" (DeepSpeed\'s lion is '
        .. "not built by profrun)" },
      { "optimizer.type=RMSprop", EXPECTED .. 'string "RMSprop"' },
      { "optimizer.type=1", EXPECTED .. "number 1" },
      { 'optimizer={"type": "Adam", "params": 0.1}',
        "optimizer.params: expected an object, got number 0.1" },
      { 'optimizer={"type": "Adam", "params": {"lr": "fast"}}',
        'optimizer.params.lr: expected a number, got string "fast"' },
      { 'optimizer={"type": "Adam", "params": {"lr": -1}}',
        "optimizer.params.lr: expected a number >= 0, got number -1" },
      { 'optimizer={"type": "Adam", "params": {"eps": null}}',
        "optimizer.params.eps: expected a number, got null" },
      { 'optimizer={"type": "Adam", "params": {"betas": 0.9}}',
        "optimizer.params.betas: expected an array of 2 numbers, got number 0.9" },
      { 'optimizer={"type": "Adam", "params": {"betas": [0.9, 0.99, 0.5]}}',
        "optimizer.params.betas: expected 2 numbers, got an array of 3" },
      { 'optimizer={"type": "Adam", "params": {"betas": [0.9, 1]}}',
        "optimizer.params.betas[1]: expected a number in [0, 1), got number 1" },
      { 'optimizer={"type": "Adam", "params": {"betas": ["a", 0.5]}}',
        'optimizer.params.betas[0]: expected a number in [0, 1), got string "a"' },
      { 'optimizer={"type": "Adam", "params": {"weight_decay": -0.1}}',
        "optimizer.params.weight_decay: expected a number >= 0, got number -0.1" },
      { 'optimizer={"type": "Adam", "params": {"adam_w_mode": 1}}',
        "optimizer.params.adam_w_mode: expected true or false, got number 1" },
      { 'optimizer={"type": "Adam", "params": {"weight_decy": 1}}',
        'unknown key "optimizer.params.weight_decy" for optimizer type "Adam" '
        .. '(did you mean "weight_decay"?)' },
      { 'optimizer={"type": "ADAMW", "params": {"momentum": 0.9}}',
        'unknown key "optimizer.params.momentum" for optimizer type "ADAMW"' },
      { 'optimizer={"type": "Adam", "params": {"max_grad_norm": 1.0}}',
        "optimizer.params.max_grad_norm: not an optimizer parameter in DeepSpeed: use the "
        .. 'top-level "gradient_clipping"' },
      { 'optimizer={"type": "Adam", "params": {"amsgrad": true}}',
        "optimizer.params.amsgrad: DeepSpeed's FusedAdam does not support AMSGrad (torch's Adam "
        .. 'does: set "torch_adam": true)' },
      { 'optimizer={"type": "Adam", "params": {"maximize": false}}',
        "optimizer.params.maximize: DeepSpeed's FusedAdam has no maximize (torch's Adam has: set "
        .. '"torch_adam": true)' },
      { 'optimizer={"type": "Adam", "params": {"torch_adam": true, "bias_correction": true}}',
        "optimizer.params.bias_correction: torch's Adam has no bias_correction (DeepSpeed's "
        .. 'FusedAdam has: leave "torch_adam" false)' },
      { 'optimizer={"type": "SGD", "params": {"momentum": 0.9}}',
        "optimizer.params.lr: SGD needs a learning rate (profrun's SGD, like torch 1.13's, has no "
        .. "default)" },
      { 'optimizer={"type": "SGD"}',
        "optimizer.params.lr: SGD needs a learning rate (profrun's SGD, like torch 1.13's, has no "
        .. "default)" },
      { 'optimizer={"type": "SGD", "params": {"lr": 0.1, "nesterov": true}}',
        "optimizer.params.nesterov: Nesterov momentum requires a momentum and zero dampening" },
      { 'optimizer={"type": "SGD", "params": {"lr": 0.1, "momentum": 0.9, "dampening": 0.1, '
        .. '"nesterov": true}}',
        "optimizer.params.nesterov: Nesterov momentum requires a momentum and zero dampening" },
      { 'optimizer={"type": "SGD", "params": {"lr": 0.1, "momentum": -1}}',
        "optimizer.params.momentum: expected a number >= 0, got number -1" },
      { 'optimizer={"type": "SGD", "params": {"lr": 0.1, "adam_w_mode": true}}',
        'unknown key "optimizer.params.adam_w_mode" for optimizer type "SGD"' },
      { 'optimizer={"type": "SGD", "params": {"lr": 0.1, "betas": [0.9, 0.9]}}',
        'unknown key "optimizer.params.betas" for optimizer type "SGD"' },
    }
    for _, c in ipairs(cases) do
      assert.equal("--set " .. c[1] .. ": " .. c[2], set_error(c[1]))
    end
  end)

  it("blames the override that made a combination, else the file", function()
    local _, msg = config.load(FIXTURE, { "optimizer.params.amsgrad=true" })
    assert.equal("--set optimizer.params.amsgrad=true: optimizer.params.amsgrad: DeepSpeed's "
      .. 'FusedAdam does not support AMSGrad (torch\'s Adam does: set "torch_adam": true)', msg)
    -- an unrelated override leaves the blame with the file
    _, msg = config.load(FIXTURE, { "optimizer.params.amsgrad=true", "device=cpu" })
    assert.truthy(msg:find("^%-%-set optimizer%.params%.amsgrad=true: "))
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write('{"optimizer": {"type": "Adagrad"}}')
    f:close()
    _, msg = config.load(path, { "device=cpu" })
    os.remove(path)
    assert.equal(path .. ": " .. EXPECTED .. 'string "Adagrad" (DeepSpeed\'s adagrad is not built by profrun)',
      msg)
  end)

  it("hands DeepSpeed's JSON null inside a section over as core.null", function()
    local cfg = assert(config.load(nil, { 'optimizer={"type": "Adam", "params": {"lr": 0.1}}',
      'activation_checkpointing={"number_checkpoints": null}' }))
    assert.equal(core.null, cfg.activation_checkpointing.number_checkpoints)
  end)
end)
