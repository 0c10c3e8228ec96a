-- rules_spec.lua — flop rules: scripts/rules/megatron.lua on Megatron's fused layers, naming rules, failures.
local env = require "spec.support.env"
local prof = require "prof"
local core = require "prof.core"
local config = require "prof.config"
local nn = require "prof.nn"
local T = require "prof.tensor"
local parallel = require "prof.nn.parallel"
local megatron = require "prof.models.megatron_gpt2"
local run = require "spec.support.run"

-- Profiles one forward of model(args...); returns the profile's rows by path and the root row.
local function rows_of(model, args, conventions, rules)
  local p = prof.FlopsProfiler(model)
  p.conventions, p.rules = conventions, rules
  p:start_profile()
  local ok, err = pcall(model, table.unpack(args))
  if not ok then
    p:end_profile()
    error(err, 0)
  end
  p:stop_profile()
  local out = {}
  for _, m in ipairs(p:profile().modules) do out[m.path] = m end
  p:end_profile()
  return out, out[""]
end

-- attention on [s 16, b 2, h 64], 4 heads: the scores are [b 2, heads/mp, 16, 16]
local S, B, H = 16, 2, 64
local function attention(mp, scaling)
  local c = { hidden_size = H, num_attention_heads = 4, mp_size = mp, apply_query_key_layer_scaling = scaling }
  return parallel.ParallelSelfAttention(c, 3), { T.empty({ S, B, H }), T.empty({ 1, 1, S, S }, { dtype = "bool" }) }
end

local SMALL = { num_layers = 2, hidden_size = 64, num_attention_heads = 4, vocab_size = 128,
                make_vocab_size_divisible_by = 1, max_position_embeddings = 16, mp_size = 1 }

describe("flop rules", function()
  env.on_meta(setup, teardown)

  describe("megatron.lua on FusedScaleMaskSoftmax, inside ParallelSelfAttention", function()
    for _, mp in ipairs({ 1, 2 }) do
      -- N scores = b · heads/mp · s · s, R rows = b · heads/mp · s
      local heads = 4 // mp
      local N, R = B * heads * S * S, B * heads * S

      it(string.format("deepspeed, mp %d: 3 per score instead of F.softmax's 1 — 2N more", mp), function()
        local attn, args = attention(mp)
        local without = rows_of(attn, args, "deepspeed", {})
        local with = rows_of(attn, args, "deepspeed", { "megatron" })
        -- unfused path: the mask is a selection and `*` an operator, DeepSpeed counts softmax's numel
        assert.equal(N, without["scale_mask_softmax"].flops)
        assert.equal(3 * N, with["scale_mask_softmax"].flops)
        assert.equal(2 * N, with[""].flops - without[""].flops)
        assert.equal(without[""].macs, with[""].macs)
      end)

      it(string.format("exact, mp %d: 7 per score − 2 per row; the mask select is the difference", mp), function()
        local attn, args = attention(mp)
        local without = rows_of(attn, args, "exact", {})
        local with = rows_of(attn, args, "exact", { "megatron" })
        -- unscaled: softmax 5N − 2R runs; the kernel also scales by 1.0 and selects: + 2N
        assert.equal(5 * N - 2 * R, without["scale_mask_softmax"].flops)
        assert.equal(7 * N - 2 * R, with["scale_mask_softmax"].flops)
        assert.equal(2 * N, with[""].flops - without[""].flops)
        -- query-key layer scaling multiplies first (N flops): only the select is left, + N
        attn, args = attention(mp, true)
        without = rows_of(attn, args, "exact", {})
        with = rows_of(attn, args, "exact", { "megatron" })
        assert.equal(6 * N - 2 * R, without["scale_mask_softmax"].flops)
        assert.equal(N, with[""].flops - without[""].flops)
      end)
    end
  end)

  describe("megatron.lua on FusedLayerNorm", function()
    -- x [2, 16, 64]: n = 2048 elements in 32 rows of 64
    local n, rows = 2048, 32
    local cases = {
      { "deepspeed", true, 5 * n }, { "deepspeed", false, 4 * n },
      { "exact", true, 6 * n + 2 * rows + 2 * n }, { "exact", false, 6 * n + 2 * rows },
    }
    for _, c in ipairs(cases) do
      local conventions, affine, expected = c[1], c[2], c[3]
      it(string.format("counts as nn.LayerNorm does (%s, affine %s): %d", conventions, tostring(affine), expected),
        function()
          local x = T.empty({ 2, 16, 64 })
          local _, fused = rows_of(parallel.FusedLayerNorm(64, { elementwise_affine = affine }), { x },
            conventions, { "megatron" })
          local _, plain = rows_of(nn.LayerNorm(64, { elementwise_affine = affine }), { x }, conventions, {})
          assert.equal(expected, plain.flops)
          assert.equal(expected, fused.flops)
          assert.equal(plain.bytes, fused.bytes)
          assert.equal(0, fused.macs)
        end)
    end
  end)

  it("replaces the ops of the ruled module's children too", function()
    local mlp = parallel.ParallelMLP({ hidden_size = 64, mp_size = 1 })
    local rows, root = rows_of(mlp, { T.empty({ S, B, 64 }) }, "deepspeed", { "spec/fixtures/rules/mlp_constant.lua" })
    assert.equal(7, root.macs)
    assert.equal(11, root.flops)
    assert.equal(0, rows["dense_h_to_4h"].macs)
    assert.equal(0, rows["dense_4h_to_h"].flops)
  end)

  describe("are named", function()
    after_each(function() env.use_config({}) end)

    local function flops(o)
      local model = megatron.build { config = SMALL }
      local f = prof.get_model_profile { model = model, args = megatron.input { batch = 2, seq = 16 },
        print_profile = false, as_string = false, conventions = "deepspeed", rules = o.rules }
      return f
    end

    it("in the config (flops_profiler.rules), in get_model_profile{rules=}, by name or by path", function()
      local none = flops { rules = {} }
      local by_arg = flops { rules = { "megatron" } }
      -- 2 layers × 2N (N = 2·4·16·16 = 2048 scores per layer); the LayerNorms count the same either way
      assert.equal(2 * 2 * 2048, by_arg - none)
      assert.equal(by_arg, flops { rules = { "megatron.lua" } })
      assert.equal(by_arg, flops { rules = { "scripts/rules/megatron.lua" } })
      -- configs/megatron.json names ["megatron"]; the script's own argument wins over a config file
      config.set(assert(core.load_config("configs/megatron.json", {})))
      assert.equal(by_arg, flops {})
      assert.equal(none, flops { rules = {} })
      -- and --set wins over the script (the README's precedence)
      env.use_config({ 'flops_profiler.rules=["megatron"]' })
      assert.equal(by_arg, flops { rules = {} })
    end)

    it("and a name that is neither a file nor under scripts/rules/ is an error", function()
      local ok, err = pcall(flops, { rules = { "no_such_rules" } })
      assert.is_false(ok)
      assert.truthy(env.has(err, "flop rule script 'no_such_rules' not found"))
    end)
  end)

  describe("that fail stop the run, naming the rule's file:line and the module", function()
    local PATH = "in module 'language_model.transformer.layers.0.attention.scale_mask_softmax' "
      .. "(FusedScaleMaskSoftmax): flop rule spec/fixtures/rules/"
    local cases = {
      { "error.lua", "error.lua:3 failed: ", "no formula for this kernel" },
      { "negative.lua", "negative.lua:3 returned flops = -5 ", "expected a non-negative number" },
      { "nan.lua", "nan.lua:3 returned flops = ", "nan (expected a non-negative number)" },
      { "string.lua", "string.lua:3 returned string ", "expected a table" },
      { "flops_string.lua", "flops_string.lua:3 returned flops = x ", "expected a non-negative number" },
      -- 1.5 was rounded to 2; 2^63 (a float) failed inside the flops profiler without the rule's line
      { "fraction.lua", "fraction.lua:3 returned flops = 1.5 ", "expected a whole number: counts are not rounded" },
      { "huge.lua", "huge.lua:3 returned flops = 9.2233720368548e+18, ", "more than a count holds (at most 2^63 - 1" },
      { "huge_bytes.lua", "huge_bytes.lua:3 returned bytes + bytes_read = 9223372036854775807 + 1, ",
        "more than a count holds" },
    }
    for _, c in ipairs(cases) do
      it(c[1] .. " in-process", function()
        local model = megatron.build { config = SMALL }
        local ok, err = pcall(prof.get_model_profile, { model = model, args = megatron.input { batch = 2, seq = 16 },
          print_profile = false, rules = { "spec/fixtures/rules/" .. c[1] } })
        assert.is_false(ok)
        assert.truthy(env.has(err, PATH .. c[2]), err)
        assert.truthy(env.has(err, c[3]), err)
        assert.is_nil(core.recorder())      -- the failed profile released the session
      end)
    end

    it("and under profrun exit 1 and leave no output file", function()
      local dir = run.tmpdir()
      local r = run.profrun({ "--set", 'flops_profiler.rules=["spec/fixtures/rules/negative.lua"]',
        "--set", "flops_profiler.output_file=" .. dir .. "/out.txt", "configs/megatron.json",
        "examples/megatron_gpt2.lua" })
      local left = run.list(dir)
      run.rmdir_all(dir)
      assert.equal(1, r.code)
      assert.truthy(env.has(r.stderr, PATH .. "negative.lua:3 returned flops = -5"), r.stderr)
      assert.same({}, left)
      assert.equal("", r.stdout)
    end)
  end)
end)
