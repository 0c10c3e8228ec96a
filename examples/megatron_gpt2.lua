-- megatron_gpt2.lua — the tutorial's Megatron-LM run: GPT-2, 12 layers, hidden 8192, 32 heads, batch 1024, seq 1024.
--
--   build/bin/profrun configs/megatron.json examples/megatron_gpt2.lua
--
-- configs/megatron.json sets model_parallel_size 2 (this process is rank 0 of 2), DeepSpeed's
-- conventions and the flop rules of scripts/rules/megatron.lua for the fused kernels.
local prof = require "prof"
local megatron = require "prof.models.megatron_gpt2"
local parallel = require "prof.nn.parallel"
local units = require "prof.report.units"

-- a 5-billion-parameter partition: shapes only, unless the config names a device
if prof.config.value("device") == nil then prof.set_default_device("meta") end

local batch_size, seq_len = 1024, 1024
local model = megatron.build { config = {
  num_layers = 12, hidden_size = 8192, num_attention_heads = 32,
  max_position_embeddings = seq_len, vocab_size = 50257,   -- padded to 50432 for mp_size 2
} }
local flops, macs, params = prof.get_model_profile {
  model = model,
  args = megatron.input { batch = batch_size, seq = seq_len },  -- input_ids, position_ids, attention_mask
  print_profile = true,
}

-- DeepSpeed's "params of model" multiplies the replicated LayerNorms, row biases and position
-- embeddings by mp_size too; this counts every parameter of the whole model once.
local total = parallel.params_of_model(model)
print(string.format("Megatron GPT-2 (mp_size %d, rank %d): %s flops, %s, %s params per GPU; %s params in the model",
  parallel.mp_size(), parallel.mp_rank(), flops, macs, params, units.params_to_string(total)))
