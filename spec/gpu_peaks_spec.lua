-- gpu_peaks_spec.lua — the GPU peaks' and status bindings on a machine without a GPU: answers
-- that say why, arguments checked before any device is asked (a GPU machine's numbers come from
-- scripts/tools/gpu-check.sh).
local core = require "prof.core"
local peaks = require "prof.roofline.peaks"

describe("GPU peaks and status without a GPU", function()
  local st = core.gpu_status()

  it("gpu_status names the reason and reports no cuBLAS", function()
    if st.available then return end   -- a GPU machine: gpu-check.sh measures instead
    local ok, why = core.device_status("cuda")
    assert.is_false(ok)
    assert.equal(why, st.why)
    assert.is_false(st.cublas)
    assert.equal("", st.name)
  end)

  it("prof.peaks.gpu and for_device('cuda') return nil and the reason", function()
    if st.available then return end
    local p, err = peaks.gpu()
    assert.is_nil(p)
    assert.equal(st.why, err)
    p, err = peaks.for_device("cuda")
    assert.is_nil(p)
    assert.equal(st.why, err)
  end)

  it("peak_gpu_gemm checks its dtype and size first", function()
    local v, err = core.peak_gpu_gemm({ dtype = "int8", n = 64 })
    assert.is_nil(v)
    local nvcc = io.open("/usr/local/cuda/bin/nvcc", "r")   -- the Makefile's test for a cuda build
    if nvcc then nvcc:close() end
    if nvcc then   -- a cuda build checks the dtype itself
      assert.equal("peak_gpu_gemm: dtype must be float32, tf32, bfloat16 or float16, got 'int8'", err)
    else
      assert.equal("peak_gpu_gemm: device 'cuda' is not available in this build; use 'meta' or 'cpu'",
        err)
    end
    assert.has_error(function() core.peak_gpu_gemm({ n = 0 }) end)
    assert.has_error(function() core.peak_gpu_copy({ runs = 0 }) end)
  end)

  it("without a device, peak_gpu_copy says why, and gpu_sync and gpu_set_tf32 do nothing", function()
    if st.available then return end
    local v, err = core.peak_gpu_copy({ bytes = 1024, runs = 1 })
    assert.is_nil(v)
    assert.equal("peak_gpu_copy: " .. st.why, err)
    core.gpu_set_tf32(true)
    core.gpu_sync()
    core.gpu_set_tf32(false)
  end)
end)
