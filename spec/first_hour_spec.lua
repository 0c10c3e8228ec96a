-- first_hour_spec.lua — what a new user meets first: tracebacks, --verbose, arguments, a relocated binary.
local run = require "spec.support.run"

local CONFIGS = run.ROOT .. "/spec/fixtures/configs/"

local function script(text)
  local dir = run.tmpdir()
  run.write(dir, "s.lua", text)
  return dir, dir .. "/s.lua"
end

-- A module whose forward calls a helper that fails on a shape (lines 6 and 7 of the script).
local FAILING_MODEL = [[
local prof = require "prof"
local nn = require "prof.nn"
local T = require "prof.tensor"
local Bad = nn.Module:extend("Bad")
function Bad:forward(x)
  local function helper(v) return v:matmul(T.ones({ 5, 5 })) end
  local y = helper(x)
  return y
end
local model = nn.Sequential(Bad())
]]

describe("a script error inside the model", function()
  for _, case in ipairs({
    { "through get_model_profile", "prof.get_model_profile { model = model, input_shape = { 2, 3 } }\n" },
    { "through the engine", "prof.initialize { model = model }(T.randn({ 2, 3 }))\n" },
  }) do
    it("shows the forward's and its helper's lines " .. case[1], function()
      local dir, path = script(FAILING_MODEL .. case[2])
      for _, flags in ipairs({ {}, { "--verbose" } }) do
        local args = { "--device", "cpu" }
        for _, f in ipairs(flags) do args[#args + 1] = f end
        args[#args + 1] = path
        local r = run.profrun(args)
        assert.equal(1, r.code)
        assert.truthy(r.stderr:find("in module '0' (Bad): matmul: shapes [2, 3] and [5, 5]", 1, true), r.stderr)
        assert.truthy(r.stderr:find("s.lua:6: in local 'helper'", 1, true), r.stderr)
        assert.truthy(r.stderr:find("s.lua:7: in method 'forward'", 1, true), r.stderr)
        assert.truthy(r.stderr:find("s.lua:11: in main chunk", 1, true), r.stderr)
      end
      run.rmdir_all(dir)
    end)
  end
end)

describe("profrun --verbose", function()
  it("lists the DeepSpeed keys it does not apply, not the ones the engine applies", function()
    local dir, path = script("print('ok')\n")
    run.write(dir, "c.json", '{ "scheduler": { "type": "WarmupLR", "params": { "warmup_num_steps": 10 } }, '
      .. '"gradient_clipping": 1.0, "fp16": { "enabled": false }, "zero_optimization": { "stage": 2 }, '
      .. '"steps_per_print": 10 }')
    local r = run.profrun({ "--verbose", dir .. "/c.json", path })
    assert.equal(0, r.code, r.stderr)
    assert.truthy(r.stderr:find("DeepSpeed keys accepted but not used: zero_optimization, steps_per_print\n",
      1, true), r.stderr)
    run.rmdir_all(dir)
  end)
end)

describe("a config written after the script", function()
  it("runs as written (the file is the script's argument) and says so once", function()
    local dir, path = script("print('ran with ' .. tostring((...)))\n")
    run.write(dir, "c.json", "{}")
    local r = run.profrun({ path, dir .. "/c.json" })
    assert.equal(0, r.code, r.stderr)
    assert.equal("ran with " .. dir .. "/c.json\n", r.stdout)
    local _, n = r.stderr:gsub("profrun: note: " .. (dir .. "/c.json comes after the script " .. path
      .. ", so it is the script's argument and no config is read; a config goes first"):gsub("%p", "%%%0"), "")
    assert.equal(1, n, r.stderr)
    -- after "--", or when it is not a file yet (an output the script writes): nothing said
    for _, args in ipairs({ { path, "--", dir .. "/c.json" }, { path, dir .. "/new.json" } }) do
      r = run.profrun(args)
      assert.equal(0, r.code, r.stderr)
      assert.equal("", r.stderr)
    end
    run.rmdir_all(dir)
  end)
end)

describe("flops_profiler.profile_step beyond the run", function()
  it("says once that the profile step was never reached", function()
    local r = run.profrun({ "--device", "cpu", "--set", "flops_profiler.enabled=true",
      "--set", "flops_profiler.profile_step=5",
      CONFIGS .. "ds_example_onebit.json", run.FIXTURES .. "/train_small.lua" })
    assert.equal(0, r.code, r.stderr)
    local _, n = r.stderr:gsub("flops_profiler.profile_step 5 was never reached %(the run took 2 optimizer "
      .. "steps, numbered from 0%): no flops profile was printed", "")
    assert.equal(1, n, r.stderr)
    assert.is_nil(r.stdout:find("DeepSpeed Flops Profiler", 1, true))
  end)
end)

describe("a copied binary", function()
  it("says where it looked for its package, and still answers --help and --version", function()
    local dir = run.tmpdir()
    -- dir/x/bin/profrun: the two places are dir/x/share/profrun and dir (the bin's grandparent)
    os.execute("mkdir -p " .. run.quote(dir .. "/x/bin") .. " && cp " .. run.quote(run.PROFRUN) .. " "
      .. run.quote(dir .. "/x/bin/profrun"))
    local bin = dir .. "/x/bin/profrun"
    local r = run.sh(run.quote(bin) .. " x.lua", dir)
    assert.equal(2, r.code)
    assert.truthy(r.stderr:find("profrun: cannot find its Lua package: no " .. dir
      .. "/x/bin/../share/profrun/lua/prof/init.lua nor " .. dir .. "/lua/prof/init.lua", 1, true), r.stderr)
    r = run.sh(run.quote(bin) .. " --help", dir)
    assert.equal(0, r.code)
    assert.truthy(r.stdout:find("usage: profrun [--set KEY=VALUE]...", 1, true))
    r = run.sh(run.quote(bin) .. " --version", dir)
    assert.equal(0, r.code)
    assert.truthy(r.stdout:match("^profrun %d+%.%d+%.%d+ %(Lua 5%.4%)\n$"), r.stdout)
    run.rmdir_all(dir)
  end)
end)
