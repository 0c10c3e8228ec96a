-- model_profile.lua — profiles any zoo model on its inputs: --model NAME [--batch N] [--seq S]
-- [--image H], or --list to show the names. The report follows the config (format, depth, ...).
local prof = require "prof"
local models = require "prof.models"

local USAGE = "usage: profrun [CONFIG.json] examples/model_profile.lua --model NAME [--batch N] "
  .. "[--seq S] [--image H] | --list"

local function parse(argv)
  local o = {}
  local i = 1
  while argv[i] do
    local a = argv[i]
    if a == "--list" then
      o.list = true
    elseif a == "--model" or a == "--batch" or a == "--seq" or a == "--image" then
      local v = argv[i + 1]
      if v == nil then error(a .. " needs a value\n" .. USAGE, 0) end
      local key = a:sub(3)
      if key ~= "model" then
        v = math.tointeger(tonumber(v))
        if v == nil or v < 1 then error(a .. " expects a positive integer\n" .. USAGE, 0) end
      end
      o[key] = v
      i = i + 1
    else
      error("unknown argument '" .. a .. "'\n" .. USAGE, 0)
    end
    i = i + 1
  end
  return o
end

local o = parse({ ... })
if o.list then
  print(table.concat(models.list(), "\n"))
  return
end
if o.model == nil then error("--model is required\n" .. USAGE, 0) end

local model = models.build(o.model)
local inputs = models.input(o.model, { batch = o.batch, seq = o.seq, image = o.image })
local args, kwargs = inputs, nil
if #inputs == 1 and type(inputs[1]) == "table" and not prof.tensor.is_tensor(inputs[1]) then
  args, kwargs = {}, inputs[1]             -- keyword inputs (BERT's input_ids, attention_mask, ...)
end
local flops, macs, params = prof.get_model_profile {
  model = model, args = args, kwargs = kwargs, warm_up = 0,
}
print(string.format("%s: %s flops, %s, %s params", o.model, flops, macs, params))
