-- op_names.lua — the runtime's op names as PyTorch's profiler spells them ("aten::linear").
-- Where profrun's op is the same computation as an aten op it takes that name; kinds that are
-- profrun's own (one event for what aten splits, or a family under one kind) read "profrun::".
local M = {}

-- profrun kind -> aten op where the names differ.
local RENAMED = {
  conv = "aten::convolution", conv_transpose = "aten::convolution", copy = "aten::copy_",
  max_pool = "profrun::max_pool", avg_pool = "profrun::avg_pool",
  adaptive_avg_pool = "profrun::adaptive_avg_pool", adaptive_max_pool = "profrun::adaptive_max_pool",
  interpolate = "profrun::interpolate", custom = "profrun::custom", unknown = "profrun::unknown",
  rnn_cell = "aten::rnn_tanh_cell", gru_cell = "aten::gru_cell", lstm_cell = "aten::lstm_cell",
  relu_backward = "aten::threshold_backward",
}

local cache = {}

-- The torch name of a runtime op name: RENAMED, else "aten::" + the name (already prefixed
-- names are kept).
function M.torch(name)
  local t = cache[name]
  if t then return t end
  if name:find("::", 1, true) then t = name
  else t = RENAMED[name] or ("aten::" .. name) end
  cache[name] = t
  return t
end

return M
