-- fused.lua — Megatron's fused layers: FusedScaleMaskSoftmax, and apex's FusedLayerNorm (MixedFusedLayerNorm).
--
-- On a GPU these run single CUDA kernels that DeepSpeed cannot see (it counts them 0). Here they
-- run the unfused ops Megatron falls back to, so they compute on cpu and their counts exist; the
-- rules in scripts/rules/megatron.lua count the fused kernels' work instead.
local module = require "prof.nn.module"
local args = require "prof.nn.args"
local F = require "prof.nn.functional"
local nn_norm = require "prof.nn.normalization"

local Module, fmt = module.Module, args.fmt

-- Megatron's gpt2_attention_mask_func: masked scores become -10000 (a selection, no arithmetic).
local function attention_mask_func(scores, mask)
  return scores:masked_fill(mask, -10000.0)
end

-- FusedScaleMaskSoftmax(input_in_fp16, upper_triang_mask_fusion, general_mask_fusion, mask_func,
-- softmax_in_fp32, scale): probs = softmax(mask_func(scale · scores, mask)) over the last dim.
-- mask_func defaults to Megatron's GPT-2 mask (-10000 where the mask is true); scale nil means 1.
local FusedScaleMaskSoftmax = Module:extend("FusedScaleMaskSoftmax")

function FusedScaleMaskSoftmax:init(...)
  local a = args.parse(self.__name, {
    { "input_in_fp16", false }, { "upper_triang_mask_fusion", false }, { "general_mask_fusion", false },
    { "mask_func" }, { "softmax_in_fp32", false }, { "scale" },
  }, ...)
  if a.scale ~= nil and not a.softmax_in_fp32 then
    error(self.__name .. ": softmax should be in fp32 when scaled", 3)
  end
  self.input_in_fp16, self.softmax_in_fp32, self.scale = a.input_in_fp16, a.softmax_in_fp32, a.scale
  self.upper_triang_mask_fusion, self.general_mask_fusion = a.upper_triang_mask_fusion, a.general_mask_fusion
  self.mask_func = a.mask_func or attention_mask_func
end

-- The path Megatron takes without the fused kernel: scale with an operator (DeepSpeed does not see
-- `*`), mask, then softmax (DeepSpeed counts F.softmax as numel).
function FusedScaleMaskSoftmax:forward(input, mask)
  if input:dim() ~= 4 then
    error(string.format("%s: expected 4D scores [b, np, sq, sk], got %s", self.__name, args.shape_str(input)), 2)
  end
  local fp32 = self.input_in_fp16 and self.softmax_in_fp32
  if fp32 then input = input:to("float32") end
  if self.scale ~= nil then input = input * self.scale end
  local probs = F.softmax(self.mask_func(input, mask), -1)
  if fp32 then probs = probs:to("float16") end
  return probs
end

-- apex.normalization.FusedLayerNorm(normalized_shape, eps=1e-5, elementwise_affine=true): the
-- parameters and numerics of nn.LayerNorm, printed as apex prints them.
local FusedLayerNorm = nn_norm.LayerNorm:extend("FusedLayerNorm")

function FusedLayerNorm:extra_repr()
  return string.format("torch.Size([%s]), eps=%s, elementwise_affine=%s",
    table.concat(self.normalized_shape, ", "), fmt(self.eps), fmt(self.elementwise_affine))
end

-- megatron.model.fused_layer_norm.MixedFusedLayerNorm (with --fp32-residual-connection).
local MixedFusedLayerNorm = FusedLayerNorm:extend("MixedFusedLayerNorm")

return {
  FusedScaleMaskSoftmax = FusedScaleMaskSoftmax,
  FusedLayerNorm = FusedLayerNorm,
  MixedFusedLayerNorm = MixedFusedLayerNorm,
  attention_mask_func = attention_mask_func,
}
