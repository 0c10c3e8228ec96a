-- bert.lua — Hugging Face's BERT (eager attention): class names, attribute paths and ops as transformers has them.
local nn = require "prof.nn"
local F = nn.functional
local T = require "prof.tensor"

local M = {}

-- bert-base-uncased; override any field through build{config = {...}}.
M.BASE = {
  vocab_size = 30522, hidden_size = 768, num_hidden_layers = 12, num_attention_heads = 12,
  intermediate_size = 3072, max_position_embeddings = 512, type_vocab_size = 2,
  layer_norm_eps = 1e-12, hidden_dropout_prob = 0.1, attention_probs_dropout_prob = 0.1,
  pad_token_id = 0, num_labels = 2,
}

M.LARGE = setmetatable({ hidden_size = 1024, num_hidden_layers = 24, num_attention_heads = 16,
  intermediate_size = 4096 }, { __index = M.BASE })

-- The most negative float32, which transformers adds where the attention mask is 0.
local FLOAT32_MIN = -3.4028234663852886e+38

local GELUActivation = nn.Module:extend("GELUActivation")
function GELUActivation:forward(x) return F.gelu(x) end

local BertEmbeddings = nn.Module:extend("BertEmbeddings")
function BertEmbeddings:init(c)
  self.word_embeddings = nn.Embedding(c.vocab_size, c.hidden_size, { padding_idx = c.pad_token_id })
  self.position_embeddings = nn.Embedding(c.max_position_embeddings, c.hidden_size)
  self.token_type_embeddings = nn.Embedding(c.type_vocab_size, c.hidden_size)
  self.LayerNorm = nn.LayerNorm(c.hidden_size, { eps = c.layer_norm_eps })
  self.dropout = nn.Dropout(c.hidden_dropout_prob)
  self:register_buffer("position_ids", T.arange(c.max_position_embeddings):view(1, -1))
end

function BertEmbeddings:forward(input_ids, token_type_ids)
  local seq_length = input_ids:size(1)
  local position_ids = self.position_ids:narrow(1, 0, seq_length)
  if token_type_ids == nil then
    token_type_ids = T.zeros(input_ids.shape, { dtype = "int64", device = input_ids.device })
  end
  local embeddings = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
  embeddings = embeddings + self.position_embeddings(position_ids)
  embeddings = self.LayerNorm(embeddings)
  return self.dropout(embeddings)
end

-- Also the base of bert_preln.lua's BertSelfAttention, which adds a softmax module.
local BertSelfAttention = nn.Module:extend("BertSelfAttention")
M.BertSelfAttention = BertSelfAttention
function BertSelfAttention:init(c)
  self.num_attention_heads = c.num_attention_heads
  self.attention_head_size = c.hidden_size // c.num_attention_heads
  self.query = nn.Linear(c.hidden_size, c.hidden_size)
  self.key = nn.Linear(c.hidden_size, c.hidden_size)
  self.value = nn.Linear(c.hidden_size, c.hidden_size)
  self.dropout = nn.Dropout(c.attention_probs_dropout_prob)
end

function BertSelfAttention:transpose_for_scores(x)
  local b, s = x:size(0), x:size(1)
  return x:view(b, s, self.num_attention_heads, self.attention_head_size):permute(0, 2, 1, 3)
end

function BertSelfAttention:forward(hidden_states, attention_mask)
  local query_layer = self:transpose_for_scores(self.query(hidden_states))
  local key_layer = self:transpose_for_scores(self.key(hidden_states))
  local value_layer = self:transpose_for_scores(self.value(hidden_states))
  local scores = T.matmul(query_layer, key_layer:transpose(-1, -2))
  scores = scores / math.sqrt(self.attention_head_size)
  if attention_mask ~= nil then scores = scores + attention_mask end
  local probs = self.dropout(F.softmax(scores, -1))
  local context = T.matmul(probs, value_layer):permute(0, 2, 1, 3):contiguous()
  local b, s = context:size(0), context:size(1)
  return context:view(b, s, self.num_attention_heads * self.attention_head_size)
end

-- dense -> dropout -> LayerNorm(x + residual): BertSelfOutput and BertOutput share the shape.
local function residual_block(name)
  local cls = nn.Module:extend(name)
  function cls:init(c, d_in)
    self.dense = nn.Linear(d_in, c.hidden_size)
    self.LayerNorm = nn.LayerNorm(c.hidden_size, { eps = c.layer_norm_eps })
    self.dropout = nn.Dropout(c.hidden_dropout_prob)
  end
  function cls:forward(hidden_states, input_tensor)
    return self.LayerNorm(self.dropout(self.dense(hidden_states)) + input_tensor)
  end
  return cls
end

local BertSelfOutput = residual_block("BertSelfOutput")
local BertOutput = residual_block("BertOutput")

local BertAttention = nn.Module:extend("BertAttention")
function BertAttention:init(c)
  self.self = BertSelfAttention(c)
  self.output = BertSelfOutput(c, c.hidden_size)
end

function BertAttention:forward(hidden_states, attention_mask)
  return self.output(self.self(hidden_states, attention_mask), hidden_states)
end

local BertIntermediate = nn.Module:extend("BertIntermediate")
function BertIntermediate:init(c)
  self.dense = nn.Linear(c.hidden_size, c.intermediate_size)
  self.intermediate_act_fn = GELUActivation()
end

function BertIntermediate:forward(x)
  return self.intermediate_act_fn(self.dense(x))
end

local BertLayer = nn.Module:extend("BertLayer")
function BertLayer:init(c)
  self.attention = BertAttention(c)
  self.intermediate = BertIntermediate(c)
  self.output = BertOutput(c, c.intermediate_size)
end

function BertLayer:forward(hidden_states, attention_mask)
  local attention_output = self.attention(hidden_states, attention_mask)
  return self.output(self.intermediate(attention_output), attention_output)
end

local BertEncoder = nn.Module:extend("BertEncoder")
function BertEncoder:init(c)
  local layers = {}
  for i = 1, c.num_hidden_layers do layers[i] = BertLayer(c) end
  self.layer = nn.ModuleList(layers)
end

function BertEncoder:forward(hidden_states, attention_mask)
  for _, layer in ipairs(self.layer) do hidden_states = layer(hidden_states, attention_mask) end
  return hidden_states
end

local BertPooler = nn.Module:extend("BertPooler")
function BertPooler:init(c)
  self.dense = nn.Linear(c.hidden_size, c.hidden_size)
  self.activation = nn.Tanh()
end

function BertPooler:forward(hidden_states)
  return self.activation(self.dense(hidden_states:select(1, 0)))
end

local BertModel = nn.Module:extend("BertModel")
M.BertModel = BertModel
function BertModel:init(c, add_pooling_layer)
  self.embeddings = BertEmbeddings(c)
  self.encoder = BertEncoder(c)
  if add_pooling_layer ~= false then self.pooler = BertPooler(c) end
end

-- inputs: {input_ids=, attention_mask=, token_type_ids=}; returns sequence output, pooled output.
function BertModel:forward(inputs)
  local extended
  if inputs.attention_mask ~= nil then
    -- [B, S] -> [B, 1, 1, S]; 0 where attended, the float32 minimum where masked
    extended = inputs.attention_mask:unsqueeze(1):unsqueeze(2):to("float32")
    extended = (1.0 - extended) * FLOAT32_MIN
  end
  local x = self.embeddings(inputs.input_ids, inputs.token_type_ids)
  x = self.encoder(x, extended)
  return x, self.pooler and self.pooler(x) or nil
end

local BertForSequenceClassification = nn.Module:extend("BertForSequenceClassification")
M.BertForSequenceClassification = BertForSequenceClassification
function BertForSequenceClassification:init(c)
  self.num_labels = c.num_labels
  self.bert = BertModel(c)
  self.dropout = nn.Dropout(c.hidden_dropout_prob)
  self.classifier = nn.Linear(c.hidden_size, c.num_labels)
end

-- Returns the loss (when inputs.labels is given) and the logits, as transformers does.
function BertForSequenceClassification:forward(inputs)
  local _, pooled = self.bert(inputs)
  local logits = self.classifier(self.dropout(pooled))
  local loss
  if inputs.labels ~= nil then
    loss = F.cross_entropy(logits:view(-1, self.num_labels), inputs.labels:view(-1))
  end
  return loss, logits
end

-- BertPredictionHeadTransform: dense -> activation -> LayerNorm.
local BertPredictionHeadTransform = nn.Module:extend("BertPredictionHeadTransform")
function BertPredictionHeadTransform:init(c)
  self.dense = nn.Linear(c.hidden_size, c.hidden_size)
  self.transform_act_fn = GELUActivation()
  self.LayerNorm = nn.LayerNorm(c.hidden_size, { eps = c.layer_norm_eps })
end

function BertPredictionHeadTransform:forward(x)
  return self.LayerNorm(self.transform_act_fn(self.dense(x)))
end

-- The decoder's weight is the word embeddings' (tie_weights) and its bias is this module's own
-- `bias` parameter (transformers sets decoder.bias = self.bias): each tensor is counted once.
local BertLMPredictionHead = nn.Module:extend("BertLMPredictionHead")
function BertLMPredictionHead:init(c, embedding_weight)
  self.transform = BertPredictionHeadTransform(c)
  self.decoder = nn.Linear(c.hidden_size, c.vocab_size, { bias = false })
  self:register_parameter("bias", T.empty({ c.vocab_size }))
  self.decoder.weight = embedding_weight
  self.decoder.bias = self.bias
end

function BertLMPredictionHead:forward(x)
  return self.decoder(self.transform(x))
end

-- predictions is the masked-LM head (this file's or bert_preln.lua's, which shares this class).
local BertPreTrainingHeads = nn.Module:extend("BertPreTrainingHeads")
M.BertPreTrainingHeads = BertPreTrainingHeads
function BertPreTrainingHeads:init(c, predictions)
  self.predictions = predictions
  self.seq_relationship = nn.Linear(c.hidden_size, 2)
end

function BertPreTrainingHeads:forward(sequence_output, pooled_output)
  return self.predictions(sequence_output), self.seq_relationship(pooled_output)
end

local BertForPreTraining = nn.Module:extend("BertForPreTraining")
M.BertForPreTraining = BertForPreTraining
function BertForPreTraining:init(c)
  self.vocab_size = c.vocab_size
  self.bert = BertModel(c)
  self.cls = BertPreTrainingHeads(c,
    BertLMPredictionHead(c, self.bert.embeddings.word_embeddings.weight))
end

-- Returns prediction scores [B, S, vocab], seq relationship scores [B, 2] and, when inputs.labels
-- ([B, S]) and inputs.next_sentence_label ([B]) are given, the summed loss (transformers' first).
function BertForPreTraining:forward(inputs)
  local sequence_output, pooled_output = self.bert(inputs)
  local scores, seq_relationship = self.cls(sequence_output, pooled_output)
  local loss
  if inputs.labels ~= nil and inputs.next_sentence_label ~= nil then
    loss = F.cross_entropy(scores:view(-1, self.vocab_size), inputs.labels:view(-1))
      + F.cross_entropy(seq_relationship:view(-1, 2), inputs.next_sentence_label:view(-1))
  end
  return scores, seq_relationship, loss
end

-- Variants: name -> size, head. "preln" is NVIDIA's pre-LN BERT-Large of DeepSpeed's tutorial.
local VARIANTS = {
  { "bert-base", "base", "classification" }, { "bert-large", "large", "classification" },
  { "bert-base-pretraining", "base", "pretraining" },
  { "bert-large-pretraining", "large", "pretraining" },
  { "bert-large-preln", "large", "preln" },
}

function M.names()
  local out = {}
  for i, v in ipairs(VARIANTS) do out[i] = v[1] end
  return out
end

-- size and head from opts.name, else from opts.size and opts.head.
local function variant(opts)
  if opts.name ~= nil then
    for _, v in ipairs(VARIANTS) do
      if v[1] == opts.name then return v[2], v[3] end
    end
    error(string.format("bert: unknown name '%s' (known: %s)", tostring(opts.name),
                        table.concat(M.names(), ", ")), 3)
  end
  return opts.size == "large" and "large" or "base", opts.head or "classification"
end

local function with_defaults(config, base)
  return setmetatable(config or {}, { __index = base or M.BASE })
end

-- bert.build{name = "bert-large-pretraining"} or {size = "base" | "large", head =
-- "classification" (default) | "pretraining" | "preln" | "none"}, config = {overrides}.
function M.build(opts)
  opts = opts or {}
  local size, head = variant(opts)
  if head == "preln" then return require("prof.models.bert_preln").build(opts.config) end
  local c = with_defaults(opts.config, size == "large" and M.LARGE or M.BASE)
  if head == "none" then return BertModel(c) end
  if head == "pretraining" then return BertForPreTraining(c) end
  return BertForSequenceClassification(c)
end

-- The tutorial's bert_input_constructor, as one keyword table: token ids, token types and an
-- attention mask [batch, seq] (batch 1, seq 128 by default); classification adds labels [batch].
function M.input(opts)
  opts = opts or {}
  local b, s = opts.batch or 1, opts.seq or 128
  local _, head = variant(opts)
  local kwargs = {
    input_ids = T.zeros({ b, s }, { dtype = "int64" }),
    token_type_ids = T.zeros({ b, s }, { dtype = "int64" }),
    attention_mask = T.zeros({ b, s }, { dtype = "int64" }),
  }
  if head == "classification" then kwargs.labels = T.zeros({ b }, { dtype = "int64" }) end
  return { kwargs }
end

return M
