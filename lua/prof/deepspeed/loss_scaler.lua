-- prof.deepspeed.loss_scaler — DeepSpeed's fp16 loss scaling: the static scaler and DynamicLossScaler
-- (deepspeed/runtime/fp16/loss_scaler.py), configured from the fp16 section as DeepSpeed does.
--[[
fp16 keys (DeepSpeed's defaults): loss_scale 0 (0: dynamic; > 0: that static scale),
initial_scale_power 16 (the dynamic scale starts at 2^16), loss_scale_window 1000, hysteresis 2,
consecutive_hysteresis false, min_loss_scale 1. update(overflow), after every optimizer step:
  overflow:  when hysteresis is 1 or used up, scale = max(scale / 2, min_loss_scale), else one
             hysteresis is spent; last_overflow = iter
  no overflow: with consecutive_hysteresis the hysteresis is restored; every loss_scale_window
             iterations since the last overflow ((iter - last_overflow) % window == 0) the
             scale doubles (and the hysteresis is restored)
  iter += 1
The engine multiplies the loss by the scale before backward, skips the optimizer step (and the
lr schedule's) when a gradient holds inf or NaN, and otherwise divides the gradients by the
scale after update(false), in DeepSpeed's order (its optimizers update the scale first, then
unscale with the new one).
]]
local notes = require "prof.util.notes"

local M = {}

local DEFAULTS = { loss_scale = 0, initial_scale_power = 16, loss_scale_window = 1000, hysteresis = 2,
  consecutive_hysteresis = false, min_loss_scale = 1 }
M.DEFAULTS = DEFAULTS

local Scaler = {}
Scaler.__index = Scaler

-- new(fp16_section) -> scaler. "auto" values take the default, with a note; others are checked.
function M.new(section)
  local o = {}
  for k, default in pairs(DEFAULTS) do
    local v = section and section[k]
    if v == "auto" then
      notes.once("auto:fp16." .. k, string.format('fp16.%s is "auto": DeepSpeed\'s default is used (%s)', k,
        tostring(default)))
      v = nil
    end
    if v == nil then v = default end
    if type(v) ~= type(default) or (type(v) == "number" and v < 0) then
      error(string.format("fp16.%s: expected a %s%s, got %s", k, type(default),
        type(default) == "number" and " >= 0" or "", tostring(v)), 0)
    end
    o[k] = v
  end
  local s = setmetatable({
    dynamic = o.loss_scale == 0,
    cur_scale = o.loss_scale ~= 0 and o.loss_scale or 2.0 ^ o.initial_scale_power,
    cur_iter = 0, last_overflow_iter = -1, scale_factor = 2.0, scale_window = o.loss_scale_window,
    min_scale = o.min_loss_scale, delayed_shift = o.hysteresis, cur_hysteresis = o.hysteresis,
    consecutive_hysteresis = o.consecutive_hysteresis,
  }, Scaler)
  return s
end

-- DynamicLossScaler.update_scale; a static scaler never changes.
function Scaler:update(overflow)
  if not self.dynamic then return end
  if overflow then
    if self.delayed_shift == 1 or self.cur_hysteresis == 1 then
      self.cur_scale = math.max(self.cur_scale / self.scale_factor, self.min_scale)
    else
      self.cur_hysteresis = self.cur_hysteresis - 1
    end
    self.last_overflow_iter = self.cur_iter
  else
    if self.consecutive_hysteresis then self.cur_hysteresis = self.delayed_shift end
    if (self.cur_iter - self.last_overflow_iter) % self.scale_window == 0 then
      if not self.consecutive_hysteresis then self.cur_hysteresis = self.delayed_shift end
      self.cur_scale = self.cur_scale * self.scale_factor
    end
  end
  self.cur_iter = self.cur_iter + 1
end

-- True when any gradient of params holds inf or NaN (DeepSpeed sums each and tests the sum).
function M.has_overflow(params)
  for _, p in ipairs(params) do
    local g = p.grad
    if g ~= nil then
      local s = g:sum():item()
      if s ~= s or s == math.huge or s == -math.huge then return true end
    end
  end
  return false
end

return M
