-- init_spec.lua — prof.nn.initializers (torch.nn.init) and the modules' reset_parameters: fans, gains
-- and distributions checked statistically against torch's formulas, on the cpu; meta untouched.
local T = require "prof.tensor"
local nn = require "prof.nn"
local init = require "prof.nn.initializers"

local CPU = { device = "cpu" }

local function cpu(shape) return T.empty(shape, CPU) end

-- mean, standard deviation, min and max of a cpu tensor (the runtime's reductions)
local function stats(t)
  local n = t:numel()
  local mean = T.mean(t):item()
  local sd = n > 1 and math.sqrt(T.var(t):item()) or 0
  return mean, sd, -T.amax(-t):item(), T.amax(t):item()
end

--[[
Checks t against U(-b, b): every value inside, the sample mean within 5 standard errors of 0
(σ/√n with σ = b/√3), the sample standard deviation within 2 % of b/√3 (its own relative standard
error is √(0.8/n)/2 ≈ 0.2 % at n = 10^5) and the extremes within 2 % of ±b.
]]
local function assert_uniform(t, b)
  local mean, sd, lo, hi = stats(t)
  local sigma = b / math.sqrt(3)
  assert.is_true(lo >= -b and hi <= b, string.format("values in [%g, %g], bound %g", lo, hi, b))
  assert.is_true(lo < -0.98 * b and hi > 0.98 * b, string.format("extremes %g, %g for bound %g", lo, hi, b))
  assert.is_true(math.abs(mean) < 5 * sigma / math.sqrt(t:numel()), "mean " .. mean)
  assert.near(sigma, sd, 0.02 * sigma)
end

-- N(mu, std²): mean within 5 standard errors, sample standard deviation within 2 %.
local function assert_normal(t, mu, std)
  local mean, sd = stats(t)
  assert.is_true(math.abs(mean - mu) < 5 * std / math.sqrt(t:numel()), "mean " .. mean)
  assert.near(std, sd, 0.02 * std)
end

local function assert_all(t, v)
  local _, _, lo, hi = stats(t)
  assert.same({ v, v }, { lo, hi })
end

describe("fans and gains (torch's _calculate_fan_in_and_fan_out, calculate_gain)", function()
  it("takes dim 1 as input, dim 0 as output and the rest as the receptive field", function()
    assert.same({ 400, 256 }, { init.calculate_fan_in_and_fan_out(T.empty { 256, 400 }) })
    -- Conv2d(8, 16, 3, groups=2): weight [16, 4, 3, 3]
    assert.same({ 36, 144 }, { init.calculate_fan_in_and_fan_out(nn.Conv2d(8, 16, 3, { groups = 2 }).weight) })
    -- ConvTranspose2d(8, 16, 3): weight [8, 16, 3, 3], so torch's fan_in is 16·9
    assert.same({ 144, 72 }, { init.calculate_fan_in_and_fan_out(nn.ConvTranspose2d(8, 16, 3).weight) })
    assert.same({ 5 * 7, 2 * 7 }, { init.calculate_fan_in_and_fan_out(T.empty { 2, 5, 7 }) })
    assert.has_error(function() init.calculate_fan_in_and_fan_out(T.empty { 5 }) end,
      "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
  end)

  it("gives torch's gains", function()
    assert.equal(1, init.calculate_gain("linear"))
    assert.equal(1, init.calculate_gain("conv_transpose2d"))
    assert.equal(1, init.calculate_gain("sigmoid"))
    assert.equal(5 / 3, init.calculate_gain("tanh"))
    assert.equal(math.sqrt(2), init.calculate_gain("relu"))
    assert.equal(math.sqrt(2 / (1 + 0.01 ^ 2)), init.calculate_gain("leaky_relu"))
    assert.equal(math.sqrt(2 / (1 + 0.2 ^ 2)), init.calculate_gain("leaky_relu", 0.2))
    assert.equal(0.75, init.calculate_gain("selu"))
    assert.has_error(function() init.calculate_gain("gelu") end, "Unsupported nonlinearity gelu")
    assert.has_error(function() init.calculate_gain("leaky_relu", true) end,
      "negative_slope true not a valid number")
  end)
end)

describe("initialisers on the cpu", function()
  before_each(function() T.manual_seed(0) end)

  it("kaiming_uniform_ with a = √5 gives U(-1/√fan_in, 1/√fan_in)", function()
    local w = cpu { 256, 400 }
    assert.equal(w, init.kaiming_uniform_(w, math.sqrt(5)))
    -- gain = √(2 / (1 + 5)) = √(1/3); bound = √3 · gain / √400 = 1/20
    assert_uniform(w, 1 / 20)
  end)

  it("kaiming_uniform_ for relu, fan_out, keywords", function()
    local w = cpu { 64, 32, 3, 3 }
    init.kaiming_uniform_(w, { mode = "fan_out", nonlinearity = "relu" })
    assert_uniform(w, math.sqrt(3) * math.sqrt(2) / math.sqrt(64 * 9))
  end)

  it("kaiming_normal_ gives N(0, (gain/√fan)²)", function()
    local w = cpu { 128, 800 }
    init.kaiming_normal_(w, 0, "fan_in", "relu")
    assert_normal(w, 0, math.sqrt(2) / math.sqrt(800))
  end)

  it("xavier_uniform_ gives U(-a, a), a = gain·√(6/(fan_in + fan_out))", function()
    local w = cpu { 96, 16, 5, 5 }       -- fan_in 400, fan_out 2400
    init.xavier_uniform_(w, 2.0)
    assert_uniform(w, 2.0 * math.sqrt(6 / (400 + 2400)))
  end)

  it("xavier_normal_ gives N(0, gain²·2/(fan_in + fan_out))", function()
    local w = cpu { 300, 500 }
    init.xavier_normal_(w, { gain = init.calculate_gain("tanh") })
    assert_normal(w, 0, 5 / 3 * math.sqrt(2 / 800))
  end)

  it("uniform_, normal_, constant_, ones_, zeros_", function()
    local w = cpu { 100000 }
    init.uniform_(w, -3, 1)
    local mean, _, lo, hi = stats(w)
    assert.is_true(lo >= -3 and hi <= 1)
    assert.near(-1, mean, 5 * (4 / math.sqrt(12)) / math.sqrt(1e5))
    init.normal_(w, 2, 0.5)
    assert_normal(w, 2, 0.5)
    assert_all(init.constant_(w, 0.125), 0.125)
    assert_all(init.ones_(w), 1)
    assert_all(init.zeros_(w), 0)
  end)

  it("rejects bad modes and leaves zero-element tensors alone", function()
    assert.has_error(function() init.kaiming_uniform_(cpu { 2, 2 }, 0, "fan_avg") end,
      "Mode fan_avg not supported, please use one of ['fan_in', 'fan_out']")
    local empty = cpu { 0, 4 }
    assert.equal(empty, init.kaiming_uniform_(empty))
  end)
end)

describe("modules start like torch's on the cpu", function()
  before_each(function() T.manual_seed(1) end)

  it("Linear: weight and bias ~ U(-1/√in, 1/√in)", function()
    local m = nn.Linear(400, 256, CPU)
    assert_uniform(m.weight, 1 / 20)
    local _, _, lo, hi = stats(m.bias)
    assert.is_true(lo >= -1 / 20 and hi <= 1 / 20 and hi - lo > 0.08)
  end)

  it("Conv2d and ConvTranspose2d: U(-1/√fan_in, 1/√fan_in) with torch's fan_in", function()
    local c = nn.Conv2d(32, 64, 5, { groups = 2, device = "cpu" })   -- fan_in 16·25 = 400
    assert_uniform(c.weight, 1 / 20)
    local _, _, lo, hi = stats(c.bias)
    assert.is_true(lo >= -1 / 20 and hi <= 1 / 20 and lo < hi)
    local t = nn.ConvTranspose2d(64, 100, 2, { device = "cpu" })   -- weight [64, 100, 2, 2]: 400
    assert_uniform(t.weight, 1 / 20)
  end)

  it("Embedding: N(0, 1) with the padding row zeroed", function()
    local e = nn.Embedding(1000, 64, 3, { device = "cpu" })
    assert_normal(e.weight, 0, 1)
    assert_all(e.weight:select(0, 3), 0)
    local _, sd = stats(e.weight:select(0, 4))
    assert.is_true(sd > 0.5)
  end)

  it("norms: weight 1, bias 0, running mean 0 and variance 1", function()
    local bn = nn.BatchNorm2d(8, { device = "cpu" })
    assert_all(bn.weight, 1)
    assert_all(bn.bias, 0)
    assert_all(bn.running_mean, 0)
    assert_all(bn.running_var, 1)
    local inorm = nn.InstanceNorm1d(4, { affine = true, track_running_stats = true, device = "cpu" })
    assert_all(inorm.weight, 1)
    assert_all(inorm.running_var, 1)
    for _, m in ipairs { nn.LayerNorm(6, { device = "cpu" }), nn.GroupNorm(2, 6, { device = "cpu" }) } do
      assert_all(m.weight, 1)
      assert_all(m.bias, 0)
    end
    assert_all(nn.RMSNorm(6, { device = "cpu" }).weight, 1)
  end)

  it("RNN, GRU, LSTM and their cells: every parameter ~ U(-1/√H, 1/√H)", function()
    local H = 64
    local lstm = nn.LSTM(32, H, 2, { device = "cpu" })
    for _, p in ipairs(lstm:parameters()) do
      local _, _, lo, hi = stats(p)
      assert.is_true(lo >= -1 / 8 and hi <= 1 / 8 and hi - lo > 0.2)
    end
    assert_uniform(lstm.weight_hh_l1, 1 / 8)
    assert_uniform(nn.GRUCell(100, H, { device = "cpu" }).weight_ih, 1 / 8)
    assert_uniform(nn.RNN(50, H, { device = "cpu" }).weight_ih_l0, 1 / 8)
  end)

  it("PReLU: every slope is init", function()
    assert_all(nn.PReLU(5, { device = "cpu" }).weight, 0.25)
    assert_all(nn.PReLU(3, 0.125, { device = "cpu" }).weight, 0.125)
  end)

  it("MultiheadAttention: xavier in_proj, zero biases, out_proj weight as Linear", function()
    local E = 100
    local m = nn.MultiheadAttention(E, 4, { add_bias_kv = true, device = "cpu" })
    assert_uniform(m.in_proj_weight, math.sqrt(6 / (E + 3 * E)))
    assert_all(m.in_proj_bias, 0)
    assert_all(m.out_proj.bias, 0)
    local _, _, lo, hi = stats(m.out_proj.weight)
    assert.is_true(lo >= -0.1 and hi <= 0.1 and hi > 0.09)
    -- bias_k [1, 1, E]: fan_in = fan_out = E, std = √(2/(2E))
    local _, sd = stats(m.bias_k)
    assert.near(math.sqrt(1 / E), sd, 0.4 * math.sqrt(1 / E))
    local sep = nn.MultiheadAttention(E, 4, { kdim = 50, vdim = 30, device = "cpu" })
    assert_uniform(sep.k_proj_weight, math.sqrt(6 / (50 + E)))
  end)

  it("reset_parameters draws again", function()
    local m = nn.Linear(4, 3, CPU)
    local before = m.weight:tolist()
    m:reset_parameters()
    assert.are_not.same(before, m.weight:tolist())
  end)
end)

describe("on meta (and for cpu dtypes the fills cannot write)", function()
  it("constructors draw nothing from the generator", function()
    T.manual_seed(7)
    local want = T.rand({ 3 }, CPU):tolist()
    T.manual_seed(7)
    nn.Linear(8, 8)
    nn.Conv2d(3, 4, 3)
    nn.LSTM(4, 4)
    nn.Embedding(10, 4, 0)
    nn.MultiheadAttention(8, 2)
    nn.BatchNorm1d(4)
    assert.same(want, T.rand({ 3 }, CPU):tolist())
  end)

  it("a float64 cpu module is left zero-filled instead of failing", function()
    local m = nn.Linear(2, 2, { device = "cpu", dtype = "float64" })
    assert.same({ { 0, 0 }, { 0, 0 } }, m.weight:tolist())
  end)
end)
