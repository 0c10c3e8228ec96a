-- schedule_spec.lua — prof.schedule and the profile's transitions against torch's table.
--
-- Expected values are literals worked out by hand from torch.profiler's schedule() and
-- _transit_action table (torch/profiler/profiler.py, 1.13), not produced by the code under test: for each
-- step s, subtract skip_first (NONE before it), add wait when skip_first_wait, NONE once
-- s / (wait + warmup + active) >= repeat > 0, else by s mod n: < wait NONE, < wait + warmup
-- WARMUP, < n - 1 RECORD, else RECORD_AND_SAVE. Transitions are then read off the table.
local prof = require "prof"
local schedule = require "prof.schedule"

local N, W, R, S = "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE"

local warnings
local real_warn = schedule.warn
before_each(function()
  warnings = {}
  schedule.warn = function(msg) warnings[#warnings + 1] = msg end
end)
after_each(function() schedule.warn = real_warn end)

local function actions(sched, n)
  local out = {}
  for step = 0, n - 1 do out[#out + 1] = sched(step) end
  return out
end

describe("prof.schedule", function()
  it("follows torch's schedule for a grid of parameters", function()
    local grid = {
      { { wait = 1, warmup = 1, active = 2, ["repeat"] = 1 }, { N, W, R, S, N, N, N, N } },
      { { wait = 0, warmup = 0, active = 1 }, { S, S, S, S, S } },
      { { wait = 2, warmup = 1, active = 3, ["repeat"] = 2, skip_first = 1 },
        { N, N, N, W, R, R, S, N, N, W, R, R, S, N, N } },
      { { wait = 2, warmup = 1, active = 1, ["repeat"] = 2, skip_first_wait = 1 },
        { W, S, N, N, W, S, N, N } },
      { { wait = 0, warmup = 1, active = 1 }, { W, S, W, S, W, S } },
      { { wait = 5, warmup = 2, active = 6, ["repeat"] = 2 },
        { N, N, N, N, N, W, W, R, R, R, R, R, S, N, N, N, N, N, W, W, R, R, R, R, R, S, N, N } },
      { { wait = 1, warmup = 0, active = 3, ["repeat"] = 1, skip_first = 2, skip_first_wait = 1 },
        { N, N, R, R, S, N, N } },
    }
    for _, case in ipairs(grid) do
      assert.same(case[2], actions(prof.schedule(case[1]), #case[2]))
    end
  end)

  it("cycles forever with repeat = 0", function()
    local s = prof.schedule{ wait = 1, warmup = 1, active = 1 }
    assert.same({ N, W, S }, { s(3000), s(3001), s(3002) })
    assert.equal(S, s(3 * 1000000 + 2))
  end)

  it("warns when there is no warmup, and refuses bad arguments", function()
    prof.schedule{ wait = 1, active = 1 }
    assert.same({ "Profiler won't be using warmup, this can skew profiler results" }, warnings)
    assert.error_matches(function() prof.schedule{ wait = 1 } end, "active is required")
    assert.error_matches(function() prof.schedule{ active = 0 } end, "active must be >= 1")
    assert.error_matches(function() prof.schedule{ active = 1, wait = -1 } end, "wait must be >= 0")
    assert.error_matches(function() prof.schedule{ active = 1.5 } end, "active must be an integer")
  end)

  it("holds torch's transition table cell by cell", function()
    -- torch/profiler/profiler.py, action_map (None = leaving the profiler: "exit")
    local expected = {
      [N] = { [N] = {}, [W] = { "prepare" }, [R] = { "prepare", "start" },
              [S] = { "prepare", "start" }, exit = {} },
      [W] = { [N] = { "warn", "start", "stop" }, [W] = {}, [R] = { "start" }, [S] = { "start" },
              exit = { "start", "stop" } },
      [R] = { [N] = { "warn", "stop" }, [W] = { "warn", "stop" }, [R] = {}, [S] = {},
              exit = { "stop", "trace_ready" } },
      [S] = { [N] = { "stop", "trace_ready" }, [W] = { "stop", "trace_ready", "prepare" },
              [R] = { "stop", "trace_ready", "prepare", "start" },
              [S] = { "stop", "trace_ready", "prepare", "start" }, exit = { "stop", "trace_ready" } },
    }
    for prev, row in pairs(expected) do
      for cur, items in pairs(row) do
        assert.same(items, schedule.transition(prev, cur), prev .. " -> " .. cur)
      end
    end
  end)
end)

-- Runs a profile over `steps` step() calls, then leaves it; returns the transition log and the
-- step numbers at which on_trace_ready ran.
local function drive(sched, steps)
  local log, ready = {}, {}
  local p = prof.profile{ schedule = sched, log = log,
    on_trace_ready = function(q) ready[#ready + 1] = q.step_num end }
  local marks = {}
  for _ = 1, steps do
    p:step()
    marks[#marks + 1] = #log
  end
  p:stop()
  return log, ready, marks
end

describe("prof.profile's schedule", function()
  it("delivers a trace in the step() that leaves the last active step", function()
    local log, ready = drive(prof.schedule{ wait = 1, warmup = 1, active = 2, ["repeat"] = 1 }, 6)
    -- step 1 NONE->WARMUP, 2 WARMUP->RECORD, 3 RECORD->SAVE, 4 SAVE->NONE
    assert.same({ "prepare", "start", "stop", "trace_ready" }, log)
    assert.same({ 4 }, ready)
  end)

  it("gives one trace per step with active = 1 and no wait, and one more at exit", function()
    local log, ready = drive(prof.schedule{ wait = 0, warmup = 0, active = 1 }, 3)
    assert.same({ "prepare", "start",
      "stop", "trace_ready", "prepare", "start",
      "stop", "trace_ready", "prepare", "start",
      "stop", "trace_ready", "prepare", "start",
      "stop", "trace_ready" }, log)
    assert.same({ 1, 2, 3, 3 }, ready)
  end)

  it("delivers a partial trace when left mid-window, none when left in warmup", function()
    local sched = { wait = 1, warmup = 1, active = 3, ["repeat"] = 1 }
    local log, ready = drive(prof.schedule(sched), 3)      -- left at step 3: RECORD
    assert.same({ "prepare", "start", "stop", "trace_ready" }, log)
    assert.same({ 3 }, ready)
    log, ready = drive(prof.schedule(sched), 1)            -- left at step 1: WARMUP
    assert.same({ "prepare", "start", "stop" }, log)
    assert.same({}, ready)
  end)

  it("keeps cycling with repeat = 0: 1,000 cycles, 1,000 traces", function()
    local _, ready = drive(prof.schedule{ wait = 1, warmup = 1, active = 1 }, 3000)
    assert.equal(1000, #ready)
    assert.equal(3, ready[1])
    assert.equal(3000, ready[1000])
  end)

  it("warns on a schedule that leaves RECORD for NONE", function()
    local calls = 0
    local sched = function(step) calls = calls + 1 return step == 1 and R or N end
    local log = drive(sched, 2)
    assert.same({ "prepare", "start", "warn", "stop" }, log)
    assert.same({ "Incorrect schedule: RECORD followed by NONE or WARMUP" }, warnings)
    assert.is_true(calls >= 3)
  end)
end)

describe("schedule scripts", function()
  it("loads the standard one by name", function()
    local s = assert(schedule.load("standard", { wait = 1, warmup = 1, active = 2, ["repeat"] = 1 }))
    assert.same({ N, W, R, S, N }, actions(s, 5))
  end)

  it("records every N steps", function()
    local s = assert(schedule.load("every_n", { every = 4 }))
    assert.same({ N, N, W, S, N, N, W, S }, actions(s, 8))
  end)

  it("records the steps after one slower than the running median", function()
    local s = assert(schedule.load("slow_steps", { percent = 50, warmup = 1, active = 2,
      min_steps = 3 }))
    local times = { 100, 100, 100, 100, 200, 100, 100, 100, 100 }
    local got = { s(0, {}) }
    for i, t in ipairs(times) do got[#got + 1] = s(i, { step_ns = t }) end
    -- the 5th step (200 > 1.5 x 100) triggers warmup, record, record-and-save
    assert.same({ N, N, N, N, N, W, R, S, N, N }, got)
  end)

  it("says when a script is missing", function()
    local s, err = schedule.load("no_such_schedule", {})
    assert.is_nil(s)
    assert.matches("schedule script 'no_such_schedule' not found", err, 1, true)
  end)
end)

describe("schedule.at_step (the engine's flops profiler window)", function()
  it("records step k alone, on the same state machine as prof.schedule", function()
    local warned = 0
    local real = schedule.warn
    schedule.warn = function() warned = warned + 1 end
    local fn = schedule.at_step(3)
    local got = {}
    for s = 0, 7 do got[#got + 1] = fn(s) end
    assert.same({ "NONE", "NONE", "NONE", "RECORD_AND_SAVE", "NONE", "NONE", "NONE", "NONE" }, got)
    assert.equal(0, warned)
    -- the same actions prof.schedule gives for skip_first = 3, active = 1, repeat = 1
    local ref = schedule.schedule{ skip_first = 3, warmup = 0, active = 1, ["repeat"] = 1 }
    schedule.warn = real
    assert.equal(1, warned)   -- prof.schedule's own warmup warning, which at_step does not give
    for s = 0, 7 do assert.equal(ref(s), fn(s)) end
  end)
end)
