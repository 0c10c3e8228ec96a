-- config_auto_spec.lua — Hugging Face's "auto" for the core's typed keys (the
-- batch keys of a real HF DeepSpeed config) is read as "choose the default", with one note.
local core = require "prof.core"
local config = require "prof.config"
local notes = require "prof.util.notes"
local run = require "spec.support.run"

-- Hugging Face's ds_config_zero2.json (transformers docs, "DeepSpeed" > ZeRO-2 example), as a
-- Trainer user keeps it: "auto" for the batch keys, fp16/bf16, the optimizer, the scheduler.
local HF = run.ROOT .. "/spec/fixtures/configs/hf_auto_zero2.json"
local SCRIPT = run.FIXTURES .. "/auto_batch.lua"
local BATCH = { "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps" }

local function lines_with(text, word)
  local out = {}
  for line in text:gmatch("[^\n]+") do
    if line:find(word, 1, true) then out[#out + 1] = line end
  end
  return out
end

describe('"auto" for the core\'s typed config keys', function()
  teardown(function() config.set(assert(core.load_config(nil, {}))) end)

  it("the loader keeps the defaults and lists the keys in schema order", function()
    local cfg = assert(core.load_config(HF, {}))
    assert.same(BATCH, cfg.auto_keys)
    -- not set, as DeepSpeed's None: the script's value or the engine's default applies
    assert.is_nil(cfg.train_batch_size)
    assert.is_nil(cfg.train_micro_batch_size_per_gpu)
    assert.is_nil(cfg.gradient_accumulation_steps)
    assert.same({}, assert(core.load_config(nil, {})).auto_keys)
  end)

  it("a real HF config runs (it was refused: exit 2, train_batch_size: expected a positive "
    .. "integer, got string \"auto\"), with one note naming the keys", function()
    local r = run.profrun({ HF, SCRIPT })
    assert.equal(0, r.code, r.stderr)
    assert.same({ "train_batch_size=nil", "train_micro_batch_size_per_gpu=nil",
      "gradient_accumulation_steps=nil", "engine.gradient_accumulation_steps=1" },
      lines_with(r.stdout, "="))
    local said = lines_with(r.stderr, "train_micro_batch_size_per_gpu")
    assert.same({ 'profrun: note: train_batch_size, train_micro_batch_size_per_gpu, '
      .. 'gradient_accumulation_steps are "auto" (Hugging Face\'s placeholder): each keeps the '
      .. "default (profrun --help-config lists it)" }, said)
    -- DeepSpeed's own "auto" values keep their notes (ds_training, ds_optimizer, ds_scheduler)
    assert.equal(1, #lines_with(r.stderr, 'fp16.enabled is "auto"'))
    assert.equal(1, #lines_with(r.stderr, 'optimizer.params.lr is "auto"'))
  end)

  it("HF's ZeRO-3 config too: \"auto\" inside zero_optimization passes the loader", function()
    local r = run.profrun({ run.ROOT .. "/spec/fixtures/configs/hf_auto_zero3.json", SCRIPT })
    assert.equal(0, r.code, r.stderr)
    assert.truthy(r.stdout:find("engine.gradient_accumulation_steps=1\n", 1, true))
    assert.equal(1, #lines_with(r.stderr, 'gradient_accumulation_steps are "auto"'))
    assert.equal(1, #lines_with(r.stderr, "zero_optimization (stage 3: partitions across processes)"))
  end)

  it("--set KEY=auto reads as the default too, and a key given a number is not noted", function()
    local r = run.profrun({ "--set", "gradient_accumulation_steps=auto", "--set",
      "train_micro_batch_size_per_gpu=8", SCRIPT })
    assert.equal(0, r.code, r.stderr)
    assert.truthy(r.stdout:find("train_micro_batch_size_per_gpu=8\n", 1, true))
    assert.truthy(r.stdout:find("engine.gradient_accumulation_steps=1\n", 1, true))
    assert.same({ 'profrun: note: gradient_accumulation_steps is "auto" (Hugging Face\'s '
      .. "placeholder): it keeps the default (profrun --help-config lists it)" },
      lines_with(r.stderr, "note:"))
  end)

  it("a row whose default is not null keeps it (flops_profiler.top_modules: 1)", function()
    local cfg = assert(core.load_config(nil, { "flops_profiler.top_modules=auto",
      "flops_profiler.detailed=auto" }))
    assert.equal(1, cfg.flops_profiler.top_modules)
    assert.is_true(cfg.flops_profiler.detailed)
    assert.same({ "flops_profiler.top_modules", "flops_profiler.detailed" }, cfg.auto_keys)
  end)

  it("is noted once per run however often the config is installed", function()
    local said, sink = {}, notes.sink
    notes.reset()
    notes.sink = function(msg)
      if msg:find("train_batch_size", 1, true) then said[#said + 1] = msg end
    end
    local cfg = assert(config.load(HF, {}))
    config.set(cfg)
    config.set(cfg)
    notes.sink = sink
    assert.equal(1, #said)
    assert.truthy(said[1]:find("^train_batch_size, train_micro_batch_size_per_gpu, "
      .. "gradient_accumulation_steps are \"auto\""), said[1])
  end)

  it("stays an error where \"auto\" could be a real value or is no choice (exit 2)", function()
    for _, c in ipairs({
      { "device=auto", 'device: expected one of "meta", "cpu", "cuda", got string "auto"' },
      { "flops_profiler.conventions=auto", 'flops_profiler.conventions: expected one of "exact", '
        .. '"deepspeed", got string "auto"' },
      { "train_batch_size=Auto", 'train_batch_size: expected a positive integer, got string "Auto"' },
    }) do
      local r = run.profrun({ "--set", c[1], SCRIPT })
      assert.equal(2, r.code, c[1])
      assert.equal("profrun: --set " .. c[1] .. ": " .. c[2] .. "\n", r.stderr)
    end
  end)
end)
