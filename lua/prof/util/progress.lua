-- prof.util.progress — a progress line on stderr (steps done, ETA) for long runs, when it is a terminal.
--[[
A cpu run of many steps can print nothing for minutes. When stderr is a terminal, a tracker
rewrites one line ("profrun: step 12/40, 1.52 s/step, ETA 43 s") in place, first after the run has
taken QUIET_S (short runs stay silent), then at most every EVERY_S; finish() clears it. When
stderr is a pipe or a file (CI logs, specs), nothing is written at all.
]]
local core = require "prof.core"

local M = {}

M.QUIET_S = 2
M.EVERY_S = 0.5

-- Replaceable by specs: the terminal test, the clock (seconds) and the writer.
M.is_terminal = function() return core.is_terminal(2) end
M.clock = function() return core.now_ns() / 1e9 end
M.write = function(s) io.stderr:write(s) end

local Tracker = {}
Tracker.__index = Tracker

-- M.new{total = steps or nil, what = "step"}: total nil shows the rate without an ETA.
function M.new(o)
  o = o or {}
  local t = setmetatable({ total = o.total, what = o.what or "step", enabled = M.is_terminal(),
    t0 = M.clock(), last = nil, shown = false }, Tracker)
  M.active = t
  return t
end

local function seconds(s)
  if s >= 90 then return string.format("%d min %02d s", s // 60, math.floor(s % 60)) end
  return string.format("%.0f s", s)
end

-- The line for done steps after elapsed seconds (no "\r"): pure, for specs.
function M.line(what, done, total, elapsed)
  local rate = done > 0 and elapsed / done or nil
  local parts = { string.format("profrun: %s %d%s", what, done, total and "/" .. total or "") }
  if rate then parts[#parts + 1] = string.format("%.2f s/%s", rate, what) end
  if rate and total and total > done then parts[#parts + 1] = "ETA " .. seconds(rate * (total - done)) end
  return table.concat(parts, ", ")
end

-- done steps are finished.
function Tracker:tick(done)
  if not self.enabled then return end
  local t = M.clock()
  if t - self.t0 < M.QUIET_S or (self.last and t - self.last < M.EVERY_S) then return end
  self.last = t
  self.shown = true
  M.write("\r" .. M.line(self.what, done, self.total, t - self.t0) .. "\27[K")
end

-- Clears the line (the report that follows starts on a clean line).
function Tracker:finish()
  if self.shown then M.write("\r\27[K") end
  self.shown = false
  self.enabled = false
end

-- Clears the line of the newest tracker, if any (profrun calls it when the script ends).
function M.finish_all()
  if M.active then M.active:finish() end
  M.active = nil
end

return M
