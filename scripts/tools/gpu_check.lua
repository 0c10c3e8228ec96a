-- gpu_check.lua — gpu-check.sh's measurements, run by profrun: the GPU's cuBLAS peaks, GEMM
-- throughput through the runtime against them, the model zoo's AlexNet and BERT on cuda against
-- the cpu, their training step times, and the CUPTI capture (attribution, overhead, reported
-- TFLOP/s, trace). Writes "section<TAB>name<TAB>value..." lines to stdout.
--   profrun gpu_check.lua [--quick | --status]   (--quick: small sizes, for the dry run on a
--   machine without a GPU, where "cuda" means the cpu and nothing is timed)
local T = require "prof.tensor"
local core = require "prof.core"
local optim = require "prof.optim"
local peaks = require "prof.roofline.peaks"
local models = require "prof.models"
local bert = require "prof.models.bert"

-- --status: one line, "available<TAB>name" or "missing<TAB>why", for the script's first question
if arg and arg[1] == "--status" then
  local st = core.gpu_status()
  if st.available then
    io.stdout:write("available\t", st.name, "\t",
      st.cublas and "cublas" or ("no cublas: " .. tostring(st.cublas_why)), "\n")
  else
    io.stdout:write("missing\t", tostring(st.why), "\n")
  end
  return
end

local quick = arg and arg[1] == "--quick"
local DEV = quick and "cpu" or "cuda"

local function emit(...)
  local parts = table.pack(...)
  for i = 1, parts.n do parts[i] = tostring(parts[i]) end
  io.stdout:write(table.concat(parts, "\t"), "\n")
  io.stdout:flush()
end

local function sync() core.gpu_sync() end

-- Best and median seconds of `runs` calls of fn after `warm` warm-up calls, the GPU drained
-- around each (host wall clock: the runtime's ops return before the GPU finishes).
local function timed(fn, warm, runs)
  for _ = 1, warm do fn() end
  sync()
  local ts = {}
  for i = 1, runs do
    local t0 = core.now_ns()
    fn()
    sync()
    ts[i] = (core.now_ns() - t0) * 1e-9
  end
  table.sort(ts)
  return ts[1], ts[(runs + 1) // 2]
end

local function rel_err(a, b)
  local flat = require("spec.support.gradcheck").flat
  local fa, fb = flat(a), flat(b)
  local scale, worst = 0, 0
  for i = 1, #fb do scale = math.max(scale, math.abs(fb[i])) end
  if scale == 0 then scale = 1 end
  for i = 1, #fa do
    local e = math.abs(fa[i] - fb[i]) / scale
    if e ~= e then e = math.huge end
    worst = math.max(worst, e)
  end
  return worst
end

-- {=================== peaks and GEMMs ===================}

local pk
if not quick then
  local err
  pk, err = peaks.gpu()
  if pk == nil then
    -- no cuBLAS there: the GEMMs below run on the backend's own kernel, with no peak to compare
    emit("error", "peaks", err)
  else
    emit("device", "name", pk.machine)
    emit("peak", "copy", pk.bytes_per_s)
    for _, dt in ipairs(peaks.GPU_DTYPES) do emit("peak", dt, pk.by_dtype[dt]) end
  end
end

-- T.mm of n×n operands in dtype on the device through the runtime (the op layer, the backend,
-- cuBLAS), against the peak measured above by CUDA events on the same cuBLAS call.
local N = quick and 64 or 8192
for _, dt in ipairs(quick and { "float32" } or peaks.GPU_DTYPES) do
  local dtype = dt == "tf32" and "float32" or dt
  core.gpu_set_tf32(dt == "tf32")
  local a = T.randn({ N, N }, { device = DEV })
  local b = T.randn({ N, N }, { device = DEV })
  if dtype ~= "float32" then a, b = a:to(dtype), b:to(dtype) end
  local best = timed(function() return T.mm(a, b) end, 2, 5)
  local flops = 2 * N * N * N / best
  emit("gemm", dt, flops, N)
  core.gpu_set_tf32(false)
end

-- {=================== models: correctness against the cpu ===================}

-- model(x) on cpu and on the device from the same initial weights (drawn on the host).
local function both(make, input)
  local out = {}
  for _, dev in ipairs({ "cpu", DEV }) do
    core.set_default_device(dev)
    core.manual_seed(11)
    local m = make()
    m:eval()
    local y = input(dev, m)
    out[dev == "cpu" and 1 or 2] = y:to("cpu"):tolist()
  end
  core.set_default_device("meta")
  return rel_err(out[2], out[1])
end

local function ids(b, s, vocab, dev)
  local v = {}
  for i = 1, b * s do v[i] = (i * 7919) % vocab end
  return T.tensor(v, { dtype = "int64", device = dev }):reshape({ b, s })
end

local TINY = { hidden_size = 64, num_hidden_layers = 2, num_attention_heads = 4,
  intermediate_size = 128, vocab_size = 100, max_position_embeddings = 64 }

local alex_err = both(function() return models.alexnet() end, function(dev, m)
  local n = 2 * 3 * 224 * 224
  local x = T.tensor(require("spec.support.gradcheck").values(n, 5), { device = dev })
  return m(x:reshape({ 2, 3, 224, 224 }))
end)
emit("correct", "alexnet forward (batch 2)", alex_err, 1e-4)

local bert_err = both(function() return bert.build({ config = TINY }) end, function(dev, m)
  local b, s = 2, 16
  local _, logits = m({ input_ids = ids(b, s, 100, dev),
    token_type_ids = T.zeros({ b, s }, { dtype = "int64", device = dev }),
    attention_mask = T.ones({ b, s }, { dtype = "int64", device = dev }) })
  return logits
end)
emit("correct", "bert tiny forward (batch 2, seq 16)", bert_err, 1e-4)

-- One BERT-base training step (batch 8, seq 128, AdamW) on the default device, as a function.
local function bert_training()
  local m = bert.build()
  local bopt = optim.AdamW(m:parameters(), { lr = 1e-4 })
  local b, s = 8, 128
  local inputs = { input_ids = ids(b, s, 30522, "cuda"),
    token_type_ids = T.zeros({ b, s }, { dtype = "int64" }),
    attention_mask = T.ones({ b, s }, { dtype = "int64" }),
    labels = ids(b, 1, 2, "cuda"):view(-1) }
  return function()
    bopt:zero_grad()
    local loss = m(inputs)
    loss:backward()
    bopt:step()
  end
end

-- {=================== step times on the device ===================}

if not quick then
  core.set_default_device("cuda")
  core.manual_seed(1)
  local alex = models.alexnet()
  local opt = optim.SGD(alex:parameters(), { lr = 0.01, momentum = 0.9 })
  local x = T.randn({ 64, 3, 224, 224 })
  local y = ids(64, 1, 1000, "cuda"):view(-1)
  local best, med = timed(function()
    opt:zero_grad()
    local loss = core.cross_entropy(alex(x), y)
    loss:backward()
    opt:step()
  end, 2, 5)
  emit("step", "alexnet train step (batch 64, SGD)", best, med)

  best, med = timed(bert_training(), 2, 5)
  emit("step", "bert-base train step (batch 8, seq 128, AdamW)", best, med)
  core.set_default_device("meta")
end

-- {=================== CUPTI: attribution, overhead, reported TFLOP/s, trace ===================}

-- Seconds per step of `steps` BERT-base training steps, the device drained after each; between
-- steps, after(i) (the profiler's p:step()).
local function bert_steps(step, steps, after)
  local ts = {}
  for i = 1, steps do
    local t0 = core.now_ns()
    step()
    sync()
    ts[i] = (core.now_ns() - t0) * 1e-9
    if after then after(i) end
  end
  table.sort(ts)
  return ts[(steps + 1) // 2]
end

local function cupti_checks(out_dir)
  local prof = require "prof"
  core.set_default_device("cuda")
  core.manual_seed(1)
  local step = bert_training()
  for _ = 1, 2 do step() end
  sync()
  -- overhead: blocks of 5 steps, plain and inside an active window (CUPTI enabled at the warmup
  -- step before it, as Kineto does), alternated over 3 rounds; the median of the paired ratios
  local ratios, last = {}, nil
  for r = 1, 3 do
    local plain = bert_steps(step, 5)
    local p = prof.profile { activities = { "cpu", "cuda" },
                             schedule = prof.schedule { wait = 0, warmup = 1, active = 5 } }
    p:start()
    step()
    sync()
    p:step()                                   -- the warmup step ends: the window records
    local profiled = bert_steps(step, 5, function() p:step() end)
    p:stop()
    ratios[r] = profiled / plain
    last = p
  end
  table.sort(ratios)
  emit("cupti", "overhead", ratios[2], 1.05)
  local st = last:capture_stats()
  if st == nil then error("the profile captured no GPU activity (capture_stats is nil)") end
  emit("cupti", "attribution", st.kernels, st.attributed_op, st.device_ops)
  local trace = out_dir .. "/bert_step_trace.json"
  last:export_chrome_trace(trace)
  local f = assert(io.open(trace, "rb"))
  local text = f:read("a")
  f:close()
  local function count(cat)
    local n = 0
    for _ in text:gmatch('"cat":"' .. cat .. '"') do n = n + 1 end
    return n
  end
  emit("cupti", "trace", count("kernel"), count("gpu_memcpy"), count("gpu_memset"), count("ac2g"))
  -- the TFLOP/s a profile reports for a bf16 GEMM (its kernels' CUPTI time) against CUDA events
  -- timing the same cuBLAS call (core.peak_gpu_gemm)
  local n, runs = 8192, 5
  local x = T.randn({ n, n }, { device = "cuda" }):to("bfloat16")
  local y = T.randn({ n, n }, { device = "cuda" }):to("bfloat16")
  T.mm(x, y)
  sync()
  local p = prof.profile { activities = { "cpu", "cuda" } }
  p:start()
  for _ = 1, runs do T.mm(x, y) end
  sync()
  p:stop()
  local kernel_ns = 0
  for _, e in ipairs(p:events()) do
    if e.kind == "kernel" then kernel_ns = kernel_ns + (e.t_end_ns - e.t_begin_ns) end
  end
  local reported = kernel_ns > 0 and 2 * n * n * n * runs / (kernel_ns * 1e-9) or 0
  local events = core.peak_gpu_gemm { dtype = "bfloat16", n = n, runs = runs }
  emit("cupti", "tflops", reported, events or 0)
  core.set_default_device("meta")
end

-- {=================== an unmodified CUDA program under the injection ===================}

-- examples/host_cuda's cuBLAS + NVTX program, plain and under prof.launch (libprof_inject.so),
-- each 3 times alternated: the modules its NVTX ranges made, the kernels CUPTI saw and attributed
-- to a module, and the wall-time ratio (medians).
local function launch_checks(app)
  local prof = require "prof"
  local function wall(fn)
    local t0 = core.now_ns()
    local r1, r2 = fn()
    return (core.now_ns() - t0) * 1e-9, r1, r2
  end
  local plain, under, profile = {}, {}, nil
  for r = 1, 3 do
    plain[r] = wall(function() return os.execute(app .. " > /dev/null") end)
    local t, got, err = wall(function() return prof.launch { app } end)
    if got == nil then error(err) end
    under[r], profile = t, got
  end
  table.sort(plain)
  table.sort(under)
  local n = profile.notes or {}
  emit("launch", "host_cuda", #profile.modules, n.kernels or 0, n.attributed_module or 0,
    n.device_ops or 0, under[2] / plain[2])
end

if not quick then
  local ok, err = pcall(cupti_checks, os.getenv("PROF_GPU_CHECK_OUT") or "build/gpu-check")
  if not ok then emit("error", "cupti", (tostring(err):gsub("[\t\n]", " "))) end
  local app = "examples/host_cuda/mlp"
  if os.execute("test -x " .. app) then
    ok, err = pcall(launch_checks, app)
    if not ok then emit("error", "launch", (tostring(err):gsub("[\t\n]", " "))) end
  else
    emit("error", "launch", app .. " is not built (make -C examples/host_cuda)")
  end
end
