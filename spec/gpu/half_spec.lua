-- half_spec.lua — the device's float16/bfloat16 kernels (pointwise, activations, softmax,
-- reductions, norms, embedding, mse_loss, cross_entropy, nll_loss, attention, convolutions,
-- pooling) against the cpu computing float32 on the same inputs rounded to the half dtype, forward
-- and backward, and to() converting across devices in one call.
local T = require "prof.tensor"
local core = require "prof.core"
local cmp = require "spec.gpu.compare"
local gc = require "spec.support.gradcheck"

-- the tensor API and the functional ops that prof.core alone has
local F = setmetatable({}, { __index = function(_, k) return T[k] or core[k] end })

local DEV = cmp.DEVICE
-- the cpu computes float32 only: a dry run (PROF_GPU_SPEC_DEVICE=cpu) runs the Lua in float32
local DTYPES = DEV == "cuda" and { "bfloat16", "float16" } or { "float32" }

local function numel(shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return n
end

-- Input i: {shape, positive = true, index = vocab, bool = true, grad = true}.
-- Returns the device tensor (in dtype, or int64/bool) and its cpu float32 twin of equal values.
local function pair(spec, i, dtype)
  local n = numel(spec.shape)
  local v = gc.values(n, 31 * i + 7)
  local kind = "float32"
  if spec.positive then
    for k = 1, n do v[k] = 0.25 + math.abs(v[k]) end
  elseif spec.index then
    for k = 1, n do v[k] = math.floor((v[k] + 1) / 2 * spec.index) % spec.index end
    kind = "int64"
  elseif spec.bool then
    for k = 1, n do v[k] = v[k] > 0 end
    kind = "bool"
  end
  local d = T.tensor(v, { dtype = kind, device = DEV }):reshape(spec.shape)
  if kind == "float32" and dtype ~= "float32" then d = d:to(dtype) end
  -- the twin holds the rounded values: the device's own rounding, read back exactly
  local h = (kind == "float32" and dtype ~= "float32") and d:to("float32"):to("cpu")
    or T.tensor(v, { dtype = kind, device = "cpu" }):reshape(spec.shape)
  if spec.grad then d.requires_grad, h.requires_grad = true, true end
  return d, h
end

local function host(t)
  return (t.dtype ~= "float32" and t.dtype ~= "int64" and t.dtype ~= "bool" and t:to("float32")
    or t):to("cpu")
end

-- Worst relative error of fn's output and input gradients, device dtype against cpu float32.
local function half_error(specs, fn, dtype)
  local ds, hs = {}, {}
  for i, s in ipairs(specs) do ds[i], hs[i] = pair(s, i, dtype) end
  local od, oh = fn(ds), fn(hs)
  local worst = cmp.rel_err(host(od):tolist(), oh:tolist())
  local wd, wh = pair({ shape = oh.shape }, 99, dtype)
  T.sum(od * wd):backward()
  T.sum(oh * wh):backward()
  for i, s in ipairs(specs) do
    if s.grad then
      assert(ds[i].grad ~= nil, "no device gradient for input " .. i)
      assert(ds[i].grad.dtype == dtype, "gradient of input " .. i .. " is " .. ds[i].grad.dtype)
      worst = math.max(worst, cmp.rel_err(host(ds[i].grad):tolist(), hs[i].grad:tolist()))
    end
  end
  return worst
end

local function g(shape, extra)
  local s = { shape = shape, grad = true }
  for k, v in pairs(extra or {}) do s[k] = v end
  return s
end

local CASES = {
  { "add broadcast", { g { 3, 4, 5 }, g { 4, 1 } }, function(x) return x[1] + x[2] end },
  { "div", { g { 4, 9 }, g({ 4, 9 }, { positive = true }) }, function(x) return x[1] / x[2] end },
  { "mul scalar, transposed", { g { 5, 6 } }, function(x) return x[1]:t() * 1.5 end },
  { "maximum", { g { 7, 5 }, g { 5 } }, function(x) return F.maximum(x[1], x[2]) end },
  { "where", { { shape = { 6, 4 }, bool = true }, g { 6, 4 }, g { 4 } },
    function(x) return F.where(x[1], x[2], x[3]) end },
  { "masked_fill", { g { 5, 8 }, { shape = { 5, 8 }, bool = true } },
    function(x) return F.masked_fill(x[1], x[2], -3.0) end },
  { "prelu", { g { 4, 3, 5 }, g({ 3 }, { positive = true }) }, function(x) return F.prelu(x[1], x[2]) end },
  { "gelu", { g { 64 } }, function(x) return F.gelu(x[1]) end },
  { "silu", { g { 64 } }, function(x) return F.silu(x[1]) end },
  { "tanh", { g { 64 } }, function(x) return F.tanh(x[1]) end },
  { "exp", { g { 64 } }, function(x) return F.exp(x[1]) end },
  { "sqrt", { g({ 64 }, { positive = true }) }, function(x) return F.sqrt(x[1]) end },
  { "softmax last", { g { 6, 33 } }, function(x) return F.softmax(x[1], -1) end },
  { "log_softmax dim 0", { g { 7, 5, 3 } }, function(x) return F.log_softmax(x[1], 0) end },
  { "sum dim", { g { 5, 6, 7 } }, function(x) return F.sum(x[1], 1) end },
  { "mean transposed", { g { 8, 300 } }, function(x) return F.mean(x[1]:t(), 0) end },
  { "amax", { g { 6, 40 } }, function(x) return F.amax(x[1], 1) end },
  { "var", { g { 5, 64 } }, function(x) return F.var(x[1], 1) end },
  { "layer_norm", { g { 4, 7, 32 }, g { 32 }, g { 32 } },
    function(x) return F.layer_norm(x[1], { 32 }, x[2], x[3]) end },
  { "rms_norm", { g { 6, 48 }, g { 48 } }, function(x) return F.rms_norm(x[1], { 48 }, x[2], { eps = 1e-6 }) end },
  { "group_norm", { g { 3, 8, 5, 5 }, g { 8 }, g { 8 } },
    function(x) return F.group_norm(x[1], 4, x[2], x[3]) end },
  { "mse_loss broadcast", { g { 5, 8 }, g { 8 } }, function(x) return F.mse_loss(x[1], x[2]) end },
  { "mse_loss none", { g { 5, 8 }, g { 5, 8 } },
    function(x) return F.mse_loss(x[1], x[2], { reduction = "none" }) end },
  { "cross_entropy mean", { g { 16, 10 }, { shape = { 16 }, index = 10 } },
    function(x) return F.cross_entropy(x[1], x[2]) end },
  { "cross_entropy smoothing weight ignore",
    { g { 12, 7 }, { shape = { 7 }, positive = true }, { shape = { 12 }, index = 7 } },
    function(x)
      return F.cross_entropy(x[1], x[3], { weight = x[2], label_smoothing = 0.1, ignore_index = 2 })
    end },
  { "cross_entropy spatial none", { g { 2, 5, 3, 3 }, { shape = { 2, 3, 3 }, index = 5 } },
    function(x) return F.cross_entropy(x[1], x[2], { reduction = "none" }) end },
  -- probability targets take a gradient too
  { "cross_entropy probabilities", { g { 6, 4 }, g { 6, 4 } },
    function(x) return F.cross_entropy(x[1], F.softmax(x[2], -1), { reduction = "sum" }) end },
  { "nll_loss", { g { 9, 6 }, { shape = { 9 }, index = 6 } },
    function(x) return F.nll_loss(F.log_softmax(x[1], 1), x[2]) end },
  { "embedding", { { shape = { 4, 6 }, index = 10 }, g { 10, 16 } },
    function(x) return F.embedding(x[1], x[2]) end },
  { "sdpa", { g { 2, 3, 10, 16 }, g { 2, 3, 12, 16 }, g { 2, 3, 12, 8 } },
    function(x) return F.scaled_dot_product_attention(x[1], x[2], x[3]) end },
  { "sdpa causal", { g { 2, 2, 9, 8 }, g { 2, 2, 9, 8 }, g { 2, 2, 9, 8 } },
    function(x)
      return F.scaled_dot_product_attention(x[1], x[2], x[3], { is_causal = true })
    end },
  { "sdpa bool mask",
    { g { 1, 2, 6, 8 }, g { 1, 2, 7, 8 }, g { 1, 2, 7, 4 }, { shape = { 6, 7 }, bool = true } },
    function(x) return F.scaled_dot_product_attention(x[1], x[2], x[3], { attn_mask = x[4] }) end },
  -- an additive mask in the query's dtype
  { "sdpa additive mask",
    { g { 2, 2, 5, 8 }, g { 2, 2, 6, 8 }, g { 2, 2, 6, 4 }, { shape = { 5, 6 } } },
    function(x) return F.scaled_dot_product_attention(x[1], x[2], x[3], { attn_mask = x[4] }) end },
  { "conv2d", { g { 2, 3, 9, 9 }, g { 8, 3, 3, 3 }, g { 8 } },
    function(x) return F.conv2d(x[1], x[2], x[3], { padding = 1 }) end },
  { "conv2d groups stride dilation", { g { 2, 6, 11, 11 }, g { 9, 2, 3, 3 } },
    function(x)
      return F.conv2d(x[1], x[2], nil, { groups = 3, stride = 2, dilation = 2, padding = 2 })
    end },
  { "conv2d 1x1", { g { 2, 5, 4, 4 }, g { 7, 5, 1, 1 }, g { 7 } },
    function(x) return F.conv2d(x[1], x[2], x[3]) end },
  { "conv1d", { g { 2, 3, 20 }, g { 4, 3, 5 }, g { 4 } },
    function(x) return F.conv1d(x[1], x[2], x[3], { stride = 3 }) end },
  { "conv_transpose2d", { g { 2, 4, 5, 5 }, g { 4, 3, 3, 3 }, g { 3 } },
    function(x) return F.conv_transpose2d(x[1], x[2], x[3], { stride = 2, padding = 1 }) end },
  { "conv_transpose2d 1x1", { g { 2, 4, 5, 5 }, g { 4, 3, 1, 1 }, g { 3 } },
    function(x) return F.conv_transpose2d(x[1], x[2], x[3]) end },
  { "max_pool2d padded", { g { 2, 3, 8, 8 } },
    function(x) return F.max_pool2d(x[1], 3, { stride = 2, padding = 1 }) end },
  { "avg_pool2d padded", { g { 2, 3, 7, 7 } },
    function(x) return F.avg_pool2d(x[1], 3, { stride = 2, padding = 1 }) end },
  { "adaptive_avg_pool2d", { g { 2, 4, 13, 13 } },
    function(x) return F.adaptive_avg_pool2d(x[1], { 6, 6 }) end },
  { "adaptive_max_pool1d", { g { 2, 3, 17 } },
    function(x) return F.adaptive_max_pool1d(x[1], 5) end },
}

describe("cuda float16 and bfloat16 kernels against the cpu's float32 #gpu", function()
  setup(cmp.require_device)
  for _, dtype in ipairs(DTYPES) do
    local tol = cmp.TOL[dtype]
    for _, c in ipairs(CASES) do
      it(string.format("%s %s within %g", dtype, c[1], tol), function()
        local e = half_error(c[2], c[3], dtype)
        cmp.record("half", dtype .. " " .. c[1], e, tol)
        assert(e <= tol, string.format("off by %.3g relative (tolerance %g)", e, tol))
      end)
    end

    it(dtype .. " to() from cpu float32 in one call rounds as the device's own cast", function()
      local v = gc.values(257, 11)
      local hx = T.tensor(v, { device = "cpu" })
      local one = core.to(hx, { dtype = dtype, device = DEV })
      local two = T.tensor(v, { device = DEV }):to(dtype)
      assert.are.equal(dtype, one.dtype)
      -- both round each value once, to nearest even: equal to the bit
      assert.are.same(host(two):tolist(), host(one):tolist())
      -- and back to cpu float32 in one call
      assert.are.same(host(two):tolist(), core.to(one, { dtype = "float32", device = "cpu" }):tolist())
    end)
  end
end)
