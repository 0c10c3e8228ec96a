-- cpu_norm_spec.lua — cpu values and gradients of batch, instance, layer, group and RMS norm and
-- embedding, against PyTorch 1.13 (spec/fixtures/ops/nn.lua) and finite differences.
local T = require "prof.tensor"
local F = require "prof.nn.functional"
local gc = require "spec.support.gradcheck"
local cases = require "spec.support.torch_cases"
local recorder = require "spec.support.ops_recorder"

local fixture = dofile("spec/fixtures/ops/nn.lua")
local CPU = { dtype = "float32", device = "cpu" }

local function stats(c, mean, var)
  return T.full({ c }, mean, CPU), T.full({ c }, var, CPU)
end

local function bn_train(x, w, b)
  local rm, rv = stats(x.shape[2], 0, 1)
  return F.batch_norm(x, rm, rv, w, b, { training = true, momentum = 0.1, eps = 1e-5 })
end

-- batch_norm twice in training from running stats 0.5 and 2, as the fixture's two steps
local function bn_two_steps(x)
  local rm, rv = stats(x[1].shape[2], 0.5, 2.0)
  for i = 1, 2 do F.batch_norm(x[i], rm, rv, nil, nil, { training = true, momentum = 0.1 }) end
  return rm, rv
end

local OPS = {
  batch_norm_train = function(x) return bn_train(x[1], x[2], x[3]) end,
  batch_norm_train_t = function(x) return bn_train(x[1]:transpose(1, 2), x[2], x[3]) end,
  batch_norm_noaffine = function(x) return bn_train(x[1]) end,
  batch_norm_eval = function(x)
    return F.batch_norm(x[1], x[4], x[5], x[2], x[3], { training = false, eps = 1e-5 })
  end,
  batch_norm_running_mean = function(x) return (bn_two_steps(x)) end,
  batch_norm_running_var = function(x) return select(2, bn_two_steps(x)) end,
  instance_norm = function(x) return F.instance_norm(x[1], nil, nil, x[2], x[3]) end,
  layer_norm = function(x) return F.layer_norm(x[1], 4, x[2], x[3], { eps = 1e-5 }) end,
  layer_norm_2d_t = function(x) return F.layer_norm(x[1]:transpose(0, 2), { 3, 2 }) end,
  group_norm = function(x) return F.group_norm(x[1], 3, x[2], x[3], { eps = 1e-5 }) end,
  rms_norm = function(x, a) return F.rms_norm(x[1], 5, x[2], { eps = a.eps }) end,
  rms_norm_default_eps = function(x) return F.rms_norm(x[1], 4) end,
  embedding = function(x) return F.embedding(x[1], x[2]) end,
  embedding_pad = function(x, a)
    return F.embedding(x[1], x[2], { padding_idx = a.padding_idx })
  end,
}

describe("norms and embedding against PyTorch 1.13", function()
  for _, t in ipairs(cases.tests(fixture, OPS)) do it(t[1], t[2]) end

  it("updates instance norm's running statistics with the mean over the batch", function()
    local c
    for _, k in ipairs(fixture) do
      if k.name == "instance_norm_running" then c = k end
    end
    local x = cases.inputs(c)[1]
    local rm, rv = stats(x.shape[2], 0.5, 2.0)
    F.instance_norm(x, rm, rv, nil, nil, { use_input_stats = true, momentum = 0.2 })
    local got = gc.flat(rm:tolist())
    for _, v in ipairs(gc.flat(rv:tolist())) do got[#got + 1] = v end
    assert.is_true(gc.max_rel(got, c.out.values) < 1e-5)
  end)
end)

describe("norm and embedding gradients against finite differences", function()
  local idx = T.tensor({ { 0, 2 }, { 2, 1 } }, { dtype = "int64", device = "cpu" })
  local checks = {
    { "batch_norm", function(x, w, b) return bn_train(x, w, b) end, { { 3, 2, 2 }, { 2 }, { 2 } } },
    { "batch_norm eval", function(x, w)
      local rm, rv = stats(2, 0.1, 1.5)
      return F.batch_norm(x, rm, rv, w, nil, { training = false })
    end, { { 3, 2 }, { 2 } } },
    { "layer_norm", function(x, w, b) return F.layer_norm(x, { 2, 3 }, w, b) end,
      { { 2, 2, 3 }, { 2, 3 }, { 2, 3 } } },
    { "group_norm", function(x, w) return F.group_norm(x, 2, w, nil) end, { { 2, 4, 2 }, { 4 } } },
    { "instance_norm", function(x) return F.instance_norm(x) end, { { 2, 2, 3 } } },
    { "rms_norm", function(x, w) return F.rms_norm(x, 3, w, { eps = 1e-5 }) end,
      { { 2, 3 }, { 3 } } },
    { "embedding", function(w) return F.embedding(idx, w) end, { { 3, 2 } } },
  }
  for _, c in ipairs(checks) do
    it(c[1], function() assert.is_true(gc.check_shapes(c[2], c[3], 3)) end)
  end
end)

describe("norms and embedding on the cpu", function()
  it("leave padding_idx's row without gradient and scatter-add repeated rows", function()
    local w = gc.leaf({ 3, 2 }, 5)
    local i = T.tensor({ 1, 2, 2, 1 }, { dtype = "int64", device = "cpu" })
    T.sum(F.embedding(i, w, { padding_idx = 1 })):backward()
    -- row 0 unused, row 1 padding, row 2 gathered twice
    assert.same({ { 0, 0 }, { 0, 0 }, { 2, 2 } }, w.grad:tolist())
  end)

  it("name a bad index and the vocabulary size", function()
    local w = gc.tensor(gc.values(6, 1), { 3, 2 })
    local i = T.tensor({ 0, 3 }, { dtype = "int64", device = "cpu" })
    assert.has_error(function() F.embedding(i, w) end,
      "embedding: index 3 is out of range for a vocabulary of 3")
    i = T.tensor({ -1 }, { dtype = "int64", device = "cpu" })
    assert.has_error(function() F.embedding(i, w) end,
      "embedding: index -1 is out of range for a vocabulary of 3")
  end)

  it("use the running statistics in evaluation: (x - mean) / sqrt(var + eps)", function()
    local x = gc.tensor({ 1, 3 }, { 2, 1 })
    local rm, rv = stats(1, 1, 4)
    -- (1 - 1) / 2 = 0, (3 - 1) / 2 = 1 (eps 0)
    local y = F.batch_norm(x, rm, rv, nil, nil, { training = false, eps = 0 })
    assert.same({ { 0 }, { 1 } }, y:tolist())
    assert.same({ 1 }, rm:tolist())
  end)

  it("record their backward as work of the backward phase", function()
    local x, w = gc.leaf({ 4, 3 }, 1), gc.leaf({ 3 }, 2)
    local fwd, bwd = recorder.phases(function() T.sum(F.layer_norm(x, 3, w) * 2.0):backward() end)
    -- forward: layer_norm 6·12 + 2·4 + 12 = 92, mul 12, sum 11; backward: the mul's 12,
    -- layer_norm_backward per element x̂ 2, gx 7 + 1 (weight), gw 2 = 12·12 = 144
    assert.equal(92 + 12 + 11, fwd.flops)
    assert.equal(12 + 144, bwd.flops)
  end)
end)
