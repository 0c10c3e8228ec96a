-- memory_timeline.lua — torch's memory timeline (bytes per category over time) and who holds the peak.
--
-- Built from a window's memory events (each allocation and free keeps its block's address, so a free
-- pairs with its allocation) and memory tags (nn tags new parameters, the optimizer its state,
-- autograd each leaf's .grad and what it saves for the backward, t:tag_memory anything), plus
-- what the caller knows at export: the model's parameters and their .grad, the optimizer's state
-- tensors and the step's inputs, found by their storage addresses. A block's category is the
-- strongest it was given (parameter > optimizer state > gradient > input > activation); a block
-- allocated in the window with none is temporary; one that existed before the window (freed in it,
-- or a known tensor no event mentions) with none is unknown (torch's None).
--
-- Known tensors categorise only the blocks live at export: an address freed earlier may have held
-- anything. Buffers (BatchNorm's running stats) are not told apart: temporary or unknown. A block
-- made before the window whose free goes unreported (the runtime tells a free only to the recorder
-- that heard of the allocation) is not in the timeline, as it is not in the allocator's peak.
local json = require "prof.report.json_encode"
local units = require "prof.report.units"

local M = {}

-- torch 2.1's _CATEGORY_TO_INDEX order; a sizes row is [0, one per category], as torch writes it.
M.CATEGORIES = { "parameter", "optimizer_state", "input", "temporary", "activation", "gradient",
                 "autograd_detail", "unknown" }
local INDEX = {}
for i, c in ipairs(M.CATEGORIES) do INDEX[c] = i + 1 end

local RANK = { unknown = 0, temporary = 1, autograd_detail = 1, activation = 2, input = 3,
               gradient = 4, optimizer_state = 5, parameter = 6 }

local function stronger(a, b)
  if a == nil then return b end
  if b == nil then return a end
  return RANK[b] > RANK[a] and b or a
end

local OUTSIDE = "(outside modules)"

-- address -> {category, nbytes, owner, owner_type} for the tensors the caller named (opts.model,
-- opts.optimizer, opts.inputs); owner is the module holding the parameter, nil for inputs.
local function known_blocks(o)
  local known = {}
  local function add(t, category, owner, owner_type)
    if t == nil then return end
    local addr, nbytes = t:storage_address()
    if addr == nil then return end
    local k = known[addr]
    if k == nil or RANK[category] > RANK[k.category] then
      known[addr] = { category = category, nbytes = nbytes, owner = owner, owner_type = owner_type }
    end
  end
  local owner_of = {}   -- parameter tensor -> {path, type}
  if o.model ~= nil then
    local by_path = {}
    for _, pair in ipairs(o.model:named_modules()) do by_path[pair[1]] = pair[2] end
    for _, pair in ipairs(o.model:named_parameters()) do
      local path = pair[1]:match("^(.*)%.[^.]*$") or ""
      local m = by_path[path]
      local ow = { path, m ~= nil and m:type_name() or nil }
      owner_of[pair[2]] = ow
      add(pair[2], "parameter", ow[1], ow[2])
      add(pair[2].grad, "gradient", ow[1], ow[2])
    end
  end
  if o.optimizer ~= nil then
    for param, st in pairs(o.optimizer.state or {}) do
      local ow = owner_of[param] or {}
      for _, v in pairs(st) do
        if type(v) == "userdata" and v.storage_address ~= nil then
          add(v, "optimizer_state", ow[1], ow[2])
        end
      end
    end
  end
  for _, t in ipairs(o.inputs or {}) do add(t, "input", nil, nil) end
  return known
end

-- module path -> type, from the window's module events
local function module_types(events)
  local types = {}
  for _, e in ipairs(events) do
    if e.kind == "module" and e.module_path ~= nil then types[e.module_path] = e.name end
  end
  return types
end

-- The device's memory events and tags in time order (a block may be freed on another thread
-- than made it; within a thread, record order breaks ties).
local function memory_events(events, device)
  local list = {}
  for i, e in ipairs(events) do
    if (e.kind == "memory" or e.kind == "memory_tag") and e.device == device then
      list[#list + 1] = { e = e, i = i }
    end
  end
  table.sort(list, function(a, b)
    if a.e.t_begin_ns ~= b.e.t_begin_ns then return a.e.t_begin_ns < b.e.t_begin_ns end
    return a.i < b.i
  end)
  for k, x in ipairs(list) do list[k] = x.e end
  return list
end

-- Pairs allocations with frees: blocks with p0 (position of the allocation, 0 before the window)
-- and p1 (position of the free, nil while live at the end).
local function lifetimes(evs, known, types)
  local blocks, live, seen, pre_tags = {}, {}, {}, {}
  for k, e in ipairs(evs) do
    local a = e.address
    if e.kind == "memory_tag" then
      if live[a] ~= nil then live[a].tag = stronger(live[a].tag, e.category)
      else pre_tags[a] = stronger(pre_tags[a], e.category) end
    elseif e.value > 0 then
      local b = { address = a, bytes = e.value, p0 = k, module = e.module_path }
      seen[a], live[a] = true, b
      blocks[#blocks + 1] = b
    else
      local b = live[a]
      if b == nil then   -- freed before it was made: it existed before the window
        b = { address = a, bytes = -e.value, p0 = 0, preexisting = true, tag = pre_tags[a] }
        pre_tags[a] = nil
        blocks[#blocks + 1] = b
      end
      seen[a], live[a] = true, nil
      b.p1 = k
    end
  end
  -- known tensors no event mentions lived through the whole window
  for addr, kn in pairs(known) do
    if not seen[addr] then
      local b = { address = addr, bytes = kn.nbytes, p0 = 0, preexisting = true, tag = pre_tags[addr] }
      blocks[#blocks + 1] = b
      live[addr] = b
    end
  end
  for _, b in ipairs(blocks) do
    local kn = b.p1 == nil and known[b.address] or nil
    local cat = stronger(b.tag, kn and kn.category)
    b.category = cat or (b.preexisting and "unknown" or "temporary")
    if kn ~= nil and kn.category == b.category and kn.owner ~= nil then
      b.owner, b.owner_type = kn.owner, kn.owner_type
    else
      b.owner = b.module
      b.owner_type = b.module ~= nil and types[b.module] or nil
    end
  end
  return blocks
end

local function row_sum(row)
  local s = 0
  for i = 2, #row do s = s + row[i] end
  return s
end

-- The per-module table of the blocks live at position k: rows sorted by bytes (then path).
local function by_module(blocks, k)
  local rows, index = {}, {}
  for _, b in ipairs(blocks) do
    if b.p0 <= k and (b.p1 == nil or b.p1 > k) then
      local path = b.owner or OUTSIDE
      local r = index[path]
      if r == nil then
        r = { module = path, type = b.owner_type or "", total = 0 }
        for _, c in ipairs(M.CATEGORIES) do r[c] = 0 end
        index[path] = r
        rows[#rows + 1] = r
      end
      r[b.category] = r[b.category] + b.bytes
      r.total = r.total + b.bytes
    end
  end
  table.sort(rows, function(x, y)
    if x.total ~= y.total then return x.total > y.total end
    return x.module < y.module
  end)
  return rows
end

-- build(events, opts): opts.device ("cpu"), opts.model, opts.optimizer, opts.inputs. Returns
-- {device, categories, times (µs, torch's) and times_ns, sizes (rows [0, bytes per category]),
--  preexisting_bytes, peak = {bytes, t_ns, by_category}, by_module (rows at the peak), final
--  (bytes per category at the end), final_bytes}.
function M.build(events, opts)
  local o = opts or {}
  local device = o.device or "cpu"
  local evs = memory_events(events, device)
  local blocks = lifetimes(evs, known_blocks(o), module_types(events))
  local at_alloc, at_free = {}, {}
  local cur = { 0 }
  for i = 1, #M.CATEGORIES do cur[i + 1] = 0 end
  for _, b in ipairs(blocks) do
    if b.p0 == 0 then cur[INDEX[b.category]] = cur[INDEX[b.category]] + b.bytes
    else at_alloc[b.p0] = b end
    if b.p1 ~= nil then at_free[b.p1] = b end
  end
  local pre = row_sum(cur)
  local times, times_ns, sizes = {}, {}, {}
  local function sample(t_ns)
    if times_ns[#times_ns] ~= t_ns then
      times_ns[#times_ns + 1] = t_ns
      times[#times + 1] = t_ns / 1000
      sizes[#sizes + 1] = table.move(cur, 1, #cur, 1, {})
    else
      table.move(cur, 1, #cur, 1, sizes[#sizes])
    end
  end
  -- what pre-existed shows from the window's first event of any kind (torch's t_min); a memory
  -- event at that very nanosecond coalesces with it, as torch's samples do
  local t0
  for _, e in ipairs(events) do
    if e.t_begin_ns ~= nil and (t0 == nil or e.t_begin_ns < t0) then t0 = e.t_begin_ns end
  end
  local total, peak, peak_k = pre, pre, 0
  if t0 ~= nil then sample(t0) end
  for k, e in ipairs(evs) do
    local b = at_alloc[k] or at_free[k]
    if b ~= nil then
      local d = at_alloc[k] ~= nil and b.bytes or -b.bytes
      cur[INDEX[b.category]] = cur[INDEX[b.category]] + d
      total = total + d
      if total > peak then peak, peak_k = total, k end
      sample(e.t_begin_ns)
    end
  end
  local by_cat = {}
  for _, c in ipairs(M.CATEGORIES) do by_cat[c] = 0 end
  for _, b in ipairs(blocks) do
    if b.p0 <= peak_k and (b.p1 == nil or b.p1 > peak_k) then
      by_cat[b.category] = by_cat[b.category] + b.bytes
    end
  end
  local final = {}
  for i, c in ipairs(M.CATEGORIES) do final[c] = cur[i + 1] end
  return {
    device = device,
    categories = M.CATEGORIES,
    times = times,
    times_ns = times_ns,
    sizes = sizes,
    preexisting_bytes = pre,
    peak = { bytes = peak, t_ns = peak_k > 0 and evs[peak_k].t_begin_ns or times_ns[1],
             by_category = by_cat },
    by_module = by_module(blocks, peak_k),
    final = final,
    final_bytes = total,
  }
end

-- µs with ns precision, exactly (as the trace's ts): a float's division would print 0.54199999
local function us(t_ns)
  if t_ns == nil then return "null" end
  return string.format("%s%d.%03d", t_ns < 0 and "-" or "", math.abs(t_ns) // 1000, math.abs(t_ns) % 1000)
end

-- torch's [times, sizes] array, one sample per line (the pretty encoder would put each number on
-- its own line: a long window has a million samples).
local function timeline_json(tl)
  local buf = { "[[" }
  for i, t in ipairs(tl.times_ns) do buf[#buf + 1] = (i > 1 and "," or "") .. us(t) end
  buf[#buf + 1] = "],\n ["
  for i, row in ipairs(tl.sizes) do
    local cells = {}
    for j, v in ipairs(row) do cells[j] = json.number(v) end
    buf[#buf + 1] = (i > 1 and ",\n  [" or "[") .. table.concat(cells, ",") .. "]"
  end
  buf[#buf + 1] = "]]"
  return table.concat(buf)
end

local RAW = "@@t_us@@"   -- a placeholder the exact time replaces (the encoder writes floats as %.17g)

local ROW_KEYS = { "module", "type", "parameter", "optimizer_state", "input", "temporary",
                   "activation", "gradient", "autograd_detail", "unknown", "total" }

-- The JSON text. layout "torch": exactly torch's export_memory_timeline JSON, [times, sizes];
-- else profrun's object, whose "timeline" is that array and whose "peak" and "peak_by_module"
-- are what torch does not give. allocator_peak: the session's own peak (S:memory_peak);
-- dropped: events the window's buffers had no room for (then blocks are missing: say so).
function M.json(tl, layout, allocator_peak, dropped)
  if layout == "torch" then return timeline_json(tl) .. "\n" end
  local rows = {}
  for i, r in ipairs(tl.by_module) do rows[i] = json.object(ROW_KEYS, r) end
  local cats = json.object(M.CATEGORIES, tl.peak.by_category)
  local peak = json.object({ "bytes", "t_us", "allocator_peak", "by_category" },
    { bytes = tl.peak.bytes, t_us = RAW, allocator_peak = allocator_peak, by_category = cats })
  local head = json.encode(json.object({ "schema", "device", "categories", "events_dropped",
                                         "preexisting_bytes", "final_bytes", "peak", "peak_by_module" },
    { schema = "profrun.memory_timeline/1", device = tl.device, categories = M.CATEGORIES,
      events_dropped = dropped or 0,
      preexisting_bytes = tl.preexisting_bytes, final_bytes = tl.final_bytes, peak = peak,
      peak_by_module = rows }))
  head = head:gsub('"' .. RAW .. '"', us(tl.peak.t_ns), 1)
  -- the timeline goes last, spliced in before the closing brace
  return head:gsub("\n}%s*$", "") .. ',\n  "timeline": ' .. timeline_json(tl) .. "\n}\n"
end

-- The per-module rows as a printable table: exact bytes per category, then the total.
local COLUMNS = { { "parameter", "Parameter" }, { "optimizer_state", "Optim state" },
                  { "gradient", "Gradient" }, { "activation", "Activation" },
                  { "input", "Input" }, { "temporary", "Temporary" }, { "unknown", "Unknown" },
                  { "total", "Total" } }

function M.table(rows)
  local head = { "Module", "Type" }
  for _, c in ipairs(COLUMNS) do head[#head + 1] = c[2] end
  local lines = { head }
  local sum = { "Total", "" }
  for i = 1, #COLUMNS do sum[i + 2] = 0 end
  for _, r in ipairs(rows) do
    local line = { r.module == "" and "(root)" or r.module, r.type }
    for i, c in ipairs(COLUMNS) do
      line[#line + 1] = r[c[1]]
      sum[i + 2] = sum[i + 2] + r[c[1]]
    end
    lines[#lines + 1] = line
  end
  lines[#lines + 1] = sum
  local width = {}
  for _, line in ipairs(lines) do
    for i, v in ipairs(line) do width[i] = math.max(width[i] or 0, #tostring(v)) end
  end
  local out = {}
  local function put(line)
    local cells = {}
    for i, v in ipairs(line) do
      local s = tostring(v)
      cells[i] = i <= 2 and s .. string.rep(" ", width[i] - #s) or string.rep(" ", width[i] - #s) .. s
    end
    out[#out + 1] = table.concat(cells, "  ")
  end
  local rule = {}
  for i = 1, #head do rule[i] = string.rep("-", width[i]) end
  put(head)
  out[#out + 1] = table.concat(rule, "  ")
  for i = 2, #lines - 1 do put(lines[i]) end
  out[#out + 1] = table.concat(rule, "  ")
  put(sum)
  out[#out + 1] = "Memory at the peak: " .. units.bytes_to_string(sum[#sum]) .. " (bytes above)"
  return table.concat(out, "\n") .. "\n"
end

return M
