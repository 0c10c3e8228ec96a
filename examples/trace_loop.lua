-- trace_loop.lua — the tutorial's torch.profiler snippets in profrun: a scheduled training loop
-- (wait 5, warmup 2, active 6, repeat 2) through the engine, a "model_forward" label, and tables
-- sorted by cpu_time_total and by self_cpu_memory_usage. Traces go to ./log when the build has
-- the trace writer (p:export_chrome_trace); the tables print either way.
--   profrun configs/default.json examples/trace_loop.lua
local prof = require "prof"
local nn = require "prof.nn"
local T = require "prof.tensor"
local F = nn.functional

T.set_default_device("cpu")
T.manual_seed(0)

local model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
local engine = prof.initialize{ model = model,
  optimizer = prof.optim.SGD(model:parameters(), { lr = 1e-2 }) }

local labels = {}
for i = 1, 32 do labels[i] = i % 10 end
local function batch()
  return T.randn({ 32, 64 }), T.tensor(labels)
end

local cycles = 0
local function on_trace_ready(p)
  cycles = cycles + 1
  print(string.format("== cycle %d (the window ended in step %d)", cycles, p.step_num))
  print(p:key_averages():table{ sort_by = "cpu_time_total", row_limit = 10 })
  if p.S.export_chrome_trace then prof.tensorboard_trace_handler("./log")(p) end
end

do
  local profiler <close> = prof.profile{
    schedule = prof.schedule{
      wait = 5,      -- during this phase profiler is not active
      warmup = 2,    -- during this phase profiler starts tracing, but the results are discarded
      active = 6,    -- during this phase profiler traces and records data
      ["repeat"] = 2 },   -- number of cycles
    on_trace_ready = on_trace_ready,
    profile_memory = true,
    with_stack = true,
  }
  for _ = 1, 30 do
    local x, y = batch()
    local out
    do
      local _ <close> = prof.record_function("model_forward")
      out = engine(x)
    end
    local loss = F.cross_entropy(out, y)
    engine:backward(loss)
    engine:step()
    profiler:step()   -- send the signal to the profiler that the next step has started
  end
  print("== the last cycle by self CPU memory")
  print(profiler:key_averages():table{ sort_by = "self_cpu_memory_usage", row_limit = 10 })
end
