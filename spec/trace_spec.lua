-- trace_spec.lua — S:export_chrome_trace from Lua: a small model's run as Kineto's trace, read back.
local json = require "dkjson"
local run = require "spec.support.run"
local prof = require "prof"
local core = require "prof.core"
local nn = require "prof.nn"
local T = require "prof.tensor"

local function decode(text)
  local doc, _, err = json.decode(text, 1, json.null)
  assert(doc, err)
  return doc
end

-- Linear(8, 16) -> ReLU -> Linear(16, 4) on a batch of 2 (cpu), recorded with a buffer of cap events.
local function traced_run(cap)
  local model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
  local S = core.new()
  assert.equal(S, S:set_event_capacity(cap))
  local p = prof.FlopsProfiler(model)
  p.S = S                          -- the profiler records into this session
  p:start_profile()
  model(T.randn({ 2, 8 }))
  p:stop_profile()
  return S, p
end

-- Records traced_run(cap), exports it to <tmp>/<name> with opts and gives fn the decoded
-- document, the session, the profiler and the file; cleans up after.
local function with_trace(cap, name, opts, fn)
  local S, p = traced_run(cap)
  local dir = run.tmpdir()
  local path = dir .. "/" .. name
  assert.is_true(S:export_chrome_trace(path, opts))
  fn(decode(run.read(path)), S, p, path)
  run.rmdir_all(dir)
  S:close()
end

local function by_ph(doc, ph)
  local out = {}
  for _, e in ipairs(doc.traceEvents) do
    if e.ph == ph then out[#out + 1] = e end
  end
  return out
end

-- ts/dur in ns from µs with three decimals (exact: the values are small)
local function ns(us) return math.floor(us * 1000 + 0.5) end

describe("S:export_chrome_trace", function()
  it("writes Kineto's document: keys, rank, module spans with FLOPs, cpu ops, window end", function()
    local opts = { rank = 1, world_size = 2, process_name = "rank 1",
                   device_properties = '[{"id":0,"name":"cpu"}]' }
    -- the missing folder is made
    with_trace(4096, "traces/w.pt.trace.json", opts, function(doc, _, p, path)
      assert.equal(1, doc.schemaVersion)
      assert.same({ rank = 1, world_size = 2 }, doc.distributedInfo)
      assert.equal("ms", doc.displayTimeUnit)
      assert.equal(path, doc.traceName)
      assert.equal(0, doc.droppedEvents)
      assert.equal("cpu", doc.deviceProperties[1].name)
      assert.is_true(math.type(doc.baseTimeNanoseconds) == "integer")
      local modules, ops = {}, 0
      for _, e in ipairs(by_ph(doc, "X")) do
        if e.cat == "module" then modules[e.args["Module Path"]] = e end
        if e.cat == "cpu_op" then
          ops = ops + 1
          assert.is_true(math.type(e.args["External id"]) == "integer")
        end
      end
      -- torch's: linear (t, addmm), relu (clamp_min), linear (t, addmm), and randn over empty
      -- (on meta: no values, so no normal_)
      assert.equal(10, ops)
      assert.equal("Sequential", modules[""].args["Module Type"])
      assert.equal("0 (Linear)", modules["0"].name)
      -- Linear(8, 16) on 2 rows: 2*8*16 MACs, FLOPs = 2 MACs + the bias adds (exact conventions)
      assert.equal(256, modules["0"].args.MACs)
      assert.equal(2 * 256 + 2 * 16, modules["0"].args.FLOPs)
      assert.equal(p:get_total_flops(), modules[""].args.FLOPs)
      local names = {}
      for _, e in ipairs(by_ph(doc, "M")) do names[e.name] = e.args end
      assert.equal("rank 1", names.process_name.name)
      assert.equal("thread 1 (recorder 0)", names.thread_name.name)
      local last = doc.traceEvents[#doc.traceEvents]
      assert.equal("Record Window End", last.name)
    end)
  end)

  it("lists every thread's spans so that they nest, outermost first", function()
    with_trace(4096, "t.json", nil, function(doc)
      local open = {}                                    -- ends of the enclosing spans, per tid
      for _, e in ipairs(by_ph(doc, "X")) do
        local st = open[e.tid] or {}
        open[e.tid] = st
        local b, en = ns(e.ts), ns(e.ts) + ns(e.dur)
        while #st > 0 and st[#st] <= b and st[#st] < en do st[#st] = nil end
        if #st > 0 then assert.is_true(en <= st[#st], "span " .. e.name .. " overlaps its parent") end
        st[#st + 1] = en
      end
      assert.equal(0, doc.clippedSpans)
    end)
  end)

  it("gzips .gz while writing: the same document", function()
    local S = traced_run(4096)
    local dir = run.tmpdir()
    local opts = { base_epoch_ns = 1, trace_name = "t" }
    assert.is_true(S:export_chrome_trace(dir .. "/t.json", opts))
    assert.is_true(S:export_chrome_trace(dir .. "/t.json.gz", opts))
    local r = run.sh("gzip -dc " .. run.quote(dir .. "/t.json.gz"))
    assert.equal(0, r.code, r.stderr)
    assert.equal(run.read(dir .. "/t.json"), r.stdout)
    assert.same({ "t.json", "t.json.gz" }, run.list(dir))
    run.rmdir_all(dir)
    S:close()
  end)

  it("counts what a small buffer drops", function()
    with_trace(2, "t.json", nil, function(doc)
      assert.equal(2, #by_ph(doc, "X"))
      assert.equal(12, doc.droppedEvents)             -- 4 module calls and 10 ops, 2 kept
    end)
  end)

  it("returns nil and a message when it cannot write, leaving nothing", function()
    local S = traced_run(64)
    local dir = run.tmpdir()
    local f = assert(io.open(dir .. "/file", "w"))
    f:close()
    local ok, err = S:export_chrome_trace(dir .. "/file/t.json")
    assert.is_nil(ok)
    assert.matches("cannot", err)
    ok, err = S:export_chrome_trace(dir .. "/t.json", { device_properties = "{" })
    assert.is_nil(ok)
    assert.matches("device_properties", err)
    assert.same({ "file" }, run.list(dir))
    run.rmdir_all(dir)
    S:close()
  end)

  it("refuses a bad capacity or one set while recording", function()
    local S = core.new()
    assert.has_error(function() S:set_event_capacity(-1) end)
    S:start()
    assert.has_error(function() S:set_event_capacity(8) end)
    S:stop()
    assert.has_error(function() S:export_chrome_trace("x.json", 3) end)
    S:close()
  end)
end)
