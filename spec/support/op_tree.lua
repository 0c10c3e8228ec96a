-- op_tree.lua — a window's ops and ranges as torch's event tree reads: one line per event, two
-- spaces of indent per enclosing event (by time, per thread), in start order.
local M = {}

-- lines(events[, kinds]): kinds defaults to { op = true, range = true }.
function M.lines(events, kinds)
  kinds = kinds or { op = true, range = true }
  local list = {}
  for _, e in ipairs(events) do
    if kinds[e.kind] then list[#list + 1] = e end
  end
  table.sort(list, function(a, b)
    if a.thread ~= b.thread then return a.thread < b.thread end
    if a.t_begin_ns ~= b.t_begin_ns then return a.t_begin_ns < b.t_begin_ns end
    return a.t_end_ns > b.t_end_ns
  end)
  local out, open, thread = {}, {}, nil
  for _, e in ipairs(list) do
    if e.thread ~= thread then open, thread = {}, e.thread end
    -- an enclosing event ended before e (an instant at its very end still belongs to it)
    while #open > 0 and open[#open] <= e.t_begin_ns and open[#open] < e.t_end_ns do
      open[#open] = nil
    end
    out[#out + 1] = string.rep("  ", #open) .. e.name
    open[#open + 1] = e.t_end_ns
  end
  return out
end

return M
