-- flops_profiler_spec.lua — FlopsProfiler and get_model_profile in-process, against DeepSpeed.
local env = require "spec.support.env"
local prof = require "prof"
local core = require "prof.core"
local nn = require "prof.nn"
local T = require "prof.tensor"
local models = require "prof.models"
local hooks = require("prof.nn.module").hooks
local run = require "spec.support.run"

local F = nn.functional

-- The run's config as profrun would install it from `--set` overrides on the built-in defaults.
-- config.set leaves the default device alone when the config names none: put meta back.
-- DeepSpeed's tests/unit/simple_model.py SimpleModel(hidden_dim): one Linear in a ModuleList and a
-- cross-entropy loss on the labels (CrossEntropyLoss is functional here; DeepSpeed counts it 0).
local SimpleModel = nn.Module:extend("SimpleModel")
function SimpleModel:init(hidden_dim)
  self.linears = nn.ModuleList({ nn.Linear(hidden_dim, hidden_dim) })
end
function SimpleModel:forward(x, y)
  x = self.linears[1](x)
  if y == nil then return x end
  return F.cross_entropy(x, y)
end

-- A profile that forgets to stop must not leak into the next spec.
local function no_session_active()
  assert.is_nil(hooks.S)
  assert.is_nil(hooks.ids)
  assert.is_nil(core.recorder())
end

local function profile(o)
  o.print_profile = false
  o.as_string = false
  return prof.get_model_profile(o)
end

describe("flops profiler", function()
  teardown(function() env.use_config({}) end)

  describe("DeepSpeed's SimpleModel(10), batch 1", function()
    -- Linear(10, 10) on [1, 10]: MACs = numel(input) * out_features = 10 * 10 = 100;
    -- params = 10 * 10 weights + 10 biases = 110.
    it("counts 200 flops, 110 params under deepspeed conventions (DeepSpeed's test)", function()
      env.use_config({ "flops_profiler.conventions=deepspeed" })
      -- deepspeed: flops = 2 * MACs, the bias is not counted, cross_entropy is not patched (0)
      local x, y = T.empty({ 1, 10 }), T.zeros({ 1 }, { dtype = "int64" })
      local flops, macs, params = profile { model = SimpleModel(10), args = { x, y } }
      assert.equal(200, flops)
      assert.equal(100, macs)
      assert.equal(110, params)
    end)

    it("counts 210 flops under exact conventions: the 10 bias adds too", function()
      env.use_config({ "flops_profiler.conventions=exact" })
      -- exact: 2 * 100 MACs + 1 row * 10 outputs (bias) = 210
      local flops, macs, params = profile { model = SimpleModel(10), input_shape = { 1, 10 } }
      assert.equal(210, flops)
      assert.equal(100, macs)
      assert.equal(110, params)
      -- and the loss is work that exact counts: more than the linear alone
      local with_loss = profile { model = SimpleModel(10),
        args = { T.empty({ 1, 10 }), T.zeros({ 1 }, { dtype = "int64" }) } }
      assert.is_true(with_loss > 210)
    end)

    it("returns DeepSpeed's strings (number_to_string keeps a unitless space)", function()
      env.use_config({ "flops_profiler.conventions=deepspeed" })
      -- number_to_string(200) = f"{round(200, 2):g} " = "200 "; macs_to_string appends "MACs";
      -- params_to_string strips: "110"
      local flops, macs, params = prof.get_model_profile {
        model = SimpleModel(10), input_shape = { 1, 10 }, print_profile = false,
      }
      assert.equal("200 ", flops)
      assert.equal("100 MACs", macs)
      assert.equal("110", params)
    end)
  end)

  describe("FlopsProfiler lifecycle", function()
    local tmp
    before_each(function()
      env.use_config({ "flops_profiler.conventions=deepspeed" })
      tmp = run.tmpdir()
    end)
    after_each(function() run.rmdir_all(tmp) end)

    it("start_profile, forward, stop_profile, getters, print, reset, end", function()
      local model = SimpleModel(10)
      local p = prof.FlopsProfiler(model)
      p:start_profile()
      model(T.empty({ 1, 10 }))
      p:stop_profile()
      assert.equal(200, p:get_total_flops())
      assert.equal(100, p:get_total_macs())
      assert.equal(110, p:get_total_params())
      assert.equal("200 ", p:get_total_flops(true))
      assert.equal("100 MACs", p:get_total_macs(true))
      assert.equal("110", p:get_total_params(true))
      -- meta runs nothing, so there is no duration to report
      assert.is_nil(p:get_total_duration())
      assert.equal("n/a", p:get_total_duration(true))
      no_session_active()                 -- stopped: later calls are not recorded
      model(T.empty({ 1, 10 }))
      assert.equal(200, p:get_total_flops())

      -- print_model_profile to a file: parents created, DeepSpeed's text, nothing else left there
      local path = tmp .. "/sub/profile.txt"
      p:print_model_profile { profile_step = 1, output_file = path }
      assert.same({ "profile.txt" }, run.list(tmp .. "/sub"))
      local text = assert(run.read(path))
      local dashes = ("-"):rep(26)
      assert.equal("\n" .. dashes .. " DeepSpeed Flops Profiler " .. dashes .. "\n"
        .. "Profile Summary at step 1:\n", text:sub(1, 107))
      -- '{:<70}  {:<8}': the value starts at column 73 and is padded to 8
      assert.truthy(text:find("\nfwd flops per GPU:" .. (" "):rep(54) .. "200     \n", 1, true))
      assert.truthy(text:find("\nfwd MACs per GPU:" .. (" "):rep(55) .. "100 MACs\n", 1, true))
      assert.truthy(text:find("(0): Linear(110 = 100% Params, 100 MACs = 100% MACs, ", 1, true))

      p:reset_profile()                   -- DeepSpeed's reset: counts 0, params recomputed
      assert.equal(0, p:get_total_flops())
      assert.equal(0, p:get_total_macs())
      assert.equal(110, p:get_total_params())

      p:end_profile()
      assert.has_error(function() p:get_total_flops() end)
      no_session_active()
    end)

    it("accumulates every forward call between start and stop, as DeepSpeed's hooks do", function()
      local model = SimpleModel(10)
      local p = prof.FlopsProfiler(model)
      p:start_profile()
      model(T.empty({ 1, 10 }))
      model(T.empty({ 1, 10 }))
      p:stop_profile()
      assert.equal(400, p:get_total_flops())   -- 2 calls * 200
      p:end_profile()
    end)

    it("measures a duration on the cpu", function()
      env.use_config({ "flops_profiler.conventions=deepspeed", "device=cpu" })
      local model = SimpleModel(10)
      local p = prof.FlopsProfiler(model)
      p:start_profile()
      model(T.empty({ 1, 10 }))
      p:stop_profile()
      local d = p:get_total_duration()
      assert.equal("number", type(d))
      assert.is_true(d > 0 and d < 10)
      assert.truthy(p:get_total_duration(true):match("^[%d.]+ [mun]?s$"))
      p:end_profile()
      env.use_config({ "flops_profiler.conventions=deepspeed" })
    end)
  end)

  describe("the same model profiled twice gives equal numbers (DeepSpeed #7413, #4976)", function()
    -- LeNet5 at 1024x1x32x32 under deepspeed conventions: DeepSpeed's unit test values
    -- (flops 866,076,672, MACs 426,516,480, params 61,706; derived in models_spec.lua).
    before_each(function() env.use_config({ "flops_profiler.conventions=deepspeed" }) end)

    it("two get_model_profile calls", function()
      local model = models.lenet5()
      for _ = 1, 2 do
        local flops, macs, params = profile { model = model, input_shape = { 1024, 1, 32, 32 } }
        assert.equal(866076672, flops)
        assert.equal(426516480, macs)
        assert.equal(61706, params)
      end
      no_session_active()
    end)

    it("start/stop twice on one FlopsProfiler", function()
      local model = models.lenet5()
      local p = prof.FlopsProfiler(model)
      for _ = 1, 2 do
        p:start_profile()
        model(T.empty({ 1024, 1, 32, 32 }))
        p:stop_profile()
        assert.equal(866076672, p:get_total_flops())
        assert.equal(426516480, p:get_total_macs())
        assert.equal(61706, p:get_total_params())
      end
      p:end_profile()
    end)
  end)

  describe("a module shared under three parents (DeepSpeed #7256)", function()
    -- One Linear(100, 100) is the `fc` of three Parent modules, each calling it once at batch 1.
    -- One call: MACs = 1 * 100 * 100 = 10,000, deepspeed flops = 2 * MACs = 20,000. The model does
    -- three calls: 30,000 MACs, 60,000 flops. DeepSpeed sums the shared module's accumulated
    -- 60,000 under each parent and reports 180,000; counted per call, each parent did 20,000.
    local Parent = nn.Module:extend("Parent")
    function Parent:init(shared) self.fc = shared end
    function Parent:forward(x) return self.fc(x) end
    local Net = nn.Module:extend("Net")
    function Net:init()
      local shared = nn.Linear(100, 100)
      self.a = Parent(shared)         -- one statement each: attribute order is registration order
      self.b = Parent(shared)
      self.c = Parent(shared)
    end
    function Net:forward(x) return self.c(self.b(self.a(x))) end

    it("counts each call once, for the parent that made it", function()
      env.use_config({ "flops_profiler.conventions=deepspeed" })
      local model = Net()
      local flops, macs, params = profile { model = model, input_shape = { 1, 100 } }
      assert.equal(60000, flops)
      assert.equal(30000, macs)
      assert.equal(10100, params)                 -- shared parameters count once: 100*100 + 100
      local p = prof.FlopsProfiler(model)
      p:start_profile()
      model(T.empty({ 1, 100 }))
      p:stop_profile()
      local by_path = {}
      for _, m in ipairs(p:profile().modules) do by_path[m.path] = m end
      for _, name in ipairs({ "a", "b", "c" }) do
        assert.equal(20000, by_path[name].flops)
        assert.equal(10000, by_path[name].macs)
      end
      assert.equal(3, by_path["a.fc"].calls)      -- registered once, at its first path
      assert.equal(60000, by_path["a.fc"].flops)
      p:end_profile()
    end)
  end)

  describe("ignore_modules", function()
    -- LeNet5 at 1024x1x32x32. Per layer (N = 1024):
    --   classifier.0 = Linear(120, 84): MACs 1024*120*84 = 10,321,920;
    --     deepspeed flops 2*MACs = 20,643,840; exact adds the bias 1024*84 = 86,016: 20,729,856
    --   AvgPool2d(2) x2: deepspeed numel(in) = 1024*6*28*28 + 1024*16*10*10 = 4,816,896 +
    --     1,638,400 = 6,455,296; exact numel(out)*K = (1024*6*14*14 + 1024*16*5*5)*4 = the same
    --   exact total (spec/fixtures/conventions.md): conv 2*415,334,400 + bias 6,578,176 =
    --     837,246,976; pools 6,455,296; tanh 1/elt: 1024*(4704+1600+120+84) = 6,664,192;
    --     linears 2*11,182,080 + bias 1024*94 = 22,460,416; softmax 1024*(5*10-2) = 49,152;
    --     sum 872,876,032.
    local IGNORE = { nn.AvgPool2d, "classifier.0" }

    it("under deepspeed conventions hides the rows, their counts go to the parents", function()
      env.use_config({ "flops_profiler.conventions=deepspeed" })
      local model = models.lenet5()
      local flops, macs = profile { model = model, input_shape = { 1024, 1, 32, 32 },
        ignore_modules = IGNORE }
      assert.equal(866076672, flops)             -- the totals do not change
      assert.equal(426516480, macs)
      local p = prof.FlopsProfiler(model)
      p:start_profile(IGNORE)
      model(T.empty({ 1024, 1, 32, 32 }))
      p:stop_profile()
      local by_path = {}
      for _, m in ipairs(p:profile().modules) do by_path[m.path] = m end
      assert.is_true(by_path["classifier.0"].hidden)
      assert.is_true(by_path["feature_extractor.2"].hidden)
      assert.is_true(by_path["feature_extractor.5"].hidden)
      assert.is_false(by_path["classifier.2"].hidden)
      -- classifier = both linears: 10,321,920 + 1024*84*10 = 11,182,080 MACs
      assert.equal(11182080, by_path["classifier"].macs)
      -- feature_extractor = convs 837,246,976 + the two pools 6,455,296
      assert.equal(843702272, by_path["feature_extractor"].flops)
      local path = os.tmpname()
      p:print_model_profile { output_file = path, format = "deepspeed" }
      local text = assert(run.read(path))
      os.remove(path)
      assert.falsy(text:find("AvgPool2d(", 1, true))
      assert.falsy(text:find("(0): Linear(", 1, true))
      assert.truthy(text:find("(2): Linear(850 = 1.38% Params", 1, true))
      p:end_profile()
    end)

    it("under exact conventions takes the modules and their subtrees out of the totals", function()
      env.use_config({ "flops_profiler.conventions=exact" })
      local function totals(list)
        local flops, macs = profile { model = models.lenet5(), input_shape = { 1024, 1, 32, 32 },
          ignore_modules = list }
        return flops, macs
      end
      local flops, macs = totals(nil)
      assert.equal(872876032, flops)
      assert.equal(426516480, macs)
      flops, macs = totals({ nn.AvgPool2d })      -- by class
      assert.equal(872876032 - 6455296, flops)
      assert.equal(426516480, macs)
      flops, macs = totals({ "classifier.0" })    -- by name
      assert.equal(872876032 - 20729856, flops)
      assert.equal(426516480 - 10321920, macs)
      -- a subtree: classifier = both linears (22,460,416) + tanh on 1024*84 (86,016)
      flops, macs = totals({ "classifier" })
      assert.equal(872876032 - 22460416 - 86016, flops)
      assert.equal(426516480 - 11182080, macs)
    end)
  end)

  describe("errors", function()
    it("a forward error propagates with the module path and leaves no session active", function()
      env.use_config({ "flops_profiler.conventions=deepspeed" })
      local model = models.lenet5()
      local ok, err = pcall(prof.get_model_profile, {
        model = model, input_shape = { 2, 3, 32, 32 }, print_profile = false,
      })
      assert.is_false(ok)
      assert.truthy(err:find("'feature_extractor.0' (Conv2d)", 1, true))
      assert.truthy(err:find("[2, 3, 32, 32]", 1, true))
      assert.truthy(err:find("[6, 1, 5, 5]", 1, true))
      no_session_active()
      -- the next profile works, with DeepSpeed's numbers scaled to batch 2 (/ 512)
      local flops, macs, params = profile { model = model, input_shape = { 2, 1, 32, 32 } }
      assert.equal(866076672 // 512, flops)
      assert.equal(426516480 // 512, macs)
      assert.equal(61706, params)
    end)

    it("a later error outside every module is not blamed on the module that failed", function()
      local ok = pcall(prof.get_model_profile, {
        model = models.lenet5(), input_shape = { 2, 3, 32, 32 }, print_profile = false,
      })
      assert.is_false(ok)
      -- no module is being called any more
      assert.is_nil(require("prof.nn.module").innermost())
      local _, msg = xpcall(function() error("outside any module", 0) end, prof.traceback)
      assert.equal("outside any module\n", msg:sub(1, 19))
    end)

    it("get_model_profile rejects a call without a model", function()
      assert.has_error(function() prof.get_model_profile { input_shape = { 1, 10 } } end)
      assert.has_error(function() prof.FlopsProfiler({}) end)
    end)
  end)
end)
