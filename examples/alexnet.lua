-- alexnet.lua — the tutorial's AlexNet example: get_model_profile at batch 256 (or the config's), 3×224×224.
local prof = require "prof"
local models = require "prof.models"

local model = models.alexnet()
-- the tutorial's 256, unless the config says otherwise (configs/default.json keeps make run quick
-- on the cpu)
local batch_size = prof.config.value("train_micro_batch_size_per_gpu") or 256
local flops, macs, params = prof.get_model_profile {
  model = model,                               -- model
  input_shape = { batch_size, 3, 224, 224 },   -- the model takes one tensor of this shape
  args = nil,                                  -- positional arguments to the model
  kwargs = nil,                                -- keyword arguments (one table) to the model
  print_profile = true,                        -- print the profile tree
  detailed = true,                             -- print the detailed profile
  module_depth = -1,                           -- depth into the nested modules (-1: all)
  top_modules = 1,                             -- modules per depth in the aggregated profile
  warm_up = 10,                                -- warm-up runs before the measured one
  as_string = true,                            -- "1.43 G" rather than 1428937728
  output_file = nil,                           -- print to stdout
  ignore_modules = nil,                        -- modules to leave out
}
print(string.format("AlexNet: %s flops, %s, %s params", flops, macs, params))
