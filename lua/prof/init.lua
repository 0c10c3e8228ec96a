-- init.lua — require "prof": profrun's Lua API, named as DeepSpeed and PyTorch name things.
local core = require "prof.core"
local config = require "prof.config"
local errors = require "prof.util.errors"
local flops_profiler = require "prof.flops_profiler"

local M = {}

M.VERSION = core.VERSION

-- The flops profiler (DeepSpeed's API).
M.FlopsProfiler = flops_profiler.FlopsProfiler
M.get_model_profile = flops_profiler.get_model_profile

-- The activity profiler (torch.profiler's API): prof.profile{...}, prof.schedule{...},
-- prof.record_function(name[, fn, ...]), prof.tensorboard_trace_handler(dir), prof.step().
local profiler = require "prof.profiler"
local schedule = require "prof.schedule"
M.profile = profiler.profile
M.schedule = schedule.schedule
M.ProfilerAction = { NONE = schedule.NONE, WARMUP = schedule.WARMUP, RECORD = schedule.RECORD,
                     RECORD_AND_SAVE = schedule.RECORD_AND_SAVE }
-- torch.profiler.ProfilerActivity: activities = { prof.ProfilerActivity.CPU, ... } or strings
M.ProfilerActivity = { CPU = "cpu", CUDA = "cuda" }
M.record_function = profiler.record_function
M.open_scopes = profiler.open_scopes
M.tensorboard_trace_handler = profiler.tensorboard_trace_handler
M.step = profiler.step

-- DeepSpeed's engine: prof.initialize{model=, optimizer=, config=} -> engine, optimizer.
M.initialize = require("prof.deepspeed.engine").initialize

-- An unmodified program under libprof_inject.so: prof.launch{"./app", args...} -> its profile.
M.launch = require("prof.profiler.launch").launch

-- The run's configuration (the JSON config profrun was given, or the defaults).
M.config = config

-- The runtime.
M.set_default_device = core.set_default_device
M.default_device = core.default_device
M.no_grad = require("prof.tensor").no_grad
M.manual_seed = core.manual_seed

-- Error handler for xpcall: module context plus traceback.
M.traceback = errors.traceback

-- Submodules load on first use, by the names the API gives them (prof.nn, prof.peaks.gpu(), ...).
local SUBMODULES = {
  nn = "prof.nn", tensor = "prof.tensor", models = "prof.models", optim = "prof.optim",
  report = "prof.report", roofline = "prof.roofline", peaks = "prof.roofline.peaks",
}

return setmetatable(M, {
  __index = function(t, k)
    local name = SUBMODULES[k]
    if name == nil then return nil end
    local sub = require(name)
    rawset(t, k, sub)
    return sub
  end,
})
