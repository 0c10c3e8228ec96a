-- cpu_core_spec.lua — cpu values and gradients of linear, the matmul family, binary ops, reductions
-- and views, against PyTorch 1.13 (spec/fixtures/ops/core.lua) and finite differences.
local T = require "prof.tensor"
local gc = require "spec.support.gradcheck"
local cases = require "spec.support.torch_cases"

local fixture = dofile("spec/fixtures/ops/core.lua")

local function dims_of(args)
  if args.dim == nil then return nil end
  return args.dim
end

-- How each recorded case runs in profrun.
local OPS = {
  linear = function(x) return T.linear(x[1], x[2], x[3]) end,
  linear_nobias = function(x) return T.linear(x[1], x[2]) end,
  matmul = function(x) return T.matmul(x[1], x[2]) end,
  mm = function(x) return T.mm(x[1], x[2]) end,
  bmm = function(x) return T.bmm(x[1], x[2]) end,
  addmm = function(x, a) return T.addmm(x[1], x[2], x[3], { beta = a.beta, alpha = a.alpha }) end,
  baddbmm = function(x, a) return T.baddbmm(x[1], x[2], x[3], { beta = a.beta, alpha = a.alpha }) end,
  add = function(x) return T.add(x[1], x[2]) end,
  sub = function(x) return T.sub(x[1], x[2]) end,
  mul = function(x) return T.mul(x[1], x[2]) end,
  div = function(x) return T.div(x[1], x[2]) end,
  add_scalar = function(x, a) return x[1] + a.s end,
  sub_scalar = function(x, a) return x[1] - a.s end,
  mul_scalar = function(x, a) return x[1] * a.s end,
  div_scalar = function(x, a) return x[1] / a.s end,
  add_rscalar = function(x, a) return a.s + x[1] end,
  sub_rscalar = function(x, a) return a.s - x[1] end,
  mul_rscalar = function(x, a) return a.s * x[1] end,
  div_rscalar = function(x, a) return a.s / x[1] end,
  pow_scalar = function(x, a) return x[1] ^ a.s end,
  sum = function(x, a) return T.sum(x[1], dims_of(a), { keepdim = a.keepdim }) end,
  mean = function(x, a) return T.mean(x[1], dims_of(a), { keepdim = a.keepdim }) end,
  amax = function(x, a) return T.amax(x[1], dims_of(a)) end,
  var = function(x, a) return T.var(x[1], dims_of(a), { correction = a.correction }) end,
  view_chain = function(x) return x[1]:transpose(0, 1):reshape(4, 6):narrow(1, 1, 3) end,
  permute_select = function(x) return x[1]:permute(2, 0, 1):select(1, 1) end,
  expand = function(x) return x[1]:unsqueeze(0):expand(3, 2, 4) * 1.0 end,
  flatten = function(x) return T.flatten(x[1], 1) end,
}

describe("cpu kernels and gradients against PyTorch 1.13", function()
  for i, c in ipairs(fixture) do
    it(string.format("%d %s: values and gradients within 1e-4", i, c.name), function()
      cases.check(c, assert(OPS[c.op], "no runner for " .. c.op))
    end)
  end
end)

describe("gradients against finite differences", function()
  local checks = {
    { "linear", function(x, w, b) return T.linear(x, w, b) end, { { 3, 4 }, { 2, 4 }, { 2 } } },
    { "matmul broadcast", function(a, b) return T.matmul(a, b) end, { { 2, 1, 3 }, { 2, 3, 2 } } },
    { "mul and sub", function(a, b) return (a * b) - a end, { { 2, 3 }, { 3 } } },
    { "div", function(a, b) return a / (b * b + 1.0) end, { { 4 }, { 4 } } },
    { "mean of squares", function(a) return T.mean(a * a, { 1 }) end, { { 2, 3, 2 } } },
    { "var", function(a) return T.var(a, 0) end, { { 4, 2 } } },
  }
  for _, c in ipairs(checks) do
    it(c[1], function() assert.is_true(gc.check_shapes(c[2], c[3])) end)
  end
end)

describe("autograd", function()
  it("accumulates into leaves across backward calls and frees the graph", function()
    local a = gc.leaf({ 3 }, 1)
    local y = T.sum(a * 2.0)
    y:backward()
    y = T.sum(a * 3.0)
    y:backward()
    -- d/da (2a + 3a) = 5 everywhere
    assert.same({ 5, 5, 5 }, a.grad:tolist())
    assert.has_error(function() y:backward() end,
      "backward: trying to go through the graph a second time (its saved tensors were freed; pass "
        .. "retain_graph the first time)")
  end)

  it("refuses tensors without a graph and non-scalar roots without a gradient", function()
    local x = gc.tensor({ 1, 2 }, { 2 })
    assert.has_error(function() x:backward() end,
      "backward: the tensor does not require grad and has no grad_fn")
    local a = gc.leaf({ 2 }, 3)
    assert.has_error(function() (a * 2.0):backward() end,
      "backward: grad can be implicitly created only for one-element outputs, got [2]")
  end)

  it("records nothing under no_grad", function()
    local a = gc.leaf({ 2 }, 4)
    local y = T.no_grad(function() return a * 2.0 end)
    assert.is_false(y.requires_grad)
    assert.is_nil(y.grad_fn)
    assert.equal("mul", (a * 2.0).grad_fn)
  end)
end)
