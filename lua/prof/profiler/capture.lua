-- prof.profiler.capture — the GPU capture from Lua: can it run, open it for a session, say why not.
local core = require "prof.core"

local M = {}

-- true, or false and why CUPTI capture cannot run here (the binding's reason: no CUPTI headers in
-- the build, no libcupti, no driver, no device). Specs replace it.
function M.available()
  if core.capture_available == nil then return false, "this build has no GPU capture" end
  return core.capture_available()
end

-- Opens a capture of kind ("cupti", or "replay" for recorded activity) on the state S before its
-- window starts (CUPTI is enabled early, as Kineto's warmup does). Returns true, or nil and why.
function M.open(S, kind)
  kind = kind or "cupti"
  if S.capture_open == nil then return nil, "this build has no GPU capture" end
  if S:capture_kind() ~= nil then return true end
  if kind == "cupti" then
    local ok, why = M.available()
    if not ok then return nil, why end
  end
  local ok, err = S:capture_open(kind)
  if ok == nil then return nil, err end
  return true
end

-- Closes S's capture (idempotent): CUPTI is disabled and finalized, so nothing lingers.
function M.close(S)
  if S.capture_close ~= nil then S:capture_close() end
end

-- Waits for the device before a window's end: the core maps only what has completed. One wait
-- per window (never one per module); nothing without a cuda backend (core.gpu_sync).
function M.synchronize()
  local f = core.gpu_sync
  if f ~= nil then f() end
end

return M
