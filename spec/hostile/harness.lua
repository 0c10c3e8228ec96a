-- harness.lua — runs build/bin/profrun as a child over a table of hostile cases, each in its own directory.
local run = require "spec.support.run"

local M = {}

M.PROFRUN = run.PROFRUN
M.TIMEOUT_S = 20   -- per case; the slowest case takes well under a second

-- What most cases run: LeNet-5 on meta, profiled to the configured output_file.
M.PROFILE = [[
local prof = require "prof"
local models = require "prof.models"
prof.get_model_profile { model = models.lenet5(), input_shape = { 2, 1, 32, 32 } }
]]

-- Writes the process's pid to $DIR/staged (the marker a signalling case waits for) and spins up
-- to 20 s waiting for a signal. A chunk of Lua that a script or a module's method runs.
M.ANNOUNCE_AND_WAIT = [[
local f = assert(io.open("/proc/self/stat"))
local pid = f:read("n")
f:close()
local marker = arg[1] .. "/staged"
f = assert(io.open(marker .. ".tmp", "w"))
f:write(pid, "\n")
f:close()
os.rename(marker .. ".tmp", marker)
local t0 = os.clock()
while os.clock() - t0 < 20 do end
]]

-- PROFILE, then the wait: the report is written (complete, in place) when the signal comes.
M.WRITTEN_THEN_WAIT = M.PROFILE .. M.ANNOUNCE_AND_WAIT

-- A model whose module's extra_repr waits for the signal: it is asked while the JSON report is
-- streamed into its temporary (the row is built as the writer reads it), so the signal comes
-- while that temporary is open.
M.WRITING_THEN_WAIT = [[
local prof = require "prof"
local nn = require "prof.nn"
local Slow = nn.Module:extend("Slow")
function Slow:forward(x) return x end
local waited = false
function Slow:extra_repr()
  if not waited and io.open(arg[1] .. "/writing") then
    waited = true
]] .. M.ANNOUNCE_AND_WAIT .. [[
  end
  return ""
end
-- the JSON report is the last thing written: from here on, extra_repr waits
local real = prof.get_model_profile
io.open(arg[1] .. "/writing", "w"):close()
real { model = nn.Sequential(Slow()), input_shape = { 2, 3 } }
]]

M.META_CONFIG = [[{ "device": "meta", "flops_profiler": { "conventions": "deepspeed" } }]]

-- "$DIR", "$OUT", "$CONFIG", "$SCRIPT" in s replaced by the case's paths.
local function expand(s, ctx)
  return (s:gsub("%$(%u+)", function(name)
    local v = ctx[name:lower()]
    return v ~= nil and v or "$" .. name
  end))
end

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- Every path under dir, relative to it, sorted (directories too: a created one must go).
local function tree(dir)
  local h = io.popen("cd " .. run.quote(dir) .. " && find . -mindepth 1 2>/dev/null | sort")
  local names = {}
  for l in h:lines() do names[#names + 1] = l:sub(3) end
  h:close()
  return names
end
M.tree = tree

-- The shell words for profrun with args, under the timeout. make test's sanitized busted pass
-- preloads libasan into lua5.4; the child profrun is not instrumented, so it runs without (ASan's
-- fault handlers would turn a SIGSEGV sent to it into exit 1).
function M.command(args)
  local words = { "env", "-u", "LD_PRELOAD", "timeout", "-k", "3", tostring(M.TIMEOUT_S),
                  run.quote(M.PROFRUN) }
  for _, a in ipairs(args) do words[#words + 1] = run.quote(a) end
  return table.concat(words, " ")
end

--[[
Runs one case, a table:
  config   text of $CONFIG (default META_CONFIG)      script  text of $SCRIPT (default PROFILE)
  sets     "--set" values put first ($OUT etc. expanded); out: shorthand for the output_file set
  args     the arguments after the sets (default {"$CONFIG", "$SCRIPT", "$DIR"})
  setup    function(ctx) run before: makes devices, FIFOs, files in ctx.dir / ctx.out
  shell    function(ctx, cmd) -> the shell line run instead of cmd (redirects, signals, pairs)
Returns r = {code, stdout, stderr} and ctx = {dir, out, config, script}: $OUT is ctx.out, an
empty directory inside the case's directory $DIR.
]]
function M.run_case(case)
  local dir = run.tmpdir()
  local ctx = { dir = dir, out = dir .. "/out", config = dir .. "/config.json",
                script = dir .. "/script.lua" }
  os.execute("mkdir " .. run.quote(ctx.out))
  write(ctx.config, case.config or M.META_CONFIG)
  write(ctx.script, case.script or M.PROFILE)
  if case.setup then case.setup(ctx) end
  local args = {}
  if case.out then args = { "--set", "flops_profiler.output_file=" .. expand(case.out, ctx) } end
  for _, s in ipairs(case.sets or {}) do
    args[#args + 1] = "--set"
    args[#args + 1] = expand(s, ctx)
  end
  for _, a in ipairs(case.args or { "$CONFIG", "$SCRIPT", "$DIR" }) do
    args[#args + 1] = expand(a, ctx)
  end
  local cmd = M.command(args)
  if case.shell then cmd = case.shell(ctx, cmd) end
  -- cores off: the SIGQUIT, SIGABRT and SIGSEGV cases must not leave a core in the directory
  local r = run.sh("ulimit -c 0; " .. cmd, dir)
  return r, ctx
end

function M.cleanup(ctx, case)
  if case and case.teardown then pcall(case.teardown, ctx) end
  run.rmdir_all(ctx.dir)
end

--[[
Registers one busted `it` per case of cases (busted's it and assert are passed in, they live in
the spec's environment). A case asserts, besides run_case's fields:
  code     the exit status (128 + n for signal n)            stderr  substrings it must hold
  stderr_not  substrings it must not hold (internal names)   stdout  substrings stdout must hold
  leaves   the tree left under $OUT ({} unless given; entries relative to $OUT; setup may set
           ctx.leaves when it depends on what the machine allows)
  temps    the ".profrun-" names expected under $DIR ({}: none; entries relative to $DIR)
  check    function(r, ctx, assert) for anything else; teardown(ctx) undoes setup (a mount)
Every case: never a timeout, never a temporary (".profrun-") anywhere under $DIR, never an
internal name in stderr.
]]
function M.register(it, assert, cases)
  for _, case in ipairs(cases) do
    it(case.name, function()
      local r, ctx = M.run_case(case)
      local ok, err = pcall(function()
        assert.are_not.equal(124, r.code, "timed out")
        assert.are_not.equal(137, r.code, "timed out (killed)")
        assert.equal(case.code, r.code, "exit status; stderr: " .. tostring(r.stderr))
        for _, s in ipairs(case.stderr or {}) do
          s = expand(s, ctx)
          assert.truthy(r.stderr:find(s, 1, true), "stderr lacks '" .. s .. "': " .. r.stderr)
        end
        for _, s in ipairs(case.stdout or {}) do
          assert.truthy(r.stdout:find(s, 1, true), "stdout lacks '" .. s .. "'")
        end
        -- and no sanitizer report, when PROFRUN_BIN is the ASan+UBSan build
        local internal = { ".profrun-", "internal error", "core dumped", "Sanitizer", "runtime error:" }
        for _, s in ipairs(case.stderr_not or {}) do internal[#internal + 1] = s end
        for _, s in ipairs(internal) do
          assert.falsy(r.stderr:find(s, 1, true), "stderr has '" .. s .. "': " .. r.stderr)
        end
        assert.same(ctx.leaves or case.leaves or {}, tree(ctx.out))
        local temps = {}
        for _, name in ipairs(tree(ctx.dir)) do
          if name:find(".profrun-", 1, true) then temps[#temps + 1] = name end
        end
        assert.same(case.temps or {}, temps)
        if case.check then case.check(r, ctx, assert) end
      end)
      M.cleanup(ctx, case)
      if not ok then error(err, 0) end
    end)
  end
end

return M
