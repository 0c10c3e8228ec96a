-- capture_spec.lua — GPU capture from Lua without a GPU: replayed fixtures and synthetic launches
-- through the CUPTI decoder; the values come from spec/fixtures/cupti/README.md's derivation.
local json = require "dkjson"
local run = require "spec.support.run"
local core = require "prof.core"

local FIXTURE = "spec/fixtures/cupti/basic.json"

-- Replays decode CUDA 13's record structs: a core built without the CUPTI headers has none (its
-- capture_available says so), and only the first test, the refusal, applies to it.
local _, built_why = core.capture_available()
local headers = built_why ~= "built without the CUPTI headers"
local it_replay = headers and it or pending

local function rows_of(S, kind)
  local out = {}
  for _, e in ipairs(S:events()) do
    if e.kind == kind then out[#out + 1] = e end
  end
  return out
end

-- Net (0) with fc (1), a replay capture open, the fixture replayed inside the session.
local function replayed()
  local S = core.new()
  S:set_event_capacity(256)
  assert.equal(0, S:add_module(nil, "", "Net"))
  assert.equal(1, S:add_module(0, "fc", "Linear"))
  assert.equal(S, S:capture_open("replay"))
  S:start()
  assert.is_true(S:capture_replay(FIXTURE))
  S:stop()
  return S
end

describe("GPU capture", function()
  it("says whether CUPTI can run here, and why not", function()
    local ok, why = core.capture_available()
    local S = core.new()
    local got, msg = S:capture_open("cupti")
    if ok then
      assert.equal(S, got)
      S:capture_close()
    else
      assert.is_string(why)
      assert.is_true(#why > 0)
      assert.is_nil(got)
      assert.truthy(msg:find(why, 1, true))   -- the open names the same missing piece
      assert.is_nil(S:capture_kind())
    end
    S:close()
  end)

  it_replay("decodes a fixture onto the host clock, attributed and counted", function()
    local S = replayed()
    local st = S:capture_stats()
    assert.equal(13, st.records)
    assert.equal(1, st.kernels)
    assert.equal(1, st.memcpys)
    assert.equal(1, st.memsets)
    assert.equal(1, st.runtime_calls)
    assert.equal(2, st.memory_records)
    assert.equal(1, st.overheads)
    assert.equal(4, st.external_correlations)
    assert.equal(1, st.out_of_window)
    assert.equal(1, st.bad_timestamps)
    assert.equal(2, st.dropped_cupti)
    assert.equal(3, st.device_ops)
    assert.equal(1, st.attributed_op)
    assert.equal(2, st.attributed_module)
    assert.equal(1, st.attributed_range)
    assert.equal(1120000, st.device_time_ns)
    assert.equal(1 / 3, st.attribution_rate)

    local k = rows_of(S, "kernel")[1]
    assert.equal("volta_sgemm_128x64_nn", k.name)
    assert.equal(50500000, k.t_begin_ns)
    assert.equal(51500000, k.t_end_ns)
    assert.equal("cuda", k.device)
    assert.equal(0, k.device_index)
    assert.equal(7, k.stream)
    assert.equal(100, k.flow)
    assert.equal(1099511627781, k.correlation)
    assert.equal("fc", k.module_path)
    assert.equal("forward", k.phase)
    assert.same({ 16, 8, 1 }, k.grid)
    assert.same({ 256, 1, 1 }, k.block)
    assert.equal(72, k.registers)
    assert.equal(8192, k.shared_memory)

    local c = rows_of(S, "memcpy")[1]
    assert.equal("Memcpy HtoD (Pageable -> Device)", c.name)
    assert.equal(50200000, c.t_begin_ns)
    assert.equal(4194304, c.bytes)
    assert.equal("HtoD", c.copy_kind)
    assert.equal("Pageable", c.src_kind)
    assert.equal("Device", c.dst_kind)
    assert.equal("", c.module_path)

    local z = rows_of(S, "memset")[1]
    assert.equal(51600000, z.t_begin_ns)
    assert.equal(1099511627790, z.range)
    assert.is_nil(z.module)

    local r = rows_of(S, "runtime")[1]
    assert.equal("cudaLaunchKernel", r.name)
    assert.equal("runtime", r.api)
    assert.equal(211, r.cbid)
    assert.equal(50400000, r.t_begin_ns)

    local m = rows_of(S, "gpu_memory")
    assert.equal(2, #m)
    assert.equal(50100000, m[1].t_begin_ns)
    assert.equal(1048576, m[1].value)
    assert.equal(1048576, m[1].total)
    assert.equal(-1048576, m[2].value)
    assert.equal(0, m[2].total)
    assert.equal(140000000000, m[2].address)
    assert.equal("Instrumentation", rows_of(S, "overhead")[1].name)

    -- per-module GPU time: fc's forward is the kernel; Net adds the copy
    local mods = S:modules()
    assert.equal(1100000, mods[1].fwd.device_time_ns)
    assert.equal(100000, mods[1].fwd.self_device_time_ns)
    assert.equal(1000000, mods[2].fwd.device_time_ns)
    assert.equal(1000000, mods[2].fwd.self_device_time_ns)
    assert.equal(2, mods[1].fwd.device_ops)
    assert.equal(0, mods[1].bwd.device_time_ns)
    S:close()
  end)

  it_replay("attributes synthetic launches to the range and module they ran in", function()
    local S = core.new()
    S:set_event_capacity(64)
    local net = S:add_module(nil, "", "Net")
    S:capture_open("replay")
    S:start()
    S:enter(net)
    S:range_push("step")
    local flow = S:capture_replay_launch { name = "gemm", duration_ns = 3000, grid = { 4, 1, 1 } }
    S:capture_replay_launch { kind = "memcpy", bytes = 512, copy_kind = "DtoH", stream = 9 }
    S:range_pop()
    S:exit(net)
    assert.is_true(S:capture_drain())
    S:stop()
    local range = rows_of(S, "range")[1]
    assert.is_true(range.correlation ~= 0)
    local k = rows_of(S, "kernel")[1]
    assert.equal(flow, k.flow)
    assert.equal(range.correlation, k.range)
    assert.equal(3000, k.t_end_ns - k.t_begin_ns)
    assert.equal("", k.module_path)
    assert.same({ 4, 1, 1 }, k.grid)
    local c = rows_of(S, "memcpy")[1]
    assert.equal("DtoH", c.copy_kind)
    assert.equal(9, c.stream)
    assert.equal(range.correlation, c.range)
    assert.equal(3000 + 1000, S:modules()[1].fwd.device_time_ns)
    S:capture_close()
    assert.is_nil(S:capture_kind())
    S:close()
  end)

  it_replay("writes GPU rows, launches and ac2g flows into the trace", function()
    local S = replayed()
    local dir = run.tmpdir()
    local path = dir .. "/gpu.json"
    assert.is_true(S:export_chrome_trace(path))
    local doc = assert(json.decode(run.read(path), 1, json.null))
    local kernel, call, s, f
    for _, e in ipairs(doc.traceEvents) do
      if e.cat == "kernel" then kernel = e end
      if e.cat == "cuda_runtime" then call = e end
      if e.ph == "s" and e.id == 100 then s = e end
      if e.ph == "f" and e.id == 100 then f = e end
    end
    assert.equal("volta_sgemm_128x64_nn", kernel.name)
    assert.equal(0, kernel.pid)
    assert.equal(7, kernel.tid)
    assert.equal(1000.0, kernel.dur)                       -- 1 ms in µs
    assert.equal(1099511627781, kernel.args["External id"])
    assert.equal(100, kernel.args.correlation)
    assert.equal("cudaLaunchKernel", call.name)
    assert.equal(call.ts, s.ts)
    assert.equal(kernel.ts, f.ts)
    assert.equal("e", f.bp)
    assert.equal(1, doc.cupti.kernels)
    assert.equal(2, doc.cupti.droppedRecords)
    run.rmdir_all(dir)
    S:close()
  end)

  it_replay("names the record and key of a bad fixture, and refuses replays without a capture", function()
    local S = core.new()
    assert.has_error(function() S:capture_replay(FIXTURE) end,
      "prof_capture_replay_json: no replay capture is open")
    S:capture_open("replay")
    local ok, msg = S:capture_replay {
      schema = "profrun.cupti/1",
      buffers = { { records = { { kind = "kernel", start = 1, ["end"] = 2 }, { kind = "kernel", strat = 5 } } } },
    }
    assert.is_nil(ok)
    assert.equal('fixture table: buffers[0].records[1]: a kernel record has no key "strat"', msg)
    ok, msg = S:capture_replay("spec/fixtures/cupti/missing.json")
    assert.is_nil(ok)
    assert.truthy(msg:find("missing.json: cannot open", 1, true))
    ok, msg = S:capture_replay('{"schema": "profrun.cupti/2", "buffers": []}')
    assert.is_nil(ok)
    assert.equal('fixture text: "schema" must be "profrun.cupti/1"', msg)
    assert.has_error(function() S:capture_open("replay") end, "prof_capture_open: a replay capture is already open")
    assert.has_error(function() S:capture_open("gpu") end)
    S:close()
  end)
end)
