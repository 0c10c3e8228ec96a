-- llama.lua — Hugging Face's LlamaForCausalLM: SDPA, RoPE and grouped-query attention, named as in transformers.
local nn = require "prof.nn"
local F = nn.functional
local T = require "prof.tensor"
local lm = require "prof.models.causal_lm"

local M = {}

-- LlamaConfig fields; the presets are the config.json files of meta-llama/Llama-2-{7b,13b,70b}-hf
-- and meta-llama/Meta-Llama-3-8B on the Hugging Face hub.
local BASE = {
  vocab_size = 32000, hidden_size = 4096, intermediate_size = 11008, num_hidden_layers = 32,
  num_attention_heads = 32, num_key_value_heads = nil,   -- nil: num_attention_heads (no GQA)
  max_position_embeddings = 4096, rms_norm_eps = 1e-5, rope_theta = 10000.0,
  attention_dropout = 0.0, tie_word_embeddings = false,
}
local SIZES = {
  ["llama2-7b"] = {},
  ["llama2-13b"] = { hidden_size = 5120, intermediate_size = 13824, num_hidden_layers = 40,
                     num_attention_heads = 40 },
  ["llama2-70b"] = { hidden_size = 8192, intermediate_size = 28672, num_hidden_layers = 80,
                     num_attention_heads = 64, num_key_value_heads = 8 },
  ["llama3-8b"] = { vocab_size = 128256, intermediate_size = 14336, num_key_value_heads = 8,
                    max_position_embeddings = 8192, rope_theta = 500000.0 },
}
M.SIZES = SIZES
local ORDER = { "llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b" }

-- LlamaRMSNorm as transformers writes it (pow, mean, +eps, rsqrt, two products) rather than
-- nn.RMSNorm: the class name is the one profiles show, and DeepSpeed, which patches none of these
-- ops, counts 0 for it as it does on the real model. Under exact conventions the ops add up to
-- the fused rms_norm formula (4·numel + 2·rows), so nothing is lost.
local LlamaRMSNorm = nn.Module:extend("LlamaRMSNorm")
M.LlamaRMSNorm = LlamaRMSNorm
function LlamaRMSNorm:init(hidden_size, eps)
  self.hidden_size = hidden_size
  self:register_parameter("weight", T.empty({ hidden_size }))
  self.variance_epsilon = eps or 1e-6
end

function LlamaRMSNorm:forward(x)
  local dtype = x.dtype
  x = x:to("float32")
  local variance = T.pow(x, 2):mean(-1, { keepdim = true })
  x = x * T.rsqrt(variance + self.variance_epsilon)
  return self.weight * x:to(dtype)
end

function LlamaRMSNorm:extra_repr()
  return string.format("(%d,), eps=%s", self.hidden_size, tostring(self.variance_epsilon))
end

-- inv_freq = 1 / theta^(2i/d) as a buffer (computed here, so it has values on every device), and
-- per call cos/sin of position · inv_freq, duplicated over the head dim, as transformers does.
local LlamaRotaryEmbedding = nn.Module:extend("LlamaRotaryEmbedding")
function LlamaRotaryEmbedding:init(c)
  local dim = c.hidden_size // c.num_attention_heads
  local inv = {}
  for i = 0, dim - 1, 2 do inv[#inv + 1] = 1.0 / c.rope_theta ^ (i / dim) end
  self:register_buffer("inv_freq", T.tensor(inv, { dtype = "float32" }))
  self.attention_scaling = 1.0
end

-- x only gives the dtype; position_ids [B, T] -> cos, sin [B, T, head_dim]
function LlamaRotaryEmbedding:forward(x, position_ids)
  local b = position_ids:size(0)
  -- .float() as transformers writes it: a half() model keeps its rotary angles in float32
  local inv = self.inv_freq:to("float32"):view(1, -1, 1):expand(b, -1, 1)
  local pos = position_ids:unsqueeze(1):to("float32")
  local freqs = T.matmul(inv, pos):transpose(1, 2)
  local emb = T.cat({ freqs, freqs }, -1)
  local cos = T.cos(emb) * self.attention_scaling
  local sin = T.sin(emb) * self.attention_scaling
  return cos:to(x.dtype), sin:to(x.dtype)
end

-- cat(-x2, x1) of the two halves of the last dim.
local function rotate_half(x)
  local half = x:size(-1) // 2
  return T.cat({ -x:narrow(-1, half, half), x:narrow(-1, 0, half) }, -1)
end

local function apply_rotary_pos_emb(q, k, cos, sin)
  cos, sin = cos:unsqueeze(1), sin:unsqueeze(1)
  return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
end

local LlamaAttention = nn.Module:extend("LlamaAttention")
function LlamaAttention:init(c)
  self.head_dim = c.hidden_size // c.num_attention_heads
  self.num_heads = c.num_attention_heads
  self.num_key_value_heads = c.num_key_value_heads or c.num_attention_heads
  if self.num_heads % self.num_key_value_heads ~= 0 then
    error(string.format("LlamaAttention: %d heads are not a multiple of %d key/value heads",
                        self.num_heads, self.num_key_value_heads), 4)
  end
  self.scaling = self.head_dim ^ -0.5
  self.attention_dropout = c.attention_dropout
  local h, d = c.hidden_size, self.head_dim
  self.q_proj = nn.Linear(h, self.num_heads * d, { bias = false })
  self.k_proj = nn.Linear(h, self.num_key_value_heads * d, { bias = false })
  self.v_proj = nn.Linear(h, self.num_key_value_heads * d, { bias = false })
  self.o_proj = nn.Linear(self.num_heads * d, h, { bias = false })
end

-- SDPA with is_causal (transformers' default "sdpa" path, no padding mask). Key and value keep
-- their num_key_value_heads: SDPA's enable_gqa broadcasts them, as transformers does on
-- torch >= 2.5 instead of repeat_kv; the copies repeat_kv makes would add bytes, not flops.
function LlamaAttention:forward(x, cos, sin)
  local b, t = x:size(0), x:size(1)
  local q = self.q_proj(x):view(b, t, -1, self.head_dim):transpose(1, 2)
  local k = self.k_proj(x):view(b, t, -1, self.head_dim):transpose(1, 2)
  local v = self.v_proj(x):view(b, t, -1, self.head_dim):transpose(1, 2)
  q, k = apply_rotary_pos_emb(q, k, cos, sin)
  local out = F.scaled_dot_product_attention(q, k, v, {
    dropout_p = self.training and self.attention_dropout or 0.0,
    is_causal = t > 1, scale = self.scaling,
  })
  out = out:transpose(1, 2):contiguous():reshape(b, t, -1)
  return self.o_proj(out)
end

local LlamaMLP = nn.Module:extend("LlamaMLP")
function LlamaMLP:init(c)
  local h, i = c.hidden_size, c.intermediate_size
  self.gate_proj = nn.Linear(h, i, { bias = false })
  self.up_proj = nn.Linear(h, i, { bias = false })
  self.down_proj = nn.Linear(i, h, { bias = false })
  self.act_fn = nn.SiLU()
end

function LlamaMLP:forward(x)
  return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))
end

local LlamaDecoderLayer = nn.Module:extend("LlamaDecoderLayer")
function LlamaDecoderLayer:init(c)
  self.self_attn = LlamaAttention(c)
  self.mlp = LlamaMLP(c)
  self.input_layernorm = LlamaRMSNorm(c.hidden_size, c.rms_norm_eps)
  self.post_attention_layernorm = LlamaRMSNorm(c.hidden_size, c.rms_norm_eps)
end

function LlamaDecoderLayer:forward(x, cos, sin)
  x = x + self.self_attn(self.input_layernorm(x), cos, sin)
  return x + self.mlp(self.post_attention_layernorm(x))
end

local LlamaModel = nn.Module:extend("LlamaModel")
M.LlamaModel = LlamaModel
function LlamaModel:init(c)
  self.embed_tokens = nn.Embedding(c.vocab_size, c.hidden_size, { padding_idx = c.pad_token_id })
  local layers = {}
  for i = 1, c.num_hidden_layers do layers[i] = LlamaDecoderLayer(c) end
  self.layers = nn.ModuleList(layers)
  self.norm = LlamaRMSNorm(c.hidden_size, c.rms_norm_eps)
  self.rotary_emb = LlamaRotaryEmbedding(c)
end

-- input_ids [B, T] -> hidden states [B, T, hidden_size]
function LlamaModel:forward(input_ids)
  local t = input_ids:size(1)
  local x = self.embed_tokens(input_ids)
  local position_ids = T.arange(0, t, { dtype = "int64", device = input_ids.device }):unsqueeze(0)
  local cos, sin = self.rotary_emb(x, position_ids)
  for _, layer in ipairs(self.layers) do x = layer(x, cos, sin) end
  return self.norm(x)
end

local LlamaForCausalLM = nn.Module:extend("LlamaForCausalLM")
M.LlamaForCausalLM = LlamaForCausalLM
function LlamaForCausalLM:init(c)
  self.vocab_size = c.vocab_size
  self.model = LlamaModel(c)
  self.lm_head = nn.Linear(c.hidden_size, c.vocab_size, { bias = false })
  if c.tie_word_embeddings then self.lm_head.weight = self.model.embed_tokens.weight end
end

-- model(input_ids[, labels]) -> logits [B, T, vocab], loss (next-token cross entropy).
-- Logits come first so that `local logits = model(x)` works; transformers' tuple puts the loss first.
function LlamaForCausalLM:forward(input_ids, labels)
  local logits = self.lm_head(self.model(input_ids))
  if labels == nil then return logits end
  return logits, lm.loss(logits, labels, self.vocab_size)
end

local function preset(opts)
  local key = opts.name or opts.size or "llama2-7b"
  local p = SIZES[key]
  if p == nil then
    error(string.format("llama: unknown name '%s' (known: %s)", tostring(key), table.concat(ORDER, ", ")), 3)
  end
  return p
end

-- The config a build would use: preset, then preset keys given in opts, then opts.config.
function M.config(opts)
  opts = opts or {}
  return lm.config(BASE, preset(opts), opts, "num_key_value_heads")
end

-- llama.build{name = "llama2-7b" | "llama2-13b" | "llama2-70b" | "llama3-8b"}, plus overrides.
function M.build(opts)
  return LlamaForCausalLM(M.config(opts))
end

-- {input_ids}: int64 [batch, seq], batch 1, seq the context (max_position_embeddings) unless given.
function M.input(opts)
  opts = opts or {}
  return lm.input(opts, M.config(opts).max_position_embeddings)
end

function M.names()
  return { table.unpack(ORDER) }
end

return M
