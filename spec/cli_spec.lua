-- cli_spec.lua — build/bin/profrun end to end: usage, exit codes, config errors, precedence.
-- The contract is README.md's "Command line" and "Configuration".
local env = require "spec.support.env"
local run = require "spec.support.run"
local json = require "dkjson"

local FIX = run.FIXTURES
local ROOT = run.ROOT
local DEFAULT = FIX .. "/deepspeed_meta.json"

-- A failing run must leave nothing in dir: neither the output file nor a temporary beside it.
local function assert_nothing_written(dir)
  assert.same({}, run.list(dir))
end

describe("profrun", function()
  local tmp, out

  before_each(function()
    tmp = run.tmpdir()
    out = tmp .. "/out.json"
  end)

  after_each(function()
    run.rmdir_all(tmp)
  end)

  -- Runs profrun with --set flops_profiler.output_file=<tmp>/out.json in front of args.
  local function with_output(args)
    local full = { "--set", "flops_profiler.output_file=" .. out }
    for _, a in ipairs(args) do full[#full + 1] = a end
    return run.profrun(full)
  end

  describe("usage", function()
    it("--help prints the synopsis on stdout and exits 0", function()
      local r = run.profrun({ "--help" })
      assert.equal(0, r.code)
      -- the synopsis is the README's, word for word
      assert.truthy(env.has(r.stdout, "usage: profrun [--set KEY=VALUE]... [--device cpu|cuda|meta] "
        .. "[--verbose] CONFIG.json SCRIPT.lua [ARGS...]"))
      assert.truthy(env.has(r.stdout, "--set"))
      assert.truthy(env.has(r.stdout, "--device"))
      assert.equal("", r.stderr)
    end)

    it("--version prints the version of prof.h and exits 0", function()
      -- the version comes from core/prof/prof.h's PROF_VERSION, read here independently of the binary
      local header = assert(run.read(ROOT .. "/core/prof/prof.h"))
      local version = assert(header:match('#define PROF_VERSION "([^"]+)"'))
      local r = run.profrun({ "--version" })
      assert.equal(0, r.code)
      assert.truthy(r.stdout:match("^profrun " .. version:gsub("%.", "%%.") .. "[ \n]"))
    end)

    it("without arguments exits 2 with a usage message", function()
      local r = run.profrun({})
      assert.equal(2, r.code)
      assert.equal("", r.stdout)
      assert.truthy(env.has(r.stderr, "CONFIG.json"))
      assert.truthy(env.has(r.stderr, "--help"))
    end)

    it("with only a config exits 2", function()
      local r = run.profrun({ DEFAULT })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, "SCRIPT.lua"))
    end)

    it("an unknown option exits 2 naming it", function()
      local r = with_output({ "--frobnicate", DEFAULT, FIX .. "/noop.lua" })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, "--frobnicate"))
      assert_nothing_written(tmp)
    end)

    it("--set without a value exits 2 (after SCRIPT.lua it is one of the script's ARGS)", function()
      local r = run.profrun({ DEFAULT, FIX .. "/noop.lua", "--set" })
      -- after CONFIG and SCRIPT everything is ARGS: this one runs, and "--set" reaches the script
      assert.equal(0, r.code)
      r = run.profrun({ "--set" })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, "--set"))
    end)
  end)

  describe("config errors exit 2", function()
    it("a missing config file, naming the path", function()
      local missing = tmp .. "/no_such_config.json"
      local r = with_output({ missing, FIX .. "/noop.lua" })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, missing))
      assert.equal("", r.stdout)
      assert.same({}, run.list(tmp))
    end)

    it("malformed JSON, with FILE:LINE:COLUMN of the error", function()
      -- fixtures/cli/malformed.json, line 5 is `    "detailed": ture`: 4 spaces (columns 1-4),
      -- `"detailed":` (11 bytes, columns 5-15), a space (16), and `ture` starts at column 17.
      -- Python's json agrees: "Expecting value: line 5 column 17 (char 82)".
      local path = FIX .. "/malformed.json"
      local r = with_output({ path, FIX .. "/lenet5_top1.lua" })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, path .. ":5:17:"))
      assert.truthy(env.has(r.stderr, "ture"))
      assert_nothing_written(tmp)
    end)

    it("an unknown key, naming its path and the closest known key", function()
      local r = with_output({ FIX .. "/unknown_key.json", FIX .. "/lenet5_top1.lua" })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, "flops_profiler.top_module"))
      assert.truthy(env.has(r.stderr, "top_modules"))
      assert.truthy(env.has(r.stderr, "unknown_key.json"))
      assert_nothing_written(tmp)
    end)

    it("a value of the wrong type, naming the key path", function()
      local r = with_output({ FIX .. "/wrong_type.json", FIX .. "/lenet5_top1.lua" })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, "flops_profiler.detailed"))
      assert.truthy(env.has(r.stderr, "\"yes\""))
      assert_nothing_written(tmp)
    end)

    it("--set with a bad value, naming the --set", function()
      local r = with_output({ "--set", "flops_profiler.top_modules=three", DEFAULT,
        FIX .. "/lenet5_top1.lua" })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, "--set flops_profiler.top_modules=three"))
      assert_nothing_written(tmp)
    end)

    it("--set of an unknown key, naming it and the closest known key", function()
      local r = with_output({ "--set", "flops_profiler.modul_depth=2", DEFAULT,
        FIX .. "/noop.lua" })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, "flops_profiler.modul_depth"))
      assert.truthy(env.has(r.stderr, "module_depth"))
      assert_nothing_written(tmp)
    end)

    it("--device with an unknown device", function()
      local r = with_output({ "--device", "tpu", DEFAULT, FIX .. "/noop.lua" })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, "tpu"))
      assert_nothing_written(tmp)
    end)

    it("a missing script", function()
      local missing = tmp .. "/no_such_script.lua"
      local r = with_output({ DEFAULT, missing })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, missing))
      assert.same({}, run.list(tmp))
    end)
  end)

  describe("script errors exit 1", function()
    it("a Lua syntax error, naming the file and line", function()
      local r = with_output({ DEFAULT, FIX .. "/syntax_error.lua" })
      assert.equal(1, r.code)
      assert.truthy(env.has(r.stderr, "syntax_error.lua:3:"))
      assert_nothing_written(tmp)
    end)

    it("a runtime error, with the message and a traceback on stderr", function()
      local r = with_output({ DEFAULT, FIX .. "/runtime_error.lua" })
      assert.equal(1, r.code)
      assert.truthy(env.has(r.stderr, "runtime_error.lua:2: deliberate failure in inner"))
      assert.truthy(env.has(r.stderr, "stack traceback:"))
      -- the frames of the script: inner (line 2), outer (line 3), the main chunk (line 4)
      assert.truthy(env.has(r.stderr, "runtime_error.lua:3:"))
      assert.truthy(env.has(r.stderr, "runtime_error.lua:4:"))
      assert_nothing_written(tmp)
    end)

    it("a runtime error after the profile was written keeps the profile, whole", function()
      local r = with_output({ DEFAULT, FIX .. "/profile_then_fail.lua" })
      assert.equal(1, r.code)
      assert.truthy(env.has(r.stderr, "failing after the profile was written"))
      assert.same({ "out.json" }, run.list(tmp))
      local doc = json.decode(assert(run.read(out)))
      assert.equal("profrun.profile/1", doc.schema)
      assert.equal(61706, doc.params)   -- LeNet-5's, as DeepSpeed counts them
    end)

    it("a wrong input shape names the module path and both shapes", function()
      -- LeNet5's first layer is Conv2d(1, 6, 5): weight [6, 1, 5, 5]; the input has 3 channels
      local r = with_output({ DEFAULT, FIX .. "/bad_shape.lua" })
      assert.equal(1, r.code)
      assert.truthy(env.has(r.stderr, "'feature_extractor.0'"))
      assert.truthy(env.has(r.stderr, "Conv2d"))
      assert.truthy(env.has(r.stderr, "[2, 3, 32, 32]"))
      assert.truthy(env.has(r.stderr, "[6, 1, 5, 5]"))
      assert.truthy(env.has(r.stderr, "stack traceback:"))
      assert_nothing_written(tmp)
    end)
  end)

  describe("precedence: defaults < config file < script < --set/--device", function()
    -- top3_brief.json sets top_modules 3 and detailed false; lenet5_top1.lua passes top_modules = 1
    -- and no `detailed`.
    local CFG = FIX .. "/top3_brief.json"
    local SCRIPT = FIX .. "/lenet5_top1.lua"
    local DETAILED = "Detailed Profile per GPU"

    it("the script's top_modules beats the config file's", function()
      local r = run.profrun({ CFG, SCRIPT })
      assert.equal(0, r.code)
      assert.truthy(env.has(r.stdout, "\nTop 1 modules in terms of"))
      assert.falsy(env.has(r.stdout, "Top 3 modules"))
    end)

    it("--set beats the script", function()
      local r = run.profrun({ "--set", "flops_profiler.top_modules=3", CFG, SCRIPT })
      assert.equal(0, r.code)
      assert.truthy(env.has(r.stdout, "\nTop 3 modules in terms of"))
      -- depth 2 of LeNet5 has more than 3 classes, so three entries show; by params:
      -- Conv2d 156 + 2416 + 48120 = 50.69 K, Linear 10164 + 850 = 11.01 K, then Tanh 0 (first seen)
      assert.truthy(env.has(r.stdout,
        "    params      - {'Conv2d': '50.69 K', 'Linear': '11.01 K', 'Tanh': '0'}\n"))
    end)

    it("a key the script leaves out comes from the config file", function()
      local r = run.profrun({ CFG, SCRIPT })
      assert.falsy(env.has(r.stdout, DETAILED))              -- "detailed": false in the file
      r = run.profrun({ DEFAULT, SCRIPT })
      assert.truthy(env.has(r.stdout, DETAILED))             -- the built-in default is true
      r = run.profrun({ "--set", "flops_profiler.detailed=true", CFG, SCRIPT })
      assert.truthy(env.has(r.stdout, DETAILED))
    end)

    it("--device meta redirects a tensor the script puts on the cpu", function()
      local cpu = FIX .. "/cpu.json"
      local r = run.profrun({ cpu, FIX .. "/device.lua" })
      assert.equal(0, r.code)
      assert.truthy(env.has(r.stdout, "tensor device: cpu\n"))
      -- on the cpu the forward runs and is timed: a duration such as "2.3 us"
      assert.truthy(r.stdout:match("\nlatency: [%d.]+ [mun]?s\n"))
      r = run.profrun({ "--device", "meta", cpu, FIX .. "/device.lua" })
      assert.equal(0, r.code)
      assert.truthy(env.has(r.stdout, "tensor device: meta\n"))
      assert.truthy(env.has(r.stdout, "\nlatency: n/a\n"))   -- nothing runs on meta
    end)

    it("--verbose lists the keys of a real ds_config that profrun does not use", function()
      local path = ROOT .. "/spec/fixtures/configs/ds_zero3_fp16.json"
      local ds = assert(json.decode(assert(run.read(path))))
      -- the keys README.md's config table documents as used (optimizer builds prof.initialize's
      -- optimizer), and the sections the engine applies (fp16, gradient_clipping, scheduler);
      -- every other top-level key of this DeepSpeed config (zero_optimization, ...) is accepted
      -- but unused
      local used = {
        train_batch_size = true, train_micro_batch_size_per_gpu = true,
        gradient_accumulation_steps = true, wall_clock_breakdown = true, flops_profiler = true,
        optimizer = true, fp16 = true, gradient_clipping = true, scheduler = true,
      }
      local unused = {}
      for k in pairs(ds) do
        if not used[k] then unused[#unused + 1] = k end
      end
      table.sort(unused)
      assert.same({ "activation_checkpointing", "aio", "comms_logger", "prescale_gradients",
        "steps_per_print", "tensorboard", "zero_optimization" }, unused)
      -- its batch keys are for 8 processes (256 = 8 x 4 x 8), as the launcher says
      local function profrun8(args)
        local words = { "WORLD_SIZE=8", run.quote(run.PROFRUN) }
        for _, a in ipairs(args) do words[#words + 1] = run.quote(a) end
        return run.sh(table.concat(words, " "))
      end
      local quiet = profrun8({ path, FIX .. "/noop.lua" })
      assert.equal(0, quiet.code, quiet.stderr)
      assert.equal("", quiet.stderr)
      local r = profrun8({ "--verbose", path, FIX .. "/noop.lua" })
      assert.equal(0, r.code)
      -- one process: DeepSpeed's batch assertion, with what the config is for
      local one = run.profrun({ path, FIX .. "/noop.lua" })
      assert.equal(2, one.code)
      assert.truthy(one.stderr:find("(it is a config for 8 data-parallel processes: run them, with "
        .. "mpirun or WORLD_SIZE, or lower train_batch_size)", 1, true), one.stderr)
      for _, k in ipairs(unused) do
        assert.truthy(r.stderr:find("[%s:,]" .. k .. "[,%s]"), k .. " not listed: " .. r.stderr)
      end
      for k in pairs(used) do
        assert.falsy(r.stderr:find("[%s:,]" .. k .. "[,%s]"), k .. " listed as unused")
      end
    end)
  end)

  describe("environment", function()
    it("runs from another working directory, with relative paths there", function()
      -- relative to /: config and script are found from the cwd, the package from the binary
      local r = run.profrun({ DEFAULT:sub(2), (FIX .. "/lenet5_top1.lua"):sub(2) }, "/")
      assert.equal(0, r.code)
      assert.truthy(env.has(r.stdout, "DeepSpeed Flops Profiler"))
      r = run.profrun({ DEFAULT, FIX .. "/lenet5_top1.lua" }, tmp)
      assert.equal(0, r.code)
      assert.truthy(env.has(r.stdout, "fwd MACs per GPU:"))
      assert.same({}, run.list(tmp))   -- and writes nothing into the cwd
    end)

    it("passes ARGS to the script as ... and in arg", function()
      local script = FIX .. "/args.lua"
      local r = run.profrun({ DEFAULT, script, "one", "two words", "--set" })
      assert.equal(0, r.code)
      assert.equal(table.concat({
        "n 3", "... 1 one", "... 2 two words", "... 3 --set",
        "arg 0 " .. script, "arg 1 one", "arg 2 two words", "arg 3 --set", "",
      }, "\n"), r.stdout)
    end)
  end)

  describe("output files", function()
    it("output_file=<dir>/sub/out.json creates the parents, gets the JSON, not stdout", function()
      local path = tmp .. "/sub/out.json"
      local r = run.profrun({ "--set", "flops_profiler.output_file=" .. path, DEFAULT,
        FIX .. "/lenet5_top1.lua" })
      assert.equal(0, r.code)
      assert.equal("", r.stdout)                   -- the report went to the file
      assert.same({ "out.json" }, run.list(tmp .. "/sub"))   -- no temporary left beside it
      local doc = assert(json.decode(assert(run.read(path))))
      assert.equal("profrun.profile/1", doc.schema)
      assert.equal("LeNet5", doc.modules[1].type)
      -- LeNet5 at batch 2 (DeepSpeed's per-sample numbers / 512): 426,516,480 / 512 MACs
      assert.equal(833040, doc.fwd_macs)
    end)

    it("a text output file holds DeepSpeed's report", function()
      local path = tmp .. "/report.txt"
      local r = run.profrun({ "--set", "flops_profiler.output_file=" .. path, DEFAULT,
        FIX .. "/lenet5_top1.lua" })
      assert.equal(0, r.code)
      assert.equal("", r.stdout)
      local text = assert(run.read(path))
      assert.truthy(env.has(text, "-------------------------- DeepSpeed Flops Profiler"))
      assert.same({ "report.txt" }, run.list(tmp))
    end)
  end)
end)
