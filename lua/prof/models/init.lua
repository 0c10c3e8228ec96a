-- init.lua — prof.models: the model zoo. Each entry builds a model and the inputs it expects.
local M = {}

-- name -> module under prof.models; each has build(opts) and input(opts) (a list of arguments).
M.NAMES = { "lenet5", "alexnet", "bert" }

local function entry(name)
  for _, n in ipairs(M.NAMES) do
    if n == name then return require("prof.models." .. name) end
  end
  error(string.format("unknown model '%s' (known: %s)", tostring(name), table.concat(M.NAMES, ", ")), 3)
end

-- prof.models.build("alexnet", {num_classes = 10}) -> model
function M.build(name, opts)
  return entry(name).build(opts)
end

-- prof.models.input("bert", {batch = 4, seq = 128}) -> a list of forward arguments
function M.input(name, opts)
  return entry(name).input(opts)
end

-- prof.models.alexnet(opts) as a shorthand for build("alexnet", opts).
return setmetatable(M, {
  __index = function(_, name)
    return function(opts) return entry(name).build(opts) end
  end,
})
