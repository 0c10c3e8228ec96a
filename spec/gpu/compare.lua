-- compare.lua — what the GPU specs share: one computation run on cpu and cuda from the same
-- random inputs, outputs and input gradients compared within the dtype's tolerance.
local T = require "prof.tensor"
local core = require "prof.core"
local gc = require "spec.support.gradcheck"

local M = {}

-- Relative to the reference's largest magnitude (max |a - b| / max |b|): float32 kernels that sum
-- in another order (atomics, tree reductions, cuBLAS's blocking) agree to ~1e-6 of the scale;
-- TF32 keeps 10 mantissa bits, bfloat16 8, float16 11 (their unit roundoffs ~5e-4, 4e-3, 5e-4,
-- times a few for sums of products).
M.TOL = { float32 = 1e-4, tf32 = 5e-3, bfloat16 = 3e-2, float16 = 5e-3 }

-- The device compared with the cpu: cuda, or PROF_GPU_SPEC_DEVICE (gpu-check.sh --dry-run sets
-- it to cpu on a machine without a GPU, so every case's Lua runs and only the GPU is missing).
M.DEVICE = os.getenv("PROF_GPU_SPEC_DEVICE") or "cuda"

-- Fails the spec unless the device exists: nothing here is skipped.
function M.require_device()
  if M.DEVICE ~= "cuda" then return end
  local st = core.gpu_status()
  assert(st.available, "no GPU: " .. tostring(st.why))
end

local function flat(v) return gc.flat(v) end

-- max |a - b| / max |b| over two nested lists (NaN where either is NaN and the other is not).
function M.rel_err(a, b)
  local fa, fb = flat(a), flat(b)
  assert(#fa == #fb, string.format("%d values against %d", #fa, #fb))
  local scale, worst = 0, 0
  for i = 1, #fb do
    if fb[i] == fb[i] then scale = math.max(scale, math.abs(fb[i])) end
  end
  if scale == 0 then scale = 1 end
  for i = 1, #fa do
    local x, y = fa[i], fb[i]
    if (x ~= x) ~= (y ~= y) then return math.huge end
    if x == x and (x ~= y) then
      local e = (x == y) and 0 or math.abs(x - y) / scale
      if e ~= e then e = math.huge end   -- inf - inf
      worst = math.max(worst, e)
    end
  end
  return worst
end

local function numel(shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return n
end

--[[
One input per spec: {shape, kind = "float" (default) | "positive" | "index" (below vocab) |
"bool" | "target" (below classes, some equal to ignore), grad = true, seed = n}. The values are
drawn once (a fixed LCG, spec/support/gradcheck.lua) and built on each device, so both see the
same numbers.
]]
local function draw(spec, i)
  local n = numel(spec.shape)
  local v = gc.values(n, spec.seed or (17 * i + 3))
  if spec.kind == "positive" then
    for k = 1, n do v[k] = 0.25 + math.abs(v[k]) end
  elseif spec.kind == "index" or spec.kind == "target" then
    local hi = spec.vocab or spec.classes
    for k = 1, n do v[k] = math.floor((v[k] + 1) / 2 * hi) % hi end
    if spec.ignore then v[1] = spec.ignore end
  elseif spec.kind == "bool" then
    for k = 1, n do v[k] = v[k] > 0 end
  end
  return v
end

local function build(values, spec, device)
  local dtype = (spec.kind == "index" or spec.kind == "target") and "int64"
    or spec.kind == "bool" and "bool" or "float32"
  local t = T.tensor(values, { dtype = dtype, device = device })
  if #spec.shape ~= 1 or spec.shape[1] ~= #values then t = t:reshape(spec.shape) end
  if spec.grad then t.requires_grad = true end
  return t
end

-- Runs fn(inputs) on device; returns the output's values and the inputs' gradients of
-- sum(out · w) (w the same on both devices), each as nested lists on the host.
local function run_on(device, specs, draws, fn)
  local xs = {}
  for i, s in ipairs(specs) do xs[i] = build(draws[i], s, device) end
  core.manual_seed(1234)   -- dropout draws the same masks on both devices
  local out = fn(xs, device)
  local res = { out = out:to("cpu"):tolist(), grads = {} }
  local wants = false
  for _, s in ipairs(specs) do wants = wants or s.grad end
  if wants and out.dtype == "float32" then
    local w = build(gc.values(numel(out.shape), 99), { shape = out.shape }, device)
    T.sum(out * w):backward()
    for i, s in ipairs(specs) do
      if s.grad then
        assert(xs[i].grad ~= nil, "no gradient for input " .. i .. " on " .. device)
        res.grads[i] = xs[i].grad:to("cpu"):tolist()
      end
    end
  end
  return res
end

-- Asserts fn gives the same values and gradients on cuda as on cpu within tol; returns the worst
-- error seen (for the summary table).
function M.same(specs, fn, tol)
  tol = tol or M.TOL.float32
  local draws = {}
  for i, s in ipairs(specs) do draws[i] = draw(s, i) end
  local cpu = run_on("cpu", specs, draws, fn)
  local gpu = run_on(M.DEVICE, specs, draws, fn)
  local worst = M.rel_err(gpu.out, cpu.out)
  assert(worst <= tol, string.format("output off by %.3g relative (tolerance %g)", worst, tol))
  for i in pairs(cpu.grads) do
    local e = M.rel_err(gpu.grads[i], cpu.grads[i])
    assert(e <= tol, string.format("gradient of input %d off by %.3g relative (tolerance %g)", i,
      e, tol))
    worst = math.max(worst, e)
  end
  return worst
end

-- The worst error of each case, for gpu-check.sh's table (spec name -> error).
M.results = {}

-- Appends "family<TAB>case<TAB>worst<TAB>tolerance" to $PROF_GPU_RESULTS when set.
function M.record(family, case, worst, tol)
  local path = os.getenv("PROF_GPU_RESULTS")
  if path == nil then return end
  local f = assert(io.open(path, "a"))
  f:write(string.format("%s\t%s\t%.3g\t%g\n", family, case, worst, tol))
  f:close()
end

return M
