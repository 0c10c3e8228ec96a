-- engine_accumulation_spec.lua — under gradient accumulation every line of the
-- engine's summary is one micro-batch's (counts, fwd/bwd latency) or the optimizer step's (iter
-- latency, samples/s, iteration FLOPS), never a mix.
local core = require "prof.core"
local config = require "prof.config"
local json = require "dkjson"
local prof = require "prof"
local nn = require "prof.nn"
local T = require "prof.tensor"
local run = require "spec.support.run"
local deepspeed = dofile("scripts/reports/deepspeed.lua")

local F = nn.functional
local FIXTURE = "spec/fixtures/configs/optimizer_adam.json"

local tmp

-- Trains 3 optimizer steps of `gas` micro-batches through the engine; returns the JSON profile
-- of step 1 (exact conventions).
local function profile_with(gas)
  local out = tmp .. "/gas" .. gas .. ".json"
  local cfg = assert(config.load(FIXTURE, { "flops_profiler.output_file=" .. out,
    "gradient_accumulation_steps=" .. gas, "flops_profiler.conventions=exact" }))
  T.manual_seed(7)
  local m = nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 3))
  local engine = prof.initialize { model = m, config = cfg }
  T.manual_seed(11)
  for _ = 1, 3 * gas do
    local x = T.randn({ 4, 6 })
    engine:backward(F.cross_entropy(engine(x), T.tensor({ 0, 1, 2, 0 })))
    engine:step()
  end
  return json.decode(assert(run.read(out)))
end

describe("the engine under gradient accumulation", function()
  setup(function()
    tmp = run.tmpdir()
    T.set_default_device("cpu")
  end)
  teardown(function()
    run.rmdir_all(tmp)
    config.set(assert(core.load_config(nil, {})))
  end)

  it("counts one micro-batch's forward whatever the accumulation steps", function()
    -- by hand, batch 4: Linear(6,5) 4*6*5 = 120 MACs, 240 + 20 bias = 260 flops; Tanh 20;
    -- Linear(5,3) 60 MACs, 120 + 12 = 132 flops
    for _, gas in ipairs({ 1, 4 }) do
      local p = profile_with(gas)
      assert.equal(180, p.fwd_macs)
      assert.equal(412, p.fwd_flops)
      assert.equal(412, p.modules[1].flops)
      assert.equal(1, p.modules[1].calls)   -- one forward, not GAS of them
    end
  end)

  it("measures one micro-batch's backward: accumulating adds one flop per parameter", function()
    local one, four = profile_with(1), profile_with(4)
    -- at GAS 4 the profiled micro-batch is the last: its gradients add into the 3 before (6*5+5
    -- + 5*3+3 = 53 parameters), where at GAS 1 they are written after zero_grad; and the engine
    -- scales the loss by 1/4, one multiply in the backward, outside the model
    assert.equal(one.bwd_flops + 53 + 1, four.bwd_flops)
    assert.equal(one.modules[1].bwd_flops + 53, four.modules[1].bwd_flops)
  end)

  it("gives iter latency and samples/s for the whole optimizer step", function()
    local p = profile_with(4)
    assert.equal(4, p.gradient_accumulation_steps)
    -- the iteration holds 4 forwards and 4 backwards: more than the profiled one's
    assert.is_true(p.iter_latency_s > p.fwd_latency_s + p.bwd_latency_s + p.step_latency_s)
    -- micro batch 4 x 4 micro-batches x world size 1 per iteration
    assert.near(16 / p.iter_latency_s, p.samples_per_s, 1e-9 * p.samples_per_s)
  end)

  it("prints the iteration FLOPS with the micro-batches the iteration ran", function()
    local profile = { engine = true, batch_size = 4, gradient_accumulation_steps = 4,
      params = 53, fwd_macs = 180, fwd_flops = 1e6, fwd_latency_s = 1e-4, bwd_latency_s = 2e-4,
      step_latency_s = 1e-4, iter_latency_s = 1.3e-3, samples_per_s = 16 / 1.3e-3, modules = {} }
    local text = deepspeed(profile, { detailed = false })
    -- 3 x 1e6 flops x 4 micro-batches / 1.3 ms = 9.23 GFLOPS; one micro-batch's fwd+bwd:
    -- 3 x 1e6 / 0.3 ms = 10 GFLOPS
    assert.truthy(text:find("\nFLOPS per GPU = 3 * fwd flops per GPU * 4 micro-batches / iter "
      .. "latency:   9.23 GFLOPS\n", 1, true), text)
    assert.truthy(text:find("fwd%+bwd latency%): +10 GFLOPS\n"), text)
    assert.truthy(text:find("\ngradient accumulation steps %(micro%-batches per iter%): +4 +\n"), text)
  end)
end)
