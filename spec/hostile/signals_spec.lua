-- signals_spec.lua — signals sent to a child profrun and os.exit in its script: no staged output outlives the run.
-- A catchable signal after the report is staged removes it (and the directories
-- made for it) and still ends the process by that signal; SIGKILL's leftover is removed by the
-- next run; os.exit(0) commits the outputs like a normal end, any other status drops them.
local h = require "spec.hostile.harness"
local run = require "spec.support.run"

local SIGNALS = { HUP = 1, INT = 2, QUIT = 3, ABRT = 6, BUS = 7, USR1 = 10, SEGV = 11, USR2 = 12,
                  PIPE = 13, ALRM = 14, TERM = 15, XCPU = 24, XFSZ = 25 }

-- Starts cmd in the background (SIGINT and SIGQUIT at their defaults: sh ignores them for
-- background jobs), waits until the script has written $DIR/staged (its pid), sends sig to that
-- pid and waits: the line's status is the run's (128 + n when signal n ended it).
local function signal_after_staging(sig, after)
  return function(ctx, cmd)
    local staged = run.quote(ctx.dir .. "/staged")
    return "env --default-signal=INT,QUIT " .. cmd .. " & pid=$!; i=0; "
      .. "while [ ! -e " .. staged .. " ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done; "
      .. "kill -" .. sig .. " $(cat " .. staged .. "); wait $pid; rc=$?"
      .. (after and ("; " .. after(ctx)) or "; exit $rc")
  end
end

-- A run killed once it has staged x.txt, then a plain run writing `next` in the same folder: the
-- killed run's temporary is there before the next run, and gone after it.
local function killed_then_next(name, next)
  return {
    name = name, script = h.STAGED_THEN_WAIT, out = "$OUT/x.txt", code = 0, leaves = { next },
    shell = signal_after_staging("KILL", function(ctx)
      return "ls -A out | grep -q '^\\.x\\.txt\\.profrun-' || exit 90; "
        .. h.command({ "--set", "flops_profiler.output_file=" .. ctx.out .. "/" .. next, ctx.config,
                       ctx.dir .. "/plain.lua" })
    end),
    setup = function(ctx)
      local f = assert(io.open(ctx.dir .. "/plain.lua", "w"))
      f:write(h.PROFILE)
      f:close()
    end,
  }
end

local WAIT_FIRST = [[
local f = assert(io.open("/proc/self/stat"))
local pid = f:read("n")
f:close()
f = assert(io.open(arg[1] .. "/staged.tmp", "w"))
f:write(pid, "\n")
f:close()
os.rename(arg[1] .. "/staged.tmp", arg[1] .. "/staged")
local t0 = os.clock()
while os.clock() - t0 < 20 do end
]]

local TRACE_THEN_WAIT = [[
local prof = require "prof"
local p = prof.profile {}
p:stop()
assert(p:export_chrome_trace(arg[1] .. "/out/tr/t.json"))
]] .. h.STAGED_THEN_WAIT

local cases = {}

local order = {}
for name in pairs(SIGNALS) do order[#order + 1] = name end
table.sort(order)
for _, name in ipairs(order) do
  cases[#cases + 1] = {
    name = "SIG" .. name .. " after the report is staged: nothing left, the run ends by SIG" .. name,
    script = h.STAGED_THEN_WAIT, out = "$OUT/x.txt", code = 128 + SIGNALS[name],
    shell = signal_after_staging(name) }
end

local more = {
  { name = "SIGTERM after staging into directories the run made: they are removed too",
    script = h.STAGED_THEN_WAIT, out = "$OUT/a/b/x.txt", code = 143,
    shell = signal_after_staging("TERM") },
  { name = "SIGTERM after staging beside an existing file: the file keeps its content",
    setup = function(ctx) run.sh("printf old > out/x.txt", ctx.dir) end,
    script = h.STAGED_THEN_WAIT, out = "$OUT/x.txt", code = 143, leaves = { "x.txt" },
    shell = signal_after_staging("TERM"),
    check = function(_, ctx, a) a.equal("old", run.read(ctx.out .. "/x.txt")) end },
  { name = "SIGINT with a trace and a report staged: both are removed",
    script = TRACE_THEN_WAIT, out = "$OUT/r/x.txt", code = 130,
    shell = signal_after_staging("INT") },
  { name = "SIGTERM with 40 traces staged (the guard's list grows): all are removed",
    script = [[
local prof = require "prof"
local p = prof.profile {}
p:stop()
for i = 1, 40 do assert(p:export_chrome_trace(arg[1] .. "/out/tr/t" .. i .. ".json")) end
]] .. h.STAGED_THEN_WAIT, out = "$OUT/x.txt", code = 143, shell = signal_after_staging("TERM") },
  { name = "SIGTERM before anything is staged: nothing to remove, the run ends by SIGTERM",
    script = WAIT_FIRST, out = "$OUT/x.txt", code = 143, shell = signal_after_staging("TERM") },
  killed_then_next("SIGKILL leaves its temporary; the next run on that output removes it", "x.txt"),
  killed_then_next("SIGKILL's temporary is removed by the next run writing another file beside it",
    "y.txt"),

  -- os.exit in the script: exit(0) is a normal end, anything else a failure
  { name = "os.exit(0) after the report commits it and exits 0",
    script = h.PROFILE .. "os.exit(0)\n", out = "$OUT/x.txt", code = 0, leaves = { "x.txt" } },
  { name = "os.exit() after the report commits it and exits 0",
    script = h.PROFILE .. "os.exit()\n", out = "$OUT/x.txt", code = 0, leaves = { "x.txt" } },
  { name = "os.exit(true) after the report commits it and exits 0",
    script = h.PROFILE .. "os.exit(true)\n", out = "$OUT/x.txt", code = 0, leaves = { "x.txt" } },
  { name = "os.exit(0, true) (closing the state) commits and exits 0",
    script = h.PROFILE .. "os.exit(0, true)\n", out = "$OUT/x.txt", code = 0, leaves = { "x.txt" } },
  { name = "os.exit(0) inside pcall still ends the run and commits",
    script = h.PROFILE .. "pcall(os.exit, 0)\nerror('not reached')\n", out = "$OUT/x.txt", code = 0,
    leaves = { "x.txt" } },
  { name = "os.exit(0) inside a coroutine still ends the run and commits",
    script = h.PROFILE .. "coroutine.wrap(function() os.exit(0) end)()\nerror('not reached')\n",
    out = "$OUT/x.txt", code = 0, leaves = { "x.txt" } },
  { name = "os.exit(3) drops the report, says so, and exits 3",
    script = h.PROFILE .. "os.exit(3)\n", out = "$OUT/x.txt", code = 3,
    stderr = { "os.exit(3)", "not written" } },
  { name = "os.exit(false) drops the report and exits 1",
    script = h.PROFILE .. "os.exit(false)\n", out = "$OUT/x.txt", code = 1, stderr = { "os.exit(false)" } },
  { name = "os.exit(1) drops the report and the directories made for it",
    script = h.PROFILE .. "os.exit(1)\n", out = "$OUT/a/b/x.txt", code = 1 },
  { name = "os.exit(0) with a report and a trace commits both",
    script = h.PROFILE .. "os.exit(0)\n", out = "$OUT/x.txt", code = 0,
    sets = { "profiler.enabled=true", "profiler.trace_file=$OUT/t.json" }, leaves = { "t.json", "x.txt" } },
  { name = "os.exit(0) before any report: success with nothing to write",
    script = "os.exit(0)\n", out = "$OUT/x.txt", code = 0 },
}
for _, c in ipairs(more) do cases[#cases + 1] = c end

describe("hostile signals and exits", function()
  h.register(it, assert, cases)
end)
