-- config_schedule_spec.lua — profiler.schedule.script/args choose a schedule
-- script (scripts/schedules/ or a path beside the config) for a script that only calls prof.step().
local core = require "prof.core"
local run = require "spec.support.run"

local STEPS = run.FIXTURES .. "/steps_only.lua"
local EVERY_N = run.FIXTURES .. "/every_n.json"

-- The windows profrun printed: { {to = step_num, steps = {"step_2", ...}}, ... } in order.
local function windows(stdout)
  local out, cur = {}, nil
  for line in stdout:gmatch("[^\n]+") do
    local to = line:match("^profrun: activity profiler, window %d+ %(to step (%d+)%)$")
    if to then
      cur = { to = tonumber(to), steps = {} }
      out[#out + 1] = cur
    elseif cur then
      local name = line:match("^%s*(step_%d+)%s")
      if name then cur.steps[#cur.steps + 1] = name end
    end
  end
  for _, w in ipairs(out) do table.sort(w.steps) end
  return out
end

describe("profiler.schedule.script in the config", function()
  it("every_n with args records exactly the steps its definition gives", function()
    -- every_n{every = 4, warmup = 1, active = 2} is schedule{wait = every - warmup - active = 1,
    -- warmup = 1, active = 2, repeat = 0}: a cycle of 4 steps, NONE WARMUP RECORD
    -- RECORD_AND_SAVE, so steps 2-3, 6-7, 10-11 of 0..11 are recorded, each window handed over
    -- in the prof.step() that leaves its last step (step_num 4, 8, 12).
    local r = run.profrun({ EVERY_N, STEPS })
    assert.equal(0, r.code, r.stderr)
    assert.same({
      { to = 4, steps = { "step_2", "step_3" } },
      { to = 8, steps = { "step_6", "step_7" } },
      { to = 12, steps = { "step_10", "step_11" } },
    }, windows(r.stdout))
  end)

  it("args reach the script as a Lua table (repeat = 1: one window only)", function()
    local r = run.profrun({ "--set",
      'profiler.schedule.args={"every": 3, "warmup": 0, "active": 1, "repeat": 1, "skip_first": 4}',
      EVERY_N, STEPS })
    -- every 3, warmup 0, active 1 after 4 skipped: NONE NONE SAVE from step 4, so step 6 only
    assert.equal(0, r.code, r.stderr)
    assert.same({ { to = 7, steps = { "step_6" } } }, windows(r.stdout))
  end)

  it("--set reaches one key inside args, the file's others kept", function()
    -- every = 6 with the file's warmup 1, active 2: wait 3, so steps 4-5 and 10-11
    local r = run.profrun({ "--set", "profiler.schedule.args.every=6", EVERY_N, STEPS })
    assert.equal(0, r.code, r.stderr)
    assert.same({ { to = 6, steps = { "step_4", "step_5" } }, { to = 12, steps = { "step_10", "step_11" } } },
      windows(r.stdout))
  end)

  it("a script beside the config is found before scripts/schedules/, from any directory", function()
    local dir = run.tmpdir()
    run.write(dir, "odd.lua", [[
return function(args)
  local s = require "prof.schedule"
  return function(step) return step % 2 == 1 and step < args.upto and s.RECORD_AND_SAVE or s.NONE end
end
]])
    run.write(dir, "c.json", '{"profiler": {"enabled": true, "schedule": {"script": "odd.lua", '
      .. '"args": {"upto": 4}}}}')
    local r = run.profrun({ dir .. "/c.json", STEPS }, "/")
    run.rmdir_all(dir)
    assert.equal(0, r.code, r.stderr)
    assert.same({ { to = 2, steps = { "step_1" } }, { to = 4, steps = { "step_3" } } },
      windows(r.stdout))
  end)

  it("a schedule name that is not found is a config error naming the key and the paths (exit 2)",
    function()
    local dir = run.tmpdir()
    run.write(dir, "c.json", '{"profiler": {"enabled": true, "schedule": {"script": "evry_n"}}}')
    local r = run.profrun({ dir .. "/c.json", STEPS })
    run.rmdir_all(dir)
    assert.equal(2, r.code)
    assert.equal("", r.stdout)
    assert.equal(string.format("profrun: %s/c.json: profiler.schedule.script: schedule script "
      .. "'evry_n' not found (searched '%s/evry_n', '%s/scripts/schedules/evry_n.lua')\n",
      dir, dir, run.ROOT), r.stderr)
  end)

  it("args of the wrong type are a config error (exit 2): not an object, or refused by the "
    .. "script", function()
    local r = run.profrun({ "--set", "profiler.schedule.args=[4]", EVERY_N, STEPS })
    assert.equal(2, r.code)
    assert.equal("profrun: --set profiler.schedule.args=[4]: profiler.schedule.args: expected an "
      .. "object or null, got an array\n", r.stderr)
    r = run.profrun({ "--set", 'profiler.schedule.args={"every": "4"}', EVERY_N, STEPS })
    assert.equal(2, r.code)
    assert.equal("", r.stdout)
    assert.truthy(r.stderr:find('^profrun: %-%-set profiler%.schedule%.args={"every": "4"}: '
      .. "profiler%.schedule%.script: schedule script .-/scripts/schedules/every_n%.lua: every_n: "
      .. "every must be a number >= warmup %+ active %(2%), got 4"), r.stderr)
  end)

  it("a broken script, args without a script, and rows beside a script are config errors",
    function()
    local dir = run.tmpdir()
    run.write(dir, "five.lua", "return 5\n")
    for _, c in ipairs({
      { '{"schedule": {"script": "five.lua"}}', "profiler.schedule.script: schedule script "
        .. dir .. "/five.lua must return function(args) -> function(step) -> action, got number" },
      { '{"schedule": {"args": {"every": 2}}}', "profiler.schedule.args: given without "
        .. "profiler.schedule.script" },
      { '{"schedule": {"script": "every_n", "args": {"every": 2}, "active": 3}}',
        "profiler.schedule.active: not used with profiler.schedule.script" },
    }) do
      run.write(dir, "c.json", '{"profiler": ' .. c[1] .. "}")
      local r = run.profrun({ dir .. "/c.json", STEPS })
      assert.equal(2, r.code, c[1])
      assert.equal("", r.stdout)
      assert.truthy(r.stderr:find("profrun: " .. dir .. "/c.json: " .. c[2], 1, true), r.stderr)
    end
    run.rmdir_all(dir)
  end)

  it("--help-config lists the new rows from the schema", function()
    local r = run.profrun({ "--help-config" })
    assert.equal(0, r.code)
    assert.truthy(r.stdout:find("  profiler.schedule.script               string or null", 1, true))
    assert.truthy(r.stdout:find("  profiler.schedule.args                 any object or null", 1,
      true))
    local rows = {}
    for _, k in ipairs(core.config_keys()) do rows[k.path] = k.type end
    assert.equal("any object or null", rows["profiler.schedule.args"])
  end)
end)
