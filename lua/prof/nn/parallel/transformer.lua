-- transformer.lua — Megatron-LM's megatron/model/transformer.py: ParallelMLP, ParallelSelfAttention, layers.
--
-- Each class takes the hyperparameters Megatron reads from get_args() as one table c (see
-- M.DEFAULTS); c.mp_size / c.mp_rank override the config's tensor-parallel group for every layer.
-- Inside the transformer activations are [s, b, h], as in Megatron.
local nn = require "prof.nn"
local T = require "prof.tensor"
local layers = require "prof.nn.parallel.layers"
local fused = require "prof.nn.parallel.fused"
local partition = require "prof.nn.parallel.partition"

local F = nn.functional

local M = {}

-- Megatron's argument defaults (megatron/arguments.py) for the fields these classes read.
M.DEFAULTS = {
  hidden_size = 1024, num_attention_heads = 16, num_layers = 24, ffn_hidden_size = nil, -- nil: 4h
  attention_dropout = 0.1, hidden_dropout = 0.1, layernorm_epsilon = 1e-5,
  apply_query_key_layer_scaling = false, attention_softmax_in_fp32 = false, fp16 = false,
  scaled_upper_triang_masked_softmax_fusion = false, scaled_masked_softmax_fusion = false,
  bias_gelu_fusion = true, apply_residual_connection_post_layernorm = false,
  fp32_residual_connection = false, init_method_std = 0.02,
}

-- c with Megatron's defaults behind it.
function M.with_defaults(c)
  return setmetatable(c or {}, { __index = M.DEFAULTS })
end

local function group_opts(c)
  return { mp_size = c.mp_size, mp_rank = c.mp_rank }
end

-- megatron/model/language_model.py: init_method_normal(init_method_std) for the layers reading the
-- residual stream, scaled_init_method_normal(init_method_std, num_layers) for the two writing to
-- it (attention's dense, the MLP's dense_4h_to_h); c.init_method / c.output_layer_init_method, as
-- Megatron's constructors take them, override either.
local function init_methods(c)
  return c.init_method or layers.init_method_normal(c.init_method_std),
    c.output_layer_init_method or layers.scaled_init_method_normal(c.init_method_std, c.num_layers)
end

local function layer_norm(c)
  local cls = c.fp32_residual_connection and fused.MixedFusedLayerNorm or fused.FusedLayerNorm
  return cls(c.hidden_size, { eps = c.layernorm_epsilon })
end

-- megatron/model/fused_bias_gelu.py: bias add and tanh-GELU in one jit-scripted function. DeepSpeed
-- sees none of it (operators and torch.tanh are not patched); exact counts each operation.
local function bias_gelu(bias, y)
  local x = bias + y
  return x * 0.5 * (1.0 + T.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))
end

-- ParallelMLP(c): h -> 4h/mp on this rank (ColumnParallelLinear, no gather), GELU, 4h/mp -> h
-- (RowParallelLinear on the parallel input). Returns output, output_bias (bias added by the layer).
local ParallelMLP = nn.Module:extend("ParallelMLP")
M.ParallelMLP = ParallelMLP

function ParallelMLP:init(c)
  c = M.with_defaults(c)
  local g = group_opts(c)
  local ffn = c.ffn_hidden_size or 4 * c.hidden_size
  local init, out_init = init_methods(c)
  self.dense_h_to_4h = layers.ColumnParallelLinear(c.hidden_size, ffn,
    { gather_output = false, skip_bias_add = true, init_method = init, mp_size = g.mp_size,
      mp_rank = g.mp_rank })
  self.bias_gelu_fusion = c.bias_gelu_fusion
  self.dense_4h_to_h = layers.RowParallelLinear(ffn, c.hidden_size,
    { input_is_parallel = true, skip_bias_add = true, init_method = out_init, mp_size = g.mp_size,
      mp_rank = g.mp_rank })
end

function ParallelMLP:forward(hidden_states)
  local intermediate, bias = self.dense_h_to_4h(hidden_states)   -- [s, b, 4hp]
  if self.bias_gelu_fusion then
    intermediate = bias_gelu(bias, intermediate)
  else
    intermediate = F.gelu(intermediate + bias)
  end
  return self.dense_4h_to_h(intermediate)                        -- [s, b, h], bias
end

-- ParallelSelfAttention(c, layer_number): heads/mp heads on this rank; QKᵀ with baddbmm (scaled
-- by 1/norm_factor), FusedScaleMaskSoftmax, dropout, ·V with bmm, RowParallelLinear out.
local ParallelSelfAttention = nn.Module:extend("ParallelSelfAttention")
M.ParallelSelfAttention = ParallelSelfAttention

function ParallelSelfAttention:init(c, layer_number)
  c = M.with_defaults(c)
  local who = self.__name
  local g = group_opts(c)
  local size = partition.group(who, g, 3)
  self.layer_number = math.max(1, layer_number or 1)
  self.attention_softmax_in_fp32 = c.attention_softmax_in_fp32 or c.apply_query_key_layer_scaling
  self.hidden_size_per_partition = partition.divide(who, "hidden_size", c.hidden_size, size, 3)
  if c.hidden_size % c.num_attention_heads ~= 0 then
    error(string.format("%s: hidden_size %d is not divisible by num_attention_heads %d", who,
      c.hidden_size, c.num_attention_heads), 3)
  end
  self.hidden_size_per_attention_head = c.hidden_size // c.num_attention_heads
  self.num_attention_heads_per_partition = partition.divide(who, "num_attention_heads",
    c.num_attention_heads, size, 3)
  local init, out_init = init_methods(c)
  self.query_key_value = layers.ColumnParallelLinear(c.hidden_size, 3 * c.hidden_size,
    { gather_output = false, init_method = init, mp_size = g.mp_size, mp_rank = g.mp_rank })
  local coeff
  self.norm_factor = math.sqrt(self.hidden_size_per_attention_head)
  if c.apply_query_key_layer_scaling then
    coeff = self.layer_number
    self.norm_factor = self.norm_factor * coeff
  end
  self.scale_mask_softmax = fused.FusedScaleMaskSoftmax(c.fp16, c.scaled_upper_triang_masked_softmax_fusion,
    c.scaled_masked_softmax_fusion, fused.attention_mask_func, self.attention_softmax_in_fp32, coeff)
  self.attention_dropout = nn.Dropout(c.attention_dropout)
  self.dense = layers.RowParallelLinear(c.hidden_size, c.hidden_size,
    { input_is_parallel = true, skip_bias_add = true, init_method = out_init, mp_size = g.mp_size,
      mp_rank = g.mp_rank })
end

-- hidden_states [sq, b, h] -> output [sq, b, h], bias [h]
function ParallelSelfAttention:forward(hidden_states, attention_mask)
  local np, hn = self.num_attention_heads_per_partition, self.hidden_size_per_attention_head
  local mixed = self.query_key_value(hidden_states)              -- [sq, b, np * 3 * hn]
  local sq, b = mixed:size(0), mixed:size(1)
  mixed = mixed:view(sq, b, np, 3 * hn)
  local q, k, v = mixed:split(hn, 3)                              -- 3 × [sq, b, np, hn]
  local sk = k:size(0)
  -- [s, b, np, hn] -> [s, b·np, hn]: torch views these slices; prof's view wants contiguous
  -- input, so reshape stands in (same shape, no flops)
  q = q:reshape(sq, b * np, hn)
  k = k:reshape(sk, b * np, hn)
  local result = T.empty({ b * np, sq, sk }, { dtype = q.dtype, device = q.device })
  local scores = T.baddbmm(result, q:transpose(0, 1), k:transpose(0, 1):transpose(1, 2),
    { beta = 0.0, alpha = 1.0 / self.norm_factor })
  scores = scores:view(b, np, sq, sk)
  local probs = self.scale_mask_softmax(scores, attention_mask)
  probs = self.attention_dropout(probs)
  v = v:reshape(sk, b * np, hn)
  probs = probs:view(b * np, sq, sk)
  local context = T.bmm(probs, v:transpose(0, 1))                 -- [b·np, sq, hn]
  context = context:view(b, np, sq, hn):permute(2, 0, 1, 3):contiguous()
  context = context:view(sq, b, self.hidden_size_per_partition)
  return self.dense(context)
end

-- Megatron's bias_dropout_add (the jit-fused one runs the same operations).
local function bias_dropout_add(x, bias, residual, prob, training)
  return residual + F.dropout(x + bias, prob, training)
end

-- ParallelTransformerLayer(c, layer_number): pre-LayerNorm attention and MLP with residuals.
local ParallelTransformerLayer = nn.Module:extend("ParallelTransformerLayer")
M.ParallelTransformerLayer = ParallelTransformerLayer

function ParallelTransformerLayer:init(c, layer_number)
  c = M.with_defaults(c)
  self.layer_number = layer_number or 1
  self.apply_residual_connection_post_layernorm = c.apply_residual_connection_post_layernorm
  self.hidden_dropout = c.hidden_dropout
  self.input_layernorm = layer_norm(c)
  self.attention = ParallelSelfAttention(c, self.layer_number)
  self.post_attention_layernorm = layer_norm(c)
  self.mlp = ParallelMLP(c)
end

function ParallelTransformerLayer:forward(hidden_states, attention_mask)
  local ln_out = self.input_layernorm(hidden_states)
  local attn_out, attn_bias = self.attention(ln_out, attention_mask)
  local residual = self.apply_residual_connection_post_layernorm and ln_out or hidden_states
  local ln_in = bias_dropout_add(attn_out, attn_bias, residual, self.hidden_dropout, self.training)
  ln_out = self.post_attention_layernorm(ln_in)
  local mlp_out, mlp_bias = self.mlp(ln_out)
  residual = self.apply_residual_connection_post_layernorm and ln_out or ln_in
  return bias_dropout_add(mlp_out, mlp_bias, residual, self.hidden_dropout, self.training)
end

-- ParallelTransformer(c): c.num_layers layers in a ModuleList, then final_layernorm. Takes and
-- returns [b, s, h]; the layers run on [s, b, h].
local ParallelTransformer = nn.Module:extend("ParallelTransformer")
M.ParallelTransformer = ParallelTransformer

function ParallelTransformer:init(c)
  c = M.with_defaults(c)
  self.num_layers = c.num_layers
  local list = {}
  for i = 1, c.num_layers do list[i] = ParallelTransformerLayer(c, i) end
  self.layers = nn.ModuleList(list)
  self.final_layernorm = layer_norm(c)
end

function ParallelTransformer:forward(hidden_states, attention_mask)
  hidden_states = hidden_states:transpose(0, 1):contiguous()     -- [b, s, h] -> [s, b, h]
  for _, layer in ipairs(self.layers) do hidden_states = layer(hidden_states, attention_mask) end
  hidden_states = hidden_states:transpose(0, 1):contiguous()
  return self.final_layernorm(hidden_states)
end

return M
