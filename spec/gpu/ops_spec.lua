-- ops_spec.lua — every op family on cuda against the cpu backend, forward and backward, on the
-- same random inputs (run by scripts/tools/gpu-check.sh: busted --run=gpu spec/gpu).
local T = require "prof.tensor"
local cmp = require "spec.gpu.compare"

-- The tensor API and the functional ops (conv2d, cross_entropy, ...) that prof.core alone has.
local core = require "prof.core"
local F = setmetatable({}, { __index = function(_, k) return T[k] or core[k] end })

local F32 = cmp.TOL.float32
local function f(shape, extra)
  local s = { shape = shape, grad = true }
  for k, v in pairs(extra or {}) do s[k] = v end
  return s
end

-- family -> list of {name, inputs, fn(xs, device)}
local CASES = {
  pointwise = {
    { "add broadcast", { f { 3, 4, 5 }, f { 4, 1 } }, function(x) return x[1] + x[2] end },
    { "sub scalar first", { f { 6, 7 } }, function(x) return 2.5 - x[1] end },
    { "mul strided", { f { 5, 6 }, f { 6, 5 } }, function(x) return x[1] * x[2]:t() end },
    { "div", { f { 4, 9 }, f({ 4, 9 }, { kind = "positive" }) }, function(x) return x[1] / x[2] end },
    { "pow", { f({ 8, 3 }, { kind = "positive" }) }, function(x) return F.pow(x[1], 2.5) end },
    { "maximum", { f { 7, 5 }, f { 5 } }, function(x) return F.maximum(x[1], x[2]) end },
    { "minimum scalar", { f { 7, 5 } }, function(x) return F.minimum(x[1], 0.1) end },
    { "where", { { shape = { 6, 4 }, kind = "bool" }, f { 6, 4 }, f { 4 } },
      function(x) return F.where(x[1], x[2], x[3]) end },
    { "masked_fill", { f { 5, 8 }, { shape = { 5, 8 }, kind = "bool" } },
      function(x) return F.masked_fill(x[1], x[2], -3.0) end },
    { "prelu", { f { 4, 3, 5 }, f({ 3 }, { kind = "positive" }) }, function(x) return F.prelu(x[1], x[2]) end },
  },
  activation = {},
  softmax = {
    { "softmax last", { f { 6, 33 } }, function(x) return F.softmax(x[1], -1) end },
    { "softmax dim 0", { f { 7, 5, 3 } }, function(x) return F.softmax(x[1], 0) end },
    { "log_softmax last", { f { 4, 1000 } }, function(x) return F.log_softmax(x[1], -1) end },
    { "log_softmax middle", { f { 3, 6, 4 } }, function(x) return F.log_softmax(x[1], 1) end },
  },
  reduce = {
    { "sum all", { f { 9, 17 } }, function(x) return F.sum(x[1]) end },
    { "sum dim", { f { 5, 6, 7 } }, function(x) return F.sum(x[1], 1) end },
    { "mean transposed", { f { 8, 300 } }, function(x) return F.mean(x[1]:t(), 0) end },
    { "amax", { f { 6, 40 } }, function(x) return F.amax(x[1], 1) end },
    { "var", { f { 5, 64 } }, function(x) return F.var(x[1], 1) end },
  },
  linalg = {
    { "mm", { f { 33, 65 }, f { 65, 17 } }, function(x) return F.mm(x[1], x[2]) end },
    { "mm transposed operands", { f { 40, 30 }, f { 20, 40 } },
      function(x) return F.mm(x[1]:t(), x[2]:t()) end },
    { "bmm", { f { 3, 16, 24 }, f { 3, 24, 8 } }, function(x) return F.bmm(x[1], x[2]) end },
    { "mm empty inner dim", { f { 5, 0 }, f { 0, 4 } }, function(x) return F.mm(x[1], x[2]) + 1 end },
    { "matmul broadcast", { f { 2, 3, 5, 7 }, f { 7, 4 } }, function(x) return F.matmul(x[1], x[2]) end },
    { "linear", { f { 4, 10, 32 }, f { 48, 32 }, f { 48 } },
      function(x) return F.linear(x[1], x[2], x[3]) end },
    { "addmm", { f { 12, 9 }, f { 12, 20 }, f { 20, 9 } }, function(x) return F.addmm(x[1], x[2], x[3]) end },
    { "einsum", { f { 3, 4, 5 }, f { 3, 5, 6 } }, function(x) return F.einsum("bij,bjk->bik", x[1], x[2]) end },
  },
  shape = {
    { "cat", { f { 3, 4 }, f { 5, 4 } }, function(x) return F.cat({ x[1], x[2] }, 0) end },
    { "stack transposed", { f { 3, 4 }, f { 4, 3 } }, function(x) return F.stack({ x[1], x[2]:t() }, 1) end },
    { "triu", { f { 2, 6, 6 } }, function(x) return F.triu(x[1], 1) end },
    { "tril", { f { 5, 7 } }, function(x) return F.tril(x[1], -1) end },
    { "permute contiguous", { f { 2, 3, 4, 5 } },
      function(x) return x[1]:permute({ 3, 1, 0, 2 }):contiguous() * 1.5 end },
    { "narrow select", { f { 6, 8 } }, function(x) return x[1]:narrow(1, 2, 4):select(0, 3) * 2 end },
    { "expand", { f { 1, 5 } }, function(x) return x[1]:expand({ 4, 5 }) * 1.0 end },
  },
  conv = {
    { "conv2d", { f { 2, 3, 9, 9 }, f { 8, 3, 3, 3 }, f { 8 } },
      function(x) return F.conv2d(x[1], x[2], x[3], { padding = 1 }) end },
    { "conv2d stride dilation", { f { 2, 4, 11, 11 }, f { 6, 4, 3, 3 }, f { 6 } },
      function(x) return F.conv2d(x[1], x[2], x[3], { stride = 2, dilation = 2, padding = 2 }) end },
    { "conv2d groups", { f { 1, 6, 8, 8 }, f { 9, 2, 3, 3 } },
      function(x) return F.conv2d(x[1], x[2], nil, { groups = 3 }) end },
    { "conv2d 1x1", { f { 2, 5, 4, 4 }, f { 7, 5, 1, 1 }, f { 7 } },
      function(x) return F.conv2d(x[1], x[2], x[3]) end },
    { "conv1d", { f { 2, 3, 20 }, f { 4, 3, 5 }, f { 4 } },
      function(x) return F.conv1d(x[1], x[2], x[3], { stride = 3 }) end },
    { "conv3d", { f { 1, 2, 5, 5, 5 }, f { 3, 2, 2, 2, 2 } }, function(x) return F.conv3d(x[1], x[2]) end },
    { "conv_transpose2d", { f { 2, 4, 5, 5 }, f { 4, 3, 3, 3 }, f { 3 } },
      function(x) return F.conv_transpose2d(x[1], x[2], x[3], { stride = 2, padding = 1 }) end },
  },
  pool = {
    { "max_pool2d", { f { 2, 3, 9, 9 } }, function(x) return F.max_pool2d(x[1], 3, { stride = 2 }) end },
    { "max_pool2d padded", { f { 1, 2, 8, 8 } },
      function(x) return F.max_pool2d(x[1], 3, { stride = 2, padding = 1, dilation = 1 }) end },
    { "avg_pool2d", { f { 2, 3, 8, 8 } }, function(x) return F.avg_pool2d(x[1], 2) end },
    { "avg_pool2d padded", { f { 2, 3, 7, 7 } },
      function(x) return F.avg_pool2d(x[1], 3, { stride = 2, padding = 1 }) end },
    { "adaptive_avg_pool2d", { f { 2, 4, 13, 13 } }, function(x) return F.adaptive_avg_pool2d(x[1], { 6, 6 }) end },
    { "adaptive_max_pool1d", { f { 2, 3, 17 } }, function(x) return F.adaptive_max_pool1d(x[1], 5) end },
  },
  norm = {
    { "layer_norm", { f { 4, 7, 32 }, f { 32 }, f { 32 } },
      function(x) return F.layer_norm(x[1], { 32 }, x[2], x[3]) end },
    { "rms_norm", { f { 6, 48 }, f { 48 } }, function(x) return F.rms_norm(x[1], { 48 }, x[2], { eps = 1e-6 }) end },
    { "group_norm", { f { 3, 8, 5, 5 }, f { 8 }, f { 8 } },
      function(x) return F.group_norm(x[1], 4, x[2], x[3]) end },
    { "batch_norm training", { f { 6, 5, 4, 4 }, f { 5 }, f { 5 } }, function(x, dev)
      local rm, rv = F.zeros({ 5 }, { device = dev }), F.ones({ 5 }, { device = dev })
      local y = F.batch_norm(x[1], rm, rv, x[2], x[3], { training = true, momentum = 0.1 })
      return y + (rm:sum() + rv:sum()) * 0.0 + F.cat({ rm, rv }, 0):sum()   -- running stats too
    end },
    { "batch_norm eval", { f { 4, 3, 6 }, f { 3 }, f { 3 } }, function(x, dev)
      local rm = F.full({ 3 }, 0.2, { device = dev })
      local rv = F.full({ 3 }, 1.5, { device = dev })
      return F.batch_norm(x[1], rm, rv, x[2], x[3], { training = false })
    end },
    { "instance_norm", { f { 2, 3, 10 } }, function(x) return F.instance_norm(x[1]) end },
  },
  embedding = {
    { "embedding", { { shape = { 4, 9 }, kind = "index", vocab = 30 }, f { 30, 16 } },
      function(x) return F.embedding(x[1], x[2]) end },
    { "embedding padding_idx", { { shape = { 40 }, kind = "index", vocab = 10 }, f { 10, 8 } },
      function(x) return F.embedding(x[1], x[2], { padding_idx = 3 }) end },
  },
  loss = {
    { "cross_entropy mean", { f { 16, 10 }, { shape = { 16 }, kind = "target", classes = 10 } },
      function(x) return F.cross_entropy(x[1], x[2]) end },
    { "cross_entropy smoothing weight ignore", { f { 12, 7 }, f({ 7 }, { kind = "positive", grad = false }),
        { shape = { 12 }, kind = "target", classes = 7, ignore = -100 } },
      function(x) return F.cross_entropy(x[1], x[3], { weight = x[2], label_smoothing = 0.1 }) end },
    { "cross_entropy spatial none", { f { 2, 5, 3, 3 }, { shape = { 2, 3, 3 }, kind = "target", classes = 5 } },
      function(x) return F.cross_entropy(x[1], x[2], { reduction = "none" }) end },
    { "cross_entropy probabilities", { f { 6, 4 }, f({ 6, 4 }, { kind = "positive" }) },
      function(x) return F.cross_entropy(x[1], F.softmax(x[2], -1), { reduction = "sum" }) end },
    { "nll_loss", { f { 9, 6 }, { shape = { 9 }, kind = "target", classes = 6 } },
      function(x) return F.nll_loss(F.log_softmax(x[1], 1), x[2]) end },
    { "mse_loss broadcast", { f { 5, 8 }, f { 8 } }, function(x) return F.mse_loss(x[1], x[2]) end },
    { "mse_loss none", { f { 5, 8 }, f { 5, 8 } },
      function(x) return F.mse_loss(x[1], x[2], { reduction = "none" }) end },
  },
  attention = {
    { "sdpa", { f { 2, 3, 10, 16 }, f { 2, 3, 12, 16 }, f { 2, 3, 12, 8 } },
      function(x) return F.scaled_dot_product_attention(x[1], x[2], x[3]) end },
    { "sdpa causal", { f { 2, 2, 9, 8 }, f { 2, 2, 9, 8 }, f { 2, 2, 9, 8 } },
      function(x) return F.scaled_dot_product_attention(x[1], x[2], x[3], { is_causal = true }) end },
    { "sdpa bool mask", { f { 1, 2, 6, 8 }, f { 1, 2, 7, 8 }, f { 1, 2, 7, 4 }, { shape = { 6, 7 }, kind = "bool" } },
      function(x) return F.scaled_dot_product_attention(x[1], x[2], x[3], { attn_mask = x[4] }) end },
    { "sdpa dropout", { f { 2, 2, 8, 8 }, f { 2, 2, 8, 8 }, f { 2, 2, 8, 8 } },
      function(x) return F.scaled_dot_product_attention(x[1], x[2], x[3], { dropout_p = 0.25 }) end },
    { "dropout", { f { 20, 30 } }, function(x) return F.dropout(x[1], 0.3, true) end },
  },
}

for _, name in ipairs { "relu", "relu6", "silu", "tanh", "sigmoid", "hardswish", "mish", "neg", "exp",
                        "sin", "cos", "erf", "abs" } do
  table.insert(CASES.activation, { name, { f { 7, 9 } }, function(x) return T[name](x[1]:t()) end })
end
for _, name in ipairs { "log", "sqrt", "rsqrt", "reciprocal" } do
  table.insert(CASES.activation, { name, { f({ 6, 5 }, { kind = "positive" }) },
    function(x) return T[name](x[1]) end })
end
table.insert(CASES.activation, { "gelu", { f { 50 } }, function(x) return F.gelu(x[1]) end })
table.insert(CASES.activation, { "gelu tanh", { f { 50 } },
  function(x) return F.gelu(x[1], { approximate = "tanh" }) end })
table.insert(CASES.activation, { "leaky_relu", { f { 50 } }, function(x) return F.leaky_relu(x[1], 0.2) end })
table.insert(CASES.activation, { "elu", { f { 50 } }, function(x) return F.elu(x[1], 1.3) end })
table.insert(CASES.activation, { "softplus", { f { 50 } }, function(x) return F.softplus(x[1], 2, 1) end })
table.insert(CASES.activation, { "clamp", { f { 50 } }, function(x) return F.clamp(x[1], -0.3, 0.4) end })

local ORDER = { "pointwise", "activation", "softmax", "reduce", "linalg", "shape", "conv", "pool",
  "norm", "embedding", "loss", "attention" }

describe("cuda ops against the cpu, forward and backward #gpu", function()
  setup(cmp.require_device)
  for _, family in ipairs(ORDER) do
    for _, c in ipairs(CASES[family]) do
      it(family .. ": " .. c[1], function()
        local worst = cmp.same(c[2], c[3], F32)
        cmp.record(family, c[1], worst, F32)
      end)
    end
  end
end)
