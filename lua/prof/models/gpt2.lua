-- gpt2.lua — Hugging Face's GPT2LMHeadModel (eager attention), named and shaped as in transformers.
local nn = require "prof.nn"
local F = nn.functional
local T = require "prof.tensor"
local lm = require "prof.models.causal_lm"

local M = {}

-- GPT-2 as released (the Hugging Face model cards gpt2, gpt2-medium, gpt2-large, gpt2-xl).
local BASE = {
  vocab_size = 50257, n_positions = 1024, n_embd = 768, n_layer = 12, n_head = 12,
  n_inner = nil,                     -- nil: 4 * n_embd, as GPT2Config
  layer_norm_epsilon = 1e-5, resid_pdrop = 0.1, embd_pdrop = 0.1, attn_pdrop = 0.1,
  scale_attn_weights = true,
}
local SIZES = {
  small = {},
  medium = { n_embd = 1024, n_layer = 24, n_head = 16 },
  large = { n_embd = 1280, n_layer = 36, n_head = 20 },
  xl = { n_embd = 1600, n_layer = 48, n_head = 25 },
}
M.SIZES = SIZES
local ORDER = { "small", "medium", "large", "xl" }
-- Hugging Face hub ids name the same four.
local ALIASES = { gpt2 = "small", ["gpt2-small"] = "small", ["gpt2-medium"] = "medium",
                  ["gpt2-large"] = "large", ["gpt2-xl"] = "xl" }

-- The most negative float32: transformers' mask_value (torch.finfo(dtype).min).
local FLOAT32_MIN = -3.4028234663852886e+38

-- transformers.pytorch_utils.Conv1D(nf, nx): a linear layer with a transposed weight [nx, nf],
-- computed with addmm on the flattened rows (so DeepSpeed counts it as addmm, bias included).
local Conv1D = nn.Module:extend("Conv1D")
M.Conv1D = Conv1D
function Conv1D:init(nf, nx)
  self.nf, self.nx = nf, nx
  self:register_parameter("weight", T.empty({ nx, nf }))
  self:register_parameter("bias", T.empty({ nf }))
end

function Conv1D:forward(x)
  local shape = x.shape
  shape[#shape] = self.nf
  local y = T.addmm(self.bias, x:view(-1, x:size(-1)), self.weight)
  return y:view(shape)
end

function Conv1D:extra_repr()
  return string.format("nf=%d, nx=%d", self.nf, self.nx)
end

-- ACT2FN["gelu_new"]: the tanh approximation, written with tensor ops as transformers does.
local NewGELUActivation = nn.Module:extend("NewGELUActivation")
M.NewGELUActivation = NewGELUActivation
local SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
function NewGELUActivation.forward(_, x)
  return 0.5 * x * (1.0 + T.tanh(SQRT_2_OVER_PI * (x + 0.044715 * T.pow(x, 3.0))))
end

local GPT2Attention = nn.Module:extend("GPT2Attention")
function GPT2Attention:init(c, causal)
  self.embed_dim, self.num_heads = c.n_embd, c.n_head
  self.head_dim = c.n_embd // c.n_head
  if self.head_dim * c.n_head ~= c.n_embd then
    error(string.format("GPT2Attention: n_embd %d is not a multiple of n_head %d", c.n_embd, c.n_head), 4)
  end
  self.split_size = c.n_embd
  self.scale_attn_weights = c.scale_attn_weights
  -- transformers keeps a lower-triangular bool buffer "bias" per layer; one tensor serves all layers
  self:register_buffer("bias", causal)
  self.c_attn = Conv1D(3 * c.n_embd, c.n_embd)
  self.c_proj = Conv1D(c.n_embd, c.n_embd)
  self.attn_dropout = nn.Dropout(c.attn_pdrop)
  self.resid_dropout = nn.Dropout(c.resid_pdrop)
end

-- transformers views the split() slices; prof's view refuses non-contiguous input that PyTorch
-- would view (a split of the last dim), so reshape stands in: same shape, no flops.
function GPT2Attention:split_heads(x)
  local b, t = x:size(0), x:size(1)
  return x:reshape(b, t, self.num_heads, self.head_dim):permute(0, 2, 1, 3)
end

-- The eager path: QKᵀ / √d, where(causal, scores, min), softmax, dropout, ·V. Masked scores are
-- still computed, so causality does not reduce the matmul MACs.
function GPT2Attention:attn(q, k, v)
  local w = T.matmul(q, k:transpose(-1, -2))
  if self.scale_attn_weights then w = w / math.sqrt(v:size(-1)) end
  local tq, tk = q:size(-2), k:size(-2)
  local causal = self.bias:narrow(2, tk - tq, tq):narrow(3, 0, tk)
  w = T.where(causal, w, FLOAT32_MIN)
  w = self.attn_dropout(F.softmax(w, -1))
  return T.matmul(w, v)
end

function GPT2Attention:forward(hidden_states)
  local q, k, v = self.c_attn(hidden_states):split(self.split_size, 2)
  local out = self:attn(self:split_heads(q), self:split_heads(k), self:split_heads(v))
  local b, t = out:size(0), out:size(2)
  out = out:permute(0, 2, 1, 3):contiguous():view(b, t, self.embed_dim)
  return self.resid_dropout(self.c_proj(out))
end

local GPT2MLP = nn.Module:extend("GPT2MLP")
function GPT2MLP:init(c, inner)
  self.c_fc = Conv1D(inner, c.n_embd)
  self.c_proj = Conv1D(c.n_embd, inner)
  self.act = NewGELUActivation()
  self.dropout = nn.Dropout(c.resid_pdrop)
end

function GPT2MLP:forward(x)
  return self.dropout(self.c_proj(self.act(self.c_fc(x))))
end

local GPT2Block = nn.Module:extend("GPT2Block")
function GPT2Block:init(c, causal)
  local inner = c.n_inner or 4 * c.n_embd
  self.ln_1 = nn.LayerNorm(c.n_embd, { eps = c.layer_norm_epsilon })
  self.attn = GPT2Attention(c, causal)
  self.ln_2 = nn.LayerNorm(c.n_embd, { eps = c.layer_norm_epsilon })
  self.mlp = GPT2MLP(c, inner)
end

function GPT2Block:forward(x)
  x = self.attn(self.ln_1(x)) + x
  return x + self.mlp(self.ln_2(x))
end

local GPT2Model = nn.Module:extend("GPT2Model")
M.GPT2Model = GPT2Model
function GPT2Model:init(c)
  self.embed_dim = c.n_embd
  self.wte = nn.Embedding(c.vocab_size, c.n_embd)
  self.wpe = nn.Embedding(c.n_positions, c.n_embd)
  self.drop = nn.Dropout(c.embd_pdrop)
  local n = c.n_positions
  local causal = T.tril(T.ones({ n, n }, { dtype = "bool" })):view(1, 1, n, n)
  local blocks = {}
  for i = 1, c.n_layer do blocks[i] = GPT2Block(c, causal) end
  self.h = nn.ModuleList(blocks)
  self.ln_f = nn.LayerNorm(c.n_embd, { eps = c.layer_norm_epsilon })
end

-- input_ids [B, T] -> hidden states [B, T, n_embd]
function GPT2Model:forward(input_ids)
  local t = input_ids:size(-1)
  input_ids = input_ids:view(-1, t)
  local position_ids = T.arange(0, t, { dtype = "int64", device = input_ids.device }):unsqueeze(0)
  local x = self.wte(input_ids) + self.wpe(position_ids)
  x = self.drop(x)
  for _, block in ipairs(self.h) do x = block(x) end
  return self.ln_f(x)
end

local GPT2LMHeadModel = nn.Module:extend("GPT2LMHeadModel")
M.GPT2LMHeadModel = GPT2LMHeadModel
function GPT2LMHeadModel:init(c)
  self.vocab_size = c.vocab_size
  self.transformer = GPT2Model(c)
  self.lm_head = nn.Linear(c.n_embd, c.vocab_size, { bias = false })
  -- tie_word_embeddings: one tensor, so it is counted once (at transformer.wte.weight)
  self.lm_head.weight = self.transformer.wte.weight
end

-- model(input_ids[, labels]) -> logits [B, T, vocab], loss (labels given: next-token cross entropy).
-- Logits come first so that `local logits = model(x)` works; transformers' tuple puts the loss first.
function GPT2LMHeadModel:forward(input_ids, labels)
  local logits = self.lm_head(self.transformer(input_ids))
  if labels == nil then return logits end
  return logits, lm.loss(logits, labels, self.vocab_size)
end

-- A preset with opts.config and any preset key given directly in opts laid over it.
function M.configure(preset, opts)
  return lm.config(BASE, preset, opts, "n_inner")
end

local function size_of(opts)
  local key = opts.name or opts.size or "small"
  key = ALIASES[key] or key
  if SIZES[key] == nil then
    error(string.format("gpt2: unknown size '%s' (known: %s)", tostring(key),
      table.concat(ORDER, ", ")), 3)
  end
  return key
end

-- The config a build would use: gpt2.config{size = "medium", n_layer = 2}.
function M.config(opts)
  opts = opts or {}
  return M.configure(SIZES[size_of(opts)], opts)
end

-- gpt2.build{size = "small" | "medium" | "large" | "xl"} (or name = "gpt2-medium"), plus overrides.
function M.build(opts)
  return GPT2LMHeadModel(M.config(opts))
end

-- {input_ids}: int64 [batch, seq], batch 1, seq the context (n_positions) unless given.
function M.input(opts)
  opts = opts or {}
  return lm.input(opts, M.config(opts).n_positions)
end

-- Hugging Face hub ids: gpt2, gpt2-medium, gpt2-large, gpt2-xl.
function M.names()
  return { "gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl" }
end

return M
