-- bench_train.lua — seconds per forward and per training step of a zoo model on the cpu, and the
-- flops profiler's overhead on a forward (profiled against plain in the same run).
--   lua5.4 bench_train.lua --model resnet18 --batch 16 [--seq 128] [--iters 5] [--overhead]
local core = require "prof.core"
local prof = require "prof"
local models = require "prof.models"
local T = require "prof.tensor"
local F = require("prof.nn").functional

local o = { iters = 5 }
local argv = { ... }
for i = 1, #argv, 2 do
  local k, v = argv[i]:gsub("^%-%-", ""), argv[i + 1]
  o[k] = tonumber(v) or v
  if k == "overhead" then o.overhead, o[k] = true, nil end
end

T.set_default_device("cpu")
T.manual_seed(0)
local model = models.build(o.model)
local inputs = models.input(o.model, { batch = o.batch, seq = o.seq, image = o.image })
local args = inputs
local kwargs
if type(inputs[1]) == "table" and not T.is_tensor(inputs[1]) then args, kwargs = {}, inputs[1] end

local function call()
  if kwargs then return model(kwargs) end
  return model(table.unpack(args))
end

local function median(v)
  table.sort(v)
  return v[(#v + 1) // 2]
end

local function time(fn, n)
  local runs = {}
  fn()                                    -- warm-up: first-touch page faults, BLAS buffers
  for i = 1, n do
    local t0 = core.now_ns()
    fn()
    runs[i] = (core.now_ns() - t0) / 1e9
  end
  return median(runs)
end

-- The loss of a training step: the model's own when it returns one, else cross-entropy of the
-- logits against class 0 (the values do not matter for timing).
local function loss_of(a, b)
  if T.is_tensor(a) and a:numel() == 1 then return a end
  local logits = T.is_tensor(a) and a or b
  local n = logits:size(0)
  return F.cross_entropy(logits:reshape(n, -1), T.zeros({ n }, { dtype = "int64" }))
end

if o.overhead then
  -- alternate single plain and profiled forwards, each after a full collection, so that drifts
  -- of a shared machine and the collector's state hit both alike
  model:eval()
  local p = prof.FlopsProfiler(model)
  local plain, profiled = {}, {}
  local function one()
    collectgarbage()
    local t0 = core.now_ns()
    T.no_grad(call)
    return (core.now_ns() - t0) / 1e9
  end
  one()
  for r = 1, o.iters do
    plain[r] = one()
    p:start_profile()
    profiled[r] = one()
    p:stop_profile()
  end
  p:end_profile()
  io.write(string.format("%s overhead plain %.5f profiled %.5f\n", o.model, median(plain),
    median(profiled)))
  return
end

local optim = require "prof.optim"
local opt = optim.SGD(model:parameters(), { lr = 1e-3, momentum = 0.9 })

model:eval()
local fwd = time(function() T.no_grad(call) end, o.iters)
model:train()
local step = time(function()
  local loss = loss_of(call())
  loss:backward()
  opt:step()
  opt:zero_grad()
end, o.iters)
io.write(string.format("%s forward %.4f step %.4f\n", o.model, fwd, step))
