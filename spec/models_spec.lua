-- models_spec.lua — the model zoo against published parameter counts and hand-derived MACs, FLOPs.
local prof = require "prof"
local core = require "prof.core"
local config = require "prof.config"
local T = require "prof.tensor"
local models = require "prof.models"
local bert = require "prof.models.bert"

local function use_conventions(name)
  config.set(assert(core.load_config(nil, { "flops_profiler.conventions=" .. name })))
end

local function profile(model, o)
  o.model, o.print_profile, o.as_string = model, false, false
  return prof.get_model_profile(o)
end

local function shape(t) return table.concat(t.shape, ",") end

describe("models", function()
  teardown(function() config.set(assert(core.load_config(nil, {}))) end)

  describe("LeNet5 (DeepSpeed's flops-profiler unit test)", function()
    -- params: conv 1*6*25+6 = 156, 6*16*25+16 = 2,416, 16*120*25+120 = 48,120;
    -- linear 120*84+84 = 10,164, 84*10+10 = 850; total 61,706 (the test's exact value).
    it("has 61,706 parameters", function()
      assert.equal(61706, models.lenet5():num_parameters())
    end)

    -- N = 1024, deepspeed conventions (DeepSpeed's formulas, worked by hand):
    --   conv MACs K*Cin*Cout*N*out_sp: 25*1*6*1024*784 = 120,422,400; 25*6*16*1024*100 =
    --     245,760,000; 25*16*120*1024*1 = 49,152,000
    --   linear MACs numel(in)*out: 1024*120*84 = 10,321,920; 1024*84*10 = 860,160
    --   MACs = 426,516,480
    --   flops = 2*MACs + conv bias (4,816,896 + 1,638,400 + 122,880) + avg pool numel(in)
    --     (4,816,896 + 1,638,400) + softmax 1024*10 = 853,032,960 + 13,043,712 = 866,076,672
    it("counts DeepSpeed's 866,076,672 flops and 426,516,480 MACs at 1024x1x32x32", function()
      use_conventions("deepspeed")
      local flops, macs, params = profile(models.lenet5(), { input_shape = { 1024, 1, 32, 32 } })
      assert.equal(866076672, flops)
      assert.equal(426516480, macs)
      assert.equal(61706, params)
    end)

    it("returns logits [N, 10] and probabilities [N, 10]", function()
      local logits, probs = models.lenet5()(T.empty({ 3, 1, 32, 32 }))
      assert.equal("3,10", shape(logits))
      assert.equal("3,10", shape(probs))
    end)
  end)

  describe("AlexNet (torchvision)", function()
    -- torchvision.models.alexnet(): 61,100,840 parameters (torchvision's model table; also
    -- `sum(p.numel() for p in alexnet().parameters())` with torch 1.13 / torchvision 0.14 here)
    it("has 61,100,840 parameters", function()
      assert.equal(61100840, models.alexnet():num_parameters())
    end)

    -- Batch 1 at 3x224x224, out = floor((in + 2p - k) / s) + 1:
    --   conv1 3->64 k11 s4 p2: 55x55: 3025*64*3*121   =  70,276,800   maxpool 3/2 -> 27
    --   conv2 64->192 k5 p2:   27x27:  729*192*64*25  = 223,948,800   maxpool     -> 13
    --   conv3 192->384 k3 p1:  13x13:  169*384*192*9  = 112,140,288
    --   conv4 384->256:                169*256*384*9  = 149,520,384
    --   conv5 256->256:                169*256*256*9  =  99,680,256   maxpool     -> 6
    --   fc 9216*4096 = 37,748,736; 4096*4096 = 16,777,216; 4096*1000 = 4,096,000
    --   MACs = 655,566,528 + 58,621,952 = 714,188,480 (torch 1.13 forward hooks on torchvision's
    --   alexnet agree: conv out.numel()*Cin*k*k + linear in.numel()*out = 714,188,480)
    -- deepspeed flops = 2*MACs + conv bias Cout*out_sp (193,600 + 139,968 + 64,896 + 43,264 +
    --   43,264 = 484,992) + relu numel (conv outputs 484,992 + 4096 + 4096 = 493,184) + maxpool
    --   numel(in) (193,600 + 139,968 + 43,264 = 376,832) + adaptive avg pool numel(in) 9,216
    --   = 1,428,376,960 + 1,364,224 = 1,429,741,184
    it("counts 714,188,480 MACs at batch 1", function()
      use_conventions("deepspeed")
      local flops, macs = profile(models.alexnet(), { input_shape = { 1, 3, 224, 224 } })
      assert.equal(714188480, macs)
      assert.equal(1429741184, flops)
    end)

    it("returns logits [N, 1000]", function()
      assert.equal("2,1000", shape(models.alexnet()(T.empty({ 2, 3, 224, 224 }))))
    end)
  end)

  describe("BERT-base (bert-base-uncased)", function()
    -- embeddings: 30522*768 + 512*768 + 2*768 + LayerNorm 2*768 = 23,837,184
    -- per layer: q,k,v,o 4*(768*768 + 768) = 2,362,368; FFN 768*3072 + 3072 + 3072*768 + 768 =
    --   4,722,432; two LayerNorms 3,072: 7,087,872; x12 = 85,054,464
    -- pooler 768*768 + 768 = 590,592. BertModel = 109,482,240 (bert-base-uncased's published
    -- count); BertForSequenceClassification adds the classifier 768*2 + 2 = 1,538.
    it("BertModel with pooler has 109,482,240 parameters", function()
      assert.equal(109482240, bert.build({ head = "none" }):num_parameters())
    end)

    it("BertForSequenceClassification adds 768*2 + 2", function()
      assert.equal(109482240 + 768 * 2 + 2, bert.build():num_parameters())
    end)

    -- Batch 4, seq 128 (the tutorial's example): B*L = 512 tokens, h = 768, 12 heads of d = 64.
    --   per layer linears: 4 * 512*768*768 + 2 * 512*768*3072 = 1,207,959,552 + 2,415,919,104
    --   attention matmuls (QK^T and PV): 2 * B*H*L*L*d = 2 * 4*12*128*128*64 = 100,663,296
    --   12 layers: 12 * 3,724,541,952 = 44,694,503,424
    --   pooler on the first token 4*768*768 = 2,359,296; classifier 4*768*2 = 6,144
    --   MACs = 44,696,868,864
    -- deepspeed flops = 2*MACs + LayerNorm 5*numel (25 of them on 512*768: 49,152,000)
    --   + softmax numel (12 * 4*12*128*128 = 9,437,184) + gelu numel (12 * 512*3072 = 18,874,368);
    --   embedding, dropout, tanh, operators and cross_entropy count 0
    --   = 89,393,737,728 + 77,463,552 = 89,471,201,280
    local MACS = 44696868864
    local DS_FLOPS = 89471201280

    it("counts the derived MACs and flops under deepspeed conventions", function()
      use_conventions("deepspeed")
      local inputs = bert.input({ batch = 4, seq = 128 })[1]
      local flops, macs, params = profile(bert.build(), { kwargs = inputs })
      assert.equal(MACS, macs)
      assert.equal(DS_FLOPS, flops)
      assert.equal(109483778, params)
    end)

    it("counts more under exact conventions: operators, biases, tanh, the loss", function()
      use_conventions("exact")
      local inputs = bert.input({ batch = 4, seq = 128 })[1]
      local flops, macs = profile(bert.build(), { kwargs = inputs })
      assert.equal(MACS, macs)               -- the same multiply-accumulates
      -- every exact term is >= its deepspeed one, plus the linear biases (0 under deepspeed):
      -- 12 * 512 * (4*768 + 3072 + 768) + pooler 4*768 + classifier 4*2 = 42,470,408
      assert.is_true(flops >= DS_FLOPS + 42470408)
    end)

    it("returns the sequence output [B, L, 768], the pooled [B, 768] and logits [B, 2]", function()
      local inputs = bert.input({ batch = 2, seq = 16 })[1]
      local seq, pooled = bert.build({ head = "none" })(inputs)
      assert.equal("2,16,768", shape(seq))
      assert.equal("2,768", shape(pooled))
      local loss, logits = bert.build()(inputs)
      assert.equal("2,2", shape(logits))
      assert.equal(0, #loss.shape)           -- a 0-d tensor, as torch's mean-reduced loss
    end)
  end)
end)
