-- train_engine.lua — training through prof.initialize: the config's optimizer section builds the
-- optimizer and its flops_profiler section profiles step profile_step (forward, measured backward,
-- optimizer step), with neither written here, as deepspeed.initialize does.
--   profrun configs/train.json examples/train_engine.lua
local prof = require "prof"
local nn = require "prof.nn"
local T = require "prof.tensor"
local F = nn.functional

T.manual_seed(0)
local model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4))
local engine, optimizer = prof.initialize { model = model }
assert(optimizer ~= nil, "the config has no optimizer section")

local n = prof.config.value("train_micro_batch_size_per_gpu") or 16
for step = 1, 30 do
  local x = T.randn({ n, 32 })
  -- the class is the quadrant of the first two features: a learnable target
  local v = x:tolist()
  local labels = {}
  for i = 1, n do labels[i] = (v[i][1] > 0 and 1 or 0) + (v[i][2] > 0 and 2 or 0) end
  local loss = F.cross_entropy(engine(x), T.tensor(labels))
  engine:backward(loss)
  engine:step()
  if step % 10 == 0 then print(string.format("step %2d loss %.4f", step, loss:item())) end
end
