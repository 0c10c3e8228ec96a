-- output_paths_spec.lua — hostile output paths: devices, FIFOs, links, directories, long names, full disks.
-- A device is never replaced, an output is whole or absent (a failure keeps what was written
-- before it), and messages name the path and the key, never a temporary. Every case runs
-- build/bin/profrun as a child.
local h = require "spec.hostile.harness"
local run = require "spec.support.run"

local KEY = "flops_profiler.output_file"

local function sh(cmd, ctx)
  local r = run.sh(cmd, ctx and ctx.dir)
  assert(r.code == 0, "setup failed: " .. cmd .. ": " .. tostring(r.stderr))
end

-- A character device at $OUT/name: a mknod copy of /dev/<name> (root), else a symbolic link to
-- it (then the link must stay a link to the device).
local function device(name)
  return function(ctx)
    local path = ctx.out .. "/" .. name
    local minor = ({ null = 3, full = 7 })[name]
    if run.sh("mknod " .. run.quote(path) .. " c 1 " .. minor .. " 2>/dev/null").code ~= 0 then
      sh("ln -s /dev/" .. name .. " " .. run.quote(path))
    end
  end
end

local function is_char_device(ctx, name)
  return run.sh("test -c " .. run.quote(ctx.out .. "/" .. name)).code == 0
end

-- The report LeNet-5 gives (its last module line), to tell a written report from anything else.
local REPORT_TAIL = "(2): Linear(850 = 1.38% Params"

local function has_report(path)
  local text = run.read(path)
  return text ~= nil and text:find(REPORT_TAIL, 1, true) ~= nil
end

local FAIL_AFTER = h.PROFILE .. 'error("failing after the report was written")\n'
local FAIL_BEFORE = 'error("failing before the report")\n' .. h.PROFILE

local function whole_report(name)
  return function(_, ctx, a) a.truthy(has_report(ctx.out .. "/" .. name), "no whole report at " .. name) end
end

-- Two reports from one script: arg[2] and arg[3] are their output files.
local TWO_REPORTS = [[
local prof = require "prof"
local models = require "prof.models"
prof.get_model_profile { model = models.lenet5(), input_shape = { 2, 1, 32, 32 }, output_file = arg[2] }
prof.get_model_profile { model = models.lenet5(), input_shape = { 2, 1, 32, 32 }, output_file = arg[3] }
]]

-- The same output written twice: the second text (a Linear(3, 4)) must be what stays.
local REWRITTEN = [[
local prof = require "prof"
local models = require "prof.models"
local nn = require "prof.nn"
prof.get_model_profile { model = models.lenet5(), input_shape = { 2, 1, 32, 32 } }
prof.get_model_profile { model = nn.Linear(3, 4), input_shape = { 2, 3 } }
]]

local TRACE = { "profiler.enabled=true" }

-- A full file system at out/tiny: a 4 KB tmpfs where the machine lets root mount one, else
-- /dev/full behind a link named file.
local function full_disk(file)
  return function(ctx)
    sh("mkdir out/tiny", ctx)
    if run.sh("mount -t tmpfs -o size=4k tmpfs out/tiny 2>/dev/null", ctx.dir).code == 0 then
      ctx.mounted = true
      ctx.leaves = { "tiny" }
    else
      sh("ln -s /dev/full out/tiny/" .. file, ctx)
      ctx.leaves = { "tiny", "tiny/" .. file }
    end
  end
end

local function unmount_full_disk(ctx)
  if ctx.mounted then run.sh("umount " .. run.quote(ctx.out .. "/tiny")) end
end

local cases = {
  -- devices and other files that are not regular are written in place or refused
  { name = "a character device (a copy of /dev/null) is written into and stays a device",
    setup = device("null"), out = "$OUT/null", code = 0, leaves = { "null" },
    check = function(_, ctx, a) a.is_true(is_char_device(ctx, "null")) end },
  { name = "a full device (a copy of /dev/full) fails with ENOSPC, naming the key and the path",
    setup = device("full"), out = "$OUT/full", code = 1, leaves = { "full" },
    stderr = { KEY .. ": $OUT/full: cannot write: No space left on device" },
    check = function(_, ctx, a) a.is_true(is_char_device(ctx, "full")) end },
  { name = "a device written by os.exit(0) still reports ENOSPC",
    setup = device("full"), out = "$OUT/full", code = 1, leaves = { "full" },
    script = h.PROFILE .. "os.exit(0)\n", stderr = { "$OUT/full", "No space left on device" } },
  { name = "a FIFO nobody reads is refused at once (no hang)",
    setup = function(ctx) sh("mkfifo out/fifo", ctx) end, out = "$OUT/fifo", code = 1,
    leaves = { "fifo" }, stderr = { KEY .. ": $OUT/fifo: cannot write: nothing reads from it" },
    check = function(_, ctx, a) a.equal(0, run.sh("test -p " .. run.quote(ctx.out .. "/fifo")).code) end },
  { name = "a FIFO with a reader gets the whole report",
    setup = function(ctx) sh("mkfifo out/fifo", ctx) end, out = "$OUT/fifo", code = 0,
    leaves = { "fifo" },
    shell = function(ctx, cmd)
      -- the reader's own timeout: if the FIFO were replaced by a file, cat would wait forever
      return "timeout 20 cat " .. run.quote(ctx.out .. "/fifo") .. " > got.txt & " .. cmd
        .. "; rc=$?; wait; exit $rc"
    end,
    check = function(_, ctx, a) a.is_true(has_report(ctx.dir .. "/got.txt")) end },
  { name = "a block device is refused, never opened",
    setup = function(ctx)
      -- no mknod without root: a FIFO stands in (refused too, for want of a reader)
      if run.sh("mknod out/blk b 240 0 2>/dev/null", ctx.dir).code ~= 0 then sh("mkfifo out/blk", ctx) end
    end,
    out = "$OUT/blk", code = 1, leaves = { "blk" }, stderr = { KEY .. ": $OUT/blk: " },
    check = function(r, ctx, a)
      if run.sh("test -b " .. run.quote(ctx.out .. "/blk")).code == 0 then
        a.truthy(r.stderr:find(ctx.out .. "/blk: is a block device", 1, true), r.stderr)
      end
    end },
  { name = "a UNIX socket is refused",
    setup = function(ctx)
      sh("python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"out/sock\")'", ctx)
    end,
    out = "$OUT/sock", code = 1, leaves = { "sock" }, stderr = { "$OUT/sock: is not a regular file" } },
  -- a private link to /proc/self/fd/1, never the system's /dev/stdout: were the link replaced by
  -- a regression, only the case's own directory would suffer
  { name = "standard output by name (a link to /proc/self/fd/1, a pipe) is written in place",
    setup = function(ctx) sh("ln -s /proc/self/fd/1 out/stdout", ctx) end,
    out = "$OUT/stdout", code = 0, stdout = { REPORT_TAIL }, leaves = { "stdout" },
    shell = function(_, cmd) return cmd .. " | cat" end,
    check = function(_, ctx, a) a.equal(0, run.sh("test -L " .. run.quote(ctx.out .. "/stdout")).code) end },

  -- a path that cannot be a file says which path, which key and why
  { name = "a directory is refused, naming the key and the path",
    setup = function(ctx) sh("mkdir out/d", ctx) end, out = "$OUT/d", code = 1, leaves = { "d" },
    stderr = { KEY .. ": $OUT/d: is a directory" } },
  { name = "a symbolic link to a directory is refused",
    setup = function(ctx) sh("mkdir out/d && ln -s d out/ld", ctx) end, out = "$OUT/ld", code = 1,
    leaves = { "d", "ld" }, stderr = { "$OUT/ld: is a directory" } },
  { name = "a path ending in '/' is refused and makes no directory",
    out = "$OUT/new/", code = 1, stderr = { "$OUT/new/: names a directory" } },
  { name = "a parent that is a file is named as such",
    setup = function(ctx) sh("touch out/file", ctx) end, out = "$OUT/file/x.txt", code = 1,
    leaves = { "file" },
    stderr = { KEY .. ": $OUT/file/x.txt: cannot create directory $OUT/file: it exists and is not a directory" } },
  { name = "a parent two levels up that is a file removes the level made below it",
    setup = function(ctx) sh("touch out/file", ctx) end, out = "$OUT/file/a/b/x.txt", code = 1,
    leaves = { "file" }, stderr = { "cannot create directory $OUT/file:" } },
  { name = "a 5,000-character path keeps the reason: its middle is shortened",
    code = 1,
    args = { "--set", "flops_profiler.output_file=" .. string.rep("d", 5000) .. "/x.txt",
             "$CONFIG", "$SCRIPT" },
    stderr = { KEY .. ": ", "path too long", "characters)...", "ddd/x.txt" },
    check = function(r, _, a) a.truthy(#r.stderr:match("^[^\n]*") < 600, r.stderr) end },
  { name = "a 300-character file name says the name is too long",
    out = "$OUT/" .. string.rep("n", 300) .. ".txt", code = 1,
    stderr = { KEY .. ": ", "File name too long" } },
  { name = "a dangling symbolic link is refused and stays",
    setup = function(ctx) sh("ln -s nowhere/x out/dangling", ctx) end, out = "$OUT/dangling",
    code = 1, leaves = { "dangling" }, stderr = { "$OUT/dangling: is a symbolic link to a missing file" } },
  { name = "an empty output_file prints the report on stdout",
    out = "", code = 0, stdout = { REPORT_TAIL } },

  -- regular files: replaced whole, atomically, through links, keeping their permissions
  { name = "a new file appears with the report",
    out = "$OUT/x.txt", code = 0, leaves = { "x.txt" },
    check = function(_, ctx, a) a.is_true(has_report(ctx.out .. "/x.txt")) end },
  { name = "missing parents are made for a successful run",
    out = "$OUT/a/b/c/x.txt", code = 0, leaves = { "a", "a/b", "a/b/c", "a/b/c/x.txt" } },
  { name = "a relative path is taken from the working directory",
    out = "out/rel.txt", code = 0, leaves = { "rel.txt" } },
  { name = "a name with spaces, quotes and UTF-8 is written as given",
    out = "$OUT/it's a \"report\" ü.txt", code = 0, leaves = { "it's a \"report\" ü.txt" } },
  { name = "a symbolic link to a file: the file is replaced, the link stays a link",
    setup = function(ctx) sh("echo old > out/real.txt && ln -s real.txt out/link", ctx) end,
    out = "$OUT/link", code = 0, leaves = { "link", "real.txt" },
    check = function(_, ctx, a)
      a.equal(0, run.sh("test -L " .. run.quote(ctx.out .. "/link")).code)
      a.is_true(has_report(ctx.out .. "/real.txt"))
    end },
  { name = "a replaced file keeps its permissions",
    setup = function(ctx) sh("echo old > out/x.txt && chmod 640 out/x.txt", ctx) end,
    out = "$OUT/x.txt", code = 0, leaves = { "x.txt" },
    check = function(_, ctx, a)
      a.equal("640", run.sh("stat -c %a " .. run.quote(ctx.out .. "/x.txt")).stdout:match("%d+"))
    end },
  { name = "the same output written twice holds the second report",
    script = REWRITTEN, out = "$OUT/x.txt", code = 0, leaves = { "x.txt" },
    check = function(_, ctx, a)
      local text = run.read(ctx.out .. "/x.txt")
      a.falsy(text:find(REPORT_TAIL, 1, true))
      a.truthy(text:find("Linear(16 = 100% Params", 1, true), text)
    end },
  { name = "the same output written twice into made directories, then a failure: the second stays",
    script = REWRITTEN .. 'error("late")\n', out = "$OUT/m/n/x.txt", code = 1,
    leaves = { "m", "m/n", "m/n/x.txt" }, stderr = { "late" },
    check = function(_, ctx, a)
      a.truthy(run.read(ctx.out .. "/m/n/x.txt"):find("Linear(16 = 100% Params", 1, true))
    end },

  -- a failure keeps what was written before it, whole: a report is complete when it is printed
  { name = "a script error after the report: the report stays, whole",
    script = FAIL_AFTER, out = "$OUT/x.txt", code = 1, leaves = { "x.txt" },
    stderr = { "failing after the report" }, check = whole_report("x.txt") },
  { name = "a script error after the report: the directories made for it stay with it",
    script = FAIL_AFTER, out = "$OUT/a/b/c/x.txt", code = 1,
    leaves = { "a", "a/b", "a/b/c", "a/b/c/x.txt" }, check = whole_report("a/b/c/x.txt") },
  { name = "a script error before the report: nothing written, no directory made",
    setup = function(ctx) sh("mkdir out/keep", ctx) end,
    script = FAIL_BEFORE, out = "$OUT/keep/new/deeper/x.txt", code = 1, leaves = { "keep" } },
  { name = "a script error before the report: an existing file keeps its old content",
    setup = function(ctx) sh("printf old > out/x.txt", ctx) end,
    script = FAIL_BEFORE, out = "$OUT/x.txt", code = 1, leaves = { "x.txt" },
    check = function(_, ctx, a) a.equal("old", run.read(ctx.out .. "/x.txt")) end },
  { name = "two reports, the second's path fails: the first stays, the message names the second",
    setup = function(ctx) sh("touch out/file", ctx) end, script = TWO_REPORTS,
    args = { "$CONFIG", "$SCRIPT", "$DIR", "$OUT/n1/a.txt", "$OUT/file/b.txt" }, code = 1,
    leaves = { "file", "n1", "n1/a.txt" }, stderr = { "$OUT/file/b.txt" }, check = whole_report("n1/a.txt") },
  { name = "two reports, the first read back by the script before the second is written",
    script = TWO_REPORTS:gsub("\nprof.get_model_profile {[^\n]*arg%[3%] }", '\nlocal f = assert(io.open(arg[2]))\n'
      .. 'assert(f:read("a"):find("DeepSpeed Flops Profiler", 1, true))\nf:close()%0'),
    args = { "$CONFIG", "$SCRIPT", "$DIR", "$OUT/a.txt", "$OUT/b.txt" }, code = 0,
    leaves = { "a.txt", "b.txt" } },
  { name = "two reports, both fine: both are written",
    script = TWO_REPORTS, args = { "$CONFIG", "$SCRIPT", "$DIR", "$OUT/a.txt", "$OUT/b/b.txt" },
    code = 0, leaves = { "a.txt", "b", "b/b.txt" } },
  { name = "a report and a trace, the trace's path fails: the report stays, the run fails",
    setup = function(ctx) sh("touch out/file", ctx) end,
    sets = { TRACE[1], "profiler.trace_file=$OUT/file/t.json" }, out = "$OUT/r/x.txt", code = 1,
    leaves = { "file", "r", "r/x.txt" },
    stderr = { "profiler.trace_file: $OUT/file/t.json: cannot create directory $OUT/file" } },
  { name = "a report and a trace, the report's path fails: the run fails before the trace",
    setup = function(ctx) sh("mkdir out/d", ctx) end,
    sets = { TRACE[1], "profiler.trace_file=$OUT/t/t.json" }, out = "$OUT/d", code = 1,
    leaves = { "d" }, stderr = { KEY .. ": $OUT/d: is a directory" } },
  { name = "a report and a trace_file, then a script error: the report stays, no trace (a success's)",
    script = FAIL_AFTER, sets = { TRACE[1], "profiler.trace_file=$OUT/t/t.json" },
    out = "$OUT/x.txt", code = 1, leaves = { "x.txt" } },
  { name = "a report and a trace, both fine: both are written",
    sets = { TRACE[1], "profiler.trace_file=$OUT/t/t.json.gz" }, out = "$OUT/x.txt", code = 0,
    leaves = { "t", "t/t.json.gz", "x.txt" } },
  { name = "a trace to a full device fails with ENOSPC; the report written before it stays",
    setup = device("full"), sets = { TRACE[1], "profiler.trace_file=$OUT/full" },
    out = "$OUT/x.txt", code = 1, leaves = { "full", "x.txt" },
    stderr = { "profiler.trace_file: $OUT/full", "No space left on device" } },
  { name = "a trace exported by the script, then a script error: the trace stays",
    sets = { TRACE[1] },
    script = [[
local prof = require "prof"
local p = prof.profile {}
p:stop()
p:export_chrome_trace(arg[1] .. "/out/tr/t.json")
error("after the export")
]], code = 1, stderr = { "after the export" }, leaves = { "tr", "tr/t.json" } },
  { name = "a trace exported by the script to a bad path raises at the script's line, naming it",
    setup = function(ctx) sh("mkdir out/d", ctx) end,
    script = [[
local prof = require "prof"
local p = prof.profile {}
p:stop()
p:export_chrome_trace(arg[1] .. "/out/d")
error("not reached")
]], code = 1, leaves = { "d" },
    stderr = { "script.lua:4: export_chrome_trace: $OUT/d: is a directory" }, stderr_not = { "not reached" } },
  { name = "tensorboard traces under output_dir, then a script error: the window never closed, nothing written",
    sets = { TRACE[1], "profiler.output_dir=$OUT/tb" },
    script = 'local prof = require "prof"\nprof.step()\nprof.step()\nerror("after two steps")\n',
    code = 1, stderr = { "after two steps" } },

  -- full disks: a tiny tmpfs where the machine lets root mount one, else /dev/full behind a link
  { name = "a full file system (a 4 KB tmpfs) fails with ENOSPC and leaves the mount empty",
    setup = full_disk("x.txt"), teardown = unmount_full_disk,
    out = "$OUT/tiny/x.txt", code = 1, stderr = { "$OUT/tiny/x.txt: cannot write: No space left on device" } },
  { name = "a JSON profile streamed into a full file system (a 4 KB tmpfs) fails with ENOSPC, leaves it empty",
    setup = full_disk("x.json"), teardown = unmount_full_disk,
    out = "$OUT/tiny/x.json", code = 1,
    stderr = { KEY .. ": $OUT/tiny/x.json: cannot write: No space left on device" } },

  -- temporaries: unique per process, hidden, and recognised by a later run
  { name = "a temporary left by a killed run (its pid gone) is removed by the next run",
    setup = function(ctx)
      local pid = run.sh("sh -c 'echo $$'").stdout:match("%d+")
      sh("touch out/.x.txt.profrun-" .. pid .. "-0", ctx)
    end,
    out = "$OUT/x.txt", code = 0, leaves = { "x.txt" } },
  { name = "a live process's temporary is left alone",
    setup = function(ctx) sh("touch out/.x.txt.profrun-1-0", ctx) end,
    out = "$OUT/x.txt", code = 0, leaves = { ".x.txt.profrun-1-0", "x.txt" },
    temps = { "out/.x.txt.profrun-1-0" } },
  { name = "a file that only looks like a temporary is left alone",
    setup = function(ctx) sh("touch out/.x.txt.profrun-pending out/.x.txt.profrun-99999999-z", ctx) end,
    out = "$OUT/x.txt", code = 0,
    leaves = { ".x.txt.profrun-99999999-z", ".x.txt.profrun-pending", "x.txt" },
    temps = { "out/.x.txt.profrun-99999999-z", "out/.x.txt.profrun-pending" } },
}

describe("hostile output paths", function()
  h.register(it, assert, cases)
end)
