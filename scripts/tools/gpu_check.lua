-- gpu_check.lua — gpu-check.sh's measurements, run by profrun: the GPU's cuBLAS peaks, GEMM
-- throughput through the runtime against them, the model zoo's AlexNet and BERT on cuda against
-- the cpu, and their training step times. Writes "section<TAB>name<TAB>value..." lines to stdout.
--   profrun gpu_check.lua [--quick | --status]   (--quick: small sizes, for the dry run on a
--   machine without a GPU, where "cuda" means the cpu and nothing is timed)
local T = require "prof.tensor"
local core = require "prof.core"
local optim = require "prof.optim"
local peaks = require "prof.peaks"
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

  local m = bert.build()
  local bopt = optim.AdamW(m:parameters(), { lr = 1e-4 })
  local b, s = 8, 128
  local inputs = { input_ids = ids(b, s, 30522, "cuda"),
    token_type_ids = T.zeros({ b, s }, { dtype = "int64" }),
    attention_mask = T.ones({ b, s }, { dtype = "int64" }),
    labels = ids(b, 1, 2, "cuda"):view(-1) }
  best, med = timed(function()
    bopt:zero_grad()
    local loss = m(inputs)
    loss:backward()
    bopt:step()
  end, 2, 5)
  emit("step", "bert-base train step (batch 8, seq 128, AdamW)", best, med)
  core.set_default_device("meta")
end
