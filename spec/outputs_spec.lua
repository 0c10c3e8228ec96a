-- outputs_spec.lua — profrun's outputs exist, whole and under their own names, when the call that wrote them returns.
local run = require "spec.support.run"
local json = require "dkjson"

local CONFIG = run.ROOT .. "/configs/default.json"

-- Runs script (text) under profrun in a fresh directory: r, dir (removed by the caller).
local function profrun(script, args)
  local dir = run.tmpdir()
  run.write(dir, "s.lua", script)
  local argv = {}
  for _, a in ipairs(args or {}) do argv[#argv + 1] = a end
  argv[#argv + 1] = CONFIG
  argv[#argv + 1] = dir .. "/s.lua"
  argv[#argv + 1] = dir
  return run.profrun(argv, dir), dir
end

local function is_gzip(path)
  local text = run.read(path)
  return text ~= nil and text:sub(1, 2) == "\31\139"
end

-- A trace's text, gunzipped when it is gzip.
local function trace_of(path)
  if not is_gzip(path) then return run.read(path) end
  return run.sh("gzip -dc " .. run.quote(path)).stdout
end

local ONE_WINDOW = [[
local prof = require "prof"
local T = require "prof.tensor"
local p = prof.profile {}
do
  local _ <close> = prof.record_function("work")
  T.relu(T.randn({ 8, 8 }))
end
p:stop()
]]

describe("profrun's outputs", function()
  it("gzip-compresses a trace named .gz, whichever way it is asked for", function()
    local r, dir = profrun(ONE_WINDOW .. [[
p:export_chrome_trace(arg[1] .. "/a.json.gz")
local h = prof.tensorboard_trace_handler(arg[1] .. "/tb", "w", true)
print("handler wrote " .. h(p))
]], { "--device", "cpu" })
    assert.equal(0, r.code, r.stderr)
    local tb = r.stdout:match("handler wrote (%S+)")
    -- profiler.trace_file, the config's trace of the global profiler
    local r2, dir2 = profrun([[
local prof = require "prof"
local _ <close> = prof.record_function("work")
]], { "--device", "cpu", "--set", "profiler.enabled=true", "--set", "profiler.trace_file=t.json.gz" })
    assert.equal(0, r2.code, r2.stderr)
    for _, path in ipairs({ dir .. "/a.json.gz", tb, dir2 .. "/t.json.gz" }) do
      assert.is_true(is_gzip(path), path)
      local text = trace_of(path)
      assert.is_table(json.decode(text).traceEvents, path)
      assert.truthy(text:find('"name":"work"', 1, true), path)
    end
    run.rmdir_all(dir)
    run.rmdir_all(dir2)
  end)

  it("lets on_trace_ready read back the trace it just wrote", function()
    local r, dir = profrun([[
local prof = require "prof"
local T = require "prof.tensor"
local handler = prof.tensorboard_trace_handler(arg[1] .. "/log", "w")
local p = prof.profile { schedule = prof.schedule { wait = 0, warmup = 0, active = 1 },
  on_trace_ready = function(q)
    local path = handler(q)
    local f = assert(io.open(path))
    local text = f:read("a")
    f:close()
    print("read back " .. #text .. " bytes, ends " .. text:sub(-2, -2))
  end }
T.relu(T.randn({ 4, 4 }))
p:step()
p:stop()
]], { "--device", "cpu" })
    assert.equal(0, r.code, r.stderr)
    local bytes, last = r.stdout:match("read back (%d+) bytes, ends (.)")
    assert.is_true(tonumber(bytes) > 100, r.stdout)
    assert.equal("}", last)
    run.rmdir_all(dir)
  end)

  it("keeps the flops profile written before the script reads it back and carries on", function()
    local r, dir = profrun([[
local prof = require "prof"
local models = require "prof.models"
prof.get_model_profile { model = models.lenet5(), input_shape = { 2, 1, 32, 32 },
  output_file = arg[1] .. "/p.json" }
local f = assert(io.open(arg[1] .. "/p.json"))
print("schema " .. f:read("a"):match('"schema": "([^"]+)"'))
f:close()
]], { "--device", "meta" })
    assert.equal(0, r.code, r.stderr)
    assert.truthy(r.stdout:find("schema profrun.profile/1", 1, true), r.stdout)
    run.rmdir_all(dir)
  end)

  it("raises at the script's line when a trace cannot be written (a file where its folder goes)", function()
    local r, dir = profrun(ONE_WINDOW .. [[
io.open(arg[1] .. "/blocked", "w"):close()
p:export_chrome_trace(arg[1] .. "/blocked/t.json")
print("not reached")
]], { "--device", "cpu" })
    assert.equal(1, r.code)
    assert.truthy(r.stderr:find("s.lua:10: export_chrome_trace: " .. dir .. "/blocked/t.json: cannot create directory "
      .. dir .. "/blocked: it exists and is not a directory", 1, true), r.stderr)
    assert.is_nil(r.stdout:find("not reached", 1, true))
    run.rmdir_all(dir)
  end)

  it("fails the run when a tensorboard trace cannot be written, naming output_dir", function()
    local r, dir = profrun([[
local prof = require "prof"
io.open(arg[1] .. "/tb", "w"):close()
for _ = 1, 3 do prof.step() end
]], { "--device", "cpu", "--set", "profiler.enabled=true", "--set", "profiler.output_dir=tb",
      "--set", 'profiler.schedule={"wait":0,"warmup":0,"active":1}' })
    assert.equal(1, r.code)
    assert.truthy(r.stderr:find("profiler.output_dir: ", 1, true), r.stderr)
    assert.truthy(r.stderr:find("tb", 1, true), r.stderr)
    run.rmdir_all(dir)
  end)

  it("keeps every cycle's trace of examples/trace_loop.lua (two handlers in one second)", function()
    local dir = run.tmpdir()
    local r = run.profrun({ "--device", "cpu", CONFIG, run.ROOT .. "/examples/trace_loop.lua" }, dir)
    assert.equal(0, r.code, r.stderr)
    local traces = run.list(dir .. "/log")
    assert.equal(2, #traces, table.concat(traces, " "))
    for _, name in ipairs(traces) do
      assert.matches("^[^.]+%.%d+%.pt%.trace%.json$", name)
      assert.is_table(json.decode(run.read(dir .. "/log/" .. name)).traceEvents)
    end
    run.rmdir_all(dir)
  end)
end)
