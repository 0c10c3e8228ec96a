-- init.lua — prof.nn.parallel: Megatron-LM's tensor-parallel layers, each holding one rank's partition.
--
-- The group comes from the config (parallel.model_parallel_size / model_parallel_rank) unless a
-- layer is given {mp_size =, mp_rank =}. See partition.lua for params_of_model, the exact total
-- that complements DeepSpeed's "params per GPU * mp_size".
local partition = require "prof.nn.parallel.partition"
local transformer = require "prof.nn.parallel.transformer"

local M = {}

M.mp_size = partition.mp_size
M.mp_rank = partition.mp_rank
M.divide = partition.divide
M.partition_of = partition.partition_of
M.params_of_model = partition.params_of_model

for _, file in ipairs({ "layers", "fused" }) do
  for k, v in pairs(require("prof.nn.parallel." .. file)) do M[k] = v end
end
for _, name in ipairs({ "ParallelMLP", "ParallelSelfAttention", "ParallelTransformerLayer",
                        "ParallelTransformer" }) do
  M[name] = transformer[name]
end
M.DEFAULTS = transformer.DEFAULTS

return M
