-- cuda_unavailable_spec.lua — no CUPTI here: a config demanding "cuda" exits 2 first, a script asking is warned.
local prof = require "prof"
local nn = require "prof.nn"
local T = require "prof.tensor"
local capture = require "prof.profiler.capture"
local schedule = require "prof.schedule"
local run = require "spec.support.run"

-- The capture's own answer on this machine: the reason every message must carry (CI and the build
-- machines have no driver; on a machine with a GPU the same specs check the other branch).
local available, why = capture.available()

local SCRIPT = 'print("the script ran")\n'

describe("a config that demands the cuda activity", function()
  local dir
  before_each(function() dir = run.tmpdir() end)
  after_each(function() run.rmdir_all(dir) end)

  it("exits 2 before the script runs, naming the file, the key and why (runs where CUPTI can)", function()
    local cfg = run.write(dir, "gpu.json",
      '{"profiler": {"enabled": true, "activities": ["cpu", "cuda"]}}')
    local script = run.write(dir, "s.lua", SCRIPT)
    local r = run.profrun({ cfg, script })
    if available then
      assert.equal(0, r.code)
      assert.equal("the script ran\n", r.stdout:match("^[^\n]*\n"))
    else
      assert.equal(2, r.code)
      assert.equal("", r.stdout)                 -- the script never ran
      assert.equal(string.format('profrun: %s: profiler.activities: "cuda" needs the GPU capture: %s\n',
        cfg, why), r.stderr)
    end
  end)

  it("exits 2 the same way when --set demands it, and not when the profiler is off", function()
    local script = run.write(dir, "s.lua", SCRIPT)
    local r = run.profrun({ "--set", "profiler.enabled=true", "--set", 'profiler.activities=["cuda"]',
      script })
    if not available then
      assert.equal(2, r.code)
      assert.equal(string.format('profrun: profiler.activities: "cuda" needs the GPU capture: %s\n', why),
        r.stderr)
    end
    -- activities are the profiler's: with it off, "cuda" demands nothing
    r = run.profrun({ "--set", 'profiler.activities=["cuda"]', script })
    assert.equal(0, r.code)
    assert.equal("the script ran\n", r.stdout)
  end)
end)

describe("a script that asks for the cuda activity", function()
  local warned, real_warn, real_available
  before_each(function()
    warned = {}
    real_warn, real_available = schedule.warn, capture.available
    schedule.warn = function(msg) warned[#warned + 1] = msg end
    T.set_default_device("cpu")
  end)
  after_each(function()
    schedule.warn, capture.available = real_warn, real_available
  end)

  local function profile_linear()
    local m = nn.Linear(4, 4)
    local p = prof.profile{ activities = { "cpu", "cuda" } }
    m(T.randn({ 2, 4 }))
    p:stop()
    return p
  end

  it("is warned once, with the capture's reason, and gets a CPU-only profile", function()
    capture.available = function() return false, "no CUDA driver (spec)" end
    local p = profile_linear()
    assert.same({ 'profile: activities "cuda": no CUDA driver (spec); recording the CPU only' }, warned)
    assert.is_false(p.activities.cuda)
    assert.is_nil(p:capture_stats())
    local text = p:key_averages():table()
    assert.truthy(text:find("aten::linear", 1, true))
    assert.is_nil(text:find("CUDA", 1, true))
  end)

  it("says this machine's reason through the real capture (a GPU machine captures, unwarned)", function()
    local p = profile_linear()
    if available then
      assert.same({}, warned)
      assert.is_true(p.activities.cuda)
    else
      assert.same({ string.format('profile: activities "cuda": %s; recording the CPU only', why) }, warned)
      assert.is_false(p.activities.cuda)
    end
  end)

  it("warns through profrun on stderr and still prints the CPU table (exit 0)", function()
    local dir = run.tmpdir()
    local script = run.write(dir, "s.lua", [[
local prof = require "prof"
local nn = require "prof.nn"
local T = require "prof.tensor"
local m = nn.Linear(4, 4)
local p = prof.profile{ activities = { "cuda" } }
m(T.randn({ 2, 4 }))
p:stop()
io.write(p:key_averages():table())
]])
    local r = run.profrun({ "--device", "cpu", script })
    run.rmdir_all(dir)
    assert.equal(0, r.code)
    assert.truthy(r.stdout:find("aten::linear", 1, true))
    if not available then
      assert.equal(string.format(
        'profrun: warning: profile: activities "cuda": %s; recording the CPU only\n', why), r.stderr)
      assert.is_nil(r.stdout:find("CUDA", 1, true))
    end
  end)
end)
