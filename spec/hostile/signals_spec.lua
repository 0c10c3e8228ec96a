-- signals_spec.lua — signals and os.exit in a child profrun: what was written stays, nothing is left half-written.
-- A catchable signal keeps every output already written and removes the temporary of the one
-- being written (and the directories made for it), and still ends the process by that signal;
-- SIGKILL's leftover temporary is removed by the next run; os.exit ends the run with the status
-- asked, keeping what was written.
local h = require "spec.hostile.harness"
local run = require "spec.support.run"

local SIGNALS = { HUP = 1, INT = 2, QUIT = 3, ABRT = 6, BUS = 7, USR1 = 10, SEGV = 11, USR2 = 12,
                  PIPE = 13, ALRM = 14, TERM = 15, XCPU = 24, XFSZ = 25 }

-- Starts cmd in the background (SIGINT and SIGQUIT at their defaults: sh ignores them for
-- background jobs), waits until the script has written $DIR/staged (its pid), checks that the
-- temporary tmp_glob (a shell pattern under $OUT) exists when one is named, sends sig to that
-- pid and waits: the line's status is the run's (128 + n when signal n ended it).
local function signal_at_marker(sig, tmp_glob, after)
  return function(ctx, cmd)
    local staged = run.quote(ctx.dir .. "/staged")
    local check = tmp_glob and ("ls -d out/" .. tmp_glob .. " >/dev/null 2>&1 || { kill -KILL $(cat "
      .. staged .. "); exit 90; }; ") or ""
    return "env --default-signal=INT,QUIT " .. cmd .. " & pid=$!; i=0; "
      .. "while [ ! -e " .. staged .. " ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done; "
      .. check .. "kill -" .. sig .. " $(cat " .. staged .. "); wait $pid; rc=$?"
      .. (after and ("; " .. after(ctx)) or "; exit $rc")
  end
end

-- The report the cases write: LeNet-5's, whole.
local function whole_report(_, ctx, a)
  local text = run.read(ctx.out .. "/x.txt")
  a.truthy(text:find("DeepSpeed Flops Profiler", 1, true), text)
  a.truthy(text:find("\n%-+\n$"), "the report's last line is missing")
end

-- A run killed while its JSON report is written, then a plain run writing `next` in the same
-- folder: the killed run's temporary is there before the next run, and gone after it.
local function killed_then_next(name, next)
  return {
    name = name, script = h.WRITING_THEN_WAIT, out = "$OUT/x.json", code = 0, leaves = { next },
    shell = signal_at_marker("KILL", ".x.json.profrun-*", function(ctx)
      return "ls -A out | grep -q '^\\.x\\.json\\.profrun-' || exit 91; "
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

-- n traces written, then the JSON report streamed until the signal
local function traces_then_writing(n)
  return [[
local prof = require "prof"
local p = prof.profile {}
p:stop()
for i = 1, ]] .. n .. [[ do p:export_chrome_trace(arg[1] .. "/out/tr/t" .. i .. ".json") end
]] .. h.WRITING_THEN_WAIT
end

local function traces(n)
  local list = { "tr" }
  for i = 1, n do list[#list + 1] = "tr/t" .. i .. ".json" end
  table.sort(list)
  return list
end

local cases = {}

local order = {}
for name in pairs(SIGNALS) do order[#order + 1] = name end
table.sort(order)
for _, name in ipairs(order) do
  cases[#cases + 1] = {
    name = "SIG" .. name .. " after the report is written: it stays whole, the run ends by SIG" .. name,
    script = h.WRITTEN_THEN_WAIT, out = "$OUT/x.txt", code = 128 + SIGNALS[name], leaves = { "x.txt" },
    shell = signal_at_marker(name), check = whole_report }
end

local more = {
  { name = "SIGTERM while the JSON report is written: its temporary and the directories made for it go",
    script = h.WRITING_THEN_WAIT, out = "$OUT/a/b/x.json", code = 143,
    shell = signal_at_marker("TERM", "a/b/.x.json.profrun-*") },
  { name = "SIGTERM while the report is written beside an existing file: the file keeps its content",
    setup = function(ctx) run.sh("printf old > out/x.json", ctx.dir) end,
    script = h.WRITING_THEN_WAIT, out = "$OUT/x.json", code = 143, leaves = { "x.json" },
    shell = signal_at_marker("TERM", ".x.json.profrun-*"),
    check = function(_, ctx, a) a.equal("old", run.read(ctx.out .. "/x.json")) end },
  { name = "SIGINT with a trace written and the report being written: the trace stays, the report goes",
    script = traces_then_writing(1), out = "$OUT/r/x.json", code = 130, leaves = traces(1),
    shell = signal_at_marker("INT", "r/.x.json.profrun-*") },
  { name = "SIGTERM after 40 traces (the guard's list grows and empties), during the report: 40 stay",
    script = traces_then_writing(40), out = "$OUT/x.json", code = 143, leaves = traces(40),
    shell = signal_at_marker("TERM", ".x.json.profrun-*") },
  { name = "SIGTERM before anything is written: nothing to remove, the run ends by SIGTERM",
    script = WAIT_FIRST, out = "$OUT/x.txt", code = 143, shell = signal_at_marker("TERM") },
  killed_then_next("SIGKILL leaves its temporary; the next run on that output removes it", "x.json"),
  killed_then_next("SIGKILL's temporary is removed by the next run writing another file beside it",
    "y.txt"),

  -- os.exit in the script: the run ends with the status asked; what was written stays
  { name = "os.exit(0) after the report keeps it and exits 0",
    script = h.PROFILE .. "os.exit(0)\n", out = "$OUT/x.txt", code = 0, leaves = { "x.txt" } },
  { name = "os.exit() after the report keeps it and exits 0",
    script = h.PROFILE .. "os.exit()\n", out = "$OUT/x.txt", code = 0, leaves = { "x.txt" } },
  { name = "os.exit(true) after the report keeps it and exits 0",
    script = h.PROFILE .. "os.exit(true)\n", out = "$OUT/x.txt", code = 0, leaves = { "x.txt" } },
  { name = "os.exit(0, true) (closing the state) keeps the report and exits 0",
    script = h.PROFILE .. "os.exit(0, true)\n", out = "$OUT/x.txt", code = 0, leaves = { "x.txt" } },
  { name = "os.exit(0) inside pcall still ends the run",
    script = h.PROFILE .. "pcall(os.exit, 0)\nerror('not reached')\n", out = "$OUT/x.txt", code = 0,
    leaves = { "x.txt" } },
  { name = "os.exit(0) inside a coroutine still ends the run",
    script = h.PROFILE .. "coroutine.wrap(function() os.exit(0) end)()\nerror('not reached')\n",
    out = "$OUT/x.txt", code = 0, leaves = { "x.txt" } },
  { name = "os.exit(3) keeps the report written before it and exits 3, saying nothing",
    script = h.PROFILE .. "os.exit(3)\n", out = "$OUT/x.txt", code = 3, leaves = { "x.txt" },
    check = function(r, ctx, a)
      a.equal("", r.stderr)
      whole_report(r, ctx, a)
    end },
  { name = "os.exit(false) keeps the report and exits 1",
    script = h.PROFILE .. "os.exit(false)\n", out = "$OUT/x.txt", code = 1, leaves = { "x.txt" } },
  { name = "os.exit(1) keeps the report and the directories made for it",
    script = h.PROFILE .. "os.exit(1)\n", out = "$OUT/a/b/x.txt", code = 1,
    leaves = { "a", "a/b", "a/b/x.txt" } },
  { name = "os.exit(0) with a report and a trace_file writes both",
    script = h.PROFILE .. "os.exit(0)\n", out = "$OUT/x.txt", code = 0,
    sets = { "profiler.enabled=true", "profiler.trace_file=$OUT/t.json" }, leaves = { "t.json", "x.txt" } },
  { name = "os.exit(2) with a trace_file: the profiler's end of run is a success's alone",
    script = h.PROFILE .. "os.exit(2)\n", out = "$OUT/x.txt", code = 2,
    sets = { "profiler.enabled=true", "profiler.trace_file=$OUT/t.json" }, leaves = { "x.txt" } },
  { name = "os.exit(0) before any report: success with nothing to write",
    script = "os.exit(0)\n", out = "$OUT/x.txt", code = 0 },
}
for _, c in ipairs(more) do cases[#cases + 1] = c end

describe("hostile signals and exits", function()
  h.register(it, assert, cases)
end)
