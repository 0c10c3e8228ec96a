-- key_averages_cuda_spec.lua — key_averages' CUDA columns: torch 1.13's names, order, widths, shares, footer.
local ka = require "prof.report.key_averages"

-- A crafted window (ns), derived by hand; thread 0, ops by correlation id:
--   model_forward [0, 20000] (a range) holds
--     aten::linear#1 [1000, 9000]  > aten::addmm (corr 2) [2000, 8000]
--         kernels of corr 2: sgemm_128x64 [3000, 7000] (4 us), bias_add [7000, 7500] (0.5 us)
--     aten::relu (corr 3) [10000, 12000]; kernel relu_kernel [12500, 13500] (1 us: it runs after
--         its op returned, as kernels do)
--     aten::linear#2 [13000, 19000] > aten::addmm (corr 5) [14000, 18000]
--         kernel sgemm_128x64 [15000, 17000] (2 us)
--     aten::copy_ (corr 6) [19000, 19800]; memcpy HtoD [19200, 20200] (1 us)
--   a kernel with no op (correlation 0) [21000, 21500] (0.5 us): its own row, nobody's time.
-- Self CUDA (the op's own kernels): addmm 4 + 0.5 + 2 = 6.5 us over 2 calls (avg 3.25);
--   relu 1; copy_ 1; linear 0 and model_forward 0 (they launch nothing themselves).
-- CUDA total (own + children's): linear 6.5 (avg 3.25), model_forward 6.5 + 1 + 1 = 8.5.
-- Device rows: sgemm_128x64 2 launches, 6 us; bias_add 0.5; relu_kernel 1; the memcpy 1;
--   orphan 0.5; their sum, 9 us, is the footer and every Self CUDA %'s denominator:
--   addmm 6.5 / 9 = 72.22 %, sgemm 66.67 %, relu and copy_ 11.11 %, bias_add 5.56 %.
-- Self CPU: model_forward 20 - (8 + 2 + 6 + 0.8) = 3.2; linear (8 - 6) + (6 - 4) = 4;
--   addmm 6 + 4 = 10; relu 2; copy_ 0.8; the device rows 0: 20 us in all (16 %, 20 %, 50 % ...).
-- CUDA memory: +4096 B in addmm#1, -1024 B in relu, +512 B under the range only (correlation 0):
--   self: addmm 4096 (4.00 Kb), relu -1024, model_forward 512;
--   total: linear 4096, model_forward 512 + 4096 - 1024 = 3584 (3.50 Kb).
local function window()
  local function op(name, t0, t1, corr)
    return { kind = "op", name = name, t_begin_ns = t0, t_end_ns = t1, correlation = corr,
             thread = 0, flops = 0 }
  end
  local function dev(kind, name, t0, t1, corr)
    return { kind = kind, name = name, t_begin_ns = t0, t_end_ns = t1, correlation = corr,
             thread = 0 }
  end
  local function mem(t, v, corr)
    return { kind = "memory", name = "[memory]", t_begin_ns = t, t_end_ns = t, value = v,
             correlation = corr, thread = 0, device = "cuda" }
  end
  return {
    op("aten::addmm", 2000, 8000, 2), op("aten::linear", 1000, 9000, 1),
    op("aten::relu", 10000, 12000, 3),
    op("aten::addmm", 14000, 18000, 5), op("aten::linear", 13000, 19000, 4),
    op("aten::copy_", 19000, 19800, 6),
    { kind = "range", name = "model_forward", t_begin_ns = 0, t_end_ns = 20000, correlation = 0,
      thread = 0 },
    dev("kernel", "sgemm_128x64", 3000, 7000, 2), dev("kernel", "bias_add", 7000, 7500, 2),
    dev("kernel", "relu_kernel", 12500, 13500, 3), dev("kernel", "sgemm_128x64", 15000, 17000, 5),
    dev("memcpy", "Memcpy HtoD (Pageable -> Device)", 19200, 20200, 6),
    dev("kernel", "orphan", 21000, 21500, 0),
    mem(2500, 4096, 2), mem(11000, -1024, 3), mem(19100, 512, 0),
  }
end

-- torch's row: the name right-aligned in the name column (the longest key, 32, + 4), every other
-- value right-aligned in 12, two spaces after each
local W = 36
local function row(values)
  local parts = { string.rep(" ", W - #values[1]) .. values[1] .. "  " }
  for i = 2, #values do parts[i] = string.rep(" ", 12 - #values[i]) .. values[i] .. "  " end
  return table.concat(parts)
end
local function sep(n) return string.rep("-", W) .. "  " .. string.rep(string.rep("-", 12) .. "  ", n - 1) end

local function by_key(rows)
  local out = {}
  for _, r in ipairs(rows) do out[r.key] = out[r.key] or r end
  return out
end

describe("key_averages with device activity", function()
  it("gives each op its own kernels as self CUDA time and its children's in the total", function()
    local by = by_key(ka.build(window(), { profile_memory = true }))
    local function cuda(k)
      return { by[k].self_cuda_time_total, by[k].cuda_time_total, by[k].cuda_time, by[k].count }
    end
    assert.same({ 6.5, 6.5, 3.25, 2 }, cuda("aten::addmm"))
    assert.same({ 0.0, 6.5, 3.25, 2 }, cuda("aten::linear"))
    assert.same({ 1.0, 1.0, 1.0, 1 }, cuda("aten::relu"))
    assert.same({ 1.0, 1.0, 1.0, 1 }, cuda("aten::copy_"))
    assert.same({ 0.0, 8.5, 8.5, 1 }, cuda("model_forward"))
    assert.same({ 6.0, 6.0, 3.0, 2 }, cuda("sgemm_128x64"))
    assert.same({ 0.5, 0.5, 0.5, 1 }, cuda("orphan"))
    -- device rows have no CPU time; ops keep theirs (kernels are no CPU children)
    assert.same({ 0.0, 0.0 }, { by.sgemm_128x64.self_cpu_time_total, by.sgemm_128x64.cpu_time_total })
    assert.same({ 3.2, 20.0 }, { by.model_forward.self_cpu_time_total, by.model_forward.cpu_time_total })
    assert.same({ 4096, 4096 }, { by["aten::addmm"].self_cuda_memory_usage, by["aten::addmm"].cuda_memory_usage })
    assert.same({ 0, 4096 }, { by["aten::linear"].self_cuda_memory_usage, by["aten::linear"].cuda_memory_usage })
    assert.same({ 512, 3584 }, { by.model_forward.self_cuda_memory_usage, by.model_forward.cuda_memory_usage })
    -- CUDA bytes are not CPU bytes
    assert.same({ 0, 0 }, { by.model_forward.self_cpu_memory_usage, by.model_forward.cpu_memory_usage })
  end)

  it("an op and a kernel of the same name stay two rows (torch keys on the device type)", function()
    local evs = {
      { kind = "op", name = "relu", t_begin_ns = 0, t_end_ns = 1000, correlation = 7, thread = 0 },
      { kind = "kernel", name = "relu", t_begin_ns = 1500, t_end_ns = 2500, correlation = 7, thread = 0 },
    }
    local rows = ka.build(evs, {})
    assert.equal(2, #rows)
    assert.same({ "cpu", "cuda" }, { rows[1].device_type, rows[2].device_type })
    assert.same({ 1.0, 1.0 }, { rows[1].self_cuda_time_total, rows[2].self_cuda_time_total })
  end)

  it("prints torch 1.13's CUDA columns sorted by cuda_time_total, with both footers", function()
    local text = ka.build(window(), {}):table{ sort_by = "cuda_time_total" }
    local head = { "Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
      "Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg", "# of Calls" }
    local Z = "0.000us"
    assert.equal(table.concat({ sep(11), row(head), sep(11),
      -- sorted by CUDA total, descending; ties keep the order of first appearance (stable)
      row({ "model_forward", "16.00%", "3.200us", "100.00%", "20.000us", "20.000us", Z, "0.00%",
        "8.500us", "8.500us", "1" }),
      row({ "aten::linear", "20.00%", "4.000us", "70.00%", "14.000us", "7.000us", Z, "0.00%",
        "6.500us", "3.250us", "2" }),
      row({ "aten::addmm", "50.00%", "10.000us", "50.00%", "10.000us", "5.000us",
        "6.500us", "72.22%", "6.500us", "3.250us", "2" }),
      row({ "sgemm_128x64", "0.00%", Z, "0.00%", Z, Z, "6.000us", "66.67%", "6.000us", "3.000us", "2" }),
      row({ "aten::relu", "10.00%", "2.000us", "10.00%", "2.000us", "2.000us",
        "1.000us", "11.11%", "1.000us", "1.000us", "1" }),
      row({ "relu_kernel", "0.00%", Z, "0.00%", Z, Z, "1.000us", "11.11%", "1.000us", "1.000us", "1" }),
      row({ "aten::copy_", "4.00%", "0.800us", "4.00%", "0.800us", "0.800us",
        "1.000us", "11.11%", "1.000us", "1.000us", "1" }),
      row({ "Memcpy HtoD (Pageable -> Device)", "0.00%", Z, "0.00%", Z, Z,
        "1.000us", "11.11%", "1.000us", "1.000us", "1" }),
      row({ "bias_add", "0.00%", Z, "0.00%", Z, Z, "0.500us", "5.56%", "0.500us", "0.500us", "1" }),
      row({ "orphan", "0.00%", Z, "0.00%", Z, Z, "0.500us", "5.56%", "0.500us", "0.500us", "1" }),
      sep(11), "Self CPU time total: 20.000us", "Self CUDA time total: 9.000us", "" }, "\n"), text)
  end)

  it("adds CUDA Mem and Self CUDA Mem after the CPU memory columns, sorted by self_cuda_memory_usage", function()
    local text = ka.build(window(), { profile_memory = true }):table{
      sort_by = "self_cuda_memory_usage", row_limit = 3 }
    local lines = {}
    for l in text:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.equal(row({ "Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
      "Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg", "CPU Mem", "Self CPU Mem",
      "CUDA Mem", "Self CUDA Mem", "# of Calls" }), lines[2])
    assert.equal(row({ "aten::addmm", "50.00%", "10.000us", "50.00%", "10.000us", "5.000us",
      "6.500us", "72.22%", "6.500us", "3.250us", "0 b", "0 b", "4.00 Kb", "4.00 Kb", "2" }), lines[4])
    assert.equal(row({ "model_forward", "16.00%", "3.200us", "100.00%", "20.000us", "20.000us",
      "0.000us", "0.00%", "8.500us", "8.500us", "0 b", "0 b", "3.50 Kb", "512 b", "1" }), lines[5])
    -- third: the first of the rows with 0 self CUDA bytes, in order of appearance
    assert.matches("^%s+aten::linear  ", lines[6])
    assert.equal(sep(15), lines[7])
    assert.equal("Self CUDA time total: 9.000us", lines[9])
  end)

  it("sorts by self_cuda_time_total and accepts torch 2's device_ names", function()
    local rows = ka.build(window(), {})
    local a = rows:table{ sort_by = "self_cuda_time_total", row_limit = 2 }
    assert.equal(a, rows:table{ sort_by = "self_device_time_total", row_limit = 2 })
    local names = {}
    for n in a:gmatch("\n%s+([%w_:]+)%s+%d") do names[#names + 1] = n end
    assert.same({ "aten::addmm", "sgemm_128x64" }, names)
  end)

  it("prints no CUDA column and no CUDA footer when no row has device time", function()
    local evs = window()
    for _, e in ipairs(evs) do if e.kind == "kernel" or e.kind == "memcpy" then e.t_end_ns = e.t_begin_ns end end
    local text = ka.build(evs, {}):table()
    assert.is_nil(text:find("CUDA", 1, true))
    -- without profile_memory, CUDA bytes make no column either
    assert.is_nil(ka.build(window(), {}):table():find("CUDA Mem", 1, true))
  end)

  it("exports collapsed stacks of CUDA time", function()
    local evs = {
      { kind = "op", name = "aten::mm", t_begin_ns = 0, t_end_ns = 1000, correlation = 1, thread = 0,
        stack = { "net.lua(3)", "main.lua(9)" } },
      { kind = "kernel", name = "gemm", t_begin_ns = 500, t_end_ns = 3500, correlation = 1, thread = 0 },
    }
    assert.equal("main.lua(9);net.lua(3) 3\n", ka.collapsed_stacks(evs, "self_cuda_time_total"))
    assert.equal("main.lua(9);net.lua(3) 3\n", ka.collapsed_stacks(evs, "cuda_time_total"))
    assert.equal("main.lua(9);net.lua(3) 1\n", ka.collapsed_stacks(evs, "self_cpu_time_total"))
  end)
end)

describe("key_averages' footer with a lossy capture", function()
  it("counts the device records the capture dropped after the CUDA total", function()
    local text = ka.build(window(), { device_dropped = 3 }):table()
    local lines = {}
    for l in text:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.equal("Self CUDA time total: 9.000us", lines[#lines - 1])
    assert.equal("Device records dropped: 3 (the GPU capture's buffers were full)", lines[#lines])
    assert.is_nil(ka.build(window(), {}):table():find("dropped", 1, true))
  end)
end)

describe("key_averages of a replayed capture (the capture binding)", function()
  local prof = require "prof"
  local T = require "prof.tensor"

  -- Real cpu ops in a window, with CUPTI records replayed against them: each kernel is tied to
  -- its op by an external correlation record naming the op's correlation id, as the live capture
  -- ties them. Device times (ns after the op's own start), by hand:
  --   mm:   cudaLaunchKernel [100, 600] (a runtime call: a CPU row under mm, 0.5 us),
  --         sgemm_8x8 [1000, 5000] (4 us), sgemm_tail [5000, 5500] (0.5 us): self CUDA 4.5 us
  --   relu: relu_kernel [200, 1200]: 1 us
  --   the range model_forward (no op around it): a 1 KiB memset [end - 400, end - 100]: 0.3 us
  -- Device rows sum to 4 + 0.5 + 1 + 0.3 = 5.8 us (the footer); shares: mm 4.5 / 5.8 = 77.59 %,
  -- relu 17.24 %, model_forward 0.3 / 5.8 = 5.17 %, sgemm_8x8 68.97 %, sgemm_tail 8.62 %.
  -- model_forward's CUDA total: 0.3 + 4.5 + 1 = 5.8 us.
  local function replayed()
    T.set_default_device("cpu")
    local a, b = T.randn({ 8, 8 }), T.randn({ 8, 8 })
    local p = prof.profile{ activities = { "cpu", "cuda" }, capture = "replay" }
    do
      local _ <close> = prof.record_function("model_forward")
      T.relu(T.mm(a, b))
    end
    local ev = {}
    for _, e in ipairs(p.S:events()) do ev[e.name] = e end   -- a snapshot while recording
    local mm, relu, range = ev.mm, ev.relu, ev.model_forward
    local t = mm.t_begin_ns
    assert(p.S:capture_replay{ schema = "profrun.cupti/1", buffers = { { records = {
      { kind = "external", external_kind = "op", external_id = mm.correlation, correlation = 1 },
      { kind = "runtime", start = t + 100, ["end"] = t + 600, correlation = 1, cbid = 211 },
      { kind = "kernel", name = "sgemm_8x8", start = t + 1000, ["end"] = t + 5000, correlation = 1 },
      { kind = "kernel", name = "sgemm_tail", start = t + 5000, ["end"] = t + 5500, correlation = 1 },
      { kind = "external", external_kind = "op", external_id = relu.correlation, correlation = 2 },
      { kind = "kernel", name = "relu_kernel", start = relu.t_begin_ns + 200,
        ["end"] = relu.t_begin_ns + 1200, correlation = 2 },
      { kind = "external", external_kind = "range", external_id = range.correlation, correlation = 3 },
      { kind = "memset", start = range.t_end_ns - 400, ["end"] = range.t_end_ns - 100, correlation = 3,
        bytes = 1024 },
    } } } })
    p:stop()
    return p, mm
  end

  it("gives each op its kernels, the range its memset, and prints torch's CUDA columns", function()
    local p, mm = replayed()
    local rows = p:key_averages()
    local by = by_key(rows)
    local function cuda(k) return { by[k].self_cuda_time_total, by[k].cuda_time_total, by[k].count } end
    assert.same({ 4.5, 4.5, 1 }, cuda("aten::mm"))
    assert.same({ 1.0, 1.0, 1 }, cuda("aten::relu"))
    assert.same({ 0.3, 5.8, 1 }, cuda("model_forward"))
    assert.same({ 4.0, 4.0, 1 }, cuda("sgemm_8x8"))
    assert.same({ 0.5, 0.5, 1 }, cuda("sgemm_tail"))
    assert.same({ 1.0, 1.0, 1 }, cuda("relu_kernel"))
    assert.same({ 0.3, 0.3, 1 }, cuda("Memset (Device)"))
    -- the runtime call is a CPU row, mm's child: mm's self CPU time loses its 0.5 us
    assert.same({ 0.5, 0.5 }, { by.cudaLaunchKernel.self_cpu_time_total, by.cudaLaunchKernel.cpu_time_total })
    -- (the final events' times: a snapshot taken while recording may convert the clock 1 ns apart)
    local final_mm
    for _, e in ipairs(p:events()) do if e.name == "aten::mm" then final_mm = e end end
    assert.equal(mm.correlation, final_mm.correlation)
    local mm_us = (final_mm.t_end_ns - final_mm.t_begin_ns) / 1000
    assert.near(mm_us, by["aten::mm"].cpu_time_total, 1e-9)
    assert.near(mm_us - 0.5, by["aten::mm"].self_cpu_time_total, 1e-9)
    local text = rows:table{ sort_by = "self_cuda_time_total" }
    local lines = {}
    for l in text:gmatch("[^\n]+") do lines[#lines + 1] = l end
    assert.equal("Self CUDA time total: 5.800us", lines[#lines])
    -- the CUDA cells of the first rows (sorted by self CUDA time), exactly
    local function cells(l) return l:sub(-70) end   -- Self CUDA .. # of Calls: 5 columns of 12 + 2
    local function expect(self, share, total, avg, calls)
      local s = ""
      for _, v in ipairs({ self, share, total, avg, calls }) do s = s .. string.rep(" ", 12 - #v) .. v .. "  " end
      return s
    end
    assert.matches("^%s+aten::mm  ", lines[4])
    assert.equal(expect("4.500us", "77.59%", "4.500us", "4.500us", "1"), cells(lines[4]))
    assert.matches("^%s+sgemm_8x8  ", lines[5])
    assert.equal(expect("4.000us", "68.97%", "4.000us", "4.000us", "1"), cells(lines[5]))
    local seen = {}
    for _, l in ipairs(lines) do
      local name = l:match("^%s+(%S[^%s]*)%s%s")
      if name then seen[name] = cells(l) end
    end
    assert.equal(expect("1.000us", "17.24%", "1.000us", "1.000us", "1"), seen["aten::relu"])
    assert.equal(expect("0.300us", "5.17%", "5.800us", "5.800us", "1"), seen.model_forward)
    assert.equal(expect("0.500us", "8.62%", "0.500us", "0.500us", "1"), seen.sgemm_tail)
    -- the capture's own count: 4 device ops, 3 of them launched by ops
    local st = p:capture_stats()
    assert.same({ 4, 3, 1, 0.75 }, { st.device_ops, st.attributed_op, st.attributed_range, st.attribution_rate })
  end)
end)

describe("profrun's own profiler (profiler.enabled) with the cuda activity", function()
  it("prints each window sorted by cuda_time_total", function()
    local profiler = require "prof.profiler"
    local prof = require "prof"
    local chunks = {}
    local out = { write = function(_, s) chunks[#chunks + 1] = s end }
    local p = profiler.start_global({ activities = { "cpu", "cuda" }, capture = "replay", schedule = {} }, out)
    -- two sibling ranges: "a" first, with a 1 us kernel, then "b" with a 7 us one
    for _, r in ipairs({ { "a", 1000 }, { "b", 7000 } }) do
      local _ <close> = prof.record_function(r[1])
      p.S:capture_replay_launch{ name = "k_" .. r[1], duration_ns = r[2] }
    end
    profiler.stop_global(true)
    local text = table.concat(chunks)
    local names = {}
    for name in text:gmatch("\n%s+([%w_]+)%s%s+%d") do names[#names + 1] = name end
    -- CUDA totals: b 7 us, k_b 7, a 1, k_a 1 (a range before its kernel: first appearance), then
    -- the two launches' cudaLaunchKernel (no device time)
    assert.same({ "b", "k_b", "a", "k_a", "cudaLaunchKernel" }, names)
    assert.truthy(text:find("Self CUDA time total: 8.000us", 1, true))
  end)
end)

describe("the capture's lifetime under a schedule", function()
  it("opens at warmup, closes after each window and when the profile ends in warmup", function()
    local prof = require "prof"
    local schedule = require "prof.schedule"
    local real_warn = schedule.warn
    schedule.warn = function() end
    local kinds = {}
    local p = prof.profile{ activities = { "cuda" }, capture = "replay",
      schedule = prof.schedule{ wait = 1, warmup = 1, active = 1 },
      on_trace_ready = function(q) kinds[#kinds + 1] = "ready:" .. tostring(q.S:capture_kind()) end }
    kinds[#kinds + 1] = tostring(p.S:capture_kind())   -- step 0: wait, nothing open
    p:step()
    kinds[#kinds + 1] = tostring(p.S:capture_kind())   -- step 1: warmup, open (CUPTI's costs land here)
    p:step()
    kinds[#kinds + 1] = tostring(p.S:capture_kind())   -- step 2: recording
    p:step()                                            -- leaves the window: delivered, closed
    kinds[#kinds + 1] = tostring(p.S:capture_kind())   -- the next cycle's wait
    p:step()
    kinds[#kinds + 1] = tostring(p.S:capture_kind())   -- its warmup: open again
    p:stop()                                            -- ends in warmup: no trace, closed
    kinds[#kinds + 1] = tostring(p.S:capture_kind())
    schedule.warn = real_warn
    assert.same({ "nil", "replay", "replay", "ready:nil", "nil", "replay", "nil" }, kinds)
  end)
end)
