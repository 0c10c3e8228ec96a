-- partition.lua — the tensor-model-parallel group of one rank: its size and rank, divisibility, and
-- which parameters are one rank's partition of a larger tensor.
--
-- "params of model": DeepSpeed prints params per GPU * mp_size, which over-counts every parameter
-- Megatron replicates on each rank (LayerNorms, RowParallelLinear's bias, position embeddings).
-- params_of_model() gives the exact total instead: Σ over ranks of each rank's partitions, the
-- replicated parameters counted once. Divisibility is enforced, so every rank holds equal partitions
-- and the sum is numel × mp_size for a partitioned parameter. The DeepSpeed report keeps its own line
-- unchanged; this figure is an addition, never a replacement.
local config = require "prof.config"

local M = {}

local function check_size(v, where)
  if math.type(v) ~= "integer" or v < 1 then
    error(string.format("%s: model_parallel_size must be an integer >= 1, got %s", where, tostring(v)), 0)
  end
  return v
end

-- parallel.model_parallel_size from the run's config (1 when unset).
function M.mp_size()
  return check_size(config.value("parallel.model_parallel_size") or 1, "parallel.model_parallel_size")
end

-- parallel.model_parallel_rank from the run's config (0 when unset).
function M.mp_rank()
  local r = config.value("parallel.model_parallel_rank") or 0
  if math.type(r) ~= "integer" or r < 0 then
    error(string.format("parallel.model_parallel_rank must be an integer >= 0, got %s", tostring(r)), 0)
  end
  return r
end

-- The group a layer belongs to: opts.mp_size / opts.mp_rank (tests build one rank's layers
-- without touching the config), else the config. who names the layer in errors.
function M.group(who, opts, level)
  local size = opts and opts.mp_size
  local rank = opts and opts.mp_rank
  if size == nil then size = M.mp_size() else check_size(size, who) end
  if rank == nil then rank = M.mp_rank() end
  if math.type(rank) ~= "integer" or rank < 0 or rank >= size then
    error(string.format("%s: model_parallel_rank %s is outside the group of size %d", who,
      tostring(rank), size), level and level + 1 or 0)
  end
  return size, rank
end

-- Megatron's mpu.divide: n / size, an error naming the layer and both sizes unless it divides.
function M.divide(who, what, n, size, level)
  if n % size ~= 0 then
    error(string.format("%s: %s %d is not divisible by model_parallel_size %d", who, what, n, size),
      level and level + 1 or 0)
  end
  return n // size
end

-- Parameters that are one rank's slice (Megatron's tensor_model_parallel attribute): tensor ->
-- {partition_dim =, mp_size =}. Weak keys: a dropped model takes its entries with it.
local partitioned = setmetatable({}, { __mode = "k" })

function M.mark(tensor, partition_dim, size)
  partitioned[tensor] = { partition_dim = partition_dim, mp_size = size }
  return tensor
end

-- {partition_dim =, mp_size =} for a partitioned parameter, nil for a replicated one.
function M.partition_of(tensor)
  return partitioned[tensor]
end

-- The parameters of the whole model across its tensor-parallel group, each counted once:
-- a partition counts numel × mp_size (all ranks' equal slices), a replicated tensor numel.
-- Also returns the replicated count (what params per GPU * mp_size counts mp_size times).
function M.params_of_model(model)
  local total, replicated = 0, 0
  for _, p in ipairs(model:parameters()) do
    local part = partitioned[p]
    if part ~= nil then
      total = total + p:numel() * part.mp_size
    else
      total = total + p:numel()
      replicated = replicated + p:numel()
    end
  end
  return total, replicated
end

return M
