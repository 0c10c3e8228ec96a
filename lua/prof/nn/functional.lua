-- functional.lua — prof.nn.functional (F): PyTorch's functional ops, keyword arguments in a table.
local core = require "prof.core"

local F = {}

-- Ops whose prof.core binding already has PyTorch's signature.
local SAME = {
  "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
  "conv_transpose3d", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d",
  "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
  "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
  "relu", "relu6", "leaky_relu", "prelu", "elu", "gelu", "silu", "tanh", "sigmoid", "softplus",
  "hardswish", "mish", "softmax", "log_softmax",
  "batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm",
  "embedding", "dropout", "interpolate", "scaled_dot_product_attention",
  "cross_entropy", "nll_loss", "mse_loss",
}
for _, name in ipairs(SAME) do F[name] = core[name] end

return F
