-- gemm_spec.lua — the device's matrix products in each dtype against the cpu's float32 product
-- of the same (rounded) inputs, and TF32 as device_options.tf32 switches it.
local T = require "prof.tensor"
local core = require "prof.core"
local cmp = require "spec.gpu.compare"
local gc = require "spec.support.gradcheck"

local DEV = cmp.DEVICE

-- a [m, k] and b [k, n] in dtype on the device, and their values (after rounding to dtype) as
-- float32 cpu tensors
local function operands(m, k, n, dtype)
  local a = T.tensor(gc.values(m * k, 5), { device = DEV }):reshape({ m, k })
  local b = T.tensor(gc.values(k * n, 7), { device = DEV }):reshape({ k, n })
  if dtype ~= "float32" then a, b = a:to(dtype), b:to(dtype) end
  local function host(t) return (dtype ~= "float32" and t:to("float32") or t):to("cpu") end
  return a, b, host(a), host(b)
end

local function product_error(m, k, n, dtype, prep)
  local a, b, ha, hb = operands(m, k, n, dtype)
  local ga, gb, ca, cb = prep(a, b, ha, hb)
  local out = T.matmul(ga, gb)
  if dtype ~= "float32" then out = out:to("float32") end
  return cmp.rel_err(out:to("cpu"):tolist(), T.matmul(ca, cb):tolist())
end

local function plain(a, b, ha, hb) return a, b, ha, hb end
local function transposed(a, b, ha, hb)
  return a:t():contiguous():t(), b:t():contiguous():t(), ha, hb   -- column-major operands
end
local function batched(a, b, ha, hb)
  return a:reshape({ 4, a.shape[1] // 4, a.shape[2] }), b, ha:reshape({ 4, ha.shape[1] // 4, ha.shape[2] }), hb
end

describe("cuda matrix products per dtype #gpu", function()
  setup(cmp.require_device)
  after_each(function() core.gpu_set_tf32(false) end)

  for _, dtype in ipairs(DEV == "cuda" and { "float32", "bfloat16", "float16" } or { "float32" }) do
    for name, prep in pairs({ plain = plain, transposed = transposed, batched = batched }) do
      it(string.format("%s %s 256x384x128 within %g", dtype, name, cmp.TOL[dtype]), function()
        local e = product_error(256, 384, 128, dtype, prep)
        cmp.record("gemm", dtype .. " " .. name, e, cmp.TOL[dtype])
        assert(e <= cmp.TOL[dtype], string.format("off by %.3g", e))
      end)
    end
  end

  for _, dtype in ipairs(DEV == "cuda" and { "float32", "bfloat16", "float16" } or { "float32" }) do
    it(string.format("%s linear with bias [3, 50, 96] x [80, 96]^T within %g", dtype, cmp.TOL[dtype]), function()
      local function on(dev, n, seed, shape)
        local t = T.tensor(gc.values(n, seed), { device = DEV }):reshape(shape)
        if dtype ~= "float32" then t = t:to(dtype) end
        if dev == "cpu" then t = (dtype ~= "float32" and t:to("float32") or t):to("cpu") end
        return t
      end
      local function lin(dev)
        return core.linear(on(dev, 3 * 50 * 96, 11, { 3, 50, 96 }), on(dev, 80 * 96, 12, { 80, 96 }),
          on(dev, 80, 13, { 80 }))
      end
      local out = lin(DEV)
      if dtype ~= "float32" then out = out:to("float32") end
      local e = cmp.rel_err(out:to("cpu"):tolist(), lin("cpu"):tolist())
      cmp.record("gemm", dtype .. " linear", e, cmp.TOL[dtype])
      assert(e <= cmp.TOL[dtype], string.format("off by %.3g", e))
    end)
  end

  it("device_options.tf32 switches float32 products to TF32 tensor cores", function()
    if DEV ~= "cuda" then return end
    local exact = product_error(512, 1024, 512, "float32", plain)
    core.gpu_set_tf32(true)
    local fast = product_error(512, 1024, 512, "float32", plain)
    cmp.record("gemm", "tf32 512x1024x512", fast, cmp.TOL.tf32)
    -- TF32 keeps 10 of float32's 23 mantissa bits: over k = 1024 its error is ~1e-4..1e-3 of the
    -- scale, float32's ~1e-6; both bounds fail if the switch did nothing or broke the product
    assert(exact <= 1e-5, string.format("float32 off by %.3g", exact))
    assert(fast > 1e-5 and fast <= cmp.TOL.tf32, string.format("tf32 off by %.3g", fast))
  end)
end)
