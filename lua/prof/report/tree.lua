-- prof.report.tree: module-tree walks shared by the report scripts (shown tree, paths, durations).
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

return M
