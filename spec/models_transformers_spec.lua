-- models_transformers_spec.lua — BERT, GPT-2, GPT-3, LLaMA against published params and hand-derived MACs.
--
-- transformers is not installed for /usr/bin/python3 here, so the reference parameter counts are
-- the published ones (Hugging Face model cards / num_parameters(), the papers), each re-derived
-- by hand below from the config; MACs are hand derivations from the shapes.
local prof = require "prof"
local T = require "prof.tensor"
local report = require "prof.report"
local bert = require "prof.models.bert"
local gpt2 = require "prof.models.gpt2"
local gpt3 = require "prof.models.gpt3"
local llama = require "prof.models.llama"

local function shape(t) return table.concat(t.shape, ",") end

-- One profiled forward on meta: the profile (plain tables) and its modules by dotted path.
local function profile(model, args, conventions)
  model:eval()
  local p = prof.FlopsProfiler(model)
  p.conventions = conventions or "exact"
  p:start_profile()
  model(table.unpack(args))
  p:stop_profile()
  local data = p:profile()
  p:end_profile()
  local by = {}
  for _, m in ipairs(data.modules) do by[m.path] = m end
  return data, by
end

-- MACs a module did itself (ops called in its forward, not in its child modules).
local function self_macs(data, m)
  local n = m.macs
  for _, i in ipairs(m.children) do n = n - data.modules[i].macs end
  return n
end

describe("transformer models", function()
  describe("GPT-2 (Hugging Face GPT2LMHeadModel)", function()
    -- params = V·h (wte) + 1024·h (wpe) + L·(12h² + 13h) + 2h (ln_f); lm_head is wte, counted
    -- once. Per layer: ln_1 2h, c_attn 3h² + 3h, c_proj h² + h, ln_2 2h, c_fc 4h² + 4h,
    -- mlp.c_proj 4h² + h. V = 50257.
    --   small  h 768,  L 12: 38,597,376 + 786,432 + 12·7,087,872 + 1,536 = 124,439,808
    --          (Hugging Face's gpt2 num_parameters(); the card's "124M")
    --   medium h 1024, L 24: 51,463,168 + 1,048,576 + 24·12,596,224 + 2,048 = 354,823,168
    --   large  h 1280, L 36: 64,328,960 + 1,310,720 + 36·19,677,440 + 2,560 = 774,030,080
    --   xl     h 1600, L 48: 80,411,200 + 1,638,400 + 48·30,740,800 + 3,200 = 1,557,611,200
    --   (the model cards' 355M, 774M, 1.5B)
    local PARAMS = { small = 124439808, medium = 354823168, large = 774030080, xl = 1557611200 }

    it("has the published parameter counts", function()
      for _, size in ipairs({ "small", "medium", "large", "xl" }) do
        assert.equal(PARAMS[size], gpt2.build({ size = size }):num_parameters(), size)
      end
      assert.equal(PARAMS.medium, gpt2.build({ name = "gpt2-medium" }):num_parameters())
    end)

    it("ties lm_head to wte: one tensor, counted once at transformer.wte.weight", function()
      local m = gpt2.build({ size = "small" })
      assert.is_true(m.lm_head.weight:same(m.transformer.wte.weight))
      local names = {}
      for _, pair in ipairs(m:named_parameters()) do names[pair[1]] = true end
      assert.is_true(names["transformer.wte.weight"])
      assert.is_nil(names["lm_head.weight"])
      assert.equal(50257 * 768, m.lm_head:num_parameters())
    end)

    it("names modules as transformers does", function()
      local m = gpt2.build({ size = "small", n_layer = 2 })
      local types = {}
      for _, pair in ipairs(m:named_modules()) do types[pair[1]] = pair[2].__name end
      assert.equal("GPT2Model", types.transformer)
      assert.equal("GPT2Block", types["transformer.h.1"])
      assert.equal("Conv1D", types["transformer.h.0.attn.c_attn"])
      assert.equal("Conv1D", types["transformer.h.0.mlp.c_proj"])
      assert.equal("NewGELUActivation", types["transformer.h.0.mlp.act"])
      assert.equal("Dropout", types["transformer.h.0.attn.resid_dropout"])
      assert.equal("LayerNorm", types["transformer.ln_f"])
      assert.equal("Linear", types.lm_head)
      -- Conv1D keeps transformers' transposed weight [nx, nf]
      assert.equal("768,2304", shape(m.transformer.h[1].attn.c_attn.weight))
    end)

    it("returns logits [B, T, vocab] and a scalar loss with labels", function()
      local m = gpt2.build({ size = "small", n_layer = 1 })
      assert.equal("1,1024,50257", shape(m(gpt2.input({ size = "small" })[1])))
      local ids = T.zeros({ 2, 7 }, { dtype = "int64" })
      local logits, loss = m(ids, ids)
      assert.equal("2,7,50257", shape(logits))
      assert.equal("", shape(loss))
    end)

    -- small, batch 1, T = 1024, h = 768, L = 12, V = 50257, exact conventions:
    --   per layer and token: c_attn 3h², attn c_proj h², c_fc 4h², mlp c_proj 4h² = 12h²
    --     -> 12·768²·1024·12 = 86,973,087,744
    --   attention QKᵀ and ·V, each T²·h per layer (the eager path computes the masked scores
    --     too, so causality does not reduce them) -> 2·1024²·768·12 = 19,327,352,832
    --   lm_head h·V per token -> 768·50257·1024 = 39,523,713,024
    --   total 145,824,153,600 MACs; DeepSpeed's formulas give the same MACs for these shapes
    --   (addmm numel(mat1)·n, 4-D matmul numel(a)·b[-1], linear numel(x)·out).
    it("counts 145,824,153,600 MACs at seq 1024 (hand derivation), under both conventions", function()
      local h, t, l, v = 768, 1024, 12, 50257
      local want = 12 * h * h * t * l + 2 * t * t * h * l + h * v * t
      assert.equal(145824153600, want)
      local m = gpt2.build({ size = "small" })
      for _, conv in ipairs({ "exact", "deepspeed" }) do
        local data, by = profile(m, gpt2.input({ size = "small" }), conv)
        assert.equal(want, data.fwd_macs, conv)
        -- per layer: 12h²·T from the Conv1Ds plus 2T²h in GPT2Attention's own matmuls
        assert.equal(12 * h * h * t + 2 * t * t * h, by["transformer.h.3"].macs, conv)
        assert.equal(2 * t * t * h, self_macs(data, by["transformer.h.3.attn"]), conv)
      end
    end)

    -- NewGELUActivation on n elements, exact: pow, ·0.044715, +x, ·√(2/π), tanh, +1, 0.5·x,
    -- and the last product: 8n flops. DeepSpeed patches none of these tensor operators: 0.
    it("counts the tanh GELU op by op: 8 flops per element (exact), 0 (deepspeed)", function()
      local m = gpt2.build({ size = "small", n_layer = 1 })
      local n = 1 * 16 * 3072
      local _, by = profile(m, gpt2.input({ seq = 16 }), "exact")
      assert.equal(8 * n, by["transformer.h.0.mlp.act"].flops)
      _, by = profile(m, gpt2.input({ seq = 16 }), "deepspeed")
      assert.equal(0, by["transformer.h.0.mlp.act"].flops)
    end)
  end)

  describe("GPT-3 (Brown et al. 2020, Table 2.1, on the GPT-2 architecture)", function()
    -- Same formula as GPT-2 with 2048 positions: V·h + 2048·h + L·(12h² + 13h) + 2h.
    --   125M  L 12 h 768:   125,226,240      350M L 24 h 1024:   355,871,744
    --   760M  L 24 h 1536:  760,300,032      1.3B L 24 h 2048: 1,315,723,264
    --   2.7B  L 32 h 2560: 2,651,553,280     6.7B L 32 h 4096: 6,658,404,352
    --   13B   L 40 h 5120: 12,853,386,240    175B L 96 h 12288: 174,604,259,328
    -- Each within 5 % of the table's n_params (125M ... 175.0B); 175B: 617,558,016 (wte) +
    -- 25,165,824 (wpe) + 96·1,812,099,072 + 24,576 = 174,604,259,328.
    local PARAMS = {
      ["125M"] = 125226240, ["350M"] = 355871744, ["760M"] = 760300032, ["1.3B"] = 1315723264,
      ["2.7B"] = 2651553280, ["6.7B"] = 6658404352, ["13B"] = 12853386240,
      ["175B"] = 174604259328,
    }
    local TABLE = {
      ["125M"] = 125e6, ["350M"] = 350e6, ["760M"] = 760e6, ["1.3B"] = 1.3e9, ["2.7B"] = 2.7e9,
      ["6.7B"] = 6.7e9, ["13B"] = 13.0e9, ["175B"] = 175.0e9,
    }

    it("has the derived parameter counts, each near the table's", function()
      for _, name in ipairs(gpt3.names()) do
        local n = gpt3.build({ name = name }):num_parameters()
        local size = name:gsub("^gpt3%-", "")
        assert.equal(PARAMS[size], n, name)
        assert.is_true(math.abs(n / TABLE[size] - 1) < 0.05, name)
      end
    end)

    -- 174.6 B: the paper's Appendix D (Table D.1, compute) lists GPT-3 175B with 174,600 M
    -- parameters; ours is 1.0000244 of it.
    it("175B is within 0.1 % of 174.6 B", function()
      local ratio = PARAMS["175B"] / 174.6e9
      assert.is_true(math.abs(ratio - 1) < 0.001, tostring(ratio))
    end)

    -- batch 1, T = 2048, h = 12288, L = 96, V = 50257, N = 174,604,259,328, exact conventions:
    --   MACs = T·(12h²·L + V·h) + 2·T²·h·L = 357,506,526,216,192 + 9,895,604,649,984
    --        = 367,402,130,866,176
    --   FLOPs per token ≈ 2N + 4·T·h·L (attention: QKᵀ and ·V over the full context, 2 flops per
    --   MAC) = 349,208,518,656 + 9,663,676,416; the rest (LayerNorm, GELU, softmax, mask, scale,
    --   residual adds, bias adds) is ~0.03 % of 2N, and 2N counts wpe, which does no matmul, so
    --   the tolerance is 0.1 % of 2N. Without attention the ratio to 2N is 1.028.
    -- (how fast is make bench's business: it times a whole profrun run of this model)
    it("175B profiles at seq 2048 on meta with the derived MACs and ~2N flops per token", function()
      local model = gpt3.build({ name = "175B" })
      local flops, macs, params = prof.get_model_profile({
        model = model, args = gpt3.input({ name = "175B" }), print_profile = false,
        as_string = false,
      })
      local n, t, h, l = PARAMS["175B"], 2048, 12288, 96
      assert.equal(n, params)
      assert.equal(367402130866176, macs)
      local per_token = flops / t
      local expected = 2 * n + 4 * t * h * l
      assert.is_true(math.abs(per_token - expected) / (2 * n) < 0.001,
                     string.format("%.6g vs %.6g", per_token, expected))
    end)
  end)

  describe("LLaMA (Hugging Face LlamaForCausalLM)", function()
    -- params = 2·V·h (embed_tokens, untied lm_head) + L·(2h² + 2h·kv·d + 3h·I + 2h) + h, where
    -- kv·d = h for multi-head attention (q, o: h² each; k, v: h·kv·d each) and I the MLP width.
    --   llama2-7b  h 4096, I 11008, L 32, V 32000:  262,144,000 + 32·202,383,360 + 4,096
    --              = 6,738,415,616 (meta-llama/Llama-2-7b-hf)
    --   llama2-13b h 5120, I 13824, L 40:  327,680,000 + 40·317,204,480 + 5,120 = 13,015,864,320
    --   llama2-70b h 8192, I 28672, L 80, 8 kv heads of 128: 524,288,000 + 80·(2·67,108,864 +
    --              2·8,388,608 + 704,643,072 + 16,384) + 8,192 = 68,976,648,192
    --   llama3-8b  h 4096, I 14336, L 32, V 128256, 8 kv heads: 1,050,673,152 + 32·218,112,000
    --              + 4,096 = 8,030,261,248 (meta-llama/Meta-Llama-3-8B)
    local PARAMS = {
      ["llama2-7b"] = 6738415616, ["llama2-13b"] = 13015864320,
      ["llama2-70b"] = 68976648192, ["llama3-8b"] = 8030261248,
    }

    it("has the published parameter counts", function()
      for _, name in ipairs(llama.names()) do
        assert.equal(PARAMS[name], llama.build({ name = name }):num_parameters(), name)
      end
    end)

    it("keeps lm_head untied and k/v projections narrow under GQA", function()
      local m = llama.build({ name = "llama2-70b", num_hidden_layers = 1 })
      assert.is_false(m.lm_head.weight:same(m.model.embed_tokens.weight))
      local attn = m.model.layers[1].self_attn
      assert.equal("1024,8192", shape(attn.k_proj.weight))
      assert.equal("8192,8192", shape(attn.q_proj.weight))
      assert.is_nil(attn.q_proj.bias)
    end)

    it("returns logits [B, T, vocab] and a scalar loss with labels", function()
      local m = llama.build({ name = "llama3-8b", num_hidden_layers = 1 })
      local ids = T.zeros({ 2, 5 }, { dtype = "int64" })
      local logits, loss = m(ids, ids)
      assert.equal("2,5,128256", shape(logits))
      assert.equal("", shape(loss))
      assert.equal("1,4096,32000", shape(llama.build({ num_hidden_layers = 1 })(llama.input()[1])))
    end)

    -- llama2-7b, batch 1, T = 2048, exact conventions. SDPA with is_causal keeps T(T+1)/2 =
    -- 2,098,176 scores per head; MACs = kept·(E + Ev)·heads = 2,098,176·(128 + 128)·32
    -- = 17,188,257,792 per layer (vs 2·T²·h = 34,359,738,368 without the mask).
    -- Whole model: T·(32·(4h² + 3h·I) + h·V) = 2048·6,607,077,376 = 13,531,294,466,048
    -- + 32 layers of SDPA 550,024,249,344 + RoPE's inv_freq ⊗ positions matmul 64·2048 = 131,072
    -- -> 14,081,318,846,464.
    it("counts causal SDPA MACs as T(T+1)/2·(E+Ev)·heads per layer (llama2-7b, seq 2048)", function()
      local t = 2048
      local kept = t * (t + 1) // 2
      local sdpa = kept * (128 + 128) * 32
      assert.equal(17188257792, sdpa)
      local data, by = profile(llama.build({ name = "llama2-7b" }), llama.input({ seq = t }))
      assert.equal(sdpa, self_macs(data, by["model.layers.0.self_attn"]))
      assert.equal(sdpa, self_macs(data, by["model.layers.31.self_attn"]))
      assert.equal(14081318846464, data.fwd_macs)
    end)

    -- Heads come from q: llama3-8b's 32 query heads over 8 kv heads cost what 7B's 32 do.
    it("counts GQA attention by query heads (llama3-8b, seq 2048)", function()
      local data, by = profile(llama.build({ name = "llama3-8b", num_hidden_layers = 1 }),
                               llama.input({ seq = 2048 }))
      assert.equal(17188257792, self_macs(data, by["model.layers.0.self_attn"]))
    end)

    -- LlamaRMSNorm on [1, 4, 8] with ops, exact: pow 32, mean 32 (n − m adds, m divides),
    -- + eps 4, rsqrt 4, ·rsqrt 32, weight· 32 = 136 = 4n + 2·rows, the fused rms_norm formula;
    -- DeepSpeed patches none of these: 0.
    it("counts LlamaRMSNorm as the fused rms_norm (exact) and 0 (deepspeed)", function()
      local norm = llama.LlamaRMSNorm(8, 1e-5)
      local data = profile(norm, { T.empty({ 1, 4, 8 }) }, "exact")
      assert.equal(136, data.fwd_flops)
      data = profile(norm, { T.empty({ 1, 4, 8 }) }, "deepspeed")
      assert.equal(0, data.fwd_flops)
    end)
  end)

  describe("BERT", function()
    -- Hugging Face, V 30522, 512 positions, 2 token types; per layer attention 4(h² + h),
    -- 2 LayerNorms 4h, intermediate h·I + I, output I·h + h.
    --   BertModel base  = 23,838,720 + 12·7,087,872 + 590,592 = 109,482,240 (bert-base-uncased)
    --   BertModel large = 31,789,056 + 24·12,596,224 + 1,049,600 = 335,141,888 (bert-large-uncased)
    --   + classifier h·2 + 2; + pretraining heads: transform h² + h + 2h, decoder bias V,
    --     seq_relationship 2h + 2 (decoder weight = word embeddings, counted once):
    --     base 624,188 -> 110,106,428; large 1,084,220 -> 336,226,108
    -- NVIDIA pre-LN BERT-Large (bing_bert), V 30528: embeddings (30528 + 512 + 2)·1024 + 2,048 =
    --   31,789,056; 24 layers · 12,596,224 + FinalLayerNorm 2,048 = 302,311,424; pooler
    --   1,049,600 -> BertModel 335,150,080; heads 1,049,600 + 2,048 + 30,528 + 2,050 =
    --   1,084,226 beyond the tied weight -> 336,234,306, the tutorial's "336.23 M".
    local PARAMS = {
      ["bert-base"] = 109483778, ["bert-large"] = 335143938,
      ["bert-base-pretraining"] = 110106428, ["bert-large-pretraining"] = 336226108,
      ["bert-large-preln"] = 336234306,
    }

    it("has the derived parameter counts", function()
      for _, name in ipairs(bert.names()) do
        assert.equal(PARAMS[name], bert.build({ name = name }):num_parameters(), name)
      end
      assert.equal(PARAMS["bert-large-pretraining"],
                   bert.build({ size = "large", head = "pretraining" }):num_parameters())
    end)

    it("ties the MLM decoder to the word embeddings and shares its bias", function()
      local m = bert.build({ name = "bert-base-pretraining" })
      local p = m.cls.predictions
      assert.is_true(p.decoder.weight:same(m.bert.embeddings.word_embeddings.weight))
      assert.is_true(p.decoder.bias:same(p.bias))
      local names = {}
      for _, pair in ipairs(m:named_parameters()) do names[pair[1]] = true end
      assert.is_true(names["cls.predictions.bias"])
      assert.is_nil(names["cls.predictions.decoder.bias"])
      assert.is_nil(names["cls.predictions.decoder.weight"])
    end)

    it("returns prediction scores [B, S, V] and relationship scores [B, 2]", function()
      for _, name in ipairs({ "bert-base-pretraining", "bert-large-preln" }) do
        local m = bert.build({ name = name, config = { num_hidden_layers = 1 } })
        local scores, rel = m(bert.input({ name = name, batch = 2, seq = 16 })[1])
        assert.equal(name == "bert-large-preln" and "2,16,30528" or "2,16,30522", shape(scores))
        assert.equal("2,2", shape(rel))
      end
    end)

    -- The tutorial's aggregated params lines (BERT-Large PreLN, top_modules 3), first two
    -- entries per depth. Its MACs lines are not reproduced: the DeepSpeed it ran predates the
    -- torch.matmul patch (BertSelfAttention 32.23 GMACs = 3 linears + 0.02 G).
    local TUTORIAL = {
      "    params      - {'BertForPreTrainingPreLN': '336.23 M'}",
      "    params      - {'BertModel': '335.15 M', 'BertPreTrainingHeads': '32.34 M'}",
      "    params      - {'BertEncoder': '302.31 M', 'BertLMPredictionHead': '32.34 M'",
      "    params      - {'ModuleList': '302.31 M', 'Embedding': '31.79 M', 'Linear': '31.26 M'}",
      "    params      - {'BertLayer': '302.31 M', 'LinearActivation': '1.05 M'",
      "    params      - {'BertAttention': '100.76 M', 'BertIntermediate': '100.76 M'",
      "    params      - {'LinearActivation': '100.76 M', 'Linear': '100.69 M'",
    }

    it("prints the tutorial's per-depth params for BERT-Large PreLN", function()
      local m = bert.build({ name = "bert-large-preln" })
      local p = prof.FlopsProfiler(m)
      p.conventions = "deepspeed"
      p:start_profile()
      m(bert.input({ name = "bert-large-preln", batch = 1, seq = 128 })[1])
      p:stop_profile()
      local text = report.render_profile(p:profile(), {
        format = "deepspeed", top_modules = 3, module_depth = -1, detailed = false,
      })
      p:end_profile()
      local params = {}
      local depth
      for l in text:gmatch("([^\n]*)\n") do
        depth = tonumber(l:match("^depth (%d+):")) or depth
        if depth and l:match("^    params ") then params[depth] = l end
      end
      for d, want in ipairs(TUTORIAL) do
        local got = params[d - 1] or ""
        assert.equal(want, got:sub(1, #want), "depth " .. (d - 1))
      end
      -- depth 1 holds just the two modules, so the line is the tutorial's to the last brace
      assert.equal(TUTORIAL[2], params[1])
      assert.matches("'BertModel'", text, 1, true)
    end)

    it("lists its variants for model_profile --list", function()
      assert.same({ "bert-base", "bert-large", "bert-base-pretraining", "bert-large-pretraining",
                    "bert-large-preln" }, bert.names())
      assert.same({ "gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl" }, gpt2.names())
      assert.same({ "llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b" }, llama.names())
      assert.equal(8, #gpt3.names())
    end)
  end)
end)
