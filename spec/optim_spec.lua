-- optim_spec.lua — prof.optim's SGD, Adam and AdamW against torch 1.13 (spec/fixtures/ops/optim.lua),
-- their param groups, state and zero_grad, and the "step" work they record.
local T = require "prof.tensor"
local nn = require "prof.nn"
local optim = require "prof.optim"
local gc = require "spec.support.gradcheck"
local recorder = require "spec.support.ops_recorder"

local fixture = dofile("spec/fixtures/ops/optim.lua")

local function cpu(values, shape)
  return gc.tensor(values, shape)
end

local function leaf(values, shape)
  local t = cpu(values, shape)
  t.requires_grad = true
  return t
end

-- Runs one recorded case and returns the worst relative error over every step and parameter.
local function replay(c)
  local params = {}
  for i, p in ipairs(c.params) do params[i] = leaf(p.values, p.shape) end
  local opt = optim[c.optim](params, c.opts)
  local worst, where = 0, "nowhere"
  for step, grads in ipairs(c.grads) do
    for i, g in ipairs(grads) do
      params[i].grad = g and cpu(g, c.params[i].shape) or nil
    end
    opt:step()
    for i, want in ipairs(c.after[step]) do
      local e = gc.max_rel(params[i]:tolist(), want)
      if e > worst then worst, where = e, string.format("step %d parameter %d", step, i) end
    end
  end
  return worst, where
end

describe("updates against torch 1.13 (float32, 5 steps)", function()
  for _, c in ipairs(fixture) do
    it(c.name .. " within 1e-6 relative", function()
      local err, where = replay(c)
      assert.is_true(err < 1e-6, string.format("%s off by %.3g relative", where, err))
    end)
  end
end)

describe("update rules by hand", function()
  it("SGD with momentum: the first step copies the gradient into the buffer", function()
    -- p = 1, g = 2 each step, lr = 0.1, momentum 0.5, dampening 0.5:
    -- step 1: b = g = 2 (torch clones, dampening not applied), p = 1 - 0.2 = 0.8
    -- step 2: b = 0.5·2 + 0.5·2 = 2, p = 0.8 - 0.2 = 0.6
    local p = leaf({ 1 }, { 1 })
    local opt = optim.SGD({ p }, { lr = 0.1, momentum = 0.5, dampening = 0.5 })
    p.grad = cpu({ 2 }, { 1 })
    opt:step()
    assert.near(0.8, p:tolist()[1], 1e-7)
    assert.near(2, opt.state[p].momentum_buffer:tolist()[1], 1e-7)
    opt:step()
    assert.near(0.6, p:tolist()[1], 1e-7)
  end)

  it("Adam's first step moves each weight by lr (bias-corrected m/sqrt(v) = sign(g))", function()
    local p = leaf({ 1, -1, 0.5 }, { 3 })
    local opt = optim.Adam({ p }, { lr = 0.01 })
    p.grad = cpu({ 3, -0.25, 1e-3 }, { 3 })
    opt:step()
    -- m̂ = g, v̂ = g², so the update is lr·g/(|g| + eps): 0.01·(1 - eps/|g|)
    local v = p:tolist()
    assert.near(0.99, v[1], 1e-6)
    assert.near(-0.99, v[2], 1e-6)
    assert.near(0.49, v[3], 1e-6)
    assert.equal(1, opt.state[p].step)
  end)

  it("AdamW decays the weight before the update, independent of the gradient", function()
    -- g = 0: m = v = 0, the Adam term is 0/(0 + eps) = 0; only p·(1 - lr·wd) remains
    local p = leaf({ 2 }, { 1 })
    local opt = optim.AdamW({ p }, { lr = 0.1, weight_decay = 0.5 })
    p.grad = cpu({ 0 }, { 1 })
    opt:step()
    assert.near(2 * 0.95, p:tolist()[1], 1e-6)
  end)
end)

describe("param groups and state", function()
  it("takes model:parameters() and fills every group with the defaults", function()
    local model = nn.Linear(3, 2)
    local opt = optim.Adam(model:parameters())
    assert.equal(1, #opt.param_groups)
    local g = opt.param_groups[1]
    assert.equal(2, #g.params)
    assert.same({ 1e-3, { 0.9, 0.999 }, 1e-8, 0, false }, { g.lr, g.betas, g.eps, g.weight_decay, g.amsgrad })
    assert.equal(1e-2, optim.AdamW(model:parameters()).param_groups[1].weight_decay)
  end)

  it("keeps per-group options; a group's lr can change between steps", function()
    local a, b = leaf({ 1 }, { 1 }), leaf({ 1 }, { 1 })
    local opt = optim.SGD({ { params = { a } }, { params = { b }, lr = 0.5 } }, { lr = 0.1 })
    assert.same({ 0.1, 0.5 }, { opt.param_groups[1].lr, opt.param_groups[2].lr })
    a.grad, b.grad = cpu({ 1 }, { 1 }), cpu({ 1 }, { 1 })
    opt:step()
    assert.near(0.9, a:tolist()[1], 1e-7)
    assert.near(0.5, b:tolist()[1], 1e-7)
    opt.param_groups[1].lr = 0.2
    opt:step()
    assert.near(0.7, a:tolist()[1], 1e-7)
  end)

  it("skips parameters without a gradient and creates their state on their first update", function()
    local a, b = leaf({ 1 }, { 1 }), leaf({ 1 }, { 1 })
    local opt = optim.Adam({ a, b }, { lr = 0.1 })
    a.grad = cpu({ 1 }, { 1 })
    opt:step()
    assert.equal(1, b:tolist()[1])
    assert.is_nil(opt.state[b])
    assert.same({ "exp_avg", "exp_avg_sq", "step" }, (function()
      local keys = {}
      for k in pairs(opt.state[a]) do keys[#keys + 1] = k end
      table.sort(keys)
      return keys
    end)())
  end)

  it("adds groups and rejects a parameter seen twice", function()
    local a, b = leaf({ 1 }, { 1 }), leaf({ 1 }, { 1 })
    local opt = optim.SGD({ a }, { lr = 0.1, momentum = 0.9 })
    opt:add_param_group { params = b, momentum = 0 }
    assert.equal(0, opt.param_groups[2].momentum)
    assert.has_error(function() opt:add_param_group { params = { a } } end,
      "some parameters appear more than once in the parameter groups")
  end)

  it("returns the closure's loss from step(closure)", function()
    local p = leaf({ 3 }, { 1 })
    local opt = optim.SGD({ p }, { lr = 0.1 })
    local loss = opt:step(function()
      opt:zero_grad()
      local l = T.sum(p * p)
      l:backward()
      return l
    end)
    assert.near(9, loss:item(), 1e-6)
    assert.near(3 - 0.1 * 6, p:tolist()[1], 1e-6)
  end)

  it("prints its groups as torch does", function()
    local opt = optim.SGD({ leaf({ 1 }, { 1 }) }, { lr = 0.01, momentum = 0.9 })
    assert.equal("SGD (\nParameter Group 0\n    dampening: 0\n    lr: 0.01\n    maximize: False\n"
      .. "    momentum: 0.9\n    nesterov: False\n    weight_decay: 0\n)", tostring(opt))
  end)
end)

describe("argument checks (torch's messages)", function()
  local p = leaf({ 1 }, { 1 })
  local cases = {
    { "lr required", function() optim.SGD({ p }) end,
      "parameter group didn't specify a value of required optimization parameter lr" },
    { "negative lr", function() optim.SGD({ p }, { lr = -0.1 }) end, "Invalid learning rate: -0.1" },
    { "negative momentum", function() optim.SGD({ p }, { lr = 1, momentum = -1 }) end,
      "Invalid momentum value: -1" },
    { "nesterov", function() optim.SGD({ p }, { lr = 1, nesterov = true }) end,
      "Nesterov momentum requires a momentum and zero dampening" },
    { "beta", function() optim.Adam({ p }, { betas = { 0.9, 1.0 } }) end,
      "Invalid beta parameter at index 1: 1.0" },
    { "eps", function() optim.Adam({ p }, { eps = -1e-8 }) end, "Invalid epsilon value: -1e-08" },
    { "weight decay", function() optim.AdamW({ p }, { weight_decay = -1 }) end,
      "Invalid weight_decay value: -1" },
    { "unknown option", function() optim.Adam({ p }, { momentum = 0.9 }) end,
      "Adam: unexpected keyword argument 'momentum'" },
    { "empty list", function() optim.Adam({}) end, "Adam: optimizer got an empty parameter list" },
    { "a tensor", function() optim.Adam(p) end, "Adam: params argument given to the optimizer should be "
      .. "a list of tensors or of groups, but got a tensor" },
  }
  for _, c in ipairs(cases) do
    it(c[1], function()
      local ok, err = pcall(c[2])
      assert.is_false(ok)
      assert.truthy(err:find(c[3], 1, true), err)
      -- the message points at the caller's line, not into prof.optim
      assert.truthy(err:find("optim_spec.lua", 1, true), err)
    end)
  end

  it("a mismatched state tensor fails before anything is updated", function()
    local a, b = leaf({ 1, 2 }, { 2 }), leaf({ 1 }, { 1 })
    local opt = optim.Adam({ a, b }, { lr = 0.1 })
    opt.state[b] = { step = 0, exp_avg = cpu({ 0, 0 }, { 2 }), exp_avg_sq = cpu({ 0 }, { 1 }) }
    a.grad, b.grad = cpu({ 1, 1 }, { 2 }), cpu({ 1 }, { 1 })
    assert.has_error(function() opt:step() end, "adam_step: state 0 has shape [2], the parameter [1]")
    assert.same({ 1, 2 }, a:tolist())
    -- the state this step created goes again; what the caller put there stays
    assert.is_nil(opt.state[a])
    assert.equal(0, opt.state[b].step)
  end)

  it("a failed SGD step leaves no half-made momentum buffer behind", function()
    local w = leaf({ 1, 2 }, { 2 })
    local opt = optim.SGD({ w }, { lr = 0.1 })
    w.grad = cpu({ 1, 1 }, { 2 })
    opt:step()
    assert.same({}, opt.state[w])
    opt.param_groups[1].momentum = 0.9
    w.grad = cpu({ 1, 1, 1 }, { 3 })
    assert.has_error(function() opt:step() end, "sgd_step: the gradient has shape [3], the parameter [2]")
    assert.same({}, opt.state[w])
    w.grad = cpu({ 1, 1 }, { 2 })
    opt:step()   -- the buffer starts now, as the gradient itself
    assert.same({ 1, 1 }, opt.state[w].momentum_buffer:tolist())
  end)
end)

describe("zero_grad", function()
  it("drops gradients by default and zeroes them in place on request", function()
    local model = nn.Linear(2, 1, { device = "cpu" })
    local opt = optim.SGD(model:parameters(), { lr = 0.1 })
    T.sum(model(cpu({ 1, 2 }, { 1, 2 }))):backward()
    local g = model.weight.grad
    opt:zero_grad(false)
    assert.same({ { 0, 0 } }, g:tolist())
    assert.same({ { 0, 0 } }, model.weight.grad:tolist())
    opt:zero_grad()
    assert.is_nil(model.weight.grad)
    assert.is_nil(model.bias.grad)
  end)

  it("Module:zero_grad does the same over the module's parameters", function()
    local model = nn.Sequential(nn.Linear(2, 2, { device = "cpu" }), nn.Linear(2, 1, { device = "cpu" }))
    T.sum(model(cpu({ 1, 2 }, { 1, 2 }))):backward()
    model:zero_grad(false)
    assert.same({ 0 }, model[2].bias.grad:tolist())
    model:zero_grad()
    for _, p in ipairs(model:parameters()) do assert.is_nil(p.grad) end
  end)
end)

describe("profiling", function()
  -- Runs fn with a recorder in the "step" phase (the engine's job) and returns the step totals.
  local function step_totals(fn) return recorder.count(fn, nil, "step") end

  it("SGD records 2 flops per element (+3 momentum, +2 weight decay) and its bytes", function()
    local w, b = leaf(gc.values(12, 1), { 3, 4 }), leaf(gc.values(4, 2), { 4 })
    local opt = optim.SGD({ w, b }, { lr = 0.1, momentum = 0.9, weight_decay = 0.1 })
    w.grad, b.grad = cpu(gc.values(12, 3), { 3, 4 }), cpu(gc.values(4, 4), { 4 })
    -- step 1: the buffer takes d_p (no momentum arithmetic): 2 + 2 flops, reads p, g, writes p, b
    local t = step_totals(function() opt:step() end)
    assert.same({ 16 * 4, 16 * 4 * 2, 16 * 4 * 2 }, { t.flops, t.bytes_read, t.bytes_written })
    -- later steps: 2 + 2 + 3 flops; reads p, g, b; writes p, b
    t = step_totals(function() opt:step() end)
    assert.same({ 16 * 7, 16 * 4 * 3, 16 * 4 * 2 }, { t.flops, t.bytes_read, t.bytes_written })
  end)

  it("Adam records 13 flops per element (+2 weight decay, +1 amsgrad), AdamW 14", function()
    local function run(cls, opts)
      local w = leaf(gc.values(10, 5), { 10 })
      local opt = optim[cls]({ w }, opts)
      w.grad = cpu(gc.values(10, 6), { 10 })
      return step_totals(function() opt:step() end)
    end
    local t = run("Adam", {})
    -- reads p, g, m, v; writes p, m, v
    assert.same({ 130, 10 * 4 * 4, 10 * 4 * 3 }, { t.flops, t.bytes_read, t.bytes_written })
    t = run("Adam", { weight_decay = 0.1, amsgrad = true })
    assert.same({ 160, 10 * 4 * 5, 10 * 4 * 4 }, { t.flops, t.bytes_read, t.bytes_written })
    assert.equal(140, run("AdamW", {}).flops)
  end)

  it("counts a meta model's step without computing anything", function()
    local w = T.empty({ 1024, 1024 })   -- meta: no storage
    nn.Parameter(w)
    w.grad = T.empty({ 1024, 1024 })
    local opt = optim.Adam({ w })
    local t = step_totals(function() opt:step() end)
    assert.equal(13 * 1024 * 1024, t.flops)
    assert.equal("meta", opt.state[w].exp_avg.device)
  end)
end)
