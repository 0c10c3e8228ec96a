-- concurrent_spec.lua — several profrun processes writing the same output at once.
-- Temporaries are unique per process, so every run succeeds and the file is one
-- run's whole report (the last to rename its temporary into place), never a mix, a missing file
-- or a stray temporary.
local h = require "spec.hostile.harness"
local run = require "spec.support.run"

-- A Linear(n, n) report: params n*n + n tell the runs apart (3: 12, 5: 30, 7: 56, 9: 90).
local LINEAR = [[
local prof = require "prof"
local nn = require "prof.nn"
local n = tonumber(arg[2])
prof.get_model_profile { model = nn.Linear(n, n), input_shape = { 2, n } }
]]

-- The params line of the one report in text, or nil when text is not exactly one whole report.
local function params_of_one_report(text)
  if text == nil then return nil end
  local _, headers = text:gsub("DeepSpeed Flops Profiler", "")
  if headers ~= 1 or not text:find("%-%-%-%-\n$") then return nil end
  return tonumber(text:match("params per GPU:%s+(%d+)"))
end

-- The shell line running the given Linear sizes at once, each to $OUT/x.txt; prints "rc=" per run.
local function together(sizes, prefix)
  return function(ctx)
    local parts = {}
    for i, n in ipairs(sizes) do
      parts[#parts + 1] = (prefix and prefix(i) or "") .. h.command({
        "--set", "flops_profiler.output_file=" .. ctx.out .. "/x.txt", ctx.config, ctx.script,
        ctx.dir, tostring(n) }) .. " & p" .. i .. "=$!"
    end
    local waits = {}
    for i = 1, #sizes do waits[#waits + 1] = "wait $p" .. i .. "; echo rc=$?" end
    return table.concat(parts, "; ") .. "; " .. table.concat(waits, "; ")
  end
end

local function all_zero(r, n, a)
  local codes = {}
  for c in r.stdout:gmatch("rc=(%d+)") do codes[#codes + 1] = tonumber(c) end
  local zeros = {}
  for i = 1, n do zeros[i] = 0 end
  a.same(zeros, codes, r.stderr)
end

local cases = {}
for round = 1, 3 do
  cases[#cases + 1] = {
    name = "two runs on one output at once (round " .. round .. "): both exit 0, the file is one whole report",
    script = LINEAR, code = 0, leaves = { "x.txt" }, shell = together({ 3, 5 }),
    check = function(r, ctx, a)
      all_zero(r, 2, a)
      local p = params_of_one_report(run.read(ctx.out .. "/x.txt"))
      a.truthy(p == 12 or p == 30, "params " .. tostring(p))
    end }
end

local extra = {
  { name = "four runs on one output at once: all exit 0, the file is one whole report",
    script = LINEAR, code = 0, leaves = { "x.txt" }, shell = together({ 3, 5, 7, 9 }),
    check = function(r, ctx, a)
      all_zero(r, 4, a)
      local p = params_of_one_report(run.read(ctx.out .. "/x.txt"))
      a.truthy(p == 12 or p == 30 or p == 56 or p == 90, "params " .. tostring(p))
    end },
  { name = "interleaved: A writing, B writes its report whole, A finishes last: the file is A's report",
    -- A (Linear 3) streams its JSON report; a module's repr, asked while the rows are written,
    -- waits until B (Linear 5) has written its own; then A renames its temporary last
    script = [[
local prof = require "prof"
local nn = require "prof.nn"
local n = tonumber(arg[2])
local Wait = nn.Module:extend("Wait")
function Wait:forward(x) return x end
function Wait:extra_repr()
  if n == 3 and not io.open(arg[1] .. "/a_writing") then
    io.open(arg[1] .. "/a_writing", "w"):close()
    local t0 = os.clock()
    while os.clock() - t0 < 15 and not io.open(arg[1] .. "/b_done") do end
  end
  return ""
end
prof.get_model_profile { model = nn.Sequential(nn.Linear(n, n), Wait()), input_shape = { 2, n } }
]], code = 0, leaves = { "x.json" },
    shell = function(ctx)
      local a = h.command({ "--set", "flops_profiler.output_file=" .. ctx.out .. "/x.json",
                            ctx.config, ctx.script, ctx.dir, "3" })
      local b = h.command({ "--set", "flops_profiler.output_file=" .. ctx.out .. "/x.json",
                            ctx.config, ctx.script, ctx.dir, "5" })
      return a .. " & pa=$!; i=0; while [ ! -e a_writing ] && [ $i -lt 500 ]; do sleep 0.02; "
        .. "i=$((i+1)); done; ls -A out | grep -q profrun- || echo no-temporary; "
        .. b .. "; echo rc=$?; touch b_done; wait $pa; echo rc=$?"
    end,
    check = function(r, ctx, a)
      a.falsy(r.stdout:find("no-temporary", 1, true), "A was not writing when B ran")
      all_zero(r, 2, a)
      local text = run.read(ctx.out .. "/x.json")
      a.truthy(text:find("}\n$"), text)
      a.equal("12", text:match('"params": (%d+)'))
    end },
  { name = "two runs on one output, one fails before its report: the file is the other's report",
    script = 'if arg[2] == "5" then error("run five fails") end\n' .. LINEAR, code = 0,
    leaves = { "x.txt" }, shell = together({ 3, 5 }),
    check = function(r, ctx, a)
      local codes = {}
      for c in r.stdout:gmatch("rc=(%d+)") do codes[#codes + 1] = tonumber(c) end
      a.same({ 0, 1 }, codes)
      a.truthy(r.stderr:find("run five fails", 1, true), r.stderr)
      a.equal(12, params_of_one_report(run.read(ctx.out .. "/x.txt")))
    end },
}
for _, c in ipairs(extra) do cases[#cases + 1] = c end

describe("hostile concurrent runs", function()
  h.register(it, assert, cases)
end)
