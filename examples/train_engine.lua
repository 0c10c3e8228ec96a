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
-- without a config (or one with no optimizer section) the script passes configs/train.json's
local engine = prof.initialize { model = model, optimizer = not prof.config.value("optimizer")
  and prof.optim.SGD(model:parameters(), { lr = 0.1, momentum = 0.9 }) or nil }

local n = prof.config.value("train_micro_batch_size_per_gpu") or 16
for step = 1, 30 do
  local x = T.randn({ n, 32 })
  -- the class is the quadrant of the first two features: a learnable target
  local labels = {}
  local v = x.device ~= "meta" and x:tolist() or nil   -- meta (no config): shapes only, class 0
  for i = 1, n do labels[i] = v and (v[i][1] > 0 and 1 or 0) + (v[i][2] > 0 and 2 or 0) or 0 end
  local loss = F.cross_entropy(engine(x), T.tensor(labels))
  engine:backward(loss)
  engine:step()
  if step % 10 == 0 and loss.device ~= "meta" then   -- meta has shapes, not values
    print(string.format("step %2d loss %.4f", step, loss:item()))
  end
end
