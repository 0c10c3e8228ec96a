-- init.lua — prof.models: the model zoo by variant name ("resnet50", "gpt2-medium", "llama2-7b").
local M = {}

-- Families: files under prof.models with build(opts) and input(opts); opts.name picks the
-- variant, named by names() or NAMES (a family without either has one variant, its own name).
M.FAMILIES = {
  "lenet5", "alexnet", "vgg", "resnet", "mobilenet_v2", "vit",
  "bert", "gpt2", "gpt3", "llama", "megatron_gpt2",
}

local variants   -- variant name -> family module, built on first use

local function index()
  if variants then return variants end
  variants = {}
  for _, family in ipairs(M.FAMILIES) do
    local mod = require("prof.models." .. family)
    local names = mod.names and mod.names() or mod.NAMES or { family }
    for _, n in ipairs(names) do variants[n] = mod end
  end
  return variants
end

-- Every variant name, in family order then each family's own order.
function M.list()
  local out = {}
  for _, family in ipairs(M.FAMILIES) do
    local mod = require("prof.models." .. family)
    for _, n in ipairs(mod.names and mod.names() or mod.NAMES or { family }) do out[#out + 1] = n end
  end
  return out
end

local function family_of(name)
  local mod = index()[name]
  if mod == nil then
    -- a command that works as written: the script being run when it is the zoo's front end
    local script = type(arg) == "table" and type(arg[0]) == "string"
      and arg[0]:match("model_profile%.lua$") and arg[0] or "examples/model_profile.lua"
    local near = type(name) == "string" and require("prof.util.closest").closest(name, M.list())
    error(string.format("unknown model '%s'%s (`profrun %s --list` lists them)", tostring(name),
      near and string.format("; did you mean '%s'?", near) or "", script), 3)
  end
  return mod
end

local function with_name(name, opts)
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  o.name = name
  return o
end

-- prof.models.build("resnet50", {num_classes = 10}) -> model
function M.build(name, opts)
  return family_of(name).build(with_name(name, opts))
end

-- prof.models.input("bert-base", {batch = 4, seq = 128}) -> a list of forward arguments
function M.input(name, opts)
  return family_of(name).input(with_name(name, opts))
end

-- prof.models.alexnet(opts) as a shorthand for build("alexnet", opts).
return setmetatable(M, {
  __index = function(_, name)
    if type(name) ~= "string" or index()[name] == nil then return nil end
    return function(opts) return M.build(name, opts) end
  end,
})
