-- cpu_pointwise_spec.lua — cpu values and gradients of activations, elementwise math, clamp, prelu,
-- softmax, maximum/minimum and dropout, against PyTorch 1.13 (spec/fixtures/ops/pointwise.lua) and
-- finite differences.
local T = require "prof.tensor"
local gc = require "spec.support.gradcheck"
local cases = require "spec.support.torch_cases"
local recorder = require "spec.support.ops_recorder"

local fixture = dofile("spec/fixtures/ops/pointwise.lua")

local function t_(x) return x:t() end

-- How each recorded case runs in profrun (the _t forms take the transposed, strided input).
local OPS = {
  prelu = function(x) return T.prelu(x[1], x[2]) end,
  prelu_t = function(x) return T.prelu(x[1]:t(), x[2]) end,
  neg_operator = function(x) return -x[1] end,
}
local function unary(name, call)
  OPS[name] = function(x, a) return call(x[1], a) end
  OPS[name .. "_t"] = function(x, a) return call(t_(x[1]), a) end
end
for _, name in ipairs { "relu", "relu6", "silu", "tanh", "sigmoid", "hardswish", "mish", "neg", "exp",
                        "log", "sqrt", "rsqrt", "abs", "sin", "cos", "erf", "reciprocal" } do
  unary(name, function(x) return T[name](x) end)
end
unary("leaky_relu", function(x, a) return T.leaky_relu(x, a.slope) end)
unary("elu", function(x, a) return T.elu(x, a.alpha) end)
unary("gelu", function(x, a) return T.gelu(x, { approximate = a.approximate }) end)
unary("softplus", function(x, a) return T.softplus(x, a.beta, a.threshold) end)
unary("clamp", function(x, a) return T.clamp(x, a.lo, a.hi) end)
unary("softmax", function(x, a) return T.softmax(x, a.dim) end)
unary("log_softmax", function(x, a) return T.log_softmax(x, a.dim) end)
for _, name in ipairs { "maximum", "minimum" } do
  OPS[name] = function(x) return T[name](x[1], x[2]) end
  OPS[name .. "_t"] = function(x) return T[name](x[1]:t(), x[2]) end
end

-- The fixture's other cases belong to cpu_select_spec.lua.
local SELECT = { masked_fill = true, where = true, where_sa = true, where_sb = true, triu = true,
  tril = true, cat = true, stack = true, chunk_cat = true, split_one = true, split = true }

describe("pointwise cpu kernels and gradients against PyTorch 1.13", function()
  for i, c in ipairs(fixture) do
    if not SELECT[(c.op:gsub("_t$", ""))] then
      it(string.format("%d %s: values and gradients within 1e-4", i, c.op), function()
        cases.check(c, assert(OPS[c.op], "no runner for " .. c.op))
      end)
    end
  end
end)

-- A leaf whose values stay at least `margin` away from each kink, where finite differences would
-- straddle a jump in the derivative.
local function away(shape, seed, scale, kinks, margin)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  local v = gc.values(n, seed)
  for i = 1, n do
    v[i] = v[i] * scale
    for _, k in ipairs(kinks) do
      if math.abs(v[i] - k) < margin then v[i] = k + (v[i] >= k and margin or -margin) end
    end
  end
  local t = gc.tensor(v, shape)
  t.requires_grad = true
  return t
end

describe("pointwise gradients against finite differences", function()
  local smooth = {
    { "gelu", function(x) return T.gelu(x) end, 3 },
    { "gelu tanh", function(x) return T.gelu(x, "tanh") end, 3 },
    { "silu", function(x) return T.silu(x) end, 4 },
    { "tanh", function(x) return T.tanh(x) end, 2 },
    { "sigmoid", function(x) return T.sigmoid(x) end, 4 },
    { "softplus", function(x) return T.softplus(x) end, 4 },
    { "softplus beta 2", function(x) return T.softplus(x, { beta = 2, threshold = 30 }) end, 3 },
    { "mish", function(x) return T.mish(x) end, 3 },
    { "elu alpha 1 (smooth at 0)", function(x) return T.elu(x) end, 2 },
    { "neg", function(x) return -x end, 1 },
    { "exp", function(x) return T.exp(x) end, 2 },
    { "log", function(x) return T.log(x * x + 0.5) end, 2 },
    { "sqrt", function(x) return T.sqrt(x * x + 0.5) end, 2 },
    { "rsqrt", function(x) return T.rsqrt(x * x + 0.5) end, 2 },
    { "reciprocal", function(x) return T.reciprocal(x * x + 0.5) end, 2 },
    { "sin", function(x) return T.sin(x) end, 3 },
    { "cos", function(x) return T.cos(x) end, 3 },
    { "erf", function(x) return T.erf(x) end, 2 },
    { "softmax last dim", function(x) return T.softmax(x, -1) end, 2 },
    { "softmax dim 0", function(x) return T.softmax(x, 0) end, 2 },
    { "log_softmax dim 1", function(x) return T.log_softmax(x, 1) end, 2 },
    { "log_softmax of a transposed view", function(x) return T.log_softmax(x:t(), -1) end, 2 },
  }
  for _, c in ipairs(smooth) do
    it(c[1], function()
      local ok, msg = gc.check(c[2], { away({ 3, 4 }, 11, c[3], {}, 0) })
      assert.is_true(ok, msg)
    end)
  end

  -- kinks: scale spreads the inputs over the kinks, which the values keep clear of
  local kinked = {
    { "relu", function(x) return T.relu(x) end, 2, { 0 } },
    { "relu6", function(x) return T.relu6(x) end, 8, { 0, 6 } },
    { "leaky_relu", function(x) return T.leaky_relu(x, 0.2) end, 2, { 0 } },
    { "elu alpha 1.5", function(x) return T.elu(x, { alpha = 1.5 }) end, 2, { 0 } },
    { "hardswish", function(x) return T.hardswish(x) end, 5, { -3, 3 } },
    { "abs", function(x) return T.abs(x) end, 2, { 0 } },
    { "clamp", function(x) return T.clamp(x, -0.5, 0.6) end, 1, { -0.5, 0.6 } },
    { "relu of a transposed view", function(x) return T.relu(x:t()) end, 2, { 0 } },
  }
  for _, c in ipairs(kinked) do
    it(c[1] .. " (away from its kinks)", function()
      local ok, msg = gc.check(c[2], { away({ 3, 4 }, 12, c[3], c[4], 0.05) })
      assert.is_true(ok, msg)
    end)
  end

  it("prelu: input and per-channel weight", function()
    local x, w = away({ 2, 3, 2 }, 13, 2, { 0 }, 0.05), away({ 3 }, 14, 0.5, {}, 0)
    local ok, msg = gc.check(function(a, b) return T.prelu(a, b) end, { x, w })
    assert.is_true(ok, msg)
    local y, v = away({ 4, 2 }, 15, 2, { 0 }, 0.05), away({ 1 }, 16, 0.5, {}, 0)
    ok, msg = gc.check(function(a, b) return T.prelu(a, b) end, { y, v })
    assert.is_true(ok, msg)
  end)

  it("maximum and minimum with broadcasting (no ties)", function()
    for _, name in ipairs { "maximum", "minimum" } do
      -- a's values stay 0.1 or more from b's, each winning somewhere
      local b = gc.tensor({ -0.5, 0.1, 0.6 }, { 3 })
      local a = gc.tensor({ -0.8, 0.3, 0.4, -0.1, -0.2, 0.9 }, { 2, 3 })
      a.requires_grad, b.requires_grad = true, true
      local ok, msg = gc.check(function(p, q) return T[name](p, q) end, { a, b })
      assert.is_true(ok, name .. ": " .. tostring(msg))
    end
  end)
end)

describe("pointwise edge values", function()
  local function leaf(values)
    local t = gc.tensor(values, { #values })
    t.requires_grad = true
    return t
  end
  local function grad_of(f, values)
    local x = leaf(values)
    T.sum(f(x)):backward()
    return x.grad:tolist()
  end

  it("relu's gradient at 0 is 0, clamp's is 1 at its bounds (as torch)", function()
    -- torch: relu grad at [-1, 0, 1] = [0, 0, 1]; clamp(-0.5, 0.5) at [-1, -0.5, 0.5, 1] = [0, 1, 1, 0]
    assert.same({ 0, 0, 1 }, grad_of(T.relu, { -1, 0, 1 }))
    assert.same({ 0, 1, 1, 0 }, grad_of(function(x) return T.clamp(x, -0.5, 0.5) end, { -1, -0.5, 0.5, 1 }))
    -- torch: relu6 grad at [0, 3, 6] = [0, 1, 0]; hardswish at [-3, 3] = [-0.5, 1] from its
    -- vectorised kernel (any tensor of 16+ floats; a shorter scalar tail gives 1.5 at 3)
    assert.same({ 0, 1, 0 }, grad_of(T.relu6, { 0, 3, 6 }))
    assert.same({ -0.5, 1 }, grad_of(T.hardswish, { -3, 3 }))
  end)

  it("softmax of large logits stays finite and sums to 1", function()
    local x = gc.tensor({ 1000, 1001, 999, -1000, 88.8, 89 }, { 2, 3 })
    local p = T.softmax(x, 1):tolist()
    -- exp(-1)/(1 + exp(-1) + exp(-2)) = 0.24472847
    assert.is_true(math.abs(p[1][1] - 0.24472847) < 1e-6)
    for _, row in ipairs(p) do
      local s = 0
      for _, v in ipairs(row) do
        assert.is_true(v == v and v >= 0 and v <= 1)
        s = s + v
      end
      assert.is_true(math.abs(s - 1) < 1e-6)
    end
    local l = T.log_softmax(x, 1):tolist()
    -- log_softmax(1000 | 1000, 1001, 999) = -1 - log(1 + e^-1 + e^-2) = -1.40760596
    assert.is_true(math.abs(l[1][1] + 1.40760596) < 1e-5)
    assert.is_true(l[2][1] < -1000 and l[2][1] > -1100)
  end)

  it("keeps NaN, takes leaky_relu, elu and softplus parameters by keyword or position", function()
    local nan = 0 / 0
    local y = T.relu(gc.tensor({ nan, -1 }, { 2 })):tolist()
    assert.is_true(y[1] ~= y[1])
    assert.same(T.leaky_relu(gc.tensor({ -2 }, { 1 }), { negative_slope = 0.25 }):tolist(), { -0.5 })
    -- the default slope is 0.01 (float32: -0.019999999552965164)
    assert.is_true(math.abs(T.leaky_relu(gc.tensor({ -2 }, { 1 })):tolist()[1] + 0.02) < 1e-8)
    -- softplus(1, beta=2, threshold=1): 2 > 1, so x itself
    assert.same({ 1 }, T.softplus(gc.tensor({ 1 }, { 1 }), 2, 1):tolist())
    assert.has_error(function() T.gelu(gc.tensor({ 1 }, { 1 }), "fast") end,
      "gelu: approximate argument must be either none or tanh, got 'fast'")
  end)
end)

local phases = recorder.phases

describe("pointwise backward records", function()
  it("count the fused gradients in the backward phase, the same on cpu and meta", function()
    for _, device in ipairs { "cpu", "meta" } do
      local function leaf()
        local x = device == "cpu" and gc.leaf({ 4, 3 }, 1) or T.empty { 4, 3 }
        x.requires_grad = true
        return x
      end
      local x = leaf()
      local fwd, bwd = phases(function() T.sum(T.relu(x) * 2.0):backward() end)
      -- forward: relu 12, mul 12, sum 11; backward: the mul's 12, relu_backward 1 per element
      assert.equal(35, fwd.flops)
      assert.equal(24, bwd.flops)
      x = leaf()
      fwd, bwd = phases(function() T.sum(T.softmax(x, 1) * 2.0):backward() end)
      -- forward: softmax (5·3 - 2)·4 = 52, mul 12, sum 11; backward: mul 12, softmax_backward
      -- (4·3 - 1)·4 = 44
      assert.equal(75, fwd.flops)
      assert.equal(56, bwd.flops)
      x = leaf()
      fwd, bwd = phases(function() T.sum(T.dropout(x, 0.5, true) * 2.0):backward() end)
      -- forward: dropout 2 per element (draw, scale), mul 12, sum 11; backward: mul 12, g·mask 12
      assert.equal(47, fwd.flops)
      assert.equal(24, bwd.flops)
    end
  end)
end)

describe("dropout on the cpu", function()
  local function ones(n) return T.ones({ n }, { device = "cpu" }) end

  it("drops about p of the elements and scales the rest by exactly 1/(1-p)", function()
    T.manual_seed(1)
    local n = 10000
    local y = T.dropout(ones(n), 0.5, true):tolist()
    local zeros = 0
    for _, v in ipairs(y) do
      if v == 0 then zeros = zeros + 1 else assert.equal(2, v) end
    end
    -- Binomial(10000, 0.5): mean 5000, sigma 50
    assert.is_true(math.abs(zeros - 5000) <= 150, "zeros: " .. zeros)
    -- p = 0.3: kept values are x / 0.7 rounded to float32, 3000 ± 3·45.8 dropped
    local x = gc.tensor(gc.values(n, 3), { n })
    local xs, z = x:tolist(), 0
    y = T.dropout(x, 0.3, true):tolist()
    for i, v in ipairs(y) do
      if v == 0 then z = z + 1 else assert.is_true(math.abs(v - xs[i] / 0.7) <= 1e-6 * math.abs(v)) end
    end
    assert.is_true(math.abs(z - 3000) <= 138, "zeros: " .. z)
  end)

  it("uses the same mask in backward", function()
    T.manual_seed(5)
    local x = gc.leaf({ 40, 25 }, 4)
    local w = gc.tensor(gc.values(1000, 9), { 40, 25 })
    local y = T.dropout(x, 0.5, true)
    T.sum(y * w):backward()
    local yv, g, wv = gc.flat(y:tolist()), gc.flat(x.grad:tolist()), gc.flat(w:tolist())
    for i = 1, #yv do
      assert.equal(yv[i] == 0 and 0 or 2 * wv[i], g[i])
    end
  end)

  it("repeats with manual_seed, differs across seeds; strided inputs", function()
    local x = gc.tensor(gc.values(60, 2), { 6, 10 })
    T.manual_seed(42)
    local a = T.dropout(x, 0.5, true):tolist()
    T.manual_seed(42)
    local b = T.dropout(x, 0.5, true):tolist()
    T.manual_seed(43)
    local c = T.dropout(x, 0.5, true):tolist()
    assert.same(a, b)
    assert.are_not.same(a, c)
    local xt = x:t()
    local yt, xv = T.dropout(xt, 0.5, true):tolist(), xt:tolist()
    for i, row in ipairs(yt) do
      for j, v in ipairs(row) do assert.is_true(v == 0 or v == 2 * xv[i][j]) end
    end
  end)

  it("in eval, or with p = 0, returns x's values and passes the gradient; p = 1 drops all", function()
    for _, args in ipairs { { 0.5, false }, { 0, true } } do
      local x = gc.leaf({ 3, 4 }, 6)
      local y = T.dropout(x, args[1], args[2])
      assert.same(x:tolist(), y:tolist())
      T.sum(y):backward()
      assert.same({ 1, 1, 1, 1 }, x.grad:tolist()[2])
    end
    assert.same({ 0, 0, 0 }, T.dropout(ones(3), 1, true):tolist())
  end)
end)
