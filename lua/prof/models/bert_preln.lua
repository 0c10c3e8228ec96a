-- bert_preln.lua — NVIDIA's pre-LN BERT-Large (bing_bert's modelingpreln.py), DeepSpeed's tutorial model.
--
-- Class names, attribute names and registration order follow that file (rewritten here, not
-- copied): apex's FusedLayerNorm for BertLayerNorm, LinearActivation (a linear with the bias add and
-- the activation fused), a final LayerNorm in the encoder, and no LayerNorm inside the residual
-- blocks. The DeepSpeed transformer kernel and sparse attention options are not modelled.
local nn = require "prof.nn"
local F = nn.functional
local T = require "prof.tensor"
local bert = require "prof.models.bert"

local M = {}

-- bing_bert's bert_large config: BERT-Large with the vocabulary padded to 30528 (a multiple of 8).
M.LARGE = {
  vocab_size = 30528, hidden_size = 1024, num_hidden_layers = 24, num_attention_heads = 16,
  intermediate_size = 4096, hidden_act = "gelu", hidden_dropout_prob = 0.1,
  attention_probs_dropout_prob = 0.1, max_position_embeddings = 512, type_vocab_size = 2,
}

-- apex.normalization.FusedLayerNorm, the file's BertLayerNorm when apex is installed (eps 1e-12).
local FusedLayerNorm = nn.LayerNorm:extend("FusedLayerNorm")
function FusedLayerNorm:extra_repr()   -- apex keeps normalized_shape as a torch.Size
  return string.format("torch.Size([%s]), eps=%s, elementwise_affine=True",
                       table.concat(self.normalized_shape, ", "), tostring(self.eps))
end
local function layer_norm(c)
  return FusedLayerNorm(c.hidden_size, { eps = 1e-12 })
end

-- F.linear without its bias, then the bias add and the activation as the file's jit-scripted
-- bias_gelu (erf form, x / 1.41421) and bias_tanh: what DeepSpeed's patches see.
local LinearActivation = nn.Module:extend("LinearActivation")
function LinearActivation:init(in_features, out_features, act)
  self.in_features, self.out_features, self.act = in_features, out_features, act
  self:register_parameter("weight", T.empty({ out_features, in_features }))
  self:register_parameter("bias", T.empty({ out_features }))
end

function LinearActivation:forward(x)
  x = self.bias + F.linear(x, self.weight)
  if self.act == "tanh" then return T.tanh(x) end
  return x * 0.5 * (1.0 + T.erf(x / 1.41421))
end

function LinearActivation:extra_repr()
  return string.format("in_features=%d, out_features=%d, bias=True", self.in_features,
                       self.out_features)
end

local BertEmbeddings = nn.Module:extend("BertEmbeddings")
function BertEmbeddings:init(c)
  self.word_embeddings = nn.Embedding(c.vocab_size, c.hidden_size)
  self.position_embeddings = nn.Embedding(c.max_position_embeddings, c.hidden_size)
  self.token_type_embeddings = nn.Embedding(c.type_vocab_size, c.hidden_size)
  self.LayerNorm = layer_norm(c)
  self.dropout = nn.Dropout(c.hidden_dropout_prob)
end

function BertEmbeddings:forward(input_ids, token_type_ids)
  local position_ids = T.arange(input_ids:size(1), { device = input_ids.device }):unsqueeze(0)
  position_ids = position_ids:expand(input_ids.shape)
  local embeddings = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
  embeddings = embeddings + self.token_type_embeddings(token_type_ids)
  return self.dropout(self.LayerNorm(embeddings))
end

-- transformers' query, key, value and dropout, then the file's softmax module.
local BertSelfAttention = bert.BertSelfAttention:extend("BertSelfAttention")
function BertSelfAttention:init(c)
  bert.BertSelfAttention.init(self, c)
  self.softmax = nn.Softmax { dim = -1 }
end

-- [B, S, H·d] -> [B, H, S, d]; the key goes straight to [B, H, d, S] (one permute, no transpose).
function BertSelfAttention:heads(x, key)
  local b, s = x:size(0), x:size(1)
  x = x:view(b, s, self.num_attention_heads, self.attention_head_size)
  if key then return x:permute(0, 2, 3, 1) end
  return x:permute(0, 2, 1, 3)
end

function BertSelfAttention:forward(hidden_states, attention_mask)
  local q = self:heads(self.query(hidden_states))
  local k = self:heads(self.key(hidden_states), true)
  local v = self:heads(self.value(hidden_states))
  local scores = T.matmul(q, k) / math.sqrt(self.attention_head_size) + attention_mask
  local probs = self.dropout(self.softmax(scores))
  local context = T.matmul(probs, v):permute(0, 2, 1, 3):contiguous()
  return context:view(context:size(0), context:size(1), -1)
end

-- dense -> dropout; the residual add and the LayerNorms live in BertLayer (pre-LN).
local function dense_dropout(name)
  local cls = nn.Module:extend(name)
  function cls:init(c, d_in)
    self.dense = nn.Linear(d_in, c.hidden_size)
    self.dropout = nn.Dropout(c.hidden_dropout_prob)
  end
  function cls:forward(x)
    return self.dropout(self.dense(x))
  end
  return cls
end
local BertSelfOutput = dense_dropout("BertSelfOutput")
local BertOutput = dense_dropout("BertOutput")

local BertAttention = nn.Module:extend("BertAttention")
function BertAttention:init(c)
  self.self = BertSelfAttention(c)
  self.output = BertSelfOutput(c, c.hidden_size)
end

function BertAttention:forward(x, attention_mask)
  return self.output(self.self(x, attention_mask))
end

local BertIntermediate = nn.Module:extend("BertIntermediate")
function BertIntermediate:init(c)
  self.dense_act = LinearActivation(c.hidden_size, c.intermediate_size, c.hidden_act)
end

function BertIntermediate:forward(x)
  return self.dense_act(x)
end

local BertLayer = nn.Module:extend("BertLayer")
function BertLayer:init(c)
  self.attention = BertAttention(c)
  self.PreAttentionLayerNorm = layer_norm(c)
  self.PostAttentionLayerNorm = layer_norm(c)
  self.intermediate = BertIntermediate(c)
  self.output = BertOutput(c, c.intermediate_size)
end

function BertLayer:forward(x, attention_mask)
  local h = x + self.attention(self.PreAttentionLayerNorm(x), attention_mask)
  return self.output(self.intermediate(self.PostAttentionLayerNorm(h))) + h
end

local BertEncoder = nn.Module:extend("BertEncoder")
function BertEncoder:init(c)
  self.FinalLayerNorm = layer_norm(c)
  local layers = {}
  for i = 1, c.num_hidden_layers do layers[i] = BertLayer(c) end
  self.layer = nn.ModuleList(layers)
end

-- output_all_encoded_layers = False, as BertForPreTrainingPreLN calls it: the last layer, normed.
function BertEncoder:forward(x, attention_mask)
  for _, layer in ipairs(self.layer) do x = layer(x, attention_mask) end
  return self.FinalLayerNorm(x)
end

local BertPooler = nn.Module:extend("BertPooler")
function BertPooler:init(c)
  self.dense_act = LinearActivation(c.hidden_size, c.hidden_size, "tanh")
end

function BertPooler:forward(x)
  return self.dense_act(x:select(1, 0))
end

local BertModel = nn.Module:extend("BertModel")
function BertModel:init(c)
  self.embeddings = BertEmbeddings(c)
  self.encoder = BertEncoder(c)
  self.pooler = BertPooler(c)
end

-- Returns the sequence output and the pooled output. The mask is 0 where attended and -10000
-- where masked (the file's constant), broadcast as [B, 1, 1, S].
function BertModel:forward(input_ids, token_type_ids, attention_mask)
  local like = { dtype = "int64", device = input_ids.device }
  if attention_mask == nil then attention_mask = T.ones(input_ids.shape, like) end
  if token_type_ids == nil then token_type_ids = T.zeros(input_ids.shape, like) end
  local extended = attention_mask:unsqueeze(1):unsqueeze(2):to("float32")
  extended = (1.0 - extended) * -10000.0
  local sequence_output = self.encoder(self.embeddings(input_ids, token_type_ids), extended)
  return sequence_output, self.pooler(sequence_output)
end

local BertPredictionHeadTransform = nn.Module:extend("BertPredictionHeadTransform")
function BertPredictionHeadTransform:init(c)
  self.dense_act = LinearActivation(c.hidden_size, c.hidden_size, c.hidden_act)
  self.LayerNorm = layer_norm(c)
end

function BertPredictionHeadTransform:forward(x)
  return self.LayerNorm(self.dense_act(x))
end

-- The decoder shares the word embeddings' weight (one tensor, counted once) and adds its own bias
-- parameter with an operator after the bias-free linear.
local BertLMPredictionHead = nn.Module:extend("BertLMPredictionHead")
function BertLMPredictionHead:init(c, embedding_weight)
  self.transform = BertPredictionHeadTransform(c)
  self.decoder = nn.Linear(c.hidden_size, c.vocab_size, { bias = false })
  self.decoder.weight = embedding_weight
  self:register_parameter("bias", T.empty({ c.vocab_size }))
end

function BertLMPredictionHead:forward(x)
  return self.decoder(self.transform(x)) + self.bias
end

local BertForPreTrainingPreLN = nn.Module:extend("BertForPreTrainingPreLN")
M.BertForPreTrainingPreLN = BertForPreTrainingPreLN
function BertForPreTrainingPreLN:init(c)
  self.bert = BertModel(c)
  self.cls = bert.BertPreTrainingHeads(c,
    BertLMPredictionHead(c, self.bert.embeddings.word_embeddings.weight))
end

-- inputs: {input_ids=, token_type_ids=, attention_mask=} (the file's batch list, by name) ->
-- prediction scores [B, S, vocab], seq relationship scores [B, 2]. The masked-LM loss path
-- (torch.nonzero over the labels, then index_select) depends on the data, which meta lacks.
function BertForPreTrainingPreLN:forward(inputs)
  local sequence_output, pooled_output = self.bert(inputs.input_ids, inputs.token_type_ids,
                                                   inputs.attention_mask)
  return self.cls(sequence_output, pooled_output)
end

function M.build(config)
  local c = {}
  for k, v in pairs(M.LARGE) do c[k] = v end
  for k, v in pairs(config or {}) do c[k] = v end
  return BertForPreTrainingPreLN(c)
end

return M
