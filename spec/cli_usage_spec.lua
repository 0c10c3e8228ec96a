-- cli_usage_spec.lua — errors that say what to fix, at the command line: usage and
-- config mistakes are exit 2 before the script runs, each message naming the flag, key or path.
local env = require "spec.support.env"
local run = require "spec.support.run"

local FIX = run.FIXTURES
local ROOT = run.ROOT
local META = FIX .. "/deepspeed_meta.json"
local NOOP = FIX .. "/noop.lua"
local LENET = FIX .. "/lenet5_top1.lua"
local NEAR = FIX .. "/near_config"

describe("profrun usage errors", function()
  local tmp

  before_each(function() tmp = run.tmpdir() end)
  after_each(function() run.rmdir_all(tmp) end)

  local function write(name, text) return run.write(tmp, name, text) end

  describe("a device this build cannot run is refused before the script", function()
    -- the script would print if it ran; refusing means it never does
    local PRINTS = "print('the script ran')"
    -- the Makefile builds the cuda backend when nvcc is there; with it and without a driver the
    -- probe's reason is cudart's text for cudaErrorInsufficientDriver (the driver API is absent)
    local built = io.open("/usr/local/cuda/bin/nvcc", "r")
    if built then built:close() end
    local REASON = built and "device 'cuda': no CUDA driver found (cudaGetDeviceCount: CUDA driver "
        .. "version is insufficient for CUDA runtime version; libcuda.so.1 is not installed)"
      or "device 'cuda' is not available in this build; use 'meta' or 'cpu'"
    -- on a machine whose driver and GPU work (gpu-check.sh's), cuda is no such device: the run goes
    local usable = require("prof.core").device_status("cuda")

    it("--device cuda exits 2 with the registry's reason, and the script does not run", function()
      local script = write("prints.lua", PRINTS)
      local r = run.profrun({ "--device", "cuda", META, script })
      if usable then
        assert.equal(0, r.code, r.stderr)
        assert.equal("the script ran\n", r.stdout)
        return
      end
      assert.equal(2, r.code)
      assert.equal("", r.stdout)
      assert.truthy(env.has(r.stderr,
        "--device cuda: " .. REASON))
    end)

    it("\"device\": \"cuda\" in the config exits 2 naming the file and the key", function()
      local cfg = write("cuda.json", '{"device": "cuda"}')
      local r = run.profrun({ cfg, write("prints.lua", PRINTS) })
      if usable then
        assert.equal(0, r.code, r.stderr)
        return
      end
      assert.equal(2, r.code)
      assert.equal("", r.stdout)
      assert.truthy(env.has(r.stderr, cfg .. ": device: " .. REASON))
      r = run.profrun({ "--set", "device=cuda", META, write("p2.lua", PRINTS) })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, "--set device=cuda: device: " .. REASON))
    end)

    it("the answer comes from the runtime's device registry", function()
      local core = require "prof.core"
      assert.is_true(core.device_status("cpu"))
      assert.is_true(core.device_status("meta"))
      local ok, why = core.device_status("cuda")
      if usable then
        assert.is_true(ok)
      else
        assert.is_false(ok)
        assert.equal(REASON, why)
      end
      ok, why = core.device_status("tpu")
      assert.is_false(ok)
      assert.equal("unknown device 'tpu' (expected meta, cpu or cuda)", why)
    end)
  end)

  describe("config mistakes found when the config is loaded", function()
    it("an unknown flops_profiler.format exits 2 naming the key and the built-in formats", function()
      local r = run.profrun({ "--set", "flops_profiler.format=html", META, LENET })
      assert.equal(2, r.code)
      assert.equal("", r.stdout)   -- nothing was profiled
      assert.truthy(env.has(r.stderr, "--set flops_profiler.format=html: flops_profiler.format: "
        .. "unknown report format 'html' (built in: deepspeed, json, csv, markdown, summary, "
        .. "roofline; or the path of a .lua report script)"))
      assert.falsy(env.has(r.stderr, "traceback"))
    end)

    it("a missing rule script exits 2 naming the key and every path searched", function()
      local cfg = write("rules.json", '{"flops_profiler": {"rules": ["megatron", "nosuch.lua"]}}')
      local r = run.profrun({ cfg, LENET })
      assert.equal(2, r.code)
      assert.equal("", r.stdout)
      assert.truthy(env.has(r.stderr, cfg .. ": flops_profiler.rules[2]: flop rule script "
        .. "'nosuch.lua' not found (searched '" .. tmp .. "/nosuch.lua', '" .. ROOT
        .. "/scripts/rules/nosuch.lua')"))
      assert.falsy(env.has(r.stderr, "nosuch.lua.lua"))
    end)

    it("a missing ignore script and a missing report script, each by its key", function()
      local cfg = write("ign.json", '{"flops_profiler": {"ignore_modules": ["Tanh", "gone.lua"]}}')
      local r = run.profrun({ cfg, LENET })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, cfg .. ": flops_profiler.ignore_modules[2]: ignore script "
        .. "'gone.lua' not found (searched '" .. tmp .. "/gone.lua', '" .. ROOT
        .. "/scripts/ignore/gone.lua')"))
      cfg = write("rep.json", '{"report": {"script": "reports/mine.lua"}}')
      r = run.profrun({ cfg, LENET })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, cfg .. ": report.script: report script 'reports/mine.lua' "
        .. "not found (searched '" .. tmp .. "/reports/mine.lua'"))
      cfg = write("fmt.json", '{"flops_profiler": {"format": "mine.lua"}}')
      r = run.profrun({ cfg, LENET })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, cfg .. ": flops_profiler.format: report script 'mine.lua' "
        .. "not found"))
    end)

    -- DeepSpeed's training sections: these exited 1 with a traceback from prof.initialize, after the script
    -- had started (the optimizer's were config errors already)
    it("a wrong scheduler, fp16 or gradient_clipping value exits 2 before the script runs", function()
      local script = write("prints.lua", "print('the script ran')")
      local cases = {
        { '{"scheduler": {"type": "WarmupLRR"}}', 'scheduler.type: expected one of WarmupLR, '
          .. 'WarmupDecayLR, OneCycle, WarmupCosineLR, LRRangeTest, got "WarmupLRR"' },
        { '{"scheduler": {"type": "WarmupLR", "params": {"warmup_max": 1}}}',
          'unknown key "scheduler.params.warmup_max" for scheduler type "WarmupLR"' },
        { '{"scheduler": {"type": "WarmupDecayLR", "params": {"total_num_steps": "auto"}}}',
          'scheduler.params.total_num_steps: "auto" has no default outside Hugging Face\'s '
          .. "Trainer: give a value" },
        { '{"fp16": {"enabled": true, "loss_scale": -1}}', "fp16.loss_scale: expected a number >= 0, "
          .. "got -1" },
        { '{"fp16": {"enabled": true}, "bf16": {"enabled": true}}', "fp16 and bf16 cannot both be "
          .. "enabled (DeepSpeed refuses it)" },
        { '{"gradient_clipping": -2}', "gradient_clipping: expected a number >= 0, got -2" },
      }
      for i, case in ipairs(cases) do
        local cfg = write("train" .. i .. ".json", case[1])
        local r = run.profrun({ cfg, script })
        assert.equal(2, r.code, case[1] .. "\n" .. r.stderr)
        assert.equal("", r.stdout)   -- the script did not run
        assert.equal("profrun: " .. cfg .. ": " .. case[2] .. "\n", r.stderr)
      end
      local r = run.profrun({ "--set", "gradient_clipping=-1", script })
      assert.equal(2, r.code)
      assert.equal("profrun: --set gradient_clipping=-1: gradient_clipping: expected a number >= 0, "
        .. "got -1\n", r.stderr)
      -- fp16's keys are read only when fp16 is enabled, as the engine reads them; "auto" is no
      -- mistake and its note is said once, by the engine, not by the check
      for _, text in ipairs({ '{"fp16": {"enabled": false, "loss_scale": -1}}',
                              '{"scheduler": {"type": "WarmupLR", "params": {"warmup_num_steps": "auto"}}}' }) do
        r = run.profrun({ write("ok.json", text), script })
        assert.equal(0, r.code, r.stderr)
        assert.equal("the script ran\n", r.stdout)
        assert.equal("", r.stderr)
      end
    end)
  end)

  describe("script paths in a config are read against the config's folder", function()
    -- near_config/profile.json names linear_1k.lua (a rule: 1,000 MACs per Linear call),
    -- skip_conv3.lua (ignores feature_extractor.6) and macs_report.lua (prints fwd_macs), all
    -- beside it. LeNet5 at batch 2: convolutions 235,200 + 480,000 + 96,000 MACs, Linear layers
    -- 20,160 + 1,680. With the rule and conv3 ignored: 235,200 + 480,000 + 2 x 1,000 = 717,200.
    it("from another working directory, config given by absolute path", function()
      local r = run.profrun({ NEAR .. "/profile.json", LENET }, tmp)
      assert.equal(0, r.code, r.stderr)
      assert.equal("fwd_macs 717200\n", r.stdout)
      assert.same({}, run.list(tmp))
    end)

    it("and by a relative path from the folder above it", function()
      local r = run.profrun({ "near_config/profile.json", LENET }, FIX)
      assert.equal(0, r.code, r.stderr)
      assert.equal("fwd_macs 717200\n", r.stdout)
    end)

    it("a path given by --set is read against the working directory, as typed", function()
      -- LeNet5 under deepspeed_meta.json (in spec/fixtures/cli) with the rule: 811,200 + 2,000
      local r = run.profrun({ "--set", 'flops_profiler.rules=["near_config/linear_1k.lua"]',
        "--set", "report.script=near_config/macs_report.lua", META, LENET }, FIX)
      assert.equal(0, r.code, r.stderr)
      assert.equal("fwd_macs 813200\n", r.stdout)
      r = run.profrun({ "--set", 'flops_profiler.rules=["near_config/linear_1k.lua"]', META, LENET }, tmp)
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, "--set flops_profiler.rules=[\"near_config/linear_1k.lua\"]: "
        .. "flops_profiler.rules[1]: flop rule script 'near_config/linear_1k.lua' not found "
        .. "(searched 'near_config/linear_1k.lua', '" .. ROOT .. "/scripts/rules/near_config/linear_1k.lua')"))
    end)

    it("a name not beside the config is looked up in scripts/<kind>/", function()
      -- "megatron" is scripts/rules/megatron.lua; LeNet5 has none of its types, so the run only
      -- has to find it (a warning about unused types comes from unmatched.lua, not here)
      local cfg = write("m.json", '{"device": "meta", "flops_profiler": {"rules": ["megatron"]}}')
      local r = run.profrun({ cfg, LENET })
      assert.equal(0, r.code, r.stderr)
      assert.truthy(env.has(r.stdout, "fwd MACs per GPU:"))
    end)
  end)

  describe("a directory given as the script", function()
    it("is a usage error (exit 2) naming it, as for the config", function()
      local r = run.profrun({ META, tmp })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, "script '" .. tmp .. "' is a directory, expected a Lua file"))
      r = run.profrun({ tmp, NOOP })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, tmp .. ": cannot read: Is a directory"))
    end)
  end)

  describe("the directory check reads nothing from the script", function()
    it("a script from bash's <(...) (a pipe opened twice: checked, then loaded) runs whole", function()
      local cmd = run.quote(run.PROFRUN) .. " " .. run.quote(META) .. [[ <(printf 'print("from a pipe")\n')]]
      local r = run.sh("timeout 60 bash -c " .. run.quote(cmd))
      assert.equal(0, r.code, r.stderr)
      assert.equal("from a pipe\n", r.stdout)
    end)
  end)

  describe("the config is optional", function()
    it("profrun SCRIPT.lua runs with the built-in defaults", function()
      -- the defaults: device meta under profrun, exact conventions, detailed tree
      local r = run.profrun({ LENET })
      assert.equal(0, r.code, r.stderr)
      assert.truthy(env.has(r.stdout, "DeepSpeed Flops Profiler"))
      assert.truthy(env.has(r.stdout, "Detailed Profile per GPU"))
      local script = write("args.lua", "print(require('prof.core').default_device(), ...)")
      r = run.profrun({ script, "one", "two" })
      assert.equal(0, r.code, r.stderr)
      assert.equal("meta\tone\ttwo\n", r.stdout)
    end)

    it("every example runs without a config", function()
      local h = io.popen("ls " .. run.quote(ROOT .. "/examples") .. "/*.lua")
      local n = 0
      for path in h:lines() do
        local args = { path }
        if path:match("model_profile%.lua$") then args[2], args[3] = "--model", "lenet5" end
        local r = run.profrun(args, tmp)
        assert.equal(0, r.code, path .. ": " .. tostring(r.stderr))
        n = n + 1
      end
      h:close()
      assert.is_true(n >= 8)
      -- only trace_loop.lua writes, as torch's tutorial does: its traces under ./log
      local left = run.list(tmp)
      assert.same({ "log" }, left)
    end)

    it("--model nope suggests a command that works, and that command works", function()
      local r = run.profrun({ "examples/model_profile.lua", "--model", "lenet" })
      assert.equal(1, r.code)
      local cmd = r.stderr:match("`(profrun [^`]+)`")
      assert.truthy(cmd, r.stderr)
      assert.truthy(env.has(r.stderr, "did you mean 'lenet5'?"))
      local words = {}
      for w in cmd:gmatch("%S+") do words[#words + 1] = w end
      table.remove(words, 1)
      local listed = run.profrun(words)
      assert.equal(0, listed.code, listed.stderr)
      local names = {}
      for _, l in ipairs(run.lines(listed.stdout)) do names[l] = true end
      assert.is_true(names.lenet5)
      assert.is_true(names.alexnet)
    end)
  end)

  describe("a flag without its value names the flag", function()
    it("--set before the config (its value forgotten)", function()
      local r = run.profrun({ "--set", META, NOOP })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, "--set needs KEY=VALUE (e.g. --set flops_profiler.top_modules=3), got '"
        .. META .. "'"))
      r = run.profrun({ "--set" })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, "--set needs KEY=VALUE"))
    end)

    it("--device before the config, or last", function()
      local r = run.profrun({ "--device", META, NOOP })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, "--device needs a value: meta, cpu or cuda"))
      r = run.profrun({ "--device" })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, "--device needs a value: meta, cpu or cuda"))
      assert.falsy(env.has(r.stderr, "expected CONFIG.json"))
    end)
  end)

  describe("a trailing comma", function()
    it("is named, with the line and column of the comma", function()
      -- line 3 is `    "top_modules": 3,`: 4 spaces, `"top_modules":` (columns 5-18), a space,
      -- `3` (20) and the comma at column 21. Python's json: "Illegal trailing comma before end
      -- of object: line 3 column 21".
      local cfg = write("tc.json", '{\n  "flops_profiler": {\n    "top_modules": 3,\n  }\n}\n')
      local r = run.profrun({ cfg, NOOP })
      assert.equal(2, r.code)
      assert.truthy(env.has(r.stderr, cfg .. ":3:21: invalid JSON: trailing comma before '}'"))
    end)

    it("is named when the bracket after it is followed by another (the issue's one-liner)", function()
      -- `{"flops_profiler": {"top_modules": 3,}}`: `{` (1), `"flops_profiler"` (2-17), `:` (18),
      -- a space, `{` (20), `"top_modules"` (21-33), `:` (34), a space, `3` (36), the comma at 37
      -- and `}}` (38, 39; on line 2 in the second text). cJSON stops past the first '}', on the
      -- second; before, that read "invalid JSON near '}'". Python's json points at the bracket
      -- after the comma: "line 1 column 38 (char 37)".
      for _, text in ipairs({ '{"flops_profiler": {"top_modules": 3,}}',
                              '{"flops_profiler": {"top_modules": 3,\n}}' }) do
        local cfg = write("tc1.json", text)
        local r = run.profrun({ cfg, NOOP })
        assert.equal(2, r.code)
        assert.truthy(env.has(r.stderr, cfg .. ":1:37: invalid JSON: trailing comma before '}'"),
                      r.stderr)
      end
    end)
  end)

  describe("output file extensions", function()
    it("o.JSON is JSON, as o.json", function()
      local path = tmp .. "/o.JSON"
      local r = run.profrun({ "--set", "flops_profiler.output_file=" .. path, META, LENET })
      assert.equal(0, r.code, r.stderr)
      local text = assert(run.read(path))
      assert.truthy(env.has(text, '"schema": "profrun.profile/1"'))
      assert.truthy(env.has(text, '"fwd_macs": 833040'))
      -- and .CSV / .Md pick their reports too (report.format_for, what the run uses)
      local report = require "prof.report"
      assert.equal("csv", report.format_for(nil, "a/b.CSV"))
      assert.equal("markdown", report.format_for(nil, "b.Md"))
      assert.equal("json", report.format_for(nil, "b.Json"))
    end)

    it("print_model_profile after end_profile raises, as get_total_flops does", function()
      local prof = require "prof"
      local models = require "prof.models"
      local core = require "prof.core"
      local device = core.default_device()
      core.set_default_device("meta")
      local p = prof.FlopsProfiler(models.lenet5())
      p:start_profile()
      p:end_profile()
      core.set_default_device(device)
      local ok, err = pcall(p.get_total_flops, p)
      assert.is_false(ok)
      assert.truthy(env.has(err, "FlopsProfiler: call start_profile first"))
      ok, err = pcall(p.print_model_profile, p)
      assert.is_false(ok)
      assert.truthy(env.has(err, "FlopsProfiler: call start_profile first"), err)
    end)
  end)
end)

describe("what cannot be a path or a key is refused", function()
  local tmp

  before_each(function() tmp = run.tmpdir() end)
  after_each(function() run.rmdir_all(tmp) end)

  it("a NUL (\\u0000) in output_file, from the file or from --set, writes nothing", function()
    local cfg = tmp .. "/nul.json"
    local f = assert(io.open(cfg, "w"))
    -- `{"flops_profiler": {"output_file": "` is 36 bytes; the backslash is at column 37 +
    -- the length of tmp and "/a"
    local target = tmp .. "/a"
    f:write('{"flops_profiler": {"output_file": "' .. target .. '\\u0000b.json"}}')
    f:close()
    local r = run.profrun({ cfg, LENET })
    assert.equal(2, r.code)
    assert.truthy(env.has(r.stderr, string.format("%s:1:%d: a NUL character (\\u0000) in a string",
      cfg, 37 + #target)))
    r = run.profrun({ "--set", 'flops_profiler.output_file="' .. target .. '\\u0000b.json"', META, LENET })
    assert.equal(2, r.code)
    assert.truthy(env.has(r.stderr, "a NUL character (\\u0000) in a string"))
    assert.same({ "nul.json" }, run.list(tmp))
  end)

  it("a NUL in an output_file the script passes writes nothing, not a file at the cut path", function()
    local script = tmp .. "/nul_out.lua"
    local f = assert(io.open(script, "w"))
    f:write('local prof = require "prof"\nlocal models = require "prof.models"\n'
      .. "prof.get_model_profile { model = models.lenet5(), input_shape = { 2, 1, 32, 32 },\n"
      .. '  output_file = "' .. tmp .. '/cut\\0x.json" }\n')
    f:close()
    local r = run.profrun({ script })
    assert.equal(1, r.code)
    assert.truthy(env.has(r.stderr, tmp .. "/cut\\0...: a path cannot hold a NUL byte; nothing written"),
      r.stderr)
    assert.same({ "nul_out.lua" }, run.list(tmp))
  end)

  it("a NUL in a key is refused instead of read as the key before it", function()
    local cfg = tmp .. "/nulkey.json"
    local f = assert(io.open(cfg, "w"))
    f:write('{"flops_profiler": {"top_modules\\u0000x": 3}}')
    f:close()
    local r = run.profrun({ cfg, NOOP })
    assert.equal(2, r.code)
    assert.truthy(env.has(r.stderr, cfg .. ":1:33: a NUL character (\\u0000) in a string"))
  end)

  it("string sizes are refused: nn.Linear(\"3\", \"4\") and T.empty({2, \"3\"})", function()
    local nn = require "prof.nn"
    local T = require "prof.tensor"
    local ok, err = pcall(nn.Linear, "3", "4")
    assert.is_false(ok)
    assert.truthy(env.has(err, "Linear: argument 'in_features' is the string \"3\", expected a number"))
    ok, err = pcall(T.empty, { 2, "3" })
    assert.is_false(ok)
    assert.truthy(env.has(err, "shape entry 2 is a string (\"3\"), expected an integer"))
    -- strings that are not numbers are still arguments (Conv2d's padding_mode)
    assert.equal("zeros", nn.Conv2d(1, 1, 3, { padding_mode = "zeros" }).padding_mode)
  end)
end)
