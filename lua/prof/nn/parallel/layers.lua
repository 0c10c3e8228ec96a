-- layers.lua — Megatron-LM's mpu layers: Column/RowParallelLinear, VocabParallelEmbedding; one rank's slice.
--
-- One process plays one rank: the collectives Megatron runs between ranks move data but compute
-- nothing, so they are stand-ins here (identity, a slice, or a concatenation of this rank's part)
-- and the flops counted are exactly one GPU's.
local module = require "prof.nn.module"
local args = require "prof.nn.args"
local F = require "prof.nn.functional"
local T = require "prof.tensor"
local initializers = require "prof.nn.initializers"
local partition = require "prof.nn.parallel.partition"

local Module = module.Module

-- all-gather along the last dim: the other ranks' slices are not in this process, so this rank's
-- slice stands in for each of them (same shape, same bytes moved, no flops).
local function gather_last_dim(x, size)
  if size == 1 then return x end
  local parts = {}
  for i = 1, size do parts[i] = x end
  return T.cat(parts, -1)
end

-- megatron/model/utils.py: in-place initialisers N(0, sigma²), and N(0, (sigma/√(2·num_layers))²)
-- for the layers whose outputs add into the residual stream (so that its variance stays put).
local function init_method_normal(sigma)
  return function(t) return initializers.normal_(t, 0.0, sigma) end
end

local function scaled_init_method_normal(sigma, num_layers)
  return init_method_normal(sigma / math.sqrt(2.0 * num_layers))
end

-- A layer's init_method: a function filling a tensor in place, xavier_normal_ when not given as in
-- Megatron's mpu layers (its models pass init_method_normal instead: see transformer.lua).
local function init_method_of(who, f)
  if f == nil then return initializers.xavier_normal_ end
  if type(f) ~= "function" then
    error(string.format("%s: init_method must be a function of a tensor, got %s", who, type(f)), 4)
  end
  return f
end

-- Megatron's _initialize_affine_weight_gpu: init_method on this rank's partition only (each rank
-- draws its own), and "always initialize bias to zero". Only cpu float32 tensors get values: on
-- meta nothing is written and the generator is not drawn from.
local function reset_parameters(self)
  if initializers.has_values(self.weight) then self.init_method(self.weight) end
  if initializers.has_values(self.bias) then initializers.zeros_(self.bias) end
end

-- Megatron's keywords after the leading ones: stride and keep_master_weight_for_test only serve
-- Megatron's master-weight (cpu) initialisation and are kept, not used; mp_size/mp_rank override
-- the config.
local TAIL = {
  { "init_method" }, { "stride", 1 }, { "keep_master_weight_for_test", false }, { "skip_bias_add", false },
  { "mp_size" }, { "mp_rank" }, { "device" }, { "dtype" },
}

local function spec(head)
  local s = { table.unpack(head) }
  for _, v in ipairs(TAIL) do s[#s + 1] = v end
  return s
end

-- ColumnParallelLinear(input_size, output_size, bias=true, gather_output=true, init_method=nil,
-- stride=1, keep_master_weight_for_test=false, skip_bias_add=false, {mp_size=, mp_rank=}):
-- Y = XA + b with A split by columns: this rank holds weight [output_size/mp, input_size] and
-- bias [output_size/mp]. forward returns output, output_bias (the bias when skip_bias_add).
local ColumnParallelLinear = Module:extend("ColumnParallelLinear")

function ColumnParallelLinear:init(...)
  local who = self.__name
  local a = args.parse(who, spec({ "input_size", "output_size", { "bias", true }, { "gather_output", true } }), ...)
  local size, rank = partition.group(who, a, 3)
  self.input_size, self.output_size = a.input_size, a.output_size
  self.gather_output, self.skip_bias_add = a.gather_output, a.skip_bias_add
  self.model_parallel_size, self.model_parallel_rank = size, rank
  self.output_size_per_partition = partition.divide(
    string.format("%s(%d, %d)", who, a.input_size, a.output_size), "output_size", a.output_size, size, 3)
  local fk = args.factory(a)
  self:register_parameter("weight",
    partition.mark(T.empty({ self.output_size_per_partition, a.input_size }, fk), 0, size))
  if a.bias then
    self:register_parameter("bias", partition.mark(T.empty({ self.output_size_per_partition }, fk), 0, size))
  end
  self.init_method = init_method_of(who, a.init_method)
  self:reset_parameters()
end

ColumnParallelLinear.reset_parameters = reset_parameters

function ColumnParallelLinear:forward(x)
  -- copy_to_tensor_model_parallel_region is the identity in the forward pass
  local bias = not self.skip_bias_add and self.bias or nil
  local out = F.linear(x, self.weight, bias)
  if self.gather_output then out = gather_last_dim(out, self.model_parallel_size) end
  return out, self.skip_bias_add and self.bias or nil
end

-- RowParallelLinear(input_size, output_size, bias=true, input_is_parallel=false, init_method=nil,
-- stride=1, keep_master_weight_for_test=false, skip_bias_add=false, {mp_size=, mp_rank=}):
-- Y = XA + b with A split by rows: this rank holds weight [output_size, input_size/mp] and the
-- whole bias [output_size], replicated on every rank (added once, after the all-reduce).
local RowParallelLinear = Module:extend("RowParallelLinear")

function RowParallelLinear:init(...)
  local who = self.__name
  local a = args.parse(who,
    spec({ "input_size", "output_size", { "bias", true }, { "input_is_parallel", false } }), ...)
  local size, rank = partition.group(who, a, 3)
  self.input_size, self.output_size = a.input_size, a.output_size
  self.input_is_parallel, self.skip_bias_add = a.input_is_parallel, a.skip_bias_add
  self.model_parallel_size, self.model_parallel_rank = size, rank
  self.input_size_per_partition = partition.divide(
    string.format("%s(%d, %d)", who, a.input_size, a.output_size), "input_size", a.input_size, size, 3)
  local fk = args.factory(a)
  self:register_parameter("weight",
    partition.mark(T.empty({ a.output_size, self.input_size_per_partition }, fk), 1, size))
  if a.bias then self:register_parameter("bias", T.empty({ a.output_size }, fk)) end
  self.init_method = init_method_of(who, a.init_method)
  self:reset_parameters()
end

RowParallelLinear.reset_parameters = reset_parameters

function RowParallelLinear:forward(x)
  if not self.input_is_parallel then
    -- scatter_to_tensor_model_parallel_region: this rank's slice of the last dim (a view)
    local n = self.input_size_per_partition
    x = x:narrow(-1, self.model_parallel_rank * n, n)
  end
  -- reduce_from_tensor_model_parallel_region sums the ranks' partial products: communication
  local out = F.linear(x, self.weight)
  if self.skip_bias_add then return out, self.bias end
  if self.bias ~= nil then out = out + self.bias end
  return out, nil
end

-- VocabParallelEmbedding(num_embeddings, embedding_dim, init_method=nil, {mp_size=, mp_rank=}):
-- this rank holds rows [vocab_start_index, vocab_end_index) of the table: [num_embeddings/mp, dim].
local VocabParallelEmbedding = Module:extend("VocabParallelEmbedding")

function VocabParallelEmbedding:init(...)
  local who = self.__name
  local a = args.parse(who, {
    "num_embeddings", "embedding_dim", { "init_method" }, { "mp_size" }, { "mp_rank" }, { "device" }, { "dtype" },
  }, ...)
  local size, rank = partition.group(who, a, 3)
  self.num_embeddings, self.embedding_dim = a.num_embeddings, a.embedding_dim
  self.model_parallel_size, self.model_parallel_rank = size, rank
  local per = partition.divide(string.format("%s(%d, %d)", who, a.num_embeddings, a.embedding_dim),
    "num_embeddings", a.num_embeddings, size, 3)
  self.num_embeddings_per_partition = per
  self.vocab_start_index, self.vocab_end_index = rank * per, (rank + 1) * per
  self:register_parameter("weight", partition.mark(T.empty({ per, a.embedding_dim }, args.factory(a)), 0, size))
  self.init_method = init_method_of(who, a.init_method)
  self:reset_parameters()
end

VocabParallelEmbedding.reset_parameters = reset_parameters

-- Megatron shifts the ids into this rank's range, zeroes the rows of ids outside it and all-reduces:
-- index arithmetic and communication, no flops under either convention, so only the lookup runs.
function VocabParallelEmbedding:forward(ids)
  return F.embedding(ids, self.weight)
end

return {
  ColumnParallelLinear = ColumnParallelLinear,
  RowParallelLinear = RowParallelLinear,
  VocabParallelEmbedding = VocabParallelEmbedding,
  init_method_normal = init_method_normal,
  scaled_init_method_normal = scaled_init_method_normal,
}
