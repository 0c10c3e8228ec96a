-- op_names.lua — the runtime's op names as torch 1.13's profiler spells them ("aten::linear").
-- The runtime names an op after the call (conv2d, max_pool2d, upsample_nearest2d) and records
-- torch's children where its kernel does their work (aten::linear's aten::t and aten::addmm);
-- this is the one table that turns those names into torch's. Kinds that are profrun's own (one
-- event for what aten splits, or a fused update) read "profrun::".
local M = {}

-- runtime name -> torch's where they differ (else "aten::" .. name)
local RENAMED = {
  cross_entropy = "aten::cross_entropy_loss", nll_loss = "aten::nll_loss_nd",
  copy = "aten::copy_", relu_backward = "aten::threshold_backward",
  rnn_cell = "aten::rnn_tanh_cell", gru_cell = "aten::gru_cell", lstm_cell = "aten::lstm_cell",
  sgd_step = "profrun::sgd_step", adam_step = "profrun::adam_step",
  custom = "profrun::custom", unknown = "profrun::unknown",
}

-- autograd node (the runtime's name for the forward it differentiates) -> torch 1.13's node
-- where the general rule (CamelCase + "Backward0": relu -> ReluBackward0) does not give it
local NODES = {
  accumulate_grad = "torch::autograd::AccumulateGrad",
  conv1d = "ConvolutionBackward0", conv2d = "ConvolutionBackward0", conv3d = "ConvolutionBackward0",
  conv_transpose1d = "ConvolutionBackward0", conv_transpose2d = "ConvolutionBackward0",
  conv_transpose3d = "ConvolutionBackward0",
  max_pool1d = "MaxPool1DWithIndicesBackward0", max_pool2d = "MaxPool2DWithIndicesBackward0",
  max_pool3d = "MaxPool3DWithIndicesBackward0",
  adaptive_max_pool1d = "AdaptiveMaxPool1DBackward0",
  batch_norm = "NativeBatchNormBackward0", layer_norm = "NativeLayerNormBackward0",
  group_norm = "NativeGroupNormBackward0", dropout = "NativeDropoutBackward0",
  nll_loss = "NllLossBackward0", view = "ViewBackward0", relu6 = "HardtanhBackward0",
}

-- relu -> ReluBackward0, upsample_nearest2d -> UpsampleNearest2DBackward0 (torch capitalises
-- the D of a spatial rank)
local function node_name(name)
  local t = NODES[name]
  if t then return t end
  local camel = name:gsub("^_*", ""):gsub("(%d)d$", "%1D"):gsub("(%d)d_", "%1D_")
                    :gsub("_(%w)", string.upper):gsub("^%l", string.upper)
  return camel .. "Backward0"
end

local cache = {}

-- The torch name of a runtime op name: autograd's rows, RENAMED, else "aten::" + the name
-- (already prefixed names are kept).
function M.torch(name)
  local t = cache[name]
  if t then return t end
  local node = name:match("^autograd::node: (.+)$")
  local eval = name:match("^autograd::evaluate: (.+)$")
  if node then t = node_name(node)
  elseif eval then t = "autograd::engine::evaluate_function: " .. node_name(eval)
  elseif name:find("::", 1, true) then t = name
  else t = RENAMED[name] or ("aten::" .. name) end
  cache[name] = t
  return t
end

return M
