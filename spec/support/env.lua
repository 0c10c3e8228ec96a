-- env.lua — what several specs set up alike: a config from overrides, the meta device, substrings.
local core = require "prof.core"
local config = require "prof.config"

local M = {}

-- Installs the default config with overrides ({"a.b=v", ...}); its device (meta unless given)
-- becomes the default device, as under profrun.
function M.use_config(sets)
  config.set(assert(core.load_config(nil, sets or {})))
end

-- Inside a describe, given busted's setup and teardown (they live in the spec's environment,
-- not in _G): its tests run on meta; afterwards the default config and the previous default
-- device come back.
function M.on_meta(setup, teardown)
  local device
  setup(function()
    device = core.default_device()
    core.set_default_device("meta")
  end)
  teardown(function()
    M.use_config({})
    core.set_default_device(device)
  end)
end

-- Plain (not pattern) substring test; false for nil.
function M.has(s, needle)
  return s ~= nil and s:find(needle, 1, true) ~= nil
end

return M
