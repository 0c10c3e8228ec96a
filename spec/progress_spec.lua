-- progress_spec.lua — a progress line with an ETA on stderr for long runs, only
-- when stderr is a terminal; nothing at all when it is a pipe or a file.
local run = require "spec.support.run"
local progress = require "prof.util.progress"

describe("progress", function()
  local saved, written, now

  before_each(function()
    saved = { progress.is_terminal, progress.clock, progress.write }
    written, now = {}, 100
    progress.clock = function() return now end
    progress.write = function(s) written[#written + 1] = s end
  end)
  after_each(function()
    progress.is_terminal, progress.clock, progress.write = saved[1], saved[2], saved[3]
  end)

  it("the line: steps done of total, seconds per step, and the time left", function()
    -- 12 of 40 steps in 18 s: 1.5 s/step, 28 left: 42 s
    assert.equal("profrun: step 12/40, 1.50 s/step, ETA 42 s", progress.line("step", 12, 40, 18))
    -- 10 of 100 in 20 s: 2 s/step, 90 left: 180 s = 3 min 00 s
    assert.equal("profrun: step 10/100, 2.00 s/step, ETA 3 min 00 s", progress.line("step", 10, 100, 20))
    -- no total: no ETA
    assert.equal("profrun: step 7, 0.50 s/step", progress.line("step", 7, nil, 3.5))
  end)

  it("on a terminal: silent for the first seconds, then at most twice a second, then cleared", function()
    progress.is_terminal = function() return true end
    local t = progress.new({ total = 10 })
    now = 101; t:tick(1)                       -- 1 s in: a short run shows nothing
    assert.same({}, written)
    now = 103; t:tick(2)                       -- 3 s in: 1.5 s/step, 8 left
    now = 103.2; t:tick(3)                     -- 0.2 s after the last line: skipped
    now = 104; t:tick(4)                       -- 4 s: 1 s/step, 6 left
    t:finish()
    assert.same({ "\rprofrun: step 2/10, 1.50 s/step, ETA 12 s\27[K",
      "\rprofrun: step 4/10, 1.00 s/step, ETA 6 s\27[K", "\r\27[K" }, written)
  end)

  it("not on a terminal: nothing, however long the run", function()
    progress.is_terminal = function() return false end
    local t = progress.new({ total = 10 })
    for i = 1, 10 do
      now = now + 60
      t:tick(i)
    end
    t:finish()
    assert.same({}, written)
  end)

  it("the engine's steps count towards the profiled step: 3 of 4 after three steps", function()
    local prof = require "prof"
    local nn = require "prof.nn"
    local T = require "prof.tensor"
    local F = require "prof.nn.functional"
    progress.is_terminal = function() return true end
    -- every clock read is 3 s later: the first line is due at once, one line per step
    progress.clock = function() now = now + 3 return now end
    local cfg = { train_micro_batch_size_per_gpu = 4, flops_profiler = { enabled = true,
      profile_step = 3, output_file = os.tmpname() } }
    local engine = prof.initialize { model = nn.Sequential(nn.Linear(6, 3)), config = cfg }
    for _ = 1, 3 do
      engine:backward(F.cross_entropy(engine(T.randn({ 4, 6 })), T.tensor({ 0, 1, 2, 0 })))
      engine:step()
    end
    os.remove(cfg.flops_profiler.output_file)
    progress.finish_all()
    assert.equal(4, #written)
    assert.matches("^\rprofrun: step 1/4, [%d.]+ s/step, ETA %d+ s\27%[K$", written[1])
    assert.matches("^\rprofrun: step 3/4, ", written[3])
    assert.equal("\r\27[K", written[4])
  end)

  it("core.is_terminal: false for a pipe or a file, true under a pseudo-terminal", function()
    local tmp = run.tmpdir()
    local path = tmp .. "/tty.lua"
    local f = assert(io.open(path, "w"))
    f:write("io.stdout:write(tostring(require('prof.core').is_terminal(2)))\n")
    f:close()
    local piped = run.profrun({ path })
    assert.equal("false", piped.stdout)
    -- script(1) (util-linux, Essential in Debian) runs the command on a pseudo-terminal
    local tty = run.sh("script -qec " .. run.quote(run.quote(run.PROFRUN) .. " " .. run.quote(path))
      .. " /dev/null")
    run.rmdir_all(tmp)
    assert.equal(0, tty.code)
    assert.matches("true", tty.stdout)
  end)

  it("a training run whose stderr is a pipe writes nothing there", function()
    local r = run.profrun({ "--device", "cpu", "configs/train.json", "examples/train_engine.lua" })
    assert.equal(0, r.code, r.stderr)
    assert.equal("", r.stderr)
  end)
end)
