-- profiler_spec.lua — prof.profile, record_function, ProfilerStep#N, key_averages and its table.
local prof = require "prof"
local core = require "prof.core"
local nn = require "prof.nn"
local T = require "prof.tensor"
local ka = require "prof.report.key_averages"
local schedule = require "prof.schedule"
local run = require "spec.support.run"
local op_tree = require "spec.support.op_tree"

local real_warn = schedule.warn
before_each(function() schedule.warn = function() end end)
after_each(function() schedule.warn = real_warn end)

local function of_kind(events, kind)
  local out = {}
  for _, e in ipairs(events) do if e.kind == kind then out[#out + 1] = e end end
  return out
end

local function names(events)
  local out = {}
  for i, e in ipairs(events) do out[i] = e.name end
  return out
end

describe("prof.State events (levents.c)", function()
  it("buffers ranges and instants with interned names and counts drops", function()
    local S = core.new()
    S:set_event_capacity(3)
    S:start()
    for i = 1, 5 do
      S:range_push("r" .. (i % 2))
      S:range_pop()
    end
    S:stop()
    local evs = S:events()
    assert.same({ "r1", "r0", "r1" }, names(evs))
    assert.equal("range", evs[1].kind)
    assert.equal(2, S:events_dropped())
    assert.is_nil(S:check())
    S:close()
  end)

  it("core.range_push/range_pop go to the current recorder, and nowhere without one", function()
    core.range_push("nobody")      -- no recorder: nothing, no error
    core.range_pop()
    local S = core.new()
    S:set_event_capacity(8)
    core.set_recorder(S)
    S:start()
    core.range_push("outer")
    S:instant("mark")
    core.range_pop()
    S:stop()
    core.set_recorder(nil)
    local evs = S:events()
    assert.same({ "mark", "outer" }, names(evs))
    assert.equal("instant", evs[1].kind)
    assert.is_true(evs[2].t_begin_ns <= evs[1].t_begin_ns and evs[1].t_begin_ns <= evs[2].t_end_ns)
    S:close()
  end)
end)

describe("prof.record_function", function()
  it("nests ranges and returns what fn returns", function()
    local p = prof.profile{}
    local a, b = prof.record_function("outer", function(x)
      local _ <close> = prof.record_function("inner")
      return x + 1, "ok"
    end, 41)
    p:stop()
    assert.same({ 42, "ok" }, { a, b })
    local ranges = of_kind(p:events(), "range")
    assert.same({ "outer", "inner" }, names(ranges))   -- start order, as torch's events()
    local outer, inner = ranges[1], ranges[2]
    assert.is_true(outer.t_begin_ns <= inner.t_begin_ns and inner.t_end_ns <= outer.t_end_ns)
  end)

  it("closes its range when fn raises, and later ranges still pair", function()
    local p = prof.profile{}
    assert.error_matches(function()
      prof.record_function("fails", function() error("boom") end)
    end, "boom")
    prof.record_function("after", function() end)
    p:stop()
    assert.same({ "fails", "after" }, names(of_kind(p:events(), "range")))
    assert.is_nil(p.stack_error)
  end)

  it("wraps steps in ProfilerStep#N inside the recording window only", function()
    local p = prof.profile{ schedule = prof.schedule{ wait = 0, warmup = 1, active = 3, ["repeat"] = 1 },
      on_trace_ready = function(q)
        q.seen = names(of_kind(q:events(), "range"))
      end }
    do
      local _ <close> = prof.record_function("spans the window")   -- opened before it, closed after
      for _ = 1, 5 do
        prof.record_function("work", function() end)
        p:step()
      end
    end
    p:stop()
    -- step 0 warms up (not recorded); 1..3 record; the window closes in step() #4
    assert.same({ "ProfilerStep#1", "work", "ProfilerStep#2", "work", "ProfilerStep#3", "work" },
      p.seen)
    assert.is_nil(p.stack_error)
  end)

  it("a range opened before the window and closed inside it is left out, without an error", function()
    local p = prof.profile{ schedule = prof.schedule{ wait = 1, warmup = 0, active = 2 }, start = false }
    do
      local _ <close> = prof.record_function("early")
      p:start()
      p:step()
    end
    p:stop()
    assert.same({ "ProfilerStep#1" }, names(of_kind(p:events(), "range")))
    assert.is_nil(p.stack_error)
  end)

  it("refuses a name that is not a string, at the caller's line", function()
    local line = debug.getinfo(1, "l").currentline + 1
    local ok, err = pcall(function() prof.record_function(42) end)
    assert.is_false(ok)
    assert.equal("spec/profiler_spec.lua:" .. line .. ": record_function: name must be a string, got number",
      err)
    assert.error_matches(function() prof.record_function() end, "must be a string, got nil")
  end)

  it("a scope opened in one window and closed in the next pops nothing of the next one", function()
    local base = prof.open_scopes()
    local p1 = prof.profile{}
    local a = prof.record_function("a")        -- window 1
    prof.record_function("in 1", function() end)
    p1:stop()
    local p2 = prof.profile{}
    do
      local _ <close> = a                      -- still open in window 2, closed there
      prof.record_function("in 2", function() end)
    end
    prof.record_function("after a", function() end)
    p2:stop()
    assert.same({ "in 1" }, names(of_kind(p1:events(), "range")))
    assert.same({ "in 2", "after a" }, names(of_kind(p2:events(), "range")))
    assert.is_nil(p2.stack_error)
    assert.equal(base, prof.open_scopes())
  end)

  it("pops a range exactly when its scope opened in the window still recording (random walk)", function()
    -- the rule, as a model: each open scope remembers the window it opened in (false outside
    -- one); closing it reaches the core only while that window still records
    local rng = 12345
    local function rand(n) rng = (rng * 1103515245 + 12345) % 2147483648 return rng % n + 1 end
    local base = prof.open_scopes()
    local stack, window, p, expected, got = {}, nil, nil, {}, {}
    local windows = 0
    local all_expected = {}
    local function close_window()
      p:stop()
      assert.is_nil(p.stack_error)
      got[#got + 1] = names(of_kind(p:events(), "range"))
      all_expected[#all_expected + 1] = expected
      window, p, expected = nil, nil, {}
    end
    for i = 1, 3000 do
      local r = rand(10)
      if r <= 4 then
        local name = "r" .. i
        stack[#stack + 1] = { closer = prof.record_function(name), window = window, name = name }
      elseif r <= 8 and #stack > 0 then
        local top = table.remove(stack)
        if top.window ~= nil and top.window == window then expected[#expected + 1] = top.name end
        do local _ <close> = top.closer end
      elseif r == 9 and window == nil then
        windows = windows + 1
        window, p = windows, prof.profile{}
      elseif r == 10 and window ~= nil then
        close_window()
      end
    end
    while #stack > 0 do
      local top = table.remove(stack)
      if top.window ~= nil and top.window == window then expected[#expected + 1] = top.name end
      do local _ <close> = top.closer end
    end
    if window ~= nil then close_window() end
    assert.is_true(windows > 50, windows .. " windows")
    local popped = 0
    for k = 1, #got do
      table.sort(all_expected[k])
      table.sort(got[k])
      assert.same(all_expected[k], got[k])
      popped = popped + #got[k]
    end
    assert.is_true(popped > 100, popped .. " ranges")
    assert.equal(base, prof.open_scopes())
  end)

  it("nests fn-form ranges as deep as Lua calls go, and says so when the state was closed", function()
    local base = prof.open_scopes()
    local function rec(n) if n == 0 then return "bottom" end return prof.record_function("r", rec, n - 1) end
    assert.equal("bottom", rec(1000))       -- no C stack per level (LUAI_MAXCCALLS is 200)
    assert.equal(base, prof.open_scopes())
    -- the window's state closed mid-window (in a child: its profile can no longer stop): the
    -- scope is refused at the caller's line, reads no freed state, and never opens
    local dir = run.tmpdir()
    run.write(dir, "closed.lua", table.concat({
      'local prof = require "prof"',
      'local p = prof.profile{}',
      'p.S:close()',
      'local ok, err = pcall(function() local _ <close> = prof.record_function("x") end)',
      'io.write(tostring(ok), "|", err, "|", prof.open_scopes(), "\\n")' }, "\n"))
    local r = run.profrun({ run.ROOT .. "/configs/default.json", dir .. "/closed.lua" })
    run.rmdir_all(dir)
    assert.equal(0, r.code, r.stderr)
    assert.equal("false|" .. dir .. "/closed.lua:4: record_function: the profiler state is closed|0\n",
      r.stdout)
  end)

  it("lets fn yield: record_function(name, fn) inside a coroutine", function()
    local p = prof.profile{}
    local co = coroutine.wrap(function()
      return prof.record_function("gen", function(x)
        local y = coroutine.yield(x + 1)
        return y * 2, "done"
      end, 1)
    end)
    assert.equal(2, co())
    local a, b = co(21)
    p:stop()
    assert.same({ 42, "done" }, { a, b })
    assert.same({ "gen" }, names(of_kind(p:events(), "range")))
  end)

  it("costs a counter outside a window: nothing reaches a session, and depth comes back", function()
    local base = prof.open_scopes()
    do
      local _ <close> = prof.record_function("idle")
      assert.equal(base + 1, prof.open_scopes())
      prof.record_function("idle fn", function() assert.equal(base + 2, prof.open_scopes()) end)
    end
    assert.equal(base, prof.open_scopes())
  end)
end)

describe("prof.profile", function()
  it("records from <close> scope to scope end, and stops", function()
    local p
    do
      local q <close> = prof.profile{}
      p = q
      assert.is_true(p.running)
      prof.record_function("x", function() end)
    end
    assert.is_false(p.running)
    assert.is_nil(core.recorder())
    assert.same({ "x" }, names(of_kind(p:events(), "range")))
  end)

  it("records ops, module scopes by path and memory events", function()
    core.set_default_device("cpu")
    T.manual_seed(1)
    local model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    local p = prof.profile{ profile_memory = true }
    model(T.randn({ 3, 4 }))
    p:stop()
    core.set_default_device("meta")
    local evs = p:events()
    local mods = of_kind(evs, "module")
    local paths = {}
    for _, m in ipairs(mods) do paths[#paths + 1] = m.module_path .. ":" .. m.name end
    table.sort(paths)
    assert.same({ "0:Linear", "1:ReLU", "2:Linear", ":Sequential" }, paths)   -- ":" sorts after digits
    -- torch 1.13 on the same program (its children below these omitted: aten::transpose,
    -- aten::as_strided, aten::expand, aten::copy_, aten::resolve_conj)
    local tree = {}
    for _, line in ipairs(op_tree.lines(evs, { op = true })) do
      if #line:match("^ *") <= 2 then tree[#tree + 1] = line end
    end
    assert.same({ "aten::randn", "  aten::empty", "  aten::normal_",
                  "aten::linear", "  aten::t", "  aten::addmm",
                  "aten::relu", "  aten::clamp_min",
                  "aten::linear", "  aten::t", "  aten::addmm" }, tree)
    local ops = of_kind(evs, "op")
    local linear, addmm
    for _, e in ipairs(ops) do
      if e.name == "aten::linear" and not linear then linear = e end
      if e.name == "aten::addmm" and not addmm then addmm = e end
    end
    assert.equal("0", linear.module_path)
    -- the GEMM's child carries the op's count (2 x M x K x N plus the bias adds), the parent
    -- none: the events still sum to the profile's total
    assert.equal(2 * 3 * 4 * 8 + 3 * 8, addmm.flops)
    assert.equal(0, linear.flops)
    assert.is_true(#of_kind(evs, "memory") >= 3)
    assert.is_true(p:memory_peak("cpu") > 0)
  end)

  it("with_flops adds torch's Total FLOPs column, scaled by the smallest count", function()
    local p = prof.profile{ with_flops = true }
    T.linear(T.empty({ 3, 4 }, { device = "meta" }), T.empty({ 8, 4 }, { device = "meta" }))
    p:stop()
    local text = p:key_averages():table()
    -- 2 x 3 x 4 x 8 = 192 FLOPs (no bias): under 1000, so plain FLOPs
    assert.matches("Total FLOPs", text, 1, true)
    assert.matches("aten::linear .-  192%.000  \n", text)
  end)

  it("takes the recorder back after the flops profiler borrowed it for a step", function()
    local model = nn.Linear(4, 2)
    local p = prof.profile{ schedule = prof.schedule{ wait = 0, warmup = 1, active = 3, ["repeat"] = 1 } }
    local x = T.empty({ 1, 4 }, { device = "meta" })
    p:step()                                    -- step 1 records
    local fp = prof.FlopsProfiler(model)
    fp:start_profile()
    model(x)
    fp:end_profile()
    p:step()                                    -- step 2: the recorder is ours again
    model(x)
    p:stop()
    -- the op of step 1 went to the flops profiler's session, that of step 2 to ours; ranges
    -- always go to the window's session, whoever holds the recorder
    assert.same({ "aten::linear", "  aten::t", "  aten::addmm" }, op_tree.lines(p:events(), { op = true }))
    assert.same({ "ProfilerStep#1", "ProfilerStep#2" }, names(of_kind(p:events(), "range")))
    assert.is_nil(p.stack_error)
  end)

  it("counts dropped events with a tiny buffer, in the table's footer too", function()
    local p = prof.profile{ capacity = 4 }
    for _ = 1, 10 do prof.record_function("r", function() end) end
    p:stop()
    assert.equal(4, #p:events())
    assert.equal(6, p:events_dropped())
    assert.matches("Events dropped: 6", p:key_averages():table(), 1, true)
  end)

  it("with_stack gives ranges the Lua file and line of the caller", function()
    local p = prof.profile{ with_stack = true }
    local line = debug.getinfo(1, "l").currentline + 1
    prof.record_function("here", function() end)
    p:stop()
    local r = of_kind(p:events(), "range")[1]
    assert.equal("spec/profiler_spec.lua(" .. line .. ")", r.stack[1])
    -- as torch 1.13's key_averages: the stack is a column only when grouped by it
    assert.is_nil(p:key_averages():table():find("Source Location", 1, true))
    local grouped = p:key_averages{ group_by_stack_n = 5 }:table()
    assert.matches("Source Location", grouped, 1, true)
    assert.matches("spec/profiler_spec.lua(" .. line .. ")", grouped, 1, true)
  end)

  it("says export_chrome_trace is missing when the build has no trace writer", function()
    local p = prof.profile{}
    p:stop()
    if p.S.export_chrome_trace == nil then
      assert.error_matches(function() p:export_chrome_trace("/nonexistent/x.json") end,
        "export_chrome_trace: not available in this build")
    end
  end)

  it("names tensorboard traces <worker>.<wall ms>.pt.trace.json[.gz] and never replaces a file", function()
    local dir = run.tmpdir()
    local p = prof.profile{}
    p:stop()
    -- the names of the next 30 milliseconds are taken (by another handler, say): kept, skipped
    local now = core.wall_ms()
    os.execute("mkdir -p " .. run.quote(dir .. "/tb"))
    for ms = now, now + 30 do
      local f = assert(io.open(string.format("%s/tb/w0.%d.pt.trace.json.gz", dir, ms), "w"))
      f:write("taken")
      f:close()
    end
    local h = prof.tensorboard_trace_handler(dir .. "/tb", "w0", true)
    local a, b = h(p), h(p)
    local ma = tonumber(a:match("^" .. dir:gsub("%p", "%%%0") .. "/tb/w0%.(%d+)%.pt%.trace%.json%.gz$"))
    local mb = tonumber(b:match("/w0%.(%d+)%.pt%.trace%.json%.gz$"))
    assert.is_true(ma > now + 30 and ma < now + 60000, a)
    assert.is_true(mb > ma, b)
    -- written, gzip-compressed (the magic bytes), and every taken name still holds its text
    assert.equal("\31\139", run.read(a):sub(1, 2))
    assert.equal("\31\139", run.read(b):sub(1, 2))
    assert.equal("taken", run.read(string.format("%s/tb/w0.%d.pt.trace.json.gz", dir, now + 30)))
    run.rmdir_all(dir)
  end)
end)

-- A crafted window (times in ns), derived by hand:
--   thread 0: outer [0, 10000] holds a [1000, 4000] (which holds b [2000, 3000]), b [5000, 7000]
--             and inner [7500, 9500]; thread 1: b [0, 1000].
--   self: outer 10 - (3 + 2 + 2) = 3 us, a 3 - 1 = 2 us, b 1 + 2 + 1 = 4 us, inner 2 us: 11 us.
--   memory: a +4096 -512 (self 3584), b +1024 inside a, +256 in inner, -100 in outer only;
--   totals: a 3584 + 1024 = 4608, outer -100 + 4608 + 256 = 4764 (4.65 Kb).
local function crafted()
  local function op(name, t0, t1, corr, thread)
    return { kind = "op", name = name, t_begin_ns = t0, t_end_ns = t1, correlation = corr,
             thread = thread or 0, flops = 0 }
  end
  local function range(name, t0, t1)
    return { kind = "range", name = name, t_begin_ns = t0, t_end_ns = t1, correlation = 0, thread = 0 }
  end
  local function mem(t, v, corr)
    return { kind = "memory", name = "[memory]", t_begin_ns = t, t_end_ns = t, value = v,
             correlation = corr, thread = 0, device = "cpu" }
  end
  -- in the order the core buffers them: as they close
  return { mem(1500, 4096, 1), mem(2500, 1024, 2), op("aten::b", 2000, 3000, 2), mem(3500, -512, 1),
    op("aten::a", 1000, 4000, 1), op("aten::b", 5000, 7000, 3), mem(8000, 256, 0),
    range("inner", 7500, 9500), mem(9800, -100, 0), range("outer", 0, 10000),
    op("aten::b", 0, 1000, 4, 1) }
end

local SEP = "-----------  ------------  ------------  ------------  ------------  ------------  "
  .. "------------  ------------  ------------  "
local HEAD = "       Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg  "
  .. "     CPU Mem  Self CPU Mem    # of Calls  "

describe("key_averages", function()
  it("computes self and total time and memory that add up down the tree", function()
    local rows = ka.build(crafted(), { profile_memory = true })
    local by = {}
    for _, r in ipairs(rows) do by[r.key] = r end
    assert.same({ 3.0, 10.0, 1 }, { by.outer.self_cpu_time_total, by.outer.cpu_time_total, by.outer.count })
    assert.same({ 2.0, 3.0 }, { by["aten::a"].self_cpu_time_total, by["aten::a"].cpu_time_total })
    assert.same({ 4.0, 4.0, 3 }, { by["aten::b"].self_cpu_time_total, by["aten::b"].cpu_time_total,
      by["aten::b"].count })
    assert.same({ 4764, -100 }, { by.outer.cpu_memory_usage, by.outer.self_cpu_memory_usage })
    assert.same({ 4608, 3584 }, { by["aten::a"].cpu_memory_usage, by["aten::a"].self_cpu_memory_usage })
    -- every byte is some event's self memory once
    local self_sum = 0
    for _, r in ipairs(rows) do self_sum = self_sum + r.self_cpu_memory_usage end
    assert.equal(4096 - 512 + 1024 + 256 - 100, self_sum)
  end)

  it("prints torch's columns, order, formats and footer", function()
    local text = ka.build(crafted(), { profile_memory = true }):table()
    assert.equal(table.concat({ SEP, HEAD, SEP,
      "      outer        27.27%       3.000us        90.91%      10.000us      10.000us  "
        .. "     4.65 Kb        -100 b             1  ",
      "    aten::b        36.36%       4.000us        36.36%       4.000us       1.333us  "
        .. "     1.00 Kb       1.00 Kb             3  ",
      "    aten::a        18.18%       2.000us        27.27%       3.000us       3.000us  "
        .. "     4.50 Kb       3.50 Kb             1  ",
      "      inner        18.18%       2.000us        18.18%       2.000us       2.000us  "
        .. "       256 b         256 b             1  ",
      SEP, "Self CPU time total: 11.000us", "" }, "\n"), text)
  end)

  it("sorts (stably, descending) and shows top-level events only", function()
    local text = ka.build(crafted(), { profile_memory = true }):table{
      sort_by = "self_cpu_time_total", top_level_events_only = true }
    local lines = {}
    for l in text:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.equal("This report only display top-level ops statistics", lines[2])
    assert.equal(string.rep("=", #SEP - 2), lines[1])
    -- aten::b's first call (thread 1) has no parent, as torch's average keeps the first's
    assert.matches("^    aten::b ", lines[6])
    assert.matches("^      outer ", lines[7])
    assert.equal(SEP, lines[8])
    local by_count = ka.build(crafted(), {}):table{ sort_by = "count", row_limit = 1 }
    assert.matches("aten::b", by_count, 1, true)
    assert.is_nil(by_count:find("outer", 1, true))
    assert.is_nil(by_count:find("CPU Mem", 1, true))       -- no profile_memory: no memory columns
    assert.error_matches(function() ka.build(crafted(), {}):table{ sort_by = "speed" } end,
      'unknown sort_by "speed"')
  end)

  it("never gives a negative self time", function()
    -- a child reported longer than its parent (clock skew between sources)
    local rows = ka.build({
      { kind = "op", name = "child", t_begin_ns = 0, t_end_ns = 100, correlation = 2, thread = 0 },
      { kind = "op", name = "child", t_begin_ns = 0, t_end_ns = 100, correlation = 3, thread = 0 },
      { kind = "range", name = "parent", t_begin_ns = 0, t_end_ns = 100, correlation = 0, thread = 0 },
    }, {})
    for _, r in ipairs(rows) do assert.is_true(r.self_cpu_time_total >= 0) end
  end)

  -- The reference table (torch 1.13 on an MLP, spec/fixtures/): its rows as FunctionEventAvg
  -- values, plus rows past row_limit that carry the rest of the self time (1.243 ms in all) and
  -- the longest name (18 characters: the name column is 22 wide).
  local function reference_rows(with_shapes)
    local function row(key, self_us, total_us, mem, self_mem, count, shapes)
      return { key = key, self_cpu_time_total = self_us, cpu_time_total = total_us,
               cpu_time = total_us / count, cpu_memory_usage = mem, self_cpu_memory_usage = self_mem,
               count = count, flops = 0, stack = {}, input_shapes = with_shapes and shapes or nil }
    end
    local KB = 1024
    local rows
    if not with_shapes then
      rows = {
        row("model_forward", 280, 1143, -20, -171121, 5),
        row("aten::linear", 34, 793, 88320, 0, 10), row("aten::addmm", 635, 681, 88320, 36608, 10),
        row("aten::zeros", 79, 100, 20, 12, 5), row("aten::t", 54, 77, 0, 0, 10),
        row("aten::relu", 25, 70, 80 * KB, 0, 5), row("aten::clamp_min", 45, 45, 80 * KB, 80 * KB, 5),
        row("aten::copy_", 35, 35, 0, 0, 10), row("aten::transpose", 15, 24, 0, 0, 10),
        row("aten::empty", 17, 17, 876, 876, 10),
        row("aten::_unsafe_view", 12, 12, 0, 0, 5), row("aten::expand", 12, 12, 0, 0, 5),
      }
    else
      rows = {
        row("aten::clamp_min", 45, 45, 80 * KB, 80 * KB, 5, { { 32, 128 }, {} }),
        row("aten::expand", 5, 6, 48 * KB, 48 * KB, 5, { { 128 }, {}, {} }),
        row("aten::addmm", 605, 648, 80 * KB, 32 * KB, 5, { { 128 }, { 32, 64 }, { 64, 128 }, {}, {} }),
        row("aten::addmm", 30, 33, 6400, 3840, 5, { { 10 }, { 32, 128 }, { 128, 10 }, {}, {} }),
        row("aten::expand", 1, 1, 2560, 2560, 5, { { 10 }, {}, {} }),
        row("aten::empty", 17, 17, 876, 876, 10, { {}, {}, {}, {}, {}, {} }),
        row("aten::zeros", 79, 100, 20, 12, 5, { {}, {}, {}, {}, {} }),
        row("aten::zero_", 4, 4, 8, 8, 5, { { 1 } }),
        row("aten::linear", 28, 743, 80 * KB, 0, 5, { { 32, 64 }, { 128, 64 }, { 128 } }),
        row("aten::t", 46, 67, 0, 0, 5, { { 128, 64 } }),
        row("aten::_unsafe_view", 383, 383, 0, 0, 5, { { 32, 10 } }),
      }
    end
    rows.profile_memory = true
    return setmetatable(rows, ka.EventList)
  end

  local function reference(first, last)
    local text = assert(run.read(run.ROOT .. "/spec/fixtures/torch_key_averages_cpu_mem_shapes.txt"))
    local lines = {}
    for l in (text .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
    return table.concat(lines, "\n", first, last) .. "\n"
  end

  it("reproduces torch 1.13's table sorted by cpu_time_total, to the character", function()
    assert.equal(reference(1, 15), reference_rows(false):table{ sort_by = "cpu_time_total", row_limit = 10 })
  end)

  it("reproduces torch 1.13's table grouped by input shape, to the character", function()
    assert.equal(reference(17, 31), reference_rows(true):table{ row_limit = 10 })
  end)

  it("groups by input shape and by the top stack frames", function()
    local evs = {
      { kind = "op", name = "aten::mm", t_begin_ns = 0, t_end_ns = 10, thread = 0, correlation = 1,
        input_shapes = { { 2, 3 }, { 3, 4 } } },
      { kind = "op", name = "aten::mm", t_begin_ns = 20, t_end_ns = 30, thread = 0, correlation = 2,
        input_shapes = { { 5, 3 }, { 3, 4 } } },
      { kind = "range", name = "r", t_begin_ns = 40, t_end_ns = 50, thread = 0, correlation = 0,
        stack = { "a.lua(1)" } },
      { kind = "range", name = "r", t_begin_ns = 60, t_end_ns = 70, thread = 0, correlation = 0,
        stack = { "a.lua(2)" } },
    }
    assert.equal(2, #ka.build(evs, {}))
    assert.equal(4, #ka.build(evs, { group_by_input_shape = true, group_by_stack_n = 1 }))
    assert.equal(3, #ka.build(evs, { group_by_input_shape = true }))
  end)
end)

describe("profrun with profiler.enabled", function()
  local dir
  before_each(function() dir = run.tmpdir() end)
  after_each(function() run.rmdir_all(dir) end)

  local function script(text)
    local path = dir .. "/script.lua"
    local f = assert(io.open(path, "w"))
    f:write(text)
    f:close()
    return path
  end

  local SCHEDULE = { "--set", "profiler.enabled=true", "--set", "profiler.schedule.wait=1",
    "--set", "profiler.schedule.warmup=1", "--set", "profiler.schedule.active=2",
    "--set", "profiler.schedule.repeat=1" }

  local function profrun(path, extra)
    local args = { "--device", "cpu" }
    for _, a in ipairs(SCHEDULE) do args[#args + 1] = a end
    for _, a in ipairs(extra or {}) do args[#args + 1] = a end
    args[#args + 1] = run.ROOT .. "/configs/default.json"
    args[#args + 1] = path
    return run.profrun(args)
  end

  it("profiles a script that only calls prof.step()", function()
    local r = profrun(script([[
local prof = require "prof"
local T = require "prof.tensor"
local nn = require "prof.nn"
local m = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
for _ = 1, 6 do
  prof.record_function("model_forward", function() m(T.randn({ 4, 8 })) end)
  prof.step()
end
]]))
    assert.equal(0, r.code, r.stderr)
    assert.matches("profrun: activity profiler, window 1 (to step 4)", r.stdout, 1, true)
    -- steps 2 and 3 are recorded: two ProfilerStep* and two model_forward
    assert.matches("ProfilerStep%*%s.-%s2%s*\n", r.stdout)
    assert.matches("model_forward%s.-%s2%s*\n", r.stdout)
    assert.matches("aten::linear%s.-%s2%s*\n", r.stdout)
    assert.matches("Self CPU time total: ", r.stdout, 1, true)
    assert.is_nil(r.stdout:find("window 2", 1, true))
  end)

  it("steps with the engine when the script never calls prof.step()", function()
    local r = profrun(script([[
local prof = require "prof"
local T = require "prof.tensor"
local nn = require "prof.nn"
local model = nn.Linear(4, 2)
local engine = prof.initialize{ model = model, optimizer = prof.optim.SGD(model:parameters(), { lr = 0.1 }) }
for _ = 1, 5 do
  local loss = engine(T.randn({ 3, 4 })):sum()
  engine:backward(loss)
  engine:step()
end
]]))
    assert.equal(0, r.code, r.stderr)
    assert.matches("window 1 (to step 4)", r.stdout, 1, true)
    assert.matches("aten::linear%s.-%s2%s*\n", r.stdout)
  end)

  it("reports nothing when the script fails", function()
    local r = profrun(script("require('prof').step()\nerror('stop here')\n"))
    assert.equal(1, r.code)
    assert.is_nil(r.stdout:find("activity profiler", 1, true))
  end)
end)

describe("examples/trace_loop.lua", function()
  it("delivers the tutorial's two cycles and both tables", function()
    local r = run.profrun({ "--device", "cpu", run.ROOT .. "/configs/default.json",
      run.ROOT .. "/examples/trace_loop.lua" })
    assert.equal(0, r.code, r.stderr)
    -- wait 5, warmup 2, active 6: the windows end in steps 13 and 26
    assert.matches("== cycle 1 (the window ended in step 13)", r.stdout, 1, true)
    assert.matches("== cycle 2 (the window ended in step 26)", r.stdout, 1, true)
    assert.is_nil(r.stdout:find("cycle 3", 1, true))
    -- six steps a window; key_averages() has no Source Location column (torch's: only with
    -- group_by_stack_n), though with_stack records the frames
    assert.matches("ProfilerStep%*%s.-%s6%s*\n", r.stdout)
    assert.is_nil(r.stdout:find("Source Location", 1, true))
    assert.matches("model_forward", r.stdout, 1, true)
    assert.matches("== the last cycle by self CPU memory", r.stdout, 1, true)
  end)
end)
