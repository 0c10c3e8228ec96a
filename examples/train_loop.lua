-- train_loop.lua — the tutorial's FlopsProfiler training workflow: profile the forward of step
-- profile_step, print its profile, keep training (a small CNN on synthetic 16×16 images, cpu).
local prof = require "prof"
local nn = require "prof.nn"
local T = require "prof.tensor"
local F = nn.functional

T.set_default_device("cpu")
T.manual_seed(0)

local Net = nn.Module:extend("Net")
function Net:init()
  self.features = nn.Sequential(nn.Conv2d(1, 8, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2),
                                nn.Conv2d(8, 16, 3, { padding = 1 }), nn.ReLU(), nn.MaxPool2d(2))
  self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(16 * 4 * 4, 32), nn.ReLU(), nn.Linear(32, 2))
end
function Net:forward(x)
  return self.classifier(self.features(x))
end

-- Two classes of 16×16 images: a bright horizontal bar or a bright vertical bar, plus noise.
local function batch(n)
  local x = T.randn({ n, 1, 16, 16 }) * 0.1
  local labels = {}
  local values = x:tolist()
  for i = 1, n do
    local c = (i % 2)
    labels[i] = c
    local at = 3 + (i * 7) % 10
    local img = values[i][1]
    for k = 1, 16 do
      if c == 0 then img[at][k] = img[at][k] + 1 else img[k][at] = img[k][at] + 1 end
    end
  end
  return T.tensor(values, { dtype = "float32" }), T.tensor(labels)
end

local model = Net()
local optimizer = prof.optim.Adam(model:parameters(), { lr = 1e-2 })
local profiler = prof.FlopsProfiler(model)
local profile_step = 5

for step = 0, 20 do
  local x, y = batch(32)
  if step == profile_step then profiler:start_profile() end
  local loss = F.cross_entropy(model(x), y)
  if step == profile_step then
    profiler:stop_profile()
    print(string.format("step %d: %s flops, %s, %s params", step, profiler:get_total_flops(true),
      profiler:get_total_macs(true), profiler:get_total_params(true)))
    profiler:print_model_profile { profile_step = profile_step }
    profiler:end_profile()
  end
  loss:backward()
  optimizer:step()
  optimizer:zero_grad()
  if step % 5 == 0 then print(string.format("step %2d loss %.4f", step, loss:item())) end
end
