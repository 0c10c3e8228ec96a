-- bench_activity.lua — the activity profiler's overhead on a ResNet-18 batch-1 training step (cpu):
-- plain steps and steps inside a recording window (activities cpu + record_shapes) alternate, one
-- each per round, and the median of the per-round ratios is the overhead. Also the trace export's
-- throughput on a window of 100,000 ranges. Prints lines read by bench.sh.
--   lua5.4 bench_activity.lua [--rounds 9]
local core = require "prof.core"
local prof = require "prof"
local models = require "prof.models"
local T = require "prof.tensor"
local F = require("prof.nn").functional
local optim = require "prof.optim"
local util = require "scripts.tools.bench_util"

local argv = { ... }
local rounds = 9
for i = 1, #argv, 2 do if argv[i] == "--rounds" then rounds = tonumber(argv[i + 1]) end end

T.set_default_device("cpu")
T.manual_seed(0)
local model = models.build("resnet18")
local x = models.input("resnet18", { batch = 1 })[1]
local labels = T.zeros({ 1 }, { dtype = "int64" })
local opt = optim.SGD(model:parameters(), { lr = 1e-3, momentum = 0.9 })
model:train()

local function step()
  local loss = F.cross_entropy(model(x), labels)
  loss:backward()
  opt:step()
  opt:zero_grad()
end

local function timed()
  collectgarbage()
  local t0 = core.now_ns()
  step()
  return (core.now_ns() - t0) / 1e9
end

step()                                   -- warm-up: first-touch pages, BLAS buffers
local ratios, plain, profiled = {}, {}, {}
-- one profile, started for one step a round: its buffers are made once, as over a long window
local p = prof.profile{ activities = { "cpu" }, record_shapes = true, capacity = 1 << 16, start = false }
local function recorded()
  p:start()
  local t = timed()
  p:stop()
  return t
end
for r = 1, rounds do
  -- A B, then B A: what follows a profiled step (its stop, a collection) hits both sides alike
  if r % 2 == 1 then
    plain[r] = timed()
    profiled[r] = recorded()
  else
    profiled[r] = recorded()
    plain[r] = timed()
  end
  ratios[r] = profiled[r] / plain[r]
end
io.write(string.format(
  "activity overhead resnet18 batch 1 step: plain %.4f s profiled %.4f s ratio %.4f events %d\n",
  util.median(plain), util.median(profiled), util.median(ratios), #p.S:events()))

-- export throughput and size on a window of N user ranges (torch's side exports the same count)
local N = 100000
local function noop() end
local q = prof.profile{ capacity = N + 16 }
local rf = prof.record_function
for _ = 1, N do rf("step", noop) end
q:stop()
local n = #q:events()
local dir = os.tmpname()
os.remove(dir)
local function export(name)
  local runs = {}
  for i = 1, 5 do
    local t0 = core.now_ns()
    assert(q:export_chrome_trace(dir .. name))
    runs[i] = (core.now_ns() - t0) / 1e9
  end
  local f = assert(io.open(dir .. name, "rb"))
  local size = f:seek("end")
  f:close()
  os.remove(dir .. name)
  return util.median(runs), size
end
local t_plain, bytes = export(".json")
local t_gz, gz_bytes = export(".json.gz")
io.write(string.format(
  "activity export %d events: plain %.2f M events/s %.0f B/event, gzip %.2f M events/s %.0f B/event\n",
  n, n / t_plain / 1e6, bytes / n, n / t_gz / 1e6, gz_bytes / n))
