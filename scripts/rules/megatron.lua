-- megatron.lua — flop rules for Megatron-LM's fused layers, whose CUDA kernels no op-level counter can see.
--
-- A rule's counts replace those of the ops its module runs; it uses the rule API's ctx (README
-- "Flop rules", lua/prof/flops_profiler/rules.lua): ctx.conventions says how to count, ctx.bytes(t) a tensor's size.
--
-- FusedScaleMaskSoftmax (scaled_masked_softmax / scaled_upper_triang_masked_softmax kernels): per
-- element of the scores, 1 multiply by the scale (the kernel always scales, by 1.0 when Megatron
-- passes no scale), 1 select for the mask (a comparison per element, read from the mask byte) and
-- the softmax. The softmax is counted as each convention counts F.softmax:
--   deepspeed: 1 per element (DeepSpeed's numel)            -> 3 flops per element
--   exact:     max, subtract, exp, sum, divide: 5n − 2 a row -> 7 flops per element − 2 per row
-- MACs 0. Bytes: the scores and the mask read, the probabilities written.
--
-- FusedLayerNorm / MixedFusedLayerNorm (apex's fused kernel): counted as F.layer_norm is
--   deepspeed: numel × (5 with weights, else 4)
--   exact:     6·numel + 2·rows, + numel for the weight and + numel for the bias
-- Bytes: input, weight and bias read, output written.
local function softmax_rule(_, inputs, output, ctx)
  local x, mask = inputs[1], inputs[2]
  local n = x:numel()
  local flops
  if ctx.conventions == "deepspeed" then
    flops = 3 * n
  else
    local rows = n // x:size(-1)
    flops = 7 * n - 2 * rows
  end
  return { macs = 0, flops = flops, bytes_read = ctx.bytes(x) + ctx.bytes(mask),
           bytes_written = ctx.bytes(output) }
end

local function layer_norm_rule(module, inputs, output, ctx)
  local x = inputs[1]
  local n = x:numel()
  local width = 1
  for _, d in ipairs(module.normalized_shape) do width = width * d end
  local affine = module.weight ~= nil
  local flops
  if ctx.conventions == "deepspeed" then
    flops = n * (affine and 5 or 4)
  else
    flops = 6 * n + 2 * (n // width)
    if module.weight ~= nil then flops = flops + n end
    if module.bias ~= nil then flops = flops + n end
  end
  return { macs = 0, flops = flops,
           bytes_read = ctx.bytes(x) + ctx.bytes(module.weight) + ctx.bytes(module.bias),
           bytes_written = ctx.bytes(output) }
end

return {
  FusedScaleMaskSoftmax = softmax_rule,
  FusedLayerNorm = layer_norm_rule,
  MixedFusedLayerNorm = layer_norm_rule,
}
