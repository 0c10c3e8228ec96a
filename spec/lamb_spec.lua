-- lamb_spec.lua — DeepSpeed's Lamb (FusedLamb) and FusedAdam's bias_correction, against references
-- written from their kernels, and the 1-bit optimizers run as their base optimizer with a note.
local core = require "prof.core"
local config = require "prof.config"
local notes = require "prof.util.notes"
local optim = require "prof.optim"
local prof = require "prof"
local nn = require "prof.nn"
local T = require "prof.tensor"

local F = nn.functional
local FIXTURE = "spec/fixtures/configs/optimizer_adam.json"

-- DeepSpeed's FusedLamb, written out in doubles from csrc/lamb/fused_lamb_cuda_kernel.cu
-- (lamb_cuda_kernel_part1..3) and ops/lamb/fused_lamb.py, for a list of parameters (plain lists):
--   m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; u = m / (sqrt(v) + eps) + wd p   (eps_mode 1)
--   (eps_inside_sqrt: u = m / sqrt(v + eps) + wd p)
--   coeff = clamp(|p| / |u|, min_coeff, max_coeff), 1 if a norm is 0
--   p -= step_size coeff u, step_size = lr sqrt(1 - b2^t) / (1 - b1^t) (lr without bias_correction)
local function reference(params, grads, o, steps)
  local b1, b2 = o.betas[1], o.betas[2]
  local m, v = {}, {}
  for i, p in ipairs(params) do
    m[i], v[i] = {}, {}
    for j = 1, #p do m[i][j], v[i][j] = 0, 0 end
  end
  for t = 1, steps do
    for i, p in ipairs(params) do
      local g, u = grads[t][i], {}
      local pn, un = 0, 0
      for j = 1, #p do
        m[i][j] = b1 * m[i][j] + (1 - b1) * g[j]
        v[i][j] = b2 * v[i][j] + (1 - b2) * g[j] * g[j]
        local denom = o.eps_inside_sqrt and math.sqrt(v[i][j] + o.eps) or math.sqrt(v[i][j]) + o.eps
        u[j] = m[i][j] / denom + o.weight_decay * p[j]
        pn, un = pn + p[j] * p[j], un + u[j] * u[j]
      end
      pn, un = math.sqrt(pn), math.sqrt(un)
      local coeff = 1
      if pn ~= 0 and un ~= 0 then coeff = math.min(math.max(pn / un, o.min_coeff), o.max_coeff) end
      local step_size = o.bias_correction and o.lr * math.sqrt(1 - b2 ^ t) / (1 - b1 ^ t) or o.lr
      for j = 1, #p do p[j] = p[j] - step_size * coeff * u[j] end
    end
  end
  return params
end

local P0 = { { 1.0, -2.0, 0.5, 0.25 }, { 100.0, 100.0 } }   -- the second hits max_coeff
local G = {
  { { 0.3, -0.1, 0.2, 0.05 }, { 1e-3, -2e-3 } },
  { { -0.2, 0.4, 0.1, -0.3 }, { 3e-3, 1e-3 } },
  { { 0.05, 0.05, -0.5, 0.2 }, { -1e-3, 4e-3 } },
}

local function run_lamb(o)
  local ps = {}
  for i, p in ipairs(P0) do
    ps[i] = T.tensor(p)
    ps[i].requires_grad = true
  end
  local opt = optim.Lamb(ps, o)
  for t = 1, #G do
    for i, p in ipairs(ps) do p.grad = T.tensor(G[t][i]) end
    opt:step()
  end
  local out = {}
  for i, p in ipairs(ps) do out[i] = p:tolist() end
  return out
end

local function copy(t)
  local out = {}
  for i, row in ipairs(t) do out[i] = { table.unpack(row) } end
  return out
end

local function assert_close(want, got)
  for i = 1, #want do
    for j = 1, #want[i] do
      assert.near(want[i][j], got[i][j], 2e-6 * math.max(1, math.abs(want[i][j])),
        string.format("param %d[%d]", i, j))
    end
  end
end

describe("DeepSpeed's Lamb", function()
  setup(function() T.set_default_device("cpu") end)
  teardown(function() config.set(assert(core.load_config(nil, {}))) end)

  local DEFAULTS = { lr = 1e-3, bias_correction = true, betas = { 0.9, 0.999 }, eps = 1e-8,
    eps_inside_sqrt = false, weight_decay = 0, max_grad_norm = 0, max_coeff = 10, min_coeff = 0.01 }

  it("has FusedLamb's parameter names and defaults", function()
    assert.same(DEFAULTS, optim.Lamb.DEFAULTS)
  end)

  for _, case in ipairs({
    { "with weight decay", { lr = 0.1, weight_decay = 0.01 } },
    { "eps inside the sqrt, no bias correction", { lr = 0.05, eps_inside_sqrt = true, bias_correction = false,
      eps = 1e-4 } },
    { "narrow trust ratio bounds", { lr = 0.02, max_coeff = 2, min_coeff = 0.5, weight_decay = 0.1 } },
  }) do
    it("updates as FusedLamb's kernel: " .. case[1], function()
      local o = {}
      for k, v in pairs(DEFAULTS) do o[k] = v end
      for k, v in pairs(case[2]) do o[k] = v end
      local want = reference(copy(P0), G, o, #G)
      assert_close(want, run_lamb(case[2]))
      -- and it moved: the reference is not the start
      assert.is_true(math.abs(want[1][1] - P0[1][1]) > 1e-3)
    end)
  end

  it("refuses AMSGrad and crossed trust bounds, as FusedLamb does", function()
    local p = T.tensor({ 1.0 })
    p.requires_grad = true
    assert.has_error(function() optim.Lamb({ p }, { amsgrad = true }) end)
    assert.has_error(function() optim.Lamb({ p }, { min_coeff = 2, max_coeff = 1 }) end)
  end)

  describe("from the config's optimizer section", function()
    local said, sink
    before_each(function()
      notes.reset()
      said, sink = {}, notes.sink
      notes.sink = function(msg) said[#said + 1] = msg end
    end)
    after_each(function() notes.sink = sink end)

    local function train(sets)
      local cfg = assert(config.load(FIXTURE, sets))
      T.manual_seed(7)
      local m = nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 3))
      local engine, opt = prof.initialize { model = m, config = cfg }
      T.manual_seed(11)
      for _ = 1, 3 do
        engine:backward(F.cross_entropy(engine(T.randn({ 4, 6 })), T.tensor({ 0, 1, 2, 0 })))
        engine:step()
      end
      local w = {}
      for i, p in ipairs(m:parameters()) do w[i] = p:tolist() end
      return w, opt
    end

    local function by_hand(cls, o)
      T.manual_seed(7)
      local m = nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 3))
      local opt = cls(m:parameters(), o)
      T.manual_seed(11)
      for _ = 1, 3 do
        F.cross_entropy(m(T.randn({ 4, 6 })), T.tensor({ 0, 1, 2, 0 })):backward()
        opt:step()
        opt:zero_grad()
      end
      local w = {}
      for i, p in ipairs(m:parameters()) do w[i] = p:tolist() end
      return w
    end

    it("Lamb (any case) builds prof.optim.Lamb with DeepSpeed's names", function()
      local got, opt = train({ "flops_profiler.enabled=false",
        'optimizer={"type": "LAMB", "params": {"lr": 0.02, "weight_decay": 0.01, "max_coeff": 5, '
        .. '"min_coeff": 0.1, "eps_inside_sqrt": true, "max_grad_norm": 1.0}}' })
      assert.equal("Lamb", getmetatable(opt).__name)
      assert.same(by_hand(optim.Lamb, { lr = 0.02, weight_decay = 0.01, max_coeff = 5, min_coeff = 0.1,
        eps_inside_sqrt = true, max_grad_norm = 1.0 }), got)
      assert.same({}, said)
      local bad = { config.load(FIXTURE, { 'optimizer={"type": "Lamb", "params": {"momentum": 0.9}}' }) }
      assert.is_nil(bad[1])
      assert.truthy(bad[2]:find('unknown key "optimizer.params.momentum" for optimizer type "Lamb"', 1, true))
    end)

    it("OneBitAdam and ZeroOneAdam run as AdamW, raw moments; OneBitLamb as Lamb; each with a note", function()
      -- DeepSpeed's 1-bit Adams divide the raw moments (onebit/adam.py: update = exp_avg /
      -- (exp_avg_sq.sqrt() + eps)), whatever their bias_correction says
      local got, opt = train({ "flops_profiler.enabled=false",
        'optimizer={"type": "OneBitAdam", "params": {"lr": 0.01, "freeze_step": 2, "cuda_aware": false, '
        .. '"comm_backend_name": "nccl", "weight_decay": 0.1, "bias_correction": true}}' })
      assert.equal("AdamW", getmetatable(opt).__name)
      assert.same(by_hand(optim.AdamW, { lr = 0.01, weight_decay = 0.1, bias_correction = false }), got)
      assert.equal(1, #said)
      assert.truthy(said[1]:find("onebitadam runs as AdamW on one process", 1, true), said[1])
      local _
      _, opt = train({ "flops_profiler.enabled=false", 'optimizer={"type": "ZeroOneAdam", "params": '
        .. '{"lr": 0.01, "var_freeze_step": 10}}' })
      assert.equal("AdamW", getmetatable(opt).__name)
      notes.reset()
      got, opt = train({ "flops_profiler.enabled=false", 'optimizer={"type": "OneBitLamb", "params": '
        .. '{"lr": 0.02, "coeff_beta": 0.9, "factor_max": 4.0}}' })
      assert.equal("Lamb", getmetatable(opt).__name)
      assert.same(by_hand(optim.Lamb, { lr = 0.02 }), got)
      assert.truthy(said[#said]:find("onebitlamb runs as Lamb on one process", 1, true))
    end)
  end)
end)

-- DeepSpeed's FusedAdam (csrc/adam/multi_tensor_adam.cu, AdamFunctor) in doubles: with
-- bias_correction bc1 = 1 - b1^t and bc2 = 1 - b2^t, else both 1;
--   ADAM_MODE_0 (L2, Adam): g += wd p;  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
--   update = (m / bc1) / (sqrt(v / bc2) + eps);  ADAM_MODE_1 (AdamW): update += wd p
--   p -= lr update
local function fused_adam(params, grads, o, steps)
  local b1, b2 = o.betas[1], o.betas[2]
  local m, v, p = {}, {}, {}
  for i, q in ipairs(params) do
    m[i], v[i], p[i] = {}, {}, { table.unpack(q) }
    for j = 1, #q do m[i][j], v[i][j] = 0, 0 end
  end
  for t = 1, steps do
    local bc1 = o.bias_correction and 1 - b1 ^ t or 1
    local bc2 = o.bias_correction and 1 - b2 ^ t or 1
    for i = 1, #p do
      for j = 1, #p[i] do
        local g = grads[t][i][j]
        if not o.adamw then g = g + o.weight_decay * p[i][j] end
        m[i][j] = b1 * m[i][j] + (1 - b1) * g
        v[i][j] = b2 * v[i][j] + (1 - b2) * g * g
        local update = (m[i][j] / bc1) / (math.sqrt(v[i][j] / bc2) + o.eps)
        if o.adamw then update = update + o.weight_decay * p[i][j] end
        p[i][j] = p[i][j] - o.lr * update
      end
    end
  end
  return p
end

describe("DeepSpeed's FusedAdam bias_correction", function()
  setup(function() T.set_default_device("cpu") end)

  local function run_adam(cls, o)
    local ps = {}
    for i, p in ipairs(P0) do
      ps[i] = T.tensor(p)
      ps[i].requires_grad = true
    end
    local opt = cls(ps, o)
    for t = 1, #G do
      for i, p in ipairs(ps) do p.grad = T.tensor(G[t][i]) end
      opt:step()
    end
    local out = {}
    for i, p in ipairs(ps) do out[i] = p:tolist() end
    return out
  end

  for _, case in ipairs({
    { "Adam, corrected", optim.Adam, { lr = 0.05, weight_decay = 0.1, bias_correction = true } },
    { "Adam, raw moments", optim.Adam, { lr = 0.05, weight_decay = 0.1, bias_correction = false } },
    { "AdamW, corrected", optim.AdamW, { lr = 0.05, weight_decay = 0.1, bias_correction = true } },
    { "AdamW, raw moments", optim.AdamW, { lr = 0.05, weight_decay = 0.1, bias_correction = false } },
  }) do
    it(case[1] .. " follows the kernel over three steps", function()
      local o = { betas = { 0.9, 0.999 }, eps = 1e-8, adamw = case[2] == optim.AdamW }
      for k, val in pairs(case[3]) do o[k] = val end
      assert_close(fused_adam(P0, G, o, #G), run_adam(case[2], case[3]))
    end)
  end

  it("false makes the first step lr (1 - b1) / sqrt(1 - b2) sign(g), not lr sign(g)", function()
    local function first_step(o)
      local p = T.tensor({ 1.0, -2.0 })
      local opt = optim.Adam({ p }, o)
      p.grad = T.tensor({ 0.3, -0.1 })
      opt:step()
      return p:tolist()
    end
    -- by hand: m = 0.1 g, v = 0.001 g^2; corrected m / sqrt(v) = sign(g), raw 0.1 / sqrt(0.001)
    local raw = 0.05 * 0.1 / math.sqrt(0.001)
    assert_close({ { 1.0 - raw, -2.0 + raw } }, { first_step({ lr = 0.05, bias_correction = false }) })
    assert_close({ { 0.95, -1.95 } }, { first_step({ lr = 0.05 }) })
  end)
end)
