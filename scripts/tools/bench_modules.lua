-- bench_modules.lua — `make bench`'s scale runs: a wide model of N modules (--modules N, blocks
-- of 1,000) or a chain of nested Sequentials (--depth D), profiled once on meta.
local prof = require "prof"
local nn = require "prof.nn"

local argv = { ... }
local mode, n = argv[1], math.tointeger(tonumber(argv[2]))
if (mode ~= "--modules" and mode ~= "--depth") or n == nil or n < 1 then
  error("usage: bench_modules.lua --modules N | --depth D", 0)
end

local model
if mode == "--modules" then
  -- a root, blocks of 1,000 ReLU-ending blocks: 1 + b + (n - 1 - b) modules in all
  local blocks = {}
  local left = n - 1
  while left > 0 do
    local width = math.min(left - 1, 999)
    local kids = {}
    for i = 1, width do kids[i] = nn.ReLU() end
    blocks[#blocks + 1] = nn.Sequential(table.unpack(kids))
    left = left - 1 - width
  end
  model = nn.Sequential(table.unpack(blocks))
else
  model = nn.Linear(4, 4)
  for _ = 1, n do model = nn.Sequential(model) end
end

local t0 = os.clock()
local flops = prof.get_model_profile { model = model, input_shape = { 1, 4 }, print_profile = true,
                                        as_string = false }
io.stderr:write(string.format("%s %d: %.2f s cpu, flops %d\n", mode, n, os.clock() - t0, flops))
