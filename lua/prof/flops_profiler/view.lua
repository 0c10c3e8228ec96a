-- prof.flops_profiler.view — a profile's module rows, read from the snapshot a slice at a time when asked for.
--
-- A million modules as Lua tables were most of a large run's memory (910 bytes a row, then as
-- much again as garbage when the roofline fields were added). The view holds none: modules[i]
-- builds row i from the slice of columns it falls in (two slices are kept, the one read last and
-- the one before), and a row stays the same table for as long as someone holds it (a weak cache).
-- It reads like the array of rows a profile has (modules[i], #modules, ipairs, pairs), but rows
-- are not stored: a field written into a row is gone once the row is dropped. It is for the
-- reports a session renders before it closes; FlopsProfiler:profile() hands out plain rows
-- (view:rows()).
local M = {}

-- Positions per slice of columns.
M.SLICE = 1024

-- The children list of a row without children: one shared list, never written.
M.EMPTY = setmetatable({}, { __newindex = function()
  error("a profile row's empty children list is shared: make a list of your own to add to", 2)
end })

-- new(S, columns, build) -> modules. columns: what S:module_columns reads for build, at least
-- "id", "parent", "name", "depth" and "children". build(c, k, i, parent, path, children) -> the
-- row at pre-order position i: c the slice's columns, k its place in them, parent the parent's
-- position (nil for a root), path the dotted path, children the children's positions (M.EMPTY
-- for none).
function M.new(S, columns, build)
  local n = S:module_count()
  local slice = M.SLICE
  -- a model registered in pre-order (the flops profiler's) has ids 0, 1, 2, ...: position is id
  -- + 1 and no map is kept; any other order gets one map id -> position
  local pos_of
  for lo = 1, n, slice do
    local ids = S:module_columns({ "id" }, lo, slice).id
    for k = 1, #ids do
      if ids[k] ~= lo + k - 2 then
        pos_of = {}
        break
      end
    end
    if pos_of then break end
  end
  if pos_of then
    for lo = 1, n, slice do
      local ids = S:module_columns({ "id" }, lo, slice).id
      for k = 1, #ids do pos_of[ids[k]] = lo + k - 1 end
    end
  end
  local function position(id)
    if pos_of then return pos_of[id] end
    return id + 1
  end

  local a, a_lo, b, b_lo
  local function slice_at(i)
    local lo = (i - 1) // slice * slice + 1
    if lo ~= a_lo then
      if lo == b_lo then
        a, b, a_lo, b_lo = b, a, b_lo, a_lo
      else
        b, b_lo = a, a_lo
        a, a_lo = S:module_columns(columns, lo, slice), lo
      end
    end
    return a, i - lo + 1
  end

  -- the last path made at each depth: a walk in pre-order finds its parent's there
  local chain_pos, chain_path = {}, {}
  local cache = setmetatable({}, { __mode = "v" })
  local decorate
  local row

  local function path_of(i, parent, name, depth)
    if parent == nil then return "" end
    local up
    if chain_pos[depth - 1] == parent then
      up = chain_path[depth - 1]
    else
      up = row(parent).path
    end
    local path = up == "" and name or up .. "." .. name
    chain_pos[depth], chain_path[depth] = i, path
    return path
  end

  row = function(i)
    local r = cache[i]
    if r ~= nil then return r end
    local c, k = slice_at(i)
    local id, up = c.id[k], c.parent[k]
    local parent = up and position(up) or nil
    local depth = c.depth[k]
    local kids = M.EMPTY
    if c.children[k] > 0 then
      kids = S:module_children(id)
      for j = 1, #kids do kids[j] = position(kids[j]) end
    end
    r = build(c, k, i, parent, path_of(i, parent, c.name[k], depth), kids)
    if decorate ~= nil then decorate(r) end
    cache[i] = r
    return r
  end

  local methods = {
    -- view:decorate(fn): fn(row) runs on every row built from now on (the roofline fields)
    decorate = function(_, fn)
      decorate = fn
      cache = setmetatable({}, { __mode = "v" })
    end,
    -- view:rows(): every row, as a plain array
    rows = function()
      local out = {}
      for i = 1, n do out[i] = row(i) end
      return out
    end,
  }
  return setmetatable({}, {
    __len = function() return n end,
    __index = function(_, key)
      if math.type(key) == "integer" then
        if key >= 1 and key <= n then return row(key) end
        return nil
      end
      return methods[key]
    end,
    __newindex = function(_, key)
      error(string.format("profile.modules: rows are read from the session, not stored (setting %s)",
                          tostring(key)), 2)
    end,
    __pairs = function(t)
      return function(_, i)
        i = i + 1
        if i <= n then return i, row(i) end
        return nil
      end, t, 0
    end,
  })
end

return M
