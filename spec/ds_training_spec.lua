-- ds_training_spec.lua — the engine honours fp16 / bf16 (dtype, DeepSpeed's loss
-- scaling), gradient_clipping and the scheduler section with DeepSpeed's names; says once what it
-- accepts but cannot apply; reads "auto" as the default.
local core = require "prof.core"
local config = require "prof.config"
local ds_scheduler = require "prof.deepspeed.scheduler"
local ds_training = require "prof.deepspeed.training"
local loss_scaler = require "prof.deepspeed.loss_scaler"
local notes = require "prof.util.notes"
local optim = require "prof.optim"
local prof = require "prof"
local nn = require "prof.nn"
local T = require "prof.tensor"
local run = require "spec.support.run"
local json = require "dkjson"

local F = nn.functional
local FIXTURE = "spec/fixtures/configs/optimizer_adam.json"

-- The lr a schedule gives each of n optimizer steps (the lr in force when step k runs).
local function lrs(section, n, opt)
  local p = T.zeros({ 2 })
  p.requires_grad = true
  opt = opt or optim.SGD({ p }, { lr = 1 })
  local s = ds_scheduler.build(section, opt)
  local out = {}
  for k = 1, n do
    out[k] = opt.param_groups[1].lr
    s:step()
  end
  return out, opt, s
end

local function assert_list_near(want, got, tol)
  assert.equal(#want, #got)
  for i = 1, #want do assert.near(want[i], got[i], tol or 1e-12, "entry " .. i) end
end

local said, sink
local function watch_notes()
  notes.reset()
  said, sink = {}, notes.sink
  notes.sink = function(msg) said[#said + 1] = msg end
end
local function unwatch_notes() notes.sink = sink end

describe("DeepSpeed's training sections in the engine", function()
  setup(function() T.set_default_device("cpu") end)
  teardown(function() config.set(assert(core.load_config(nil, {}))) end)
  before_each(watch_notes)
  after_each(unwatch_notes)

  describe("scheduler, as deepspeed/runtime/lr_schedules.py defines it", function()
    -- DeepSpeed's order: construction sets the first step's lr (last_batch_iteration -1), then
    -- the engine calls step() after every optimizer step. Step k runs with iteration k - 1.
    it("WarmupLR, log: warmup_min_lr, then min + (max - min) log(it + 1) / log(N)", function()
      local got = lrs({ type = "WarmupLR", params = { warmup_min_lr = 0, warmup_max_lr = 0.01,
        warmup_num_steps = 4 } }, 6)
      -- it = -1: 0; it = 0: log 1 = 0; it = 1: log 2 / log 4 = 1/2; it = 2: log 3 / log 4; it >= 3: 1
      assert_list_near({ 0, 0, 0.005, 0.01 * math.log(3) / math.log(4), 0.01, 0.01 }, got)
    end)

    it("WarmupLR, linear, and warmup_max_lr defaulting to the optimizer's lr", function()
      local got = lrs({ type = "WarmupLR", params = { warmup_num_steps = 4, warmup_type = "linear" } }, 6)
      -- max = the SGD's lr 1; it / 4 for it = 0..3, then 1
      assert_list_near({ 0, 0, 0.25, 0.5, 0.75, 1 }, got)
    end)

    it("WarmupDecayLR: the warmup, then linear decay to 0 at total_num_steps", function()
      local got = lrs({ type = "WarmupDecayLR", params = { total_num_steps = 8, warmup_max_lr = 0.01,
        warmup_num_steps = 4, warmup_type = "linear" } }, 11)
      -- it >= 4: max(0, (8 - it) / (8 - 4)) * 0.01
      assert_list_near({ 0, 0, 0.0025, 0.005, 0.0075, 0.01, 0.0075, 0.005, 0.0025, 0, 0 }, got)
    end)

    it("OneCycle: up and down once, then decay; momentum cycled inversely on Adam's betas", function()
      local p = T.zeros({ 2 })
      p.requires_grad = true
      local opt = optim.Adam({ p }, { lr = 1 })
      local betas = {}
      local s = ds_scheduler.build({ type = "OneCycle", params = { cycle_min_lr = 0.1, cycle_max_lr = 1.0,
        cycle_first_step_size = 2, decay_lr_rate = 0.5, decay_step_size = 2 } }, opt)
      local got = {}
      for k = 1, 7 do
        got[k], betas[k] = opt.param_groups[1].lr, opt.param_groups[1].betas
        s:step()
      end
      -- T = 4, r = 1/2. it = 0: x = 1/4, scale 1/2: 0.55; it = 1: x = 1/2, scale 1: 1.0; it = 2: x =
      -- 3/4, scale (3/4 - 1)/(1/2 - 1) = 1/2: 0.55; it = 3: x = 0: 0.1; it = 4: 0.1 / (1 + 0.5 * 1/2) =
      -- 0.08; it = 5: 0.1 / (1 + 0.5 * 2/2) = 0.0667 (first entry: construction's cycle_min_lr)
      assert_list_near({ 0.1, 0.55, 1.0, 0.55, 0.1, 0.08, 0.1 / 1.5 }, got)
      -- betas: (0.8 at construction, then 0.9 - 0.1 * scale), the second always 0.99; decay off
      local mom = {}
      for k = 1, 7 do
        mom[k] = betas[k][1]
        assert.equal(0.99, betas[k][2])
      end
      assert_list_near({ 0.8, 0.85, 0.8, 0.85, 0.9, 0.9, 0.9 }, mom)
    end)

    it("names unknown and missing params, and reads \"auto\" as the default with a note", function()
      local ok, err = pcall(ds_scheduler.build, { type = "WarmupLR", params = { warmup_max_lrr = 1 } },
        optim.SGD({ T.zeros({ 1 }) }, { lr = 1 }))
      assert.is_false(ok)
      assert.equal('unknown key "scheduler.params.warmup_max_lrr" for scheduler type "WarmupLR"', err)
      ok, err = pcall(ds_scheduler.build, { type = "WarmupDecayLR", params = { total_num_steps = "auto" } },
        optim.SGD({ T.zeros({ 1 }) }, { lr = 1 }))
      assert.is_false(ok)
      assert.truthy(err:find('scheduler.params.total_num_steps: "auto" has no default', 1, true), err)
      ok, err = pcall(ds_scheduler.build, { type = "Cyclic" }, optim.SGD({ T.zeros({ 1 }) }, { lr = 1 }))
      assert.is_false(ok)
      assert.truthy(err:find("scheduler.type: expected one of WarmupLR, WarmupDecayLR, OneCycle", 1, true))
      local got = lrs({ type = "WarmupLR", params = { warmup_min_lr = "auto", warmup_max_lr = "auto",
        warmup_num_steps = 2, warmup_type = "linear" } }, 3)
      assert_list_near({ 0, 0, 0.5 }, got)
      assert.equal(2, #said)
      assert.truthy(said[1]:find('is "auto": DeepSpeed\'s default is used', 1, true))
    end)
  end)

  describe("fp16 loss scaling, as DynamicLossScaler (runtime/fp16/loss_scaler.py)", function()
    it("halves on overflow after the hysteresis, doubles every loss_scale_window clean steps", function()
      local s = loss_scaler.new({ enabled = true, initial_scale_power = 4, loss_scale_window = 2, hysteresis = 2 })
      local seq = {}
      for _, overflow in ipairs({ false, false, true, true, false, false }) do
        s:update(overflow)
        seq[#seq + 1] = s.cur_scale
      end
      -- iter 0: (0 + 1) % 2 = 1, 16; iter 1: 2 % 2 = 0, 32; overflow: hysteresis 2 -> 1, 32;
      -- overflow: 16 (last overflow 3); iter 4: 1 % 2, 16; iter 5: 2 % 2 = 0, 32
      assert.same({ 16, 32, 32, 16, 16, 32 }, seq)
    end)

    it("stops at min_loss_scale and keeps a static loss_scale", function()
      local s = loss_scaler.new({ initial_scale_power = 4, hysteresis = 1, min_loss_scale = 8 })
      s:update(true)
      s:update(true)
      assert.equal(8, s.cur_scale)
      local static = loss_scaler.new({ loss_scale = 128 })
      static:update(true)
      assert.equal(128, static.cur_scale)
      -- DeepSpeed's defaults: 2^16, window 1000, hysteresis 2, min 1
      local d = loss_scaler.new({})
      assert.same({ 65536, 1000, 2, 1 }, { d.cur_scale, d.scale_window, d.delayed_shift, d.min_scale })
    end)
  end)

  describe("through the engine", function()
    local function model()
      T.manual_seed(7)
      return nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 3))
    end
    local function weights(m)
      local w = {}
      for i, p in ipairs(m:parameters()) do w[i] = p:tolist() end
      return w
    end
    local SGD = 'optimizer={"type": "SGD", "params": {"lr": 0.1}}'

    local function train(sets, xs)
      local all = { "flops_profiler.enabled=false", SGD }
      for _, s in ipairs(sets) do all[#all + 1] = s end
      local m = model()
      local engine, opt = prof.initialize { model = m, config = assert(config.load(FIXTURE, all)) }
      local lr = {}
      for i, x in ipairs(xs) do
        lr[i] = opt.param_groups[1].lr
        engine:backward(F.cross_entropy(engine(x), T.tensor({ 0, 1, 2, 0 })))
        engine:step()
      end
      return weights(m), engine, lr
    end

    local function batches(n)
      T.manual_seed(11)
      local b = {}
      for i = 1, n do b[i] = T.randn({ 4, 6 }) end
      return b
    end

    it("fp16 on the cpu: float32 compute, the loss scaled by a power of 2 and unscaled exactly", function()
      local xs = batches(3)
      local plain = train({}, xs)
      local got, engine = train({ 'fp16={"enabled": true, "initial_scale_power": 4}' }, xs)
      -- x 16 before backward and / 16 after are exact in binary floating point: same weights
      assert.same(plain, got)
      assert.equal(16, engine.scaler.cur_scale)
      assert.equal(1, #said)
      assert.truthy(said[1]:find("fp16: the cpu device computes in float32", 1, true), said[1])
    end)

    it("fp16: an overflowing step is skipped, the scale halves, the schedule waits", function()
      local xs = batches(2)
      xs[1] = T.full({ 4, 6 }, math.huge)   -- inf inputs: inf / NaN gradients
      local sched = 'scheduler={"type": "WarmupLR", "params": {"warmup_max_lr": 0.1, "warmup_num_steps": 4, '
        .. '"warmup_type": "linear"}}'
      local got, engine, lr = train({ 'fp16={"enabled": true, "initial_scale_power": 4, "hysteresis": 1}', sched },
        xs)
      assert.equal(1, engine.skipped_steps)
      assert.equal(8, engine.scaler.cur_scale)
      -- step 1 skipped: the schedule did not move, step 2 ran at it = -1's lr, 0
      assert.same({ 0, 0 }, lr)
      -- lr 0 on step 2: the weights are still the initial ones
      assert.same(weights(model()), got)
    end)

    it("gradient_clipping clips the global norm as torch 1.13's clip_grad_norm_", function()
      -- torch 1.13 on this machine: grads [0.5, -1.5, 2] and [[1, 0.25], [-0.75, 3]], max_norm 1:
      -- norm 4.1382365226745605, each gradient times 1 / (norm + 1e-6)
      local a, b = T.zeros({ 3 }), T.zeros({ 2, 2 })
      a.grad, b.grad = T.tensor({ 0.5, -1.5, 2.0 }), T.tensor({ { 1.0, 0.25 }, { -0.75, 3.0 } })
      local norm = ds_training.clip_grad_norm({ a, b }, 1.0)
      assert.near(4.1382365226745605, norm, 1e-6)
      assert_list_near({ 0.12082438915967941, -0.36247316002845764, 0.48329755663871765 }, a.grad:tolist(), 1e-7)
      local bg = b.grad:tolist()
      assert_list_near({ 0.24164877831935883, 0.060412194579839706, -0.18123658001422882, 0.7249463200569153 },
        { bg[1][1], bg[1][2], bg[2][1], bg[2][2] }, 1e-7)
      -- under the limit nothing changes
      ds_training.clip_grad_norm({ a, b }, 10.0)
      assert_list_near({ 0.12082438915967941, -0.36247316002845764, 0.48329755663871765 }, a.grad:tolist(), 1e-7)
    end)

    it("gradient_clipping in the config changes the training, by the clipped update", function()
      local xs = batches(2)
      local plain = train({}, xs)
      local clipped = train({ "gradient_clipping=1e-3" }, xs)
      assert.are_not.same(plain, clipped)
      -- a tiny max norm: each step moves the weights by lr x 1e-3 in norm at most
      local before, after = weights(model()), clipped
      local sq = 0
      for i = 1, #before do
        local bi, ai = before[i], after[i]
        for j = 1, #bi do
          if type(bi[j]) == "table" then
            for k = 1, #bi[j] do sq = sq + (ai[j][k] - bi[j][k]) ^ 2 end
          else
            sq = sq + (ai[j] - bi[j]) ^ 2
          end
        end
      end
      assert.is_true(math.sqrt(sq) <= 2 * 0.1 * 1e-3 * (1 + 1e-5))
    end)

    it("the scheduler section sets each step's lr", function()
      local _, _, lr = train({ 'scheduler={"type": "WarmupLR", "params": {"warmup_max_lr": 0.1, '
        .. '"warmup_num_steps": 4, "warmup_type": "linear"}}' }, batches(4))
      assert_list_near({ 0, 0, 0.025, 0.05 }, lr)
    end)

    it("on meta, fp16 and bf16 count bytes in 2-byte elements", function()
      local tmp = run.tmpdir()
      local function bytes(dtype_section)
        local out = tmp .. "/p.json"
        local cfg = assert(config.load(FIXTURE, { "device=meta", "optimizer=null", "flops_profiler.profile_step=0",
          "flops_profiler.output_file=" .. out, dtype_section }))
        config.set(cfg)
        T.set_default_device("meta")
        local m = nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 3))
        local engine = prof.initialize { model = m, config = cfg }
        engine(T.empty({ 4, 6 }))
        engine:step()
        T.set_default_device("cpu")
        local doc = json.decode(assert(run.read(out)))
        return doc.modules[2].bytes, m[1].weight.dtype
      end
      -- Linear(6, 5) at batch 4 reads input 24, weight 30 and bias 5 elements, writes 20: 79
      assert.same({ 79 * 4, "float32" }, { bytes("fp16=null") })
      assert.same({ 79 * 2, "float16" }, { bytes('fp16={"enabled": true}') })
      assert.same({ 79 * 2, "bfloat16" }, { bytes('bf16={"enabled": true}') })
      run.rmdir_all(tmp)
      config.set(assert(config.load(FIXTURE, {})))   -- the cpu again, nothing forced
    end)

    it("says once which accepted sections it does not apply on one process", function()
      local sets = { 'zero_optimization={"stage": 2}', 'wandb={"enabled": true}', 'tensorboard={"enabled": false}' }
      train(sets, batches(1))
      train(sets, batches(1))
      assert.same({ "DeepSpeed sections accepted but not applied on one process: zero_optimization "
        .. "(stage 2: partitions across processes), wandb" }, said)
    end)

    it("reads \"auto\" in optimizer params and gradient_clipping as the default, with a note", function()
      local _, engine = train({ 'optimizer={"type": "AdamW", "params": {"lr": "auto", "weight_decay": "auto"}}',
        'gradient_clipping="auto"' }, batches(1))
      assert.equal(1e-3, engine.optimizer.param_groups[1].lr)
      assert.equal(0, engine.clip)
      assert.equal(3, #said)
      -- fp16.enabled "auto" passes the loader and means off (DeepSpeed's default), with a note
      _, engine = train({ 'fp16={"enabled": "auto", "loss_scale_window": "auto"}' }, batches(1))
      assert.is_nil(engine.scaler)
      assert.truthy(said[4]:find('fp16.enabled is "auto"', 1, true), said[4])
    end)
  end)
end)
