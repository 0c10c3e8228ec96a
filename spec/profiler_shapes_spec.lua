-- profiler_shapes_spec.lua — record_shapes and with_stack on real ops (events, tables, traces); long runs stay flat.
local json = require "dkjson"
local prof = require "prof"
local T = require "prof.tensor"
local schedule = require "prof.schedule"
local run = require "spec.support.run"

local real_warn = schedule.warn
before_each(function() schedule.warn = function() end end)
after_each(function() schedule.warn = real_warn end)

local function ops_named(events, name)
  local out = {}
  for _, e in ipairs(events) do
    if e.kind == "op" and e.name == name then out[#out + 1] = e end
  end
  return out
end

-- Two matmuls of different shapes and one repeated: torch's name: aten::matmul.
local function workload()
  local a, b = T.randn({ 8, 64 }, { device = "cpu" }), T.randn({ 64, 32 }, { device = "cpu" })
  local c = T.randn({ 4, 8 }, { device = "cpu" })
  a:matmul(b)
  a:matmul(b)
  c:matmul(a)
end

describe("record_shapes", function()
  it("gives each op its inputs' shapes and dtypes", function()
    local p = prof.profile{ record_shapes = true }
    workload()
    p:stop()
    local mms = ops_named(p:events(), "aten::matmul")
    assert.equal(3, #mms)
    assert.same({ { 8, 64 }, { 64, 32 } }, mms[1].input_shapes)
    assert.same({ "float32", "float32" }, mms[1].input_types)
    assert.same({ { 4, 8 }, { 8, 64 } }, mms[3].input_shapes)
    assert.equal(0, p.S:shapes_dropped())
  end)

  it("records none without it", function()
    local p = prof.profile{}
    workload()
    p:stop()
    assert.is_nil(ops_named(p:events(), "aten::matmul")[1].input_shapes)
    assert.not_matches("Input Shapes", p:key_averages():table(), 1, true)
  end)

  it("splits key_averages rows by shape with group_by_input_shape", function()
    local p = prof.profile{ record_shapes = true }
    workload()
    p:stop()
    local function mm_rows(rows)
      local out = {}
      for _, r in ipairs(rows) do if r.key == "aten::matmul" then out[#out + 1] = r end end
      return out
    end
    assert.equal(1, #mm_rows(p:key_averages()))
    local split = mm_rows(p:key_averages{ group_by_input_shape = true })
    assert.equal(2, #split)
    local calls = {}
    for _, r in ipairs(split) do calls[#calls + 1] = r.count end
    table.sort(calls)
    assert.same({ 1, 2 }, calls)
    local text = p:key_averages{ group_by_input_shape = true }:table{ sort_by = "count" }
    assert.matches("Input Shapes", text, 1, true)
    assert.matches("[[8, 64], [64, 32]]", text, 1, true)
  end)

  it("writes torch's Input Dims and Input type into the trace", function()
    local p = prof.profile{ record_shapes = true }
    workload()
    p:stop()
    local dir = run.tmpdir()
    assert.is_true(p:export_chrome_trace(dir .. "/t.json"))
    local doc = json.decode(run.read(dir .. "/t.json"), 1, json.null)
    run.rmdir_all(dir)
    local mm
    for _, e in ipairs(doc.traceEvents) do
      if e.name == "aten::matmul" and e.cat == "cpu_op" then mm = mm or e end
    end
    assert.same({ { 8, 64 }, { 64, 32 } }, mm.args["Input Dims"])
    assert.same({ "float", "float" }, mm.args["Input type"])
  end)
end)

describe("with_stack", function()
  it("gives ops the script's file and line, innermost first, profrun's frames left out", function()
    local p = prof.profile{ with_stack = true }
    local function inner() return T.randn({ 2, 2 }, { device = "cpu" }):matmul(T.ones({ 2, 2 }, { device = "cpu" })) end
    local line_inner = debug.getinfo(1, "l").currentline - 1
    local line_call = debug.getinfo(1, "l").currentline + 1
    inner()
    p:stop()
    local mm = ops_named(p:events(), "aten::matmul")[1]
    assert.equal("spec/profiler_shapes_spec.lua(" .. line_inner .. ")", mm.stack[1])
    assert.equal("spec/profiler_shapes_spec.lua(" .. line_call .. ")", mm.stack[2])
    for _, f in ipairs(mm.stack) do assert.not_matches("lua/prof/", f, 1, true) end
    assert.is_true(#mm.stack <= 16)   -- stack_depth defaults to 16
    local q = prof.profile{ with_stack = true, stack_skip = { "@/usr/share/lua/" } }
    inner()
    q:stop()
    for _, f in ipairs(ops_named(q:events(), "aten::matmul")[1].stack) do
      assert.not_matches("/usr/share/lua/", f, 1, true)
    end
  end)

  it("keeps stack_depth frames", function()
    local p = prof.profile{ with_stack = true, stack_depth = 1 }
    local function f() return T.ones({ 2 }, { device = "cpu" }):add(1) end
    f()
    p:stop()
    for _, e in ipairs(p:events()) do
      if e.stack then assert.equal(1, #e.stack) end
    end
  end)

  it("writes the location as the trace's Call stack", function()
    local p = prof.profile{ with_stack = true }
    local line = debug.getinfo(1, "l").currentline + 1
    prof.record_function("here", function() end)
    p:stop()
    local dir = run.tmpdir()
    assert.is_true(p:export_chrome_trace(dir .. "/t.json"))
    local doc = json.decode(run.read(dir .. "/t.json"), 1, json.null)
    run.rmdir_all(dir)
    local here
    for _, e in ipairs(doc.traceEvents) do if e.name == "here" then here = e end end
    assert.equal("spec/profiler_shapes_spec.lua(" .. line .. ")", here.args["Call stack"]:match("^[^;]+"))
  end)
end)

describe("a long scheduled run", function()
  it("names steps ProfilerStep#N and holds flat memory over 1,000 cycles, a trace each", function()
    local windows, names = 0, nil
    local dir = run.tmpdir()
    local p = prof.profile{
      schedule = prof.schedule{ wait = 0, warmup = 0, active = 1, ["repeat"] = 0 },
      record_shapes = true, capacity = 64,
      on_trace_ready = function(q)
        windows = windows + 1
        q:key_averages()
        assert(q:export_chrome_trace(dir .. "/cycle.json"))   -- torch's one trace per cycle
        names = {}
        for _, e in ipairs(q:events()) do
          if e.kind == "range" then names[#names + 1] = e.name end
        end
      end,
    }
    local x = T.ones({ 4 }, { device = "cpu" })
    local function steps(n)
      for _ = 1, n do
        prof.record_function("work", function() return x:add(1) end)
        p:step()
      end
    end
    steps(100)
    assert.same({ "ProfilerStep#99", "work" }, names)   -- p:events() is in start order
    collectgarbage()
    collectgarbage()
    local kb0 = collectgarbage("count")   -- the core allocates through Lua's allocator too
    steps(1000)
    collectgarbage()
    collectgarbage()
    local grown = (collectgarbage("count") - kb0) * 1024
    assert.equal(1100, windows)
    p:stop()
    assert.equal(1101, windows)   -- stopping mid-window delivers the partial one
    run.rmdir_all(dir)
    -- a name interned per step (ProfilerStep#123, about 50 bytes each) would add ~50 KB here
    assert.is_true(grown < 8 * 1024, string.format("grew %.0f bytes over 1,000 cycles", grown))
  end)
end)

describe("p:export_stacks", function()
  -- A 256x256 matmul (tens of µs on any cpu) called from a named local function.
  local function heavy()
    local a = T.randn({ 256, 256 }, { device = "cpu" })
    return a:matmul(a)
  end

  it("writes collapsed stacks: frames outermost first, then whole µs", function()
    local p = prof.profile{ with_stack = true }
    local line_heavy = debug.getinfo(heavy, "S").linedefined + 2
    local line_call = debug.getinfo(1, "l").currentline + 1
    heavy()
    p:stop()
    local dir = run.tmpdir()
    assert.is_true(p:export_stacks(dir .. "/self.txt"))
    assert.is_true(p:export_stacks(dir .. "/total.txt", "cpu_time_total"))
    local self_text, total_text = run.read(dir .. "/self.txt"), run.read(dir .. "/total.txt")
    run.rmdir_all(dir)
    -- the matmul's line: ...;<call site>;<inside heavy> N
    local want = "spec/profiler_shapes_spec.lua(" .. line_call .. ");spec/profiler_shapes_spec.lua("
      .. line_heavy .. ")"
    local found
    for line in self_text:gmatch("[^\n]+") do
      assert.matches("^[^ ]+ %d+$", line)
      local frames, us = line:match("^(.*) (%d+)$")
      if frames:sub(-#want) == want then found = tonumber(us) end
    end
    assert.is_true(found ~= nil and found > 0)
    -- the matmul has no child ops: its total equals its self time
    assert.matches(want:gsub("%p", "%%%0") .. " " .. found .. "\n", total_text)
  end)

  it("refuses an unknown metric and a window without stacks", function()
    local p = prof.profile{ with_stack = true }
    heavy()
    p:stop()
    assert.error_matches(function() p:export_stacks("/tmp/x", "self_gpu") end,
      'metric "self_gpu" is not one of')
    local q = prof.profile{}
    q:stop()
    assert.error_matches(function() q:export_stacks("/tmp/x") end, "with_stack=true")
  end)
end)

describe("with_stack in the trace", function()
  it("makes the script's frames lua_function slices that nest, on a frames row per thread", function()
    -- busted's own frames left out, so the whole stack fits stack_depth
    local p = prof.profile{ with_stack = true, stack_skip = { "@/usr/share/lua/" } }
    local function layer(x) return x:matmul(x) end
    local function forward(x) return layer(layer(x)) end
    local line_call = debug.getinfo(1, "l").currentline + 1
    forward(T.ones({ 16, 16 }, { device = "cpu" }))
    p:stop()
    local dir = run.tmpdir()
    assert.is_true(p:export_chrome_trace(dir .. "/t.json"))
    local doc = json.decode(run.read(dir .. "/t.json"), 1, json.null)
    run.rmdir_all(dir)
    local frames, ops, row_name = {}, {}, nil
    for _, e in ipairs(doc.traceEvents) do
      if e.cat == "lua_function" then frames[#frames + 1] = e end
      if e.cat == "cpu_op" and e.name == "aten::matmul" then ops[#ops + 1] = e end
      if e.ph == "M" and e.name == "thread_name" and e.args.name:match("Lua frames$") then
        row_name = e
      end
    end
    assert.equal(2, #ops)
    assert.truthy(row_name)
    -- every slice sits on the frames row, and any two either nest or do not overlap
    for _, f in ipairs(frames) do assert.equal(row_name.tid, f.tid) end
    for i = 1, #frames do
      for j = i + 1, #frames do
        local a, b = frames[i], frames[j]
        local a1, b1 = a.ts + a.dur, b.ts + b.dur
        local disjoint = a1 <= b.ts + 1e-3 or b1 <= a.ts + 1e-3
        local nested = (a.ts <= b.ts + 1e-3 and b1 <= a1 + 1e-3) or (b.ts <= a.ts + 1e-3 and a1 <= b1 + 1e-3)
        assert.is_true(disjoint or nested, a.name .. " and " .. b.name .. " overlap without nesting")
      end
    end
    -- the call site's frame encloses both matmuls
    local site = "spec/profiler_shapes_spec.lua(" .. line_call .. ")"
    local outer
    for _, f in ipairs(frames) do if f.name == site then outer = f end end
    assert.truthy(outer, site)
    for _, op in ipairs(ops) do
      assert.is_true(outer.ts <= op.ts + 1e-3 and op.ts + op.dur <= outer.ts + outer.dur + 1e-3)
    end
  end)
end)
