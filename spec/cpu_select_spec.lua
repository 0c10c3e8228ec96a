-- cpu_select_spec.lua — cpu values and gradients of masked_fill, where, triu/tril, cat, stack, chunk
-- and split, against PyTorch 1.13 (spec/fixtures/ops/pointwise.lua) and finite differences.
local T = require "prof.tensor"
local gc = require "spec.support.gradcheck"
local cases = require "spec.support.torch_cases"
local recorder = require "spec.support.ops_recorder"

local fixture = dofile("spec/fixtures/ops/pointwise.lua")

local function bool(t) return t:to("bool") end

-- How each recorded case runs in profrun (masks are recorded as int64 0/1; the _t forms take a
-- transposed, strided input).
local OPS = {
  masked_fill = function(x, a) return T.masked_fill(x[1], bool(x[2]), a.value) end,
  masked_fill_t = function(x, a) return x[1]:t():masked_fill(bool(x[2]), a.value) end,
  where = function(x) return T.where(bool(x[1]), x[2], x[3]) end,
  where_sa = function(x, a) return T.where(bool(x[1]), a.s, x[2]) end,
  where_sb = function(x, a) return T.where(bool(x[1]), x[2], a.s) end,
  where_t = function(x) return T.where(bool(x[1]), x[2]:t(), x[3]) end,
  triu = function(x, a) return T.triu(x[1], a.diagonal) end,
  triu_t = function(x, a) return T.triu(x[1]:t(), a.diagonal) end,
  tril = function(x, a) return T.tril(x[1], a.diagonal) end,
  tril_t = function(x, a) return T.tril(x[1]:t(), a.diagonal) end,
  cat = function(x, a) return T.cat(x, a.dim) end,
  cat_t = function(x, a) return T.cat({ x[1]:t(), x[2] }, a.dim) end,
  stack = function(x, a) return T.stack(x, a.dim) end,
  stack_t = function(x, a) return T.stack({ x[1]:t(), x[2] }, a.dim) end,
  chunk_cat = function(x)
    local p, q, r = x[1]:chunk(3, 1)
    return T.cat({ r, p * 2.0, q }, 1)
  end,
  split_one = function(x) return select(2, T.split(x[1], { 1, 2 }, 0)) * 3.0 end,
  split_t = function(x)
    local p, q = T.split(x[1]:t(), 2, 0)
    return p * q
  end,
}

describe("selection cpu kernels and gradients against PyTorch 1.13", function()
  local tests = cases.tests(fixture, OPS, function(c) return c.op end)
  for _, t in ipairs(tests) do it(t[1], t[2]) end
  it("has its cases in the fixture", function() assert.is_true(#tests >= 30) end)
end)

describe("selection gradients against finite differences", function()
  local mask = gc.tensor({ 1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0 }, { 3, 4 }):to("bool")
  local checks = {
    { "masked_fill (broadcast input)", function(x) return T.masked_fill(x, mask, 0.5) end, { { 4 } } },
    { "where", function(a, b) return T.where(mask, a, b) end, { { 3, 1 }, { 4 } } },
    { "where with a number", function(b) return T.where(mask, 2.0, b) end, { { 3, 4 } } },
    { "triu of a batch", function(x) return T.triu(x, 1) end, { { 2, 3, 3 } } },
    { "tril of a transposed view", function(x) return T.tril(x:t(), -1) end, { { 4, 3 } } },
    { "cat", function(a, b) return T.cat({ a, b:t() }, 0) end, { { 2, 3 }, { 3, 1 } } },
    { "stack", function(a, b) return T.stack({ a, b }, 1) end, { { 2, 3 }, { 2, 3 } } },
    { "chunk", function(x)
      local p, q = x:chunk(2, 1)
      return p * q
    end, { { 3, 4 } } },
    { "split", function(x)
      local p, q, r = T.split(x, { 1, 2, 1 }, 0)
      return T.cat({ r * 2.0, p * q:sum(0) }, 0)
    end, { { 4, 2 } } },
  }
  for _, c in ipairs(checks) do
    it(c[1], function()
      local inputs = {}
      for k, shape in ipairs(c[3]) do inputs[k] = gc.leaf(shape, 20 + k) end
      local ok, msg = gc.check(c[2], inputs)
      assert.is_true(ok, msg)
    end)
  end
end)

describe("cat and stack", function()
  it("join many inputs of any layout, each getting its slice of the gradient", function()
    -- 11 inputs (more than a backward node holds) of widths 1..11; every third needs no gradient
    local xs, base5 = {}, gc.leaf({ 5, 2 }, 5)
    for k = 1, 11 do
      xs[k] = k == 5 and base5:t() or gc.leaf({ 2, k }, k)   -- input 5 is a strided view
      if k % 3 == 0 then xs[k].requires_grad = false end
    end
    local y = T.cat(xs, 1)
    assert.same({ 2, 66 }, y.shape)
    local rows = y:tolist()
    local col = 0
    for k = 1, 11 do
      local v = xs[k]:tolist()
      for j = 1, k do
        assert.equal(v[1][j], rows[1][col + j])
        assert.equal(v[2][j], rows[2][col + j])
      end
      col = col + k
    end
    -- d sum(y · w) / d x_k = w's columns of x_k (through the transpose for input 5)
    local w = gc.tensor(gc.values(132, 5), { 2, 66 })
    T.sum(y * w):backward()
    local wv = w:tolist()
    col = 0
    for k = 1, 11 do
      if k % 3 == 0 then
        assert.is_nil(xs[k].grad)
      else
        local g = (k == 5 and base5.grad:t() or xs[k].grad):tolist()
        for j = 1, k do
          assert.equal(wv[1][col + j], g[1][j])
          assert.equal(wv[2][col + j], g[2][j])
        end
      end
      col = col + k
    end
  end)

  it("stacks seven tensors with gradients, int64 values too", function()
    local xs = {}
    for k = 1, 7 do xs[k] = gc.leaf({ 2, 2 }, 30 + k) end
    local y = T.stack(xs, 2)
    assert.same({ 2, 2, 7 }, y.shape)
    assert.equal(xs[6]:tolist()[2][1], y:tolist()[2][1][6])
    T.sum(y * 3.0):backward()
    for k = 1, 7 do assert.same({ { 3, 3 }, { 3, 3 } }, xs[k].grad:tolist()) end
    local a = T.tensor({ 1, 2 }, { dtype = "int64", device = "cpu" })
    local b = T.tensor({ 3, 4 }, { dtype = "int64", device = "cpu" })
    assert.same({ { 1, 3 }, { 2, 4 } }, T.stack({ a, b }, 1):tolist())
    assert.same({ 1, 2, 3, 4 }, T.cat({ a, b }):tolist())
  end)

  it("keeps meta to shapes and counts: the gradient slices are views, the copies are free", function()
    local a = T.empty { 2, 3 }
    a.requires_grad = true
    local _, bwd = recorder.phases(function()
      local y = T.cat({ a, a, a, a, a, a }, 0)
      assert.same({ 12, 3 }, y.shape)
      T.sum(y * 2.0):backward()
    end)
    assert.same({ 2, 3 }, a.grad.shape)
    -- the mul's gradient 36, then five adds of a's six slices into one gradient: 5·6
    assert.equal(36 + 30, bwd.flops)
  end)
end)

describe("selections on the cpu", function()
  it("masked_fill and where write values of any dtype", function()
    local m = gc.tensor({ 1, 0, 1 }, { 3 }):to("bool")
    local i = T.tensor({ 4, 5, 6 }, { dtype = "int64", device = "cpu" })
    assert.same({ -1, 5, -1 }, T.masked_fill(i, m, -1):tolist())
    assert.same({ 7, 5, 7 }, T.where(m, 7, i):tolist())
    local b = T.where(m, T.tensor({ true, true, true }, { device = "cpu" }),
                      T.tensor({ false, false, false }, { device = "cpu" }))
    assert.same({ true, false, true }, b:tolist())
  end)

  it("triu and tril keep torch's diagonals", function()
    local x = gc.tensor({ 1, 2, 3, 4, 5, 6, 7, 8, 9 }, { 3, 3 })
    -- torch.triu(x, 1) / torch.tril(x, -1) of [[1,2,3],[4,5,6],[7,8,9]]
    assert.same({ { 0, 2, 3 }, { 0, 0, 6 }, { 0, 0, 0 } }, T.triu(x, 1):tolist())
    assert.same({ { 0, 0, 0 }, { 4, 0, 0 }, { 7, 8, 0 } }, T.tril(x, -1):tolist())
    assert.same({ { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 } }, T.tril(x, 5):tolist())
    assert.same({ { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 } }, T.triu(x, 3):tolist())
  end)
end)
