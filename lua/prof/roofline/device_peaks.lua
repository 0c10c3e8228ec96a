-- prof.roofline.device_peaks — the peaks a profile is judged against (roofline, MFU): the device's, in its dtype.
--
-- for_device(device, dtype) -> {flops =, bytes_per_s =, machine =, ...} | nil, message
-- * cpu (and meta, from the cache only): prof.peaks.for_device's measured sgemm rate and copy
--   bandwidth (the cpu computes float32 whatever the dtype);
-- * cuda: the GPU's (prof.peaks.gpu(), the cuda backend's cuBLAS GEMMs per dtype and device
--   copies): flops is by_dtype[dtype] for the half types, and for float32 the rate the GPU's
--   peaks chose (float32's, or tf32's under device_options.tf32); nil and why where the build or
--   the machine has no GPU, never the cpu's numbers under a GPU's name.
local M = {}

function M.for_device(device, dtype)
  local peaks = require "prof.roofline.peaks"   -- at call time: specs stub it in package.loaded
  if device ~= "cuda" then return peaks.for_device(device) end
  if peaks.gpu == nil then return nil, "the GPU's peaks need a build with the cuda backend" end
  local g, err = peaks.gpu()
  if g == nil then return nil, err end
  local flops = g.flops
  if dtype ~= nil and dtype ~= "float32" and g.by_dtype ~= nil then flops = g.by_dtype[dtype] end
  if flops == nil then
    return nil, string.format("the GPU's peaks have no GEMM rate for %s", tostring(dtype))
  end
  return { flops = flops, bytes_per_s = g.bytes_per_s, dtype = dtype or "float32",
    machine = string.format("%s, %s GEMM", g.machine or "GPU", dtype or "float32"),
    measured_at = g.measured_at, cached = g.cached }
end

return M
