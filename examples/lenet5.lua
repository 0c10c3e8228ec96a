-- lenet5.lua — DeepSpeed's LeNet-5 unit test model at input 1024×1×32×32, with three top modules.
local prof = require "prof"
local models = require "prof.models"

local flops, macs, params = prof.get_model_profile {
  model = models.lenet5(),
  input_shape = { 1024, 1, 32, 32 },
  top_modules = 3,
  as_string = false,
}
print(string.format("LeNet5: flops %d, MACs %d, params %d", flops, macs, params))
