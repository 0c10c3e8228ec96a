-- stdout_spec.lua — standard output that cannot be written (a full device, a closed descriptor).
-- `profrun … > /dev/full` must exit non-zero with a message; output files written before are
-- whole and stay (they were complete when written).
local h = require "spec.hostile.harness"

local MSG = "profrun: cannot write standard output"

local function to(target)
  return function(_, cmd) return cmd .. " " .. target end
end

local BIG = 'io.write(string.rep("x", 100000))\n'

local cases = {
  { name = "the report on stdout > /dev/full: exit 1, says so",
    shell = to(">/dev/full"), code = 1, stderr = { MSG .. ": " } },
  { name = "print > /dev/full: exit 1",
    script = 'print("hello")\n', shell = to(">/dev/full"), code = 1, stderr = { MSG } },
  { name = "100 KB of io.write > /dev/full (past any buffer): exit 1",
    script = BIG, shell = to(">/dev/full"), code = 1, stderr = { MSG } },
  { name = "nothing written > /dev/full: exit 0",
    script = "local x = 1\n", shell = to(">/dev/full"), code = 0 },
  { name = "a report to a file and a print > /dev/full: exit 1, the report stays",
    script = h.PROFILE .. 'print("done")\n', out = "$OUT/x.txt", shell = to(">/dev/full"),
    code = 1, stderr = { MSG }, leaves = { "x.txt" } },
  { name = "print with stdout closed: exit 1",
    script = 'print("hello")\n', shell = to(">&-"), code = 1, stderr = { MSG } },
  { name = "a report to a file with stdout closed and nothing printed: exit 0",
    out = "$OUT/x.txt", shell = to(">&-"), code = 0, leaves = { "x.txt" } },
  { name = "os.exit(0) after a print > /dev/full: exit 1, the report stays",
    script = h.PROFILE .. 'print("done")\nos.exit(0)\n', out = "$OUT/x.txt",
    shell = to(">/dev/full"), code = 1, stderr = { MSG }, leaves = { "x.txt" } },
  { name = "--help > /dev/full: exit 1",
    args = { "--help" }, shell = to(">/dev/full"), code = 1, stderr = { MSG } },
  { name = "--version > /dev/full: exit 1",
    args = { "--version" }, shell = to(">/dev/full"), code = 1, stderr = { MSG } },
  { name = "--help-config > /dev/full: exit 1",
    args = { "--help-config" }, shell = to(">/dev/full"), code = 1, stderr = { MSG } },
}

describe("hostile standard output", function()
  h.register(it, assert, cases)
end)
