-- megatron_gpt2.lua — Megatron-LM's GPT2Model (gpt2_model.py, language_model.py) on one tensor-parallel rank.
--
-- Class names and attribute paths are Megatron-LM's: GPT2Model.language_model
-- (TransformerLanguageModel) .embedding (Embedding: word_embeddings, position_embeddings,
-- embedding_dropout) and .transformer (ParallelTransformer). Logits come from the tied
-- word-embedding partition (parallel_lm_logits).
local nn = require "prof.nn"
local T = require "prof.tensor"
local parallel = require "prof.nn.parallel"
local transformer = require "prof.nn.parallel.transformer"

local F = nn.functional

local M = {}

-- GPT-2 (345M) as Megatron-LM's examples/pretrain_gpt2.sh trains it; the tokenizer's 50257 ids are
-- padded to a multiple of make_vocab_size_divisible_by × mp_size, as Megatron pads them.
M.BASE = {
  num_layers = 24, hidden_size = 1024, num_attention_heads = 16, max_position_embeddings = 1024,
  vocab_size = 50257, make_vocab_size_divisible_by = 128, padded_vocab_size = nil,
  num_tokentypes = 0, parallel_output = true,
}

-- megatron/tokenizer/tokenizer.py _vocab_size_with_padding.
function M.padded_vocab_size(vocab_size, divisible_by, mp_size)
  local multiple = divisible_by * mp_size
  return (vocab_size + multiple - 1) // multiple * multiple
end

-- parallel_lm_logits: F.linear with this rank's slice of the word embeddings -> [b, s, vocab/mp].
-- copy_to_tensor_model_parallel_region is the identity forward; gathering the vocabulary (when
-- parallel_output is false) moves data only, so this rank's logits stand in for the other slices.
function M.parallel_lm_logits(input, word_embeddings_weight, parallel_output, bias, mp_size)
  local logits = F.linear(input, word_embeddings_weight, bias)
  if parallel_output or (mp_size or 1) == 1 then return logits end
  local parts = {}
  for i = 1, mp_size do parts[i] = logits end
  return T.cat(parts, -1)
end

-- Embedding(hidden_size, vocab_size, max_sequence_length, embedding_dropout_prob, init_method,
-- num_tokentypes): word (vocab-parallel) + position (+ token type) embeddings, then dropout.
local Embedding = nn.Module:extend("Embedding")
M.Embedding = Embedding

function Embedding:init(c, vocab)
  self.hidden_size, self.num_tokentypes = c.hidden_size, c.num_tokentypes
  self.word_embeddings = parallel.VocabParallelEmbedding(vocab, c.hidden_size,
    { mp_size = c.mp_size, mp_rank = c.mp_rank })
  self.position_embeddings = nn.Embedding(c.max_position_embeddings, c.hidden_size)
  if c.num_tokentypes > 0 then
    self.tokentype_embeddings = nn.Embedding(c.num_tokentypes, c.hidden_size)
  end
  self.embedding_dropout = nn.Dropout(c.hidden_dropout)
end

function Embedding:forward(input_ids, position_ids, tokentype_ids)
  local embeddings = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
  if tokentype_ids ~= nil then
    if self.tokentype_embeddings == nil then
      error("Embedding: tokentype_ids given without tokentype embeddings", 2)
    end
    embeddings = embeddings + self.tokentype_embeddings(tokentype_ids)
  end
  return self.embedding_dropout(embeddings)
end

-- TransformerLanguageModel: embedding, then the transformer (no pooler for GPT-2).
local TransformerLanguageModel = nn.Module:extend("TransformerLanguageModel")
M.TransformerLanguageModel = TransformerLanguageModel

function TransformerLanguageModel:init(c, vocab)
  self.hidden_size = c.hidden_size
  self.embedding = Embedding(c, vocab)
  self.transformer = parallel.ParallelTransformer(c)
end

function TransformerLanguageModel:forward(input_ids, position_ids, attention_mask, tokentype_ids)
  local embedding_output = self.embedding(input_ids, position_ids, tokentype_ids)
  return self.transformer(embedding_output, attention_mask)
end

-- GPT2Model(c): forward(input_ids, position_ids, attention_mask) -> logits [b, s, vocab/mp] (the
-- whole vocabulary when parallel_output is false). Labels (vocab_parallel_cross_entropy, a custom
-- autograd function) are not modelled.
local GPT2Model = nn.Module:extend("GPT2Model")
M.GPT2Model = GPT2Model

function GPT2Model:init(c)
  local given = c or {}
  c = {}
  for k, v in pairs(M.BASE) do c[k] = v end
  for k, v in pairs(given) do c[k] = v end
  c = transformer.with_defaults(c)
  self.mp_size = parallel.mp_size()
  if c.mp_size ~= nil then self.mp_size = c.mp_size end
  local vocab = c.padded_vocab_size
    or M.padded_vocab_size(c.vocab_size, c.make_vocab_size_divisible_by, self.mp_size)
  self.padded_vocab_size = vocab
  self.parallel_output = c.parallel_output
  self.language_model = TransformerLanguageModel(c, vocab)
end

function GPT2Model:forward(input_ids, position_ids, attention_mask, labels)
  if labels ~= nil then error("GPT2Model: labels (vocab_parallel_cross_entropy) are not supported", 2) end
  local lm_output = self.language_model(input_ids, position_ids, attention_mask)
  return M.parallel_lm_logits(lm_output, self.language_model.embedding.word_embeddings.weight,
    self.parallel_output, nil, self.mp_size)
end

-- build{config = {...}}: fields of M.BASE and transformer.DEFAULTS; mp_size / mp_rank override
-- the config's group (the vocabulary is padded for the group's size).
function M.build(opts)
  opts = opts or {}
  local c = {}
  for k, v in pairs(opts.config or {}) do c[k] = v end
  return GPT2Model(c)
end

-- Megatron's get_batch: token ids [b, s], position ids 0..s-1 per row, and the left-to-right mask
-- [1, 1, s, s] (true above the diagonal: masked).
function M.input(opts)
  opts = opts or {}
  local b, s = opts.batch or 8, opts.seq or 1024
  local ids = T.zeros({ b, s }, { dtype = "int64" })
  local pos = T.arange(s):unsqueeze(0):expand(b, s)
  local mask = T.triu(T.ones({ s, s }), 1):to("bool"):view(1, 1, s, s)
  return { ids, pos, mask }
end

return M
