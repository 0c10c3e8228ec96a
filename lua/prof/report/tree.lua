-- prof.report.tree: module-tree walks shared by the report scripts (shown tree, depth aggregation, PyTorch repr).
local M = {}

-- nil-aware sum: an unknown value (meta device, never timed) does not poison a known one.
-- Integer counts stop at 2^63 - 1 (as the core's do) instead of wrapping negative.
local function add(a, b)
  if a == nil then return b end
  if b == nil then return a end
  if math.type(a) == "integer" and math.type(b) == "integer" then
    if b > 0 and a > math.maxinteger - b then return math.maxinteger end
    if b < 0 and a < math.mininteger - b then return math.mininteger end
  end
  return a + b
end
M.add = add

function M.root(profile)
  return profile.modules[1]
end

-- The children a report shows: a hidden (ignored) child is replaced by its own shown children.
function M.children(profile, m)
  local out = {}
  local mods = profile.modules
  local function visit(list)
    for _, c in ipairs(list or {}) do
      local child = mods[c]
      if child.hidden then visit(child.children) else out[#out + 1] = child end
    end
  end
  visit(m.children)
  return out
end

-- Pre-order list of shown modules: { {module = m, parent = shown ancestor or nil, id = 0-based} }.
-- The root is always shown.
function M.shown(profile)
  local list = {}
  local function visit(m, parent)
    local rec = { module = m, parent = parent, id = #list }
    list[#list + 1] = rec
    for _, c in ipairs(M.children(profile, m)) do visit(c, rec) end
  end
  if profile.modules[1] then visit(profile.modules[1], nil) end
  return list
end

-- The dotted attribute path ("layer1.0.conv1", root ""), from m.path or from the names above it.
function M.path(profile, m)
  if m.path then return m.path end
  local parts = {}
  while m and m.parent do
    table.insert(parts, 1, m.name)
    m = profile.modules[m.parent]
  end
  return table.concat(parts, ".")
end

-- DeepSpeed's get_module_duration: a module's own latency, or, when that is 0 (a ModuleList that
-- is never called, an ignored module without hooks), the sum over its children. nil = unknown.
-- Durations of every module, computed once per profile from the leaves up (children follow
-- their parent in profile.modules): the recursion below per module is quadratic in depth.
local durations_of = setmetatable({}, { __mode = "k" })

local function durations(profile)
  local mods = profile.modules
  local d = durations_of[mods]
  if d ~= nil and d.n == #mods then return d end
  d = { n = #mods }
  for i = #mods, 1, -1 do
    local m = mods[i]
    local v = m.fwd_latency_s
    if (v == nil or v == 0) and m.children and #m.children > 0 then
      local sum
      for _, c in ipairs(m.children) do sum = add(sum, d[c]) end
      if sum ~= nil then v = add(v, sum) end
    end
    d[i] = v
  end
  durations_of[mods] = d
  return d
end

function M.duration(profile, m)
  if m.index ~= nil and profile.modules[m.index] == m then return durations(profile)[m.index] end
  local d = m.fwd_latency_s
  if (d == nil or d == 0) and m.children and #m.children > 0 then
    local sum
    for _, c in ipairs(m.children) do sum = add(sum, M.duration(profile, profile.modules[c])) end
    if sum ~= nil then d = add(d, sum) end
  end
  return d
end

-- DeepSpeed's walk_module over the shown tree: per depth, modules grouped by class name in
-- first-encounter order with summed params, MACs and latency.
-- Returns levels[d + 1] = { {type =, params =, macs =, latency =}, ... }.
function M.aggregate(profile)
  local levels, index = {}, {}
  local function walk(m, depth)
    local level = levels[depth + 1]
    if not level then
      level = {}
      levels[depth + 1], index[depth + 1] = level, {}
    end
    local e = index[depth + 1][m.type]
    if not e then
      e = { type = m.type }
      level[#level + 1] = e
      index[depth + 1][m.type] = e
    end
    e.macs = add(e.macs, m.macs)
    e.params = add(e.params, m.params)
    e.latency = add(e.latency, M.duration(profile, m))
    for _, c in ipairs(M.children(profile, m)) do walk(c, depth + 1) end
  end
  if profile.modules[1] then walk(profile.modules[1], 0) end
  return levels
end

-- The first k entries by descending entries[i][field], stable like Python's sorted(reverse=True):
-- ties (and unknown values, which sort last) keep first-encounter order.
function M.top(entries, field, k)
  local order = {}
  for i, e in ipairs(entries) do order[i] = { e = e, i = i } end
  table.sort(order, function(a, b)
    local x, y = a.e[field], b.e[field]
    if x ~= nil and y ~= nil and x ~= y then return x > y end
    if (x == nil) ~= (y == nil) then return x ~= nil end
    return a.i < b.i
  end)
  local out = {}
  for i = 1, math.min(k, #order) do out[i] = order[i].e end
  return out
end

-- torch.nn.modules.module._addindent: indent every line but the first.
function M.addindent(s, n)
  if not s:find("\n", 1, true) then return s end
  local pad = string.rep(" ", n)
  return (s:gsub("\n", "\n" .. pad))
end

local function split_lines(s)
  local out = {}
  for line in (s .. "\n"):gmatch("(.-)\n") do out[#out + 1] = line end
  return out
end

-- PyTorch's Module.__repr__ over the shown tree, with extra_repr(m) supplying each module's text.
-- A module with fold = true prints runs of identical consecutive children once, as torch 2.x's
-- ModuleList does: "(0-23): 24 x BertLayer(each: ...)" (keeping its own extra_repr line, unlike
-- torch). "each:" says the numbers are one layer's, not the run's total. Lines are written once
-- at their final indentation (torch's _addindent re-indents each child's whole text at every
-- level: cubic in depth for a chain).
local pads = {}
local function pad(n)
  local p = pads[n]
  if p == nil then
    p = string.rep(" ", n)
    pads[n] = p
  end
  return p
end

-- Appends m's text to out: its first line after first (indentation and head), the rest at
-- indentation ind (its closing parenthesis) and ind + 2 (its extra lines and children); each:
-- m stands for a run of identical children.
local function emit(profile, extra_repr, m, out, first, ind, each)
  local extra = extra_repr(m) or ""
  local extra_lines = extra ~= "" and split_lines(extra) or {}
  local kids = M.children(profile, m)
  if #kids == 0 and #extra_lines <= 1 then
    out[#out + 1] = first .. m.type .. "(" .. (each and "each: " or "") .. (extra_lines[1] or "") .. ")"
    return
  end
  out[#out + 1] = first .. m.type .. "(" .. (each and "each:" or "")
  local inner = pad(ind + 2)
  for _, l in ipairs(extra_lines) do out[#out + 1] = inner .. l end
  local texts
  if m.fold then   -- runs are found on the children's own texts, at no indentation
    texts = {}
    for i, c in ipairs(kids) do
      local t = {}
      emit(profile, extra_repr, c, t, "", 0)
      texts[i] = table.concat(t, "\n")
    end
  end
  local i = 1
  while i <= #kids do
    local j = i
    if texts then
      while j < #kids and texts[j + 1] == texts[i] do j = j + 1 end
    end
    local head
    if j > i then
      head = string.format("(%s-%s): %d x ", kids[i].name, kids[j].name, j - i + 1)
    else
      head = "(" .. kids[i].name .. "): "
    end
    emit(profile, extra_repr, kids[i], out, inner .. head, ind + 2, j > i)
    i = j + 1
  end
  out[#out + 1] = pad(ind) .. ")"
end

function M.repr(profile, extra_repr, m)
  local out = {}
  emit(profile, extra_repr, m or profile.modules[1], out, "", 0)
  return table.concat(out, "\n")
end

return M
