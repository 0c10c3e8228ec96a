-- ds_configs_spec.lua — configs shaped like DeepSpeed's own examples train a small model through profrun.
local run = require "spec.support.run"

local CONFIGS = run.ROOT .. "/spec/fixtures/configs/"
local SCRIPT = run.FIXTURES .. "/train_small.lua"

local function train(name)
  return run.profrun({ "--device", "cpu", CONFIGS .. name, SCRIPT })
end

describe("DeepSpeed example configs", function()
  it("BERT pre-training: Adam without bias correction, fp16 dynamic scaling, accumulation derived", function()
    local r = train("ds_example_bert_pld.json")
    assert.equal(0, r.code, r.stderr)
    -- train_batch_size 64 = micro 16 x accumulation x 1 process: DeepSpeed derives 4
    assert.truthy(r.stdout:find("trained 2 optimizer steps of 4 micro-batches", 1, true), r.stdout)
    assert.truthy(r.stderr:find("progressive_layer_drop", 1, true), r.stderr)
    assert.is_nil(r.stderr:find("bias_correction", 1, true))
  end)

  it("1-bit Adam with bias_correction false runs as AdamW, saying so", function()
    local r = train("ds_example_onebit.json")
    assert.equal(0, r.code, r.stderr)
    assert.truthy(r.stdout:find("trained 2 optimizer steps of 1 micro-batches", 1, true), r.stdout)
    assert.truthy(r.stderr:find("onebitadam runs as AdamW on one process", 1, true), r.stderr)
  end)

  it("ZeRO-3 with CPU offload, bf16 and WarmupDecayLR: the stage is noted, training runs", function()
    local r = train("ds_example_zero3_offload.json")
    assert.equal(0, r.code, r.stderr)
    assert.truthy(r.stdout:find("trained 2 optimizer steps of 2 micro-batches", 1, true), r.stdout)
    assert.truthy(r.stderr:find("zero_optimization (stage 3", 1, true), r.stderr)
  end)

  it("sparse attention with Lamb (no bias correction) and fp16 loss-scale keys", function()
    local r = train("ds_example_sparse.json")
    assert.equal(0, r.code, r.stderr)
    assert.truthy(r.stderr:find("sparse_attention", 1, true), r.stderr)
  end)

  it("a train_batch_size the micro-batch and accumulation do not make is DeepSpeed's batch error", function()
    local r = run.profrun({ "--device", "cpu", "--set", "gradient_accumulation_steps=3",
      CONFIGS .. "ds_example_bert_pld.json", SCRIPT })
    assert.equal(2, r.code)
    assert.truthy(r.stderr:find("ds_example_bert_pld.json: train_batch_size (64) must be "
      .. "train_micro_batch_size_per_gpu (16) x gradient_accumulation_steps (3) x the data-parallel size (1) "
      .. "= 48", 1, true), r.stderr)
  end)
end)
