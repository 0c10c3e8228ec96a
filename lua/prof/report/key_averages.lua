-- key_averages.lua — torch's key_averages() and its table(), from a window's raw events.
--
-- Rows are ops and user ranges (nn.Module scopes stay in p:events() and the trace, as in torch,
-- where module calls are no table rows). Per thread the events nest by interval; an event's self
-- time is its interval minus its children's (never below 0). Memory (with profile_memory) goes to
-- the op that was open when it was allocated or freed (the core stamps it with the op's
-- correlation), else to the innermost range around it: that is the event's self memory, and its
-- total is self plus its children's totals, so the columns add up down the tree.
--
-- Device activity (kernels, copies, memsets from the capture) is torch 1.13's: each
-- device event is its own row (CPU columns 0, count = launches) and adds its duration to the op
-- whose correlation id launched it (else to the range it was launched in, as torch's external
-- correlation covers record_function too): that op's self CUDA time; its CUDA total adds its
-- children's totals (torch's cuda_time_total). Runtime calls (cudaLaunchKernel) are CPU rows,
-- children of the op that made them. CUDA memory is the allocator's (memory events of device
-- "cuda", as torch's caching allocator reports them); CUPTI's gpu_memory records (the driver's
-- allocations behind the caching allocator) and overhead records make no row.
local options = require "prof.util.options"

local M = {}

-- the event kinds that ran on the device (rows of device type CUDA in torch's table)
M.DEVICE_KINDS = { kernel = true, memcpy = true, memset = true }

local EventList = {}

-- torch's EventList.self_cpu_time_total: the rows' (or events') self CPU time summed, in µs
local PROPERTIES = {
  self_cpu_time_total = function(list)
    local t = 0.0
    for _, r in ipairs(list) do t = t + (r.self_cpu_time_total or 0) end
    return t
  end,
}
EventList.__index = function(list, k)
  local m = EventList[k]
  if m ~= nil then return m end
  local p = PROPERTIES[k]
  if p ~= nil then return p(list) end
  return nil
end

local SUMMED = { "count", "cpu_time_total", "self_cpu_time_total", "cpu_memory_usage",
  "self_cpu_memory_usage", "cuda_time_total", "self_cuda_time_total", "cuda_memory_usage",
  "self_cuda_memory_usage", "flops" }

-- torch's total_average(): one row "Total" summing every row's (or op's and range's) counts
-- and times, its averages over the summed count.
function EventList:total_average()
  local t = { key = "Total" }
  for _, k in ipairs(SUMMED) do t[k] = 0 end
  for _, r in ipairs(self) do
    if r.cpu_time_total ~= nil then   -- a row, an op or a range (not a module or memory event)
      t.count = t.count + (r.count or 1)
      for k = 2, #SUMMED do t[SUMMED[k]] = t[SUMMED[k]] + (r[SUMMED[k]] or 0) end
    end
  end
  t.cpu_time = t.count > 0 and t.cpu_time_total / t.count or 0.0
  t.cuda_time = t.count > 0 and t.cuda_time_total / t.count or 0.0
  return t
end

-- list with total_average() and self_cpu_time_total (p:events()'s)
function M.event_list(list) return setmetatable(list, EventList) end

local function by_time(a, b)
  if a.t0 ~= b.t0 then return a.t0 < b.t0 end
  if a.t1 ~= b.t1 then return a.t1 > b.t1 end
  -- equal intervals: the core buffers events as they close, so the later one encloses
  return a.idx > b.idx
end

local function contains(outer, inner)
  return inner.t0 >= outer.t0 and inner.t1 <= outer.t1
end

local function shapes_text(shapes)
  if shapes == nil then return "[]" end
  local parts = {}
  for i, s in ipairs(shapes) do
    local dims = {}
    for j, d in ipairs(s) do dims[j] = tostring(d) end
    parts[i] = "[" .. table.concat(dims, ", ") .. "]"
  end
  return "[" .. table.concat(parts, ", ") .. "]"
end

-- Nests one thread's items (sorted by_time): parent links, children's time, memory.
local function nest(items, by_corr)
  local stack, n = {}, 0
  for _, it in ipairs(items) do
    while n > 0 and not contains(stack[n], it) do
      stack[n] = nil
      n = n - 1
    end
    if it.mem ~= nil then
      local owner = it.corr ~= 0 and by_corr[it.corr] or nil
      if owner == nil then
        for k = n, 1, -1 do
          if stack[k].kind == "range" then owner = stack[k] break end
        end
      end
      if owner ~= nil then
        if it.cuda then owner.self_cuda_mem = owner.self_cuda_mem + it.mem
        else owner.self_mem = owner.self_mem + it.mem end
      end
    else
      it.parent = stack[n]
      if it.parent then it.parent.child_ns = it.parent.child_ns + (it.t1 - it.t0) end
      n = n + 1
      stack[n] = it
    end
  end
  for i = #items, 1, -1 do
    local it = items[i]
    if it.mem == nil then
      it.total_mem = it.total_mem + it.self_mem
      it.total_cuda_mem = it.total_cuda_mem + it.self_cuda_mem
      it.total_cuda_ns = it.total_cuda_ns + it.self_cuda_ns
      local up = it.parent
      if up then
        up.total_mem = up.total_mem + it.total_mem
        up.total_cuda_mem = up.total_cuda_mem + it.total_cuda_mem
        up.total_cuda_ns = up.total_cuda_ns + it.total_cuda_ns
      end
    end
  end
end

-- Every op and range of events as an item {name, kind, t0, t1, child_ns, stack, ...}, nested per
-- thread (self time = t1 - t0 - child_ns), and the items in time order; device events as items
-- of kind "device" (never nested: they ran on the device), their time given to the op that
-- launched them (self_cuda_ns) before the nesting sums the totals up the tree.
local function items_of(events, o)
  local threads, all, by_corr, by_range, device = {}, {}, {}, {}, {}
  for i, e in ipairs(events) do
    local it
    local kind = e.kind
    if kind == "op" or kind == "range" or kind == "runtime" then
      local name = e.name
      if kind == "range" and name:match("^ProfilerStep#%d+$") then name = "ProfilerStep*" end
      it = { idx = i, kind = kind, name = name, t0 = e.t_begin_ns, t1 = e.t_end_ns,
             thread = e.thread, flops = e.flops or 0, shapes = e.input_shapes, stack = e.stack,
             child_ns = 0, self_mem = 0, total_mem = 0, self_cuda_mem = 0, total_cuda_mem = 0,
             self_cuda_ns = 0, total_cuda_ns = 0 }
      all[#all + 1] = it
      if kind == "op" and e.correlation ~= 0 then by_corr[e.correlation] = it end
      if kind == "range" and (e.correlation or 0) ~= 0 then by_range[e.correlation] = it end
    elseif kind == "memory" and o.profile_memory then
      it = { idx = i, t0 = e.t_begin_ns, t1 = e.t_begin_ns, thread = e.thread,
             mem = e.value, corr = e.correlation, cuda = e.device == "cuda" }
    elseif M.DEVICE_KINDS[kind] then
      local ns = math.max(0, e.t_end_ns - e.t_begin_ns)
      device[#device + 1] = { idx = i, kind = "device", name = e.name, t0 = e.t_begin_ns,
        t1 = e.t_end_ns, corr = e.correlation, range = e.range, flops = 0, child_ns = 0, self_mem = 0,
        total_mem = 0, self_cuda_mem = 0, total_cuda_mem = 0, self_cuda_ns = ns,
        total_cuda_ns = ns }
    end
    if it then
      local list = threads[it.thread]
      if list == nil then list = {} threads[it.thread] = list end
      list[#list + 1] = it
    end
  end
  for _, d in ipairs(device) do
    local owner = d.corr ~= nil and d.corr ~= 0 and by_corr[d.corr] or nil
    if owner == nil and d.range ~= nil and d.range ~= 0 then owner = by_range[d.range] end
    if owner ~= nil then owner.self_cuda_ns = owner.self_cuda_ns + d.self_cuda_ns end
    all[#all + 1] = d
  end
  for _, list in pairs(threads) do
    table.sort(list, by_time)
    nest(list, by_corr)
  end
  table.sort(all, by_time)
  return all
end

--[[
Collapsed stacks for flame graphs (torch's export_stacks): one line per event that has a stack
and a positive metric, its frames outermost first joined by ';', a space, the metric in whole
µs. metric: "self_cpu_time_total" (the event's self time), "cpu_time_total", or their CUDA twins
(the kernels the event launched, with or without its children's).
]]
local METRICS = { self_cpu_time_total = true, cpu_time_total = true,
                  self_cuda_time_total = true, cuda_time_total = true }

M.items = items_of

function M.collapsed_stacks(events, metric)
  if not METRICS[metric] then
    error(string.format("export_stacks: metric %q is not one of self_cpu_time_total, " ..
      "cpu_time_total, self_cuda_time_total, cuda_time_total", tostring(metric)), 3)
  end
  local lines = {}
  for _, it in ipairs(items_of(events, {})) do
    if it.stack and #it.stack > 0 then
      local ns = it.t1 - it.t0
      if metric == "self_cpu_time_total" then ns = math.max(0, ns - it.child_ns)
      elseif metric == "self_cuda_time_total" then ns = it.self_cuda_ns
      elseif metric == "cuda_time_total" then ns = it.total_cuda_ns end
      local us = ns // 1000
      if us > 0 then
        local frames = {}
        for k = #it.stack, 1, -1 do frames[#frames + 1] = it.stack[k] end
        lines[#lines + 1] = table.concat(frames, ";") .. " " .. string.format("%d", us)
      end
    end
  end
  return #lines > 0 and table.concat(lines, "\n") .. "\n" or ""
end

--[[
Builds the averaged rows from p:events() (plain tables as prof.State:events gives them, names as
torch spells them). o: group_by_input_shape, group_by_stack_n, profile_memory, with_flops,
dropped, device_dropped (device records the GPU capture lost: one more footer line).
"ProfilerStep#N" ranges average under "ProfilerStep*", as torch's table shows them.
]]
function M.build(events, o)
  o = o or {}
  local all = items_of(events, o)
  local rows, index = {}, {}
  local nstack = o.group_by_stack_n or 0
  for _, it in ipairs(all) do
    local key = it.name
    -- torch's key holds the device type: a kernel never averages with an op of its name
    if it.kind == "device" then key = "\1" .. key end
    if o.group_by_input_shape then key = key .. "\0" .. shapes_text(it.shapes) end
    if nstack > 0 then
      local frames = {}
      for k = 1, math.min(nstack, it.stack and #it.stack or 0) do frames[k] = it.stack[k] end
      key = key .. "\0" .. table.concat(frames, "\0")
    end
    local r = index[key]
    if r == nil then
      r = { key = it.name, count = 0, cpu_time_total = 0.0, self_cpu_time_total = 0.0,
            cpu_memory_usage = 0, self_cpu_memory_usage = 0, flops = 0,
            cuda_time_total = 0.0, self_cuda_time_total = 0.0, cuda_time = 0.0,
            cuda_memory_usage = 0, self_cuda_memory_usage = 0,
            input_shapes = it.shapes, stack = it.stack or {}, is_user_annotation = it.kind == "range",
            device_type = it.kind == "device" and "cuda" or "cpu",
            -- torch's FunctionEventAvg keeps its first event's parent
            cpu_parent = it.parent and it.parent.name or nil }
      index[key] = r
      rows[#rows + 1] = r
    end
    r.count = r.count + 1
    if it.kind ~= "device" then   -- a device event has no CPU time (torch's cpu_time_total: 0)
      local dur = it.t1 - it.t0
      r.cpu_time_total = r.cpu_time_total + dur / 1000
      r.self_cpu_time_total = r.self_cpu_time_total + math.max(0, dur - it.child_ns) / 1000
    end
    r.cpu_memory_usage = r.cpu_memory_usage + it.total_mem
    r.self_cpu_memory_usage = r.self_cpu_memory_usage + it.self_mem
    r.cuda_time_total = r.cuda_time_total + it.total_cuda_ns / 1000
    r.self_cuda_time_total = r.self_cuda_time_total + it.self_cuda_ns / 1000
    r.cuda_memory_usage = r.cuda_memory_usage + it.total_cuda_mem
    r.self_cuda_memory_usage = r.self_cuda_memory_usage + it.self_cuda_mem
    r.flops = r.flops + it.flops
  end
  for _, r in ipairs(rows) do
    r.cpu_time = r.count > 0 and r.cpu_time_total / r.count or 0.0
    r.cuda_time = r.count > 0 and r.cuda_time_total / r.count or 0.0
    -- torch's key_averages keeps only what it grouped by: the shapes under
    -- group_by_input_shape, the first group_by_stack_n frames (so no column otherwise)
    if not o.group_by_input_shape then r.input_shapes = nil end
    if #r.stack > nstack then r.stack = { table.unpack(r.stack, 1, nstack) } end
  end
  rows.profile_memory = o.profile_memory == true
  rows.with_flops = o.with_flops == true
  rows.dropped = o.dropped or 0
  rows.device_dropped = o.device_dropped or 0
  return setmetatable(rows, EventList)
end

-- {========== torch 1.13's _build_table, column for column ==========}

local function format_time(us, unit)
  if unit == "s" or (unit == nil and us >= 1e6) then return string.format("%.3fs", us / 1e6) end
  if unit == "ms" or (unit == nil and us >= 1e3) then return string.format("%.3fms", us / 1e3) end
  return string.format("%.3fus", us)
end
M.format_time = format_time

local function format_share(us, total)
  if total == 0 then return "NaN" end
  return string.format("%.2f%%", us * 100.0 / total)
end

local function format_memory(n)
  local a = math.abs(n)
  if a >= 1 << 30 then return string.format("%.2f Gb", n / (1 << 30)) end
  if a >= 1 << 20 then return string.format("%.2f Mb", n / (1 << 20)) end
  if a >= 1 << 10 then return string.format("%.2f Kb", n / (1 << 10)) end
  return string.format("%d b", n)
end
M.format_memory = format_memory

-- torch's sort keys (descending); cpu_time and cuda_time are per-call averages.
local SORT_KEYS = {
  cpu_time = true, cuda_time = true, cpu_time_total = true, cuda_time_total = true,
  self_cpu_time_total = true, self_cuda_time_total = true, cpu_memory_usage = true,
  cuda_memory_usage = true, self_cpu_memory_usage = true, self_cuda_memory_usage = true,
  count = true, flops = true,
  device_time = "cuda_time", device_time_total = "cuda_time_total",
  self_device_time_total = "self_cuda_time_total",
}

local function pad(s, w, left)
  s = tostring(s)
  if #s >= w then return s end
  if left then return s .. string.rep(" ", w - #s) end
  return string.rep(" ", w - #s) .. s
end

local FLOP_HEADERS = { "FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs" }

local function scale_flops(flops)
  local l = math.max(0, math.min(math.log(flops, 10) / 3, #FLOP_HEADERS - 1))
  return 10.0 ^ (math.floor(l) * -3), FLOP_HEADERS[math.floor(l) + 1]
end

local function trim_path(path, w)
  if #path > w then
    path = path:sub(#path - w + 1)
    if #path > 3 then path = "..." .. path:sub(4) end
  end
  return path
end

--[[
rows:table{sort_by=, row_limit=100, max_name_column_width=55, max_shapes_column_width=80,
max_src_column_width=75, header=, top_level_events_only=false, time_unit=} -> the text torch
1.13 prints: columns Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, [Self CUDA,
Self CUDA %, CUDA total, CUDA time avg], [CPU Mem, Self CPU Mem (, CUDA Mem, Self CUDA Mem)],
# of Calls, [Input Shapes], [Source Location], [Total FLOPs]; CPU percentages over the sum of
self CPU time, Self CUDA % over the sum of the device rows' time; the footer "Self CPU time
total: ..." and, with CUDA columns, "Self CUDA time total: ...". The CUDA columns appear when
some row has self CUDA time, the CUDA memory ones (with profile_memory) when some row has self
CUDA memory above 0, as in torch. Dropped events, when any, are counted on one more footer line
(torch has none to show).
]]
local TABLE_KEYS = { "sort_by", "row_limit", "max_name_column_width", "max_shapes_column_width",
  "max_src_column_width", "header", "top_level_events_only", "time_unit" }

function EventList:table(o)
  o = options.check(o or {}, TABLE_KEYS, "table")
  local events = {}
  for i, r in ipairs(self) do events[i] = r end
  if #events == 0 then return "" end
  local sort_by = o.sort_by
  if sort_by ~= nil then
    local k = SORT_KEYS[sort_by]
    if k == nil then
      local names = {}
      for name in pairs(SORT_KEYS) do names[#names + 1] = name end
      table.sort(names)
      error("table: " .. options.unknown("sort_by", sort_by, names), 2)
    end
    if k ~= true then sort_by = k end
    local pos = {}
    for i, r in ipairs(events) do pos[r] = i end
    table.sort(events, function(a, b)
      if a[sort_by] ~= b[sort_by] then return a[sort_by] > b[sort_by] end
      return pos[a] < pos[b]   -- Python's sort is stable
    end)
  end
  local row_limit = o.row_limit or 100
  local max_name = o.max_name_column_width == nil and 55 or o.max_name_column_width
  local max_shapes = o.max_shapes_column_width or 80
  local max_src = o.max_src_column_width or 75
  local unit = o.time_unit
  local profile_memory, with_flops = self.profile_memory, self.with_flops
  local has_cuda, has_cuda_mem = false, false
  for _, r in ipairs(events) do
    if (r.self_cuda_time_total or 0) > 0 then has_cuda = true end
    if (r.self_cuda_memory_usage or 0) > 0 then has_cuda_mem = true end
  end

  local has_shapes, has_stack, name_w, shapes_w, src_w = false, false, 0, 0, 0
  for _, r in ipairs(events) do
    name_w = math.max(name_w, #r.key + 4)
    if r.input_shapes ~= nil and #r.input_shapes > 0 then has_shapes = true end
    shapes_w = math.max(shapes_w, #shapes_text(r.input_shapes) + 4)
    if #r.stack > 0 then
      has_stack = true
      for _, s in ipairs(r.stack) do src_w = math.max(src_w, #s + 4) end
    end
  end
  if max_name then name_w = math.min(name_w, max_name) end
  shapes_w = math.min(shapes_w, max_shapes)
  src_w = math.min(src_w, max_src)

  local headers = { "Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg" }
  if has_cuda then
    for _, h in ipairs({ "Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg" }) do
      headers[#headers + 1] = h
    end
  end
  if profile_memory then
    headers[#headers + 1] = "CPU Mem"
    headers[#headers + 1] = "Self CPU Mem"
    if has_cuda_mem then
      headers[#headers + 1] = "CUDA Mem"
      headers[#headers + 1] = "Self CUDA Mem"
    end
  end
  headers[#headers + 1] = "# of Calls"
  local widths, lefts = { name_w }, {}
  for i = 2, #headers do widths[i] = 12 end
  if has_shapes then
    headers[#headers + 1] = "Input Shapes"
    widths[#headers] = shapes_w
  end
  local flops_scale
  if with_flops then
    local least
    for _, r in ipairs(events) do
      if r.flops > 0 and (least == nil or r.flops < least) then least = r.flops end
    end
    if least then
      local header
      flops_scale, header = scale_flops(least)
      headers[#headers + 1] = "Total " .. header
      widths[#headers] = 12
    end
  end
  -- torch 1.13 puts the source header before FLOPs but its value after (profiler_util.py's
  -- _build_table): here both come last, in the same place
  if has_stack then
    headers[#headers + 1] = "Source Location"
    widths[#headers] = src_w
    lefts[#headers] = true
  end

  local line_length = -2
  local sep_parts = {}
  for i, w in ipairs(widths) do
    sep_parts[i] = string.rep("-", w) .. "  "
    line_length = line_length + w + 2
  end
  local header_sep = table.concat(sep_parts)
  local function fmt(values)
    local parts = {}
    for i, w in ipairs(widths) do parts[i] = pad(values[i] or "", w, lefts[i]) .. "  " end
    return table.concat(parts)
  end

  -- torch sums the device rows only for the CUDA share: an op's self CUDA time is some kernel
  -- row's time too, and counting both would halve every share
  local sum_self, sum_cuda = 0.0, 0.0
  for _, r in ipairs(events) do
    sum_self = sum_self + r.self_cpu_time_total
    if r.device_type == "cuda" then sum_cuda = sum_cuda + r.self_cuda_time_total end
  end

  local out = {}
  local function append(s) out[#out + 1] = s .. "\n" end
  if o.header ~= nil then
    append(string.rep("=", line_length))
    append(o.header)
  end
  if o.top_level_events_only then
    append(string.rep("=", line_length))
    append("This report only display top-level ops statistics")
  end
  append(header_sep)
  append(fmt(headers))
  append(header_sep)
  local shown = 0
  for _, r in ipairs(events) do
    if shown == row_limit then break end
    if not (o.top_level_events_only and r.cpu_parent ~= nil) then
      shown = shown + 1
      local name = r.key
      if max_name and #name >= max_name - 3 then name = name:sub(1, max_name - 3) .. "..." end
      local v = { name, format_share(r.self_cpu_time_total, sum_self),
        format_time(r.self_cpu_time_total, unit), format_share(r.cpu_time_total, sum_self),
        format_time(r.cpu_time_total, unit), format_time(r.cpu_time, unit) }
      if has_cuda then
        v[#v + 1] = format_time(r.self_cuda_time_total, unit)
        v[#v + 1] = format_share(r.self_cuda_time_total, sum_cuda)
        v[#v + 1] = format_time(r.cuda_time_total, unit)
        v[#v + 1] = format_time(r.cuda_time, unit)
      end
      if profile_memory then
        v[#v + 1] = format_memory(r.cpu_memory_usage)
        v[#v + 1] = format_memory(r.self_cpu_memory_usage)
        if has_cuda_mem then
          v[#v + 1] = format_memory(r.cuda_memory_usage)
          v[#v + 1] = format_memory(r.self_cuda_memory_usage)
        end
      end
      v[#v + 1] = tostring(r.count)
      if has_shapes then v[#v + 1] = shapes_text(r.input_shapes):sub(1, shapes_w) end
      if flops_scale then
        v[#v + 1] = r.flops <= 0 and "--" or string.format("%8.3f", r.flops * flops_scale)
      end
      if has_stack then v[#v + 1] = r.stack[1] and trim_path(r.stack[1], src_w) or "" end
      append(fmt(v))
      if has_stack then
        local blank = {}
        for i = 1, #headers - 1 do blank[i] = "" end
        for k = 2, math.min(#r.stack, 5) do
          blank[#headers] = trim_path(r.stack[k], src_w)
          append(fmt(blank))
        end
        blank[#headers] = ""
        append(fmt(blank))
      end
    end
  end
  append(header_sep)
  append("Self CPU time total: " .. format_time(sum_self))
  if has_cuda then append("Self CUDA time total: " .. format_time(sum_cuda)) end
  if (self.dropped or 0) > 0 then
    append(string.format("Events dropped: %d (the event buffer was full; raise capacity=)",
      self.dropped))
  end
  if (self.device_dropped or 0) > 0 then
    append(string.format("Device records dropped: %d (the GPU capture's buffers were full)",
      self.device_dropped))
  end
  return table.concat(out)
end

EventList.__tostring = EventList.table

M.EventList = EventList
M.shapes_text = shapes_text

return M
