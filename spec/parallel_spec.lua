-- parallel_spec.lua — Megatron's tensor-parallel layers and GPT-2: partitions, model totals, the tutorial's run.
local env = require "spec.support.env"
local prof = require "prof"
local T = require "prof.tensor"
local parallel = require "prof.nn.parallel"
local megatron = require "prof.models.megatron_gpt2"
local units = require "prof.report.units"
local run = require "spec.support.run"
local json = require "dkjson"

local function shape(t)
  return table.concat(t.shape, ",")
end

local function raises(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok)
  return tostring(err)
end

-- The small GPT-2 of the brief: 2 layers, hidden 64, 4 heads, vocab 128 (no padding), seq 16.
local SMALL = { num_layers = 2, hidden_size = 64, num_attention_heads = 4, vocab_size = 128,
                make_vocab_size_divisible_by = 1, max_position_embeddings = 16 }
local B, S = 2, 16

local function small(mp, rank)
  local c = {}
  for k, v in pairs(SMALL) do c[k] = v end
  c.mp_size, c.mp_rank = mp, rank or 0
  return megatron.build { config = c }
end

local function profile(model, conventions)
  local flops, macs, params = prof.get_model_profile {
    model = model, args = megatron.input { batch = B, seq = S }, print_profile = false,
    as_string = false, conventions = conventions, rules = {},
  }
  return flops, macs, params
end

describe("tensor-parallel layers", function()
  env.on_meta(setup, teardown)

  describe("hold one rank's partition", function()
    it("ColumnParallelLinear splits the output features: weight [out/mp, in], bias [out/mp]", function()
      local l = parallel.ColumnParallelLinear(64, 192, { mp_size = 4 })
      assert.equal("48,64", shape(l.weight))
      assert.equal("48", shape(l.bias))
      assert.same({ partition_dim = 0, mp_size = 4 }, parallel.partition_of(l.weight))
      -- gather_output (Megatron's default) gives the whole output width, else this rank's 48
      assert.equal("2,16,192", shape(l(T.empty({ 2, 16, 64 }))))
      local local_out = parallel.ColumnParallelLinear(64, 192, { mp_size = 4, gather_output = false })
      assert.equal("2,16,48", shape(local_out(T.empty({ 2, 16, 64 }))))
      -- skip_bias_add hands the bias back instead of adding it
      local skip = parallel.ColumnParallelLinear(64, 192, { mp_size = 4, gather_output = false, skip_bias_add = true })
      local out, bias = skip(T.empty({ 2, 64 }))
      assert.equal("2,48", shape(out))
      assert.equal(skip.bias, bias)
    end)

    it("RowParallelLinear splits the input features and replicates the whole bias", function()
      local l = parallel.RowParallelLinear(256, 64, { mp_size = 4, mp_rank = 1 })
      assert.equal("64,64", shape(l.weight))
      assert.equal("64", shape(l.bias))
      assert.same({ partition_dim = 1, mp_size = 4 }, parallel.partition_of(l.weight))
      assert.is_nil(parallel.partition_of(l.bias))
      -- input_is_parallel = false: the full [.., 256] input, of which this rank uses its 64
      assert.equal("3,64", shape(l(T.empty({ 3, 256 }))))
      local p = parallel.RowParallelLinear(256, 64, { mp_size = 4, input_is_parallel = true })
      assert.equal("3,64", shape(p(T.empty({ 3, 64 }))))
    end)

    it("VocabParallelEmbedding holds rows [rank * vocab/mp, (rank + 1) * vocab/mp)", function()
      local e = parallel.VocabParallelEmbedding(128, 64, { mp_size = 4, mp_rank = 2 })
      assert.equal("32,64", shape(e.weight))
      assert.equal(64, e.vocab_start_index)
      assert.equal(96, e.vocab_end_index)
      assert.equal("2,5,64", shape(e(T.zeros({ 2, 5 }, { dtype = "int64" }))))
    end)

    it("attention runs heads/mp heads and the MLP 4h/mp features on a rank", function()
      local c = { hidden_size = 64, num_attention_heads = 4, mp_size = 2 }
      local attn = parallel.ParallelSelfAttention(c, 1)
      assert.equal(2, attn.num_attention_heads_per_partition)
      assert.equal(32, attn.hidden_size_per_partition)
      assert.equal(16, attn.hidden_size_per_attention_head)
      assert.equal("96,64", shape(attn.query_key_value.weight))    -- 3h/2
      assert.equal("64,32", shape(attn.dense.weight))              -- h × h/2
      local mlp = parallel.ParallelMLP(c)
      assert.equal("128,64", shape(mlp.dense_h_to_4h.weight))      -- 4h/2 × h
      assert.equal("64,128", shape(mlp.dense_4h_to_h.weight))
      -- [s, b, h] in, [s, b, h] and the output bias out
      local out, bias = attn(T.empty({ 16, 2, 64 }), T.empty({ 1, 1, 16, 16 }, { dtype = "bool" }))
      assert.equal("16,2,64", shape(out))
      assert.equal("64", shape(bias))
    end)
  end)

  describe("refuse sizes that do not divide", function()
    it("names the layer and both sizes", function()
      local err = raises(parallel.ColumnParallelLinear, 64, 30, { mp_size = 4 })
      assert.truthy(env.has(err, "ColumnParallelLinear(64, 30): output_size 30 is not divisible by "
        .. "model_parallel_size 4"))
      err = raises(parallel.RowParallelLinear, 30, 64, { mp_size = 4 })
      assert.truthy(env.has(err, "RowParallelLinear(30, 64): input_size 30 is not divisible by model_parallel_size 4"))
      err = raises(parallel.VocabParallelEmbedding, 130, 64, { mp_size = 4 })
      assert.truthy(env.has(err, "VocabParallelEmbedding(130, 64): num_embeddings 130 is not divisible by "
        .. "model_parallel_size 4"))
      err = raises(parallel.ParallelSelfAttention, { hidden_size = 48, num_attention_heads = 6, mp_size = 4 })
      assert.truthy(env.has(err, "ParallelSelfAttention: num_attention_heads 6 is not divisible by "
        .. "model_parallel_size 4"))
    end)

    it("in a whole model too, and a rank outside the group", function()
      local c = { padded_vocab_size = 130, mp_size = 4, num_layers = 1,
                  hidden_size = 64, num_attention_heads = 4 }
      assert.truthy(env.has(raises(megatron.build, { config = c }), "VocabParallelEmbedding(130, 64)"))
      assert.truthy(env.has(raises(parallel.ColumnParallelLinear, 8, 8, { mp_size = 2, mp_rank = 2 }),
        "ColumnParallelLinear: model_parallel_rank 2 is outside the group of size 2"))
    end)
  end)

  describe("take the group from the config", function()
    after_each(function() env.use_config({}) end)

    it("parallel.model_parallel_size / _rank, unless a layer is given its own", function()
      env.use_config({ "parallel.model_parallel_size=4", "parallel.model_parallel_rank=3" })
      assert.equal(4, parallel.mp_size())
      assert.equal(3, parallel.mp_rank())
      assert.equal("32,64", shape(parallel.ColumnParallelLinear(64, 128).weight))
      assert.equal(96, parallel.VocabParallelEmbedding(128, 8).vocab_start_index)
      assert.equal("64,64", shape(parallel.ColumnParallelLinear(64, 128, { mp_size = 2, mp_rank = 0 }).weight))
      env.use_config({})
      assert.equal(1, parallel.mp_size())
      assert.equal(0, parallel.mp_rank())
      assert.equal("128,64", shape(parallel.ColumnParallelLinear(64, 128).weight))
    end)

    it("pads the GPT-2 vocabulary to make_vocab_size_divisible_by × mp_size, as Megatron does", function()
      -- 50257 -> multiple of 128: 393 × 128 = 50304; of 256: 197 × 256 = 50432
      assert.equal(50304, megatron.padded_vocab_size(50257, 128, 1))
      assert.equal(50432, megatron.padded_vocab_size(50257, 128, 2))
    end)
  end)

  describe("small Megatron GPT-2 (2 layers, h 64, 4 heads, vocab 128, seq 16)", function()
    -- Unpartitioned, by hand. Per layer: 2 LayerNorms 2 × 2·64 = 256; query_key_value 192·64 + 192
    -- = 12 480; dense 64·64 + 64 = 4160; dense_h_to_4h 256·64 + 256 = 16 640; dense_4h_to_h
    -- 64·256 + 64 = 16 448: 49 984. Two layers 99 968, word embeddings 128·64 = 8192, positions
    -- 16·64 = 1024, final LayerNorm 128: 109 312.
    local FULL = 2 * (256 + 12480 + 4160 + 16640 + 16448) + 8192 + 1024 + 128
    -- Replicated on every rank: 5 LayerNorms (640), the 2 × 2 RowParallelLinear biases (256) and
    -- the position embeddings (1024).
    local REPLICATED = 5 * 128 + 4 * 64 + 16 * 64

    it("has 109 312 parameters unpartitioned", function()
      assert.equal(109312, FULL)
      local _, _, params = profile(small(1))
      assert.equal(FULL, params)
    end)

    for _, mp in ipairs({ 1, 2, 4 }) do
      local title = "mp %d: params per GPU = partitions/%d + replicated; the model total is exact"
      it(string.format(title, mp, mp), function()
        local model = small(mp)
        local _, _, per_gpu = profile(model)
        assert.equal((FULL - REPLICATED) // mp + REPLICATED, per_gpu)
        -- (a) params_of_model: each rank's partitions summed over ranks, replicated tensors once
        local total, replicated = parallel.params_of_model(model)
        assert.equal(FULL, total)
        assert.equal(REPLICATED, replicated)
        -- the same sum built rank by rank
        local sum = 0
        for r = 0, mp - 1 do
          for _, p in ipairs(small(mp, r):parameters()) do
            if parallel.partition_of(p) ~= nil then sum = sum + p:numel() end
          end
        end
        assert.equal(FULL, sum + REPLICATED)
        -- DeepSpeed's "params per GPU * mp_size" counts the replicated ones mp times
        assert.equal(FULL + (mp - 1) * REPLICATED, per_gpu * mp)
      end)
    end

    -- Forward MACs unpartitioned, tokens T = 2·16 = 32: per layer query_key_value T·64·192,
    -- QKᵀ (baddbmm) b·heads·s·s·hn = T·16·64, ·V (bmm) the same, dense T·64·64, MLP 2 · T·64·256;
    -- logits T·64·128.
    local MACS = 2 * 32 * (64 * 192 + 16 * 64 + 16 * 64 + 64 * 64 + 2 * 64 * 256) + 32 * 64 * 128

    it("has 3 538 944 forward MACs unpartitioned", function()
      assert.equal(3538944, MACS)
      local _, macs = profile(small(1), "deepspeed")
      assert.equal(MACS, macs)
    end)

    for _, conventions in ipairs({ "deepspeed", "exact" }) do
      it("Σ over ranks of each rank's MACs equals the unpartitioned MACs (" .. conventions .. ")", function()
        for _, mp in ipairs({ 1, 2, 4 }) do
          local sum = 0
          for r = 0, mp - 1 do
            local _, macs = profile(small(mp, r), conventions)
            sum = sum + macs
          end
          assert.equal(MACS, sum)
        end
      end)
    end

    it("DeepSpeed's summary multiplies params and flops per GPU by mp_size from the config", function()
      env.use_config({ "parallel.model_parallel_size=2", "flops_profiler.conventions=deepspeed" })
      local dir = run.tmpdir()
      local model = small(nil)
      prof.get_model_profile { model = model, args = megatron.input { batch = B, seq = S },
                               output_file = dir .. "/report.txt", rules = {} }
      local text = assert(run.read(dir .. "/report.txt"))
      run.rmdir_all(dir)
      env.use_config({})
      local _, _, per_gpu = profile(small(2))
      assert.equal(55616, per_gpu)
      local flops = profile(small(2), "deepspeed")
      -- 2 × 55 616 = 111 232 -> "111.23 K"
      assert.truthy(text:find("params per GPU:%s+55%.62 K"))
      assert.truthy(text:find("params of model = params per GPU %* mp_size:%s+111%.23 K"))
      assert.truthy(text:find("fwd flops of model = fwd flops per GPU %* mp_size:%s+"
        .. units.number_to_string(2 * flops):gsub("%.", "%%."), 1))
    end)
  end)

  describe("examples/megatron_gpt2.lua (the tutorial's shape, mp 2, on meta)", function()
    -- Per GPU, h = 8192, mp = 2, 12 layers, vocab 50257 padded to 50432, 1024 positions.
    -- A layer: LayerNorms 2 · 2h = 32 768; query_key_value (3h/2)·h + 3h/2 = 100 663 296 + 12 288;
    -- dense h·(h/2) + h = 33 554 432 + 8192; dense_h_to_4h (4h/2)·h + 4h/2 = 134 217 728 + 16 384;
    -- dense_4h_to_h h·(4h/2) + h = 134 217 728 + 8192.
    local LAYER = 32768 + 100663296 + 12288 + 33554432 + 8192 + 134217728 + 16384 + 134217728 + 8192
    local PARAMS = 12 * LAYER + (50432 // 2) * 8192 + 1024 * 8192 + 2 * 8192
    -- MACs, tokens T = 1024 · 1024: per layer T·(h·3h/2 + s·h/2 [QKᵀ: b·16 heads·s·s·256]
    -- + s·h/2 [·V] + (h/2)·h + 2·h·(4h/2)); logits T·h·(50432/2).
    local TOKENS = 1024 * 1024
    local MACS = TOKENS * (12 * (8192 * 12288 + 2 * 1024 * 4096 + 4096 * 8192 + 2 * 8192 * 16384)
                           + 8192 * 25216)

    it("runs under profrun with the per-GPU params and MACs derived by hand", function()
      assert.equal(402731008, LAYER)
      assert.equal(5047746560, PARAMS)
      assert.equal(5388706487730176, MACS)
      local dir = run.tmpdir()
      local r = run.profrun({ "--set", "flops_profiler.output_file=" .. dir .. "/p.json",
                              "configs/megatron.json", "examples/megatron_gpt2.lua" })
      local p = json.decode(run.read(dir .. "/p.json") or "null")
      run.rmdir_all(dir)
      assert.equal(0, r.code, r.stderr)
      assert.equal(2, p.mp_size)
      assert.equal("deepspeed", p.conventions)
      assert.equal(PARAMS, p.params)
      assert.equal(2 * PARAMS, p.params_model)
      assert.equal(MACS, p.fwd_macs)
      -- flops: 2·MACs + baddbmm's input b·np·s·s per layer + the softmax rule's 3 per score +
      -- 25 LayerNorms of 5·T·h (the GELU is fused, the adds are operators: DeepSpeed sees neither)
      local scores = 1024 * 16 * 1024 * 1024
      assert.equal(2 * MACS + 12 * scores + 12 * 3 * scores + 25 * 5 * TOKENS * 8192, p.fwd_flops)
      -- the exact model total: 10 095 493 120 less the replicated ones counted twice
      local replicated = 25 * 2 * 8192 + 12 * 2 * 8192 + 1024 * 8192
      assert.truthy(env.has(r.stdout, units.params_to_string(2 * PARAMS - replicated) .. " params in the model"))
    end)

    it("prints DeepSpeed's summary with the model lines × mp_size", function()
      local r = run.profrun({ "configs/megatron.json", "examples/megatron_gpt2.lua" })
      assert.equal(0, r.code, r.stderr)
      assert.truthy(r.stdout:find("\nparams per GPU:%s+5%.05 B"))
      assert.truthy(r.stdout:find("\nparams of model = params per GPU %* mp_size:%s+10%.1 B"))
      assert.truthy(r.stdout:find("\nfwd MACs per GPU:%s+5388%.71 TMACs"))
      assert.truthy(r.stdout:find("\n    params      %- {'GPT2Model': '5%.05 B'}"))
      assert.truthy(r.stdout:find("%(scale_mask_softmax%): FusedScaleMaskSoftmax%("))
    end)
  end)
end)

describe("Megatron's initialisation of the tensor-parallel layers", function()
  local device
  setup(function()
    device = T.default_device()
    T.set_default_device("cpu")
  end)
  teardown(function() T.set_default_device(device) end)

  -- mean and (population) standard deviation of a cpu tensor's values
  local function moments(t)
    local n, s, s2 = 0, 0, 0
    local function walk(v)
      if type(v) == "table" then
        for _, x in ipairs(v) do walk(x) end
      else
        n, s, s2 = n + 1, s + v, s2 + v * v
      end
    end
    walk(t:tolist())
    local mean = s / n
    return mean, math.sqrt(s2 / n - mean * mean), n
  end

  -- within 5 % of sigma; with n ≥ 32 768 draws the sample std's own spread is σ/√(2n) ≤ 0.4 %
  local function assert_std(t, sigma, what)
    local mean, std, n = moments(t)
    assert.is_true(n >= 32768, what .. ": only " .. n .. " values")
    assert.is_true(math.abs(std - sigma) <= 0.05 * sigma,
                   string.format("%s: std %.6g, want %.6g", what, std, sigma))
    assert.is_true(math.abs(mean) <= 5 * sigma / math.sqrt(n), what .. ": mean " .. mean)
  end

  local function assert_all(t, value, what)
    local mean, std = moments(t)
    assert.is_true(mean == value and std == 0, what .. " is not all " .. value)
  end

  -- Megatron: init_method_normal(0.02) on the input projections, scaled_init_method_normal(0.02,
  -- num_layers) = N(0, (0.02/√(2·8))²) = N(0, 0.005²) on the outputs; biases 0; LayerNorm 1, 0
  it("draws N(0, 0.02²) and, for the output layers, N(0, (0.02/√(2·num_layers))²)", function()
    local c = { hidden_size = 256, num_attention_heads = 4, num_layers = 8, mp_size = 2, mp_rank = 1 }
    local layer = parallel.ParallelTransformerLayer(c, 1)
    local attn, mlp = layer.attention, layer.mlp
    assert.equal("384,256", shape(attn.query_key_value.weight))
    assert_std(attn.query_key_value.weight, 0.02, "query_key_value")
    assert_std(attn.dense.weight, 0.005, "attention dense")
    assert_std(mlp.dense_h_to_4h.weight, 0.02, "dense_h_to_4h")
    assert_std(mlp.dense_4h_to_h.weight, 0.005, "dense_4h_to_h")
    for _, l in ipairs({ attn.query_key_value, attn.dense, mlp.dense_h_to_4h, mlp.dense_4h_to_h }) do
      assert_all(l.bias, 0, "a bias")
    end
    for _, ln in ipairs({ layer.input_layernorm, layer.post_attention_layernorm }) do
      assert_all(ln.weight, 1, "a LayerNorm weight")
      assert_all(ln.bias, 0, "a LayerNorm bias")
    end
    -- init_method_std and the layer count come from the config
    local wide = parallel.ParallelMLP({ hidden_size = 128, num_layers = 2, init_method_std = 0.1 })
    assert_std(wide.dense_h_to_4h.weight, 0.1, "dense_h_to_4h, std 0.1")
    assert_std(wide.dense_4h_to_h.weight, 0.05, "dense_4h_to_h, 0.1/√4")
  end)

  it("uses a layer's init_method, else xavier_normal_ on its partition, as Megatron's mpu does", function()
    local l = parallel.ColumnParallelLinear(512, 1024, { mp_size = 4, mp_rank = 3,
      init_method = parallel.init_method_normal(0.03) })
    assert.equal("256,512", shape(l.weight))
    assert_std(l.weight, 0.03, "init_method_normal(0.03)")
    assert_all(l.bias, 0, "the bias")
    -- the partition [256, 512] is this rank's own tensor: xavier's std √(2 / (512 + 256))
    local d = parallel.ColumnParallelLinear(512, 1024, { mp_size = 4 })
    assert_std(d.weight, math.sqrt(2 / 768), "xavier_normal_ of the partition")
    local r = parallel.RowParallelLinear(1024, 256, { mp_size = 2,
      init_method = parallel.scaled_init_method_normal(0.02, 2) })
    assert_std(r.weight, 0.01, "scaled_init_method_normal(0.02, 2)")
    assert_all(r.bias, 0, "the replicated bias")
    local e = parallel.VocabParallelEmbedding(1024, 128, { mp_size = 2,
      init_method = parallel.init_method_normal(0.02) })
    assert_std(e.weight, 0.02, "the embedding rows")
    assert.error_matches(function() parallel.RowParallelLinear(8, 8, { init_method = 0.02 }) end,
      "RowParallelLinear: init_method must be a function of a tensor, got number", 1, true)
  end)

  it("draws nothing on meta: the generator is where it was", function()
    local c = { hidden_size = 64, num_attention_heads = 4, num_layers = 2 }
    -- the transformer's layers are built on the default device, as Megatron's on the current one
    local function next_rand(build_device)
      T.manual_seed(17)
      if build_device then
        T.set_default_device(build_device)
        parallel.ParallelTransformer(c)
        T.set_default_device("cpu")
      end
      return T.rand({ 4 }, { device = "cpu" }):tolist()
    end
    local fresh = next_rand(nil)
    assert.same(fresh, next_rand("meta"))
    -- while a cpu model does draw (else the comparison above would prove nothing)
    assert.are_not.same(fresh, next_rand("cpu"))
  end)
end)
