-- bert.lua — the tutorial's BERT example: BertForSequenceClassification (bert-base-uncased), batch 4, seq 128.
local prof = require "prof"
local bert = require "prof.models.bert"

local batch_size, seq_len = 4, 128
local model = bert.build()                            -- BertForSequenceClassification, 2 labels
local inputs = bert.input { batch = batch_size, seq = seq_len }
local flops, macs, params = prof.get_model_profile {
  model = model,
  kwargs = inputs[1],                                 -- input_ids, token_type_ids, attention_mask, labels
  print_profile = true,
  detailed = true,
}
print(string.format("BERT-base: %s flops, %s, %s params", flops, macs, params))
