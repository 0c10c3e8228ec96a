-- config_spec.lua — the config schema seen from Lua and the command line: --help-config, typos in
-- DeepSpeed's sections, real DeepSpeed configs as plain tables, README's table.
local config = require "prof.config"
local core = require "prof.core"
local run = require "spec.support.run"

local ROOT = run.ROOT
local NOOP = run.FIXTURES .. "/noop.lua"
local CONFIGS = ROOT .. "/spec/fixtures/configs"

describe("the config schema", function()
  local tmp
  before_each(function() tmp = run.tmpdir() end)
  after_each(function() run.rmdir_all(tmp) end)

  local function write(name, text) return run.write(tmp, name, text) end

  it("profrun --help-config lists every key with its type, default and doc, and exits 0", function()
    local r = run.profrun({ "--help-config" })
    assert.equal(0, r.code)
    assert.equal("", r.stderr)
    assert.equal(core.config_help(), r.stdout)
    local keys = core.config_keys()
    assert.equal(44, #keys)
    for _, k in ipairs(keys) do
      if k.type == "object" then
        assert.truthy(r.stdout:find("\n" .. k.path .. ": " .. k.doc .. "\n", 1, true), k.path)
      else
        local line = string.format("  %-38s %-22s %-9s %s\n", k.path, k.type, k.default, k.doc)
        assert.truthy(r.stdout:find(line, 1, true), line)
      end
    end
    -- by hand, so that a change to the schema's words shows here
    assert.truthy(r.stdout:find("\n  flops_profiler.top_modules             int >= 1               1 ",
      1, true))
    assert.truthy(r.stdout:find("\n  profiler.activities                    [cpu|cuda]             "
      .. '["cpu"] ', 1, true))
    assert.truthy(r.stdout:find("\n  profiler.schedule.script               string or null         "
      .. "null      a schedule script", 1, true))
    assert.truthy(r.stdout:find("\n  profiler.schedule.args                 any object or null     "
      .. "null      the table given to the schedule script", 1, true))
  end)

  it("names a typo inside DeepSpeed's sections with the closest documented key (exit 2)", function()
    local cases = {
      { '{"fp16": {"enabeld": true}}', 'unknown key "fp16.enabeld" (did you mean "enabled"?)' },
      { '{"zero_optimization": {"stag": 2}}',
        'unknown key "zero_optimization.stag" (did you mean "stage"?)' },
      { '{"optimizer": {"type": "Adam", "parms": {"lr": 0.1}}}',
        'unknown key "optimizer.parms" (did you mean "params"?)' },
    }
    for _, c in ipairs(cases) do
      local path = write("typo.json", c[1])
      local r = run.profrun({ path, NOOP })
      assert.equal(2, r.code)
      assert.equal("profrun: " .. path .. ": " .. c[2] .. "\n", r.stderr)
    end
    local r = run.profrun({ "--set", "fp16.enabeld=true", CONFIGS .. "/minimal.json", NOOP })
    assert.equal(2, r.code)
    assert.equal('profrun: --set fp16.enabeld=true: unknown key "fp16.enabeld" (did you mean '
      .. '"enabled"?)\n', r.stderr)
  end)

  it("refuses an optimizer DeepSpeed would not build before the script runs (exit 2)", function()
    local r = run.profrun({ "--set", "optimizer.params.amsgrad=true",
      CONFIGS .. "/optimizer_adam.json", NOOP })
    assert.equal(2, r.code)
    assert.equal("profrun: --set optimizer.params.amsgrad=true: optimizer.params.amsgrad: "
      .. "DeepSpeed's FusedAdam does not support AMSGrad (torch's Adam does: set \"torch_adam\": "
      .. "true)\n", r.stderr)
    assert.equal("", r.stdout)
  end)

  it("loads real DeepSpeed configs, their sections as plain tables", function()
    -- its batch keys are for 8 processes: 256 = 8 x 4 x 8
    local cfg = assert(config.load(CONFIGS .. "/ds_zero3_fp16.json", nil, 8))
    assert.equal(3, cfg.zero_optimization.stage)
    assert.equal(math.tointeger(1e8), cfg.zero_optimization.offload_param.buffer_size)
    assert.equal("nvme", cfg.zero_optimization.offload_param.device)
    assert.is_true(cfg.fp16.enabled)
    assert.equal(16, cfg.fp16.initial_scale_power)
    assert.equal(core.null, cfg.activation_checkpointing.number_checkpoints)
    assert.equal("WarmupDecayLR", cfg.scheduler.type)
    assert.equal(2000, cfg.scheduler.params.warmup_num_steps)
    assert.equal(1.0, cfg.gradient_clipping)
    assert.same({ type = "adamw", params = { lr = 3e-4, betas = { 0.9, 0.95 }, eps = 1e-8,
      weight_decay = 0.1 } }, cfg.optimizer)
    -- the core's sections as before, the activity profiler's with its defaults
    assert.equal(256, cfg.train_batch_size)
    assert.is_true(cfg.flops_profiler.enabled)
    assert.same({ enabled = false, activities = { "cpu" }, record_shapes = false,
      profile_memory = false, with_stack = false, with_flops = false, with_modules = false,
      emit_nvtx = false, schedule = { wait = 0, warmup = 0, active = 1, ["repeat"] = 0, skip_first = 0 } },
      cfg.profiler)

    cfg = assert(config.load(CONFIGS .. "/ds_bf16_zero2.json"))
    assert.is_true(cfg.bf16.enabled)
    assert.equal("Warn", cfg.checkpoint.tag_validation)
    assert.same({ 2, 4, 6 }, cfg.elasticity.micro_batch_sizes)
    assert.same({ type = "adam", params = { lr = 1e-4, weight_decay = 0.01, torch_adam = true,
      adam_w_mode = true } }, cfg.optimizer)
    for _, name in ipairs({ "ds_zero3_fp16.json", "ds_bf16_zero2.json" }) do
      -- under the launcher of the 8 processes ds_zero3_fp16.json's batch keys are for
      local r = run.sh("WORLD_SIZE=8 " .. run.quote(run.PROFRUN) .. " " .. run.quote(CONFIGS .. "/" .. name)
        .. " " .. run.quote(NOOP))
      assert.equal(0, r.code, r.stderr)
      assert.equal("", r.stderr)
    end
  end)

  it("validates the activity profiler's section", function()
    local cfg = assert(config.load(nil, { 'profiler={"enabled": true, "activities": ["cpu", "cuda"], '
      .. '"schedule": {"wait": 1, "warmup": 1, "active": 3, "repeat": 2}, "trace_file": "t.json"}' }))
    assert.same({ "cpu", "cuda" }, cfg.profiler.activities)
    assert.equal(3, cfg.profiler.schedule.active)
    assert.equal("t.json", cfg.profiler.trace_file)
    local _, msg = config.load(nil, { "profiler.schedule.active=0" })
    assert.equal("--set profiler.schedule.active=0: profiler.schedule.active: expected a positive "
      .. "integer, got number 0", msg)
    _, msg = config.load(nil, { "profiler.schedul.active=1" })
    assert.equal('--set profiler.schedul.active=1: unknown key "profiler.schedul" (did you mean '
      .. '"schedule"?)', msg)
  end)

  it("README.md's configuration table is the schema's", function()
    local readme = assert(run.read(ROOT .. "/README.md"))
    local block = readme:match("<!%-%- config table: generated from the schema %-%->\n(.-)<!%-%- end")
    assert.equal(config.markdown_table(), block)
  end)
end)
