-- gradcheck.lua — finite-difference checks of gradients and value comparisons for cpu specs.
local T = require "prof.tensor"

local M = {}

local function flat(v, out)
  out = out or {}
  if type(v) == "table" then
    for _, x in ipairs(v) do flat(x, out) end
  else
    out[#out + 1] = v
  end
  return out
end
M.flat = flat

-- A float32 cpu tensor from a flat list and a shape.
function M.tensor(values, shape)
  local function build(d, pos)
    if d > #shape then return values[pos], pos + 1 end
    local t = {}
    for i = 1, shape[d] do t[i], pos = build(d + 1, pos) end
    return t, pos
  end
  if #shape == 0 then return T.tensor(values[1], { dtype = "float32", device = "cpu" }) end
  return (T.tensor((build(1, 1)), { dtype = "float32", device = "cpu" }))
end

-- Deterministic pseudo-random values in [-1, 1) (a small LCG: the specs need no real randomness).
function M.values(n, seed)
  local s = seed or 1
  local out = {}
  for i = 1, n do
    s = (s * 1103515245 + 12345) % 2147483648
    out[i] = (s / 2147483648) * 2 - 1
  end
  return out
end

-- A random float32 cpu tensor that requires grad.
function M.leaf(shape, seed)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  local t = M.tensor(M.values(n, seed), shape)
  t.requires_grad = true
  return t
end

-- sum(f(inputs) * weights) in double precision on the Lua side, weights fixed per check.
local function objective(f, inputs, weights)
  local out = T.no_grad(f, table.unpack(inputs))
  local v = flat(out:tolist())
  local s = 0
  for i, x in ipairs(v) do s = s + x * weights[i] end
  return s, #v
end

--[[
Compares the gradients backward computes for f at inputs with central differences of
sum(f · w) for fixed random weights w. Returns true, or false and a message naming the input, the
element and both values. eps and tol suit float32 (relative to max(1, |numeric|)).
]]
function M.check(f, inputs, opts)
  opts = opts or {}
  local eps, tol = opts.eps or 1e-2, opts.tol or 2e-2
  local out = f(table.unpack(inputs))
  local nout = out:numel()
  local weights = M.values(nout, 7)
  local w = M.tensor(weights, out.shape)
  T.sum(out * w):backward()
  for k, x in ipairs(inputs) do
    if x.requires_grad then
      local analytic = flat(x.grad:tolist())
      local base = flat(x:tolist())
      for i = 1, #base do
        local plus, minus = { table.unpack(base) }, { table.unpack(base) }
        plus[i], minus[i] = base[i] + eps, base[i] - eps
        x:copy_(M.tensor(plus, x.shape))
        local fp = objective(f, inputs, weights)
        x:copy_(M.tensor(minus, x.shape))
        local fm = objective(f, inputs, weights)
        x:copy_(M.tensor(base, x.shape))
        local numeric = (fp - fm) / (2 * eps)
        if math.abs(numeric - analytic[i]) > tol * math.max(1, math.abs(numeric)) then
          return false, string.format("input %d element %d: backward %.6g, finite differences %.6g",
            k, i, analytic[i], numeric)
        end
      end
    end
  end
  return true
end

-- M.check at leaves of the given shapes, input k seeded 10·k + offset (offset 0 unless given).
function M.check_shapes(f, shapes, offset)
  local inputs = {}
  for k, shape in ipairs(shapes) do inputs[k] = M.leaf(shape, 10 * k + (offset or 0)) end
  return M.check(f, inputs)
end

-- Largest relative difference between two nested value lists (|a - b| / max(1e-6, |b|)).
function M.max_rel(a, b)
  local fa, fb = flat(a), flat(b)
  assert(#fa == #fb, string.format("%d values against %d", #fa, #fb))
  local worst = 0
  for i = 1, #fa do
    local d = math.abs(fa[i] - fb[i]) / math.max(1e-6, math.abs(fb[i]))
    if math.abs(fa[i] - fb[i]) > 1e-6 and d > worst then worst = d end
  end
  return worst
end

return M
