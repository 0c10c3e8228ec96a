-- engine_spec.lua — prof.initialize: the optimizer built from the config's optimizer section as
-- deepspeed.initialize builds it, training through the engine, and the profile at profile_step.
local core = require "prof.core"
local config = require "prof.config"
local prof = require "prof"
local nn = require "prof.nn"
local optim = require "prof.optim"
local T = require "prof.tensor"
local run = require "spec.support.run"

local F = nn.functional
local FIXTURE = "spec/fixtures/configs/optimizer_adam.json"

local tmp, report

-- The fixture with overrides; the profile goes to a file, not into busted's output.
local function load(sets)
  local all = { "flops_profiler.output_file=" .. report }
  for _, s in ipairs(sets or {}) do all[#all + 1] = s end
  return assert(config.load(FIXTURE, all))
end

local function model()
  T.manual_seed(7)
  return nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 3))
end

-- The same 3 batches for every run: inputs 4 x 6, labels 0..2.
local function batches()
  T.manual_seed(11)
  local b = {}
  for i = 1, 3 do b[i] = { x = T.randn({ 4, 6 }), y = T.tensor({ i % 3, (i + 1) % 3, 0, 2 }) } end
  return b
end

local function weights(m)
  local w = {}
  for i, p in ipairs(m:parameters()) do w[i] = p:tolist() end
  return w
end

-- 3 steps through the engine, with the optimizer the config builds.
local function train_engine(cfg)
  local m = model()
  local engine, opt = prof.initialize { model = m, config = cfg }
  for _, b in ipairs(batches()) do
    engine:backward(F.cross_entropy(engine(b.x), b.y))
    engine:step()
  end
  return weights(m), opt
end

-- The same 3 steps written out by hand, with an optimizer built by make(params).
local function train_by_hand(make)
  local m = model()
  local opt = make(m:parameters())
  for _, b in ipairs(batches()) do
    F.cross_entropy(m(b.x), b.y):backward()
    opt:step()
    opt:zero_grad()
  end
  return weights(m)
end

describe("prof.initialize", function()
  setup(function()
    tmp = run.tmpdir()
    report = tmp .. "/profile.txt"
    T.set_default_device("cpu")   -- the models are built before initialize installs the config
  end)
  teardown(function()
    run.rmdir_all(tmp)
    config.set(assert(core.load_config(nil, {})))   -- meta again, no optimizer
  end)

  describe("builds the config's optimizer as deepspeed.initialize does", function()
    it("exposes the section as {type=, params=} with DeepSpeed's lower-cased name", function()
      local cfg = load()
      assert.same({ type = "adam", params = { lr = 0.01, betas = { 0.8, 0.99 }, eps = 1e-6,
        weight_decay = 0.1 } }, cfg.optimizer)
      assert.is_nil(load({ "optimizer=null" }).optimizer)
      -- without a type DeepSpeed builds nothing and reads no params
      local typeless = load({ "optimizer={\"params\": {\"lr\": 1}}" })
      assert.is_nil(typeless.optimizer)
      assert.same({ "optimizer" }, typeless.unused_keys)   -- listed by --verbose
      assert.same({}, load().unused_keys)
    end)

    it("Adam (adam_w_mode defaults to true) trains bit-identically to prof.optim.AdamW", function()
      local got, opt = train_engine(load())
      assert.equal("AdamW", getmetatable(opt).__name)
      local want = train_by_hand(function(p)
        return optim.AdamW(p, { lr = 0.01, betas = { 0.8, 0.99 }, eps = 1e-6, weight_decay = 0.1 })
      end)
      assert.same(want, got)
      -- and the steps did move the weights: Adam's and AdamW's updates differ with weight decay
      local adam = train_by_hand(function(p)
        return optim.Adam(p, { lr = 0.01, betas = { 0.8, 0.99 }, eps = 1e-6, weight_decay = 0.1 })
      end)
      assert.are_not.same(adam, got)
    end)

    it("Adam with adam_w_mode false is prof.optim.Adam (L2 weight decay)", function()
      local got, opt = train_engine(load({ "optimizer.params.adam_w_mode=false" }))
      assert.equal("Adam", getmetatable(opt).__name)
      assert.same(train_by_hand(function(p)
        return optim.Adam(p, { lr = 0.01, betas = { 0.8, 0.99 }, eps = 1e-6, weight_decay = 0.1 })
      end), got)
    end)

    it("AdamW stays AdamW whatever adam_w_mode says; type names are case-insensitive", function()
      local _, opt = train_engine(load({ "optimizer.type=ADAMW", "optimizer.params.adam_w_mode=false" }))
      assert.equal("AdamW", getmetatable(opt).__name)
    end)

    it("defaults weight_decay to FusedAdam's 0, or to torch's 1e-2 with torch_adam", function()
      local _, opt = train_engine(load({ "optimizer.type=AdamW", "optimizer.params={\"lr\": 0.01}" }))
      assert.equal(0, opt.param_groups[1].weight_decay)
      _, opt = train_engine(load({ "optimizer.type=AdamW",
        "optimizer.params={\"lr\": 0.01, \"torch_adam\": true}" }))
      assert.equal(1e-2, opt.param_groups[1].weight_decay)
      assert.is_nil(opt.param_groups[1].torch_adam)   -- DeepSpeed's switches are not options
    end)

    it("SGD trains bit-identically to prof.optim.SGD", function()
      local got, opt = train_engine(load({ "optimizer.type=SGD",
        "optimizer.params={\"lr\": 0.05, \"momentum\": 0.9, \"nesterov\": true}" }))
      assert.equal("SGD", getmetatable(opt).__name)
      assert.same(train_by_hand(function(p)
        return optim.SGD(p, { lr = 0.05, momentum = 0.9, nesterov = true })
      end), got)
    end)

    it("an optimizer passed in wins over the config's", function()
      local m = model()
      local mine = optim.SGD(m:parameters(), { lr = 0.5 })
      local engine, opt = prof.initialize { model = m, optimizer = mine, config = load() }
      assert.equal(mine, opt)
      assert.equal(mine, engine.optimizer)
    end)

    it("without either the engine steps no optimizer", function()
      local m = model()
      local before = weights(m)
      local engine, opt = prof.initialize { model = m, config = load({ "optimizer=null" }) }
      assert.is_nil(opt)
      for _, b in ipairs(batches()) do
        engine:backward(F.cross_entropy(engine(b.x), b.y))
        engine:step()
      end
      assert.same(before, weights(m))
      assert.equal(3, engine.global_steps)
    end)
  end)

  describe("a bad optimizer section names its key path", function()
    it("in the config file", function()
      local cfg, msg, kind = config.load(FIXTURE, { "optimizer.type=Adagrad" })
      assert.is_nil(cfg)
      assert.equal("config", kind)
      assert.equal("--set optimizer.type=Adagrad: optimizer.type: expected \"Adam\", \"AdamW\", \"Lamb\", "
        .. "\"OneBitAdam\", \"ZeroOneAdam\", \"OneBitLamb\" (in any case) or \"SGD\", got string \"Adagrad\" "
        .. "(DeepSpeed's adagrad is not built by profrun)", msg)
      cfg, msg = config.load(FIXTURE, { "optimizer.params.momentum=0.9" })
      assert.is_nil(cfg)
      assert.equal("--set optimizer.params.momentum=0.9: unknown key \"optimizer.params.momentum\" "
        .. "for optimizer type \"Adam\"", msg)
    end)

    it("in a config table written by hand, at the line that called initialize", function()
      local cfg = load()
      cfg.optimizer.type = "sgd"   -- torch.optim has SGD, not sgd
      local ok, err = pcall(function()
        prof.initialize { model = model(), config = cfg }
      end)
      assert.is_false(ok)
      assert.truthy(err:find("engine_spec.lua:%d+: optimizer.type: expected \"Adam\", \"AdamW\", "
        .. "\"Lamb\", \"OneBitAdam\", \"ZeroOneAdam\", \"OneBitLamb\" %(in any case%) or \"SGD\", got "
        .. "string \"sgd\" %(did you mean \"SGD\"%?%)$"), err)
    end)
  end)

  it("prints DeepSpeed's engine summary at profile_step", function()
    os.remove(report)
    train_engine(load())
    local text = assert(run.read(report))
    for _, line in ipairs({ "bwd flops per GPU (measured): ", "bwd latency: ", "step latency: ",
      "iter latency: ", "samples/second: ", "fwd MACs per GPU: " }) do
      assert.truthy(text:find("\n" .. line, 1, true), line .. " missing from:\n" .. text)
    end
    -- DeepSpeed counts optimizer steps from 0: profile_step 1 is the second batch
    assert.truthy(text:find("\nProfile Summary at step 1:\n", 1, true), text)
  end)
end)
