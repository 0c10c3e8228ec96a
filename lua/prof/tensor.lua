-- tensor.lua — tensors for scripts: constructors, ops as functions (T.matmul) and methods (x:matmul).
local core = require "prof.core"

local T = {}

local function dd(opts)
  if opts == nil then return nil, nil end
  return opts.dtype, opts.device
end

-- T.empty(shape, {dtype=, device=}): on meta only the shape and dtype exist.
function T.empty(shape, opts)
  local dtype, device = dd(opts)
  return core.empty(shape, dtype, device)
end

-- T.zeros(shape, {dtype=, device=}): cpu storage starts zero-filled.
function T.zeros(shape, opts)
  local dtype, device = dd(opts)
  return core.zeros(shape, dtype, device)
end

T.is_tensor = core.is_tensor
T.set_default_device = core.set_default_device
T.default_device = core.default_device
T.set_default_dtype = core.set_default_dtype
T.default_dtype = core.default_dtype

-- Ops that exist under the same name in prof.core, exposed as T.name(x, ...) and x:name(...).
local OPS = {
  "linear", "matmul", "mm", "bmm", "addmm", "baddbmm",
  "relu", "relu6", "leaky_relu", "elu", "gelu", "silu", "tanh", "sigmoid", "softplus",
  "hardswish", "mish", "prelu", "softmax", "log_softmax", "clamp",
  "neg", "exp", "log", "sqrt", "rsqrt", "abs", "sin", "cos", "erf", "reciprocal",
  "add", "sub", "mul", "div", "pow", "maximum", "minimum",
  "sum", "mean", "amax", "var",
  "view", "reshape", "flatten", "transpose", "permute", "unsqueeze", "squeeze", "expand",
  "contiguous", "select", "narrow", "chunk", "split", "masked_fill", "triu", "tril",
  "dropout", "embedding", "to",
}
-- Functions without a method form.
local FUNCS = { "cat", "stack", "einsum", "where", "arange", "full", "ones", "tensor", "randn",
  "rand", "manual_seed", "from_bytes", "set_grad_enabled", "is_grad_enabled" }

local methods = core.tensor_methods()
for _, name in ipairs(OPS) do
  local f = assert(core[name], name)
  T[name] = f
  methods[name] = f
end
for _, name in ipairs(FUNCS) do
  T[name] = assert(core[name], name)
end

-- T.no_grad(fn, ...): runs fn with gradient recording off (torch.no_grad), returns its results.
function T.no_grad(fn, ...)
  local prev = core.set_grad_enabled(false)
  local r = table.pack(pcall(fn, ...))
  core.set_grad_enabled(prev)
  if not r[1] then error(r[2], 0) end
  return table.unpack(r, 2, r.n)
end

-- Methods whose argument order differs from the function's, as in PyTorch.
function methods.where(x, condition, y) return core.where(condition, x, y) end
function methods.t(x) return core.transpose(x, 0, 1) end
function methods.type_as(x, other) return core.to(x, other.dtype) end
T.t = methods.t

return T
