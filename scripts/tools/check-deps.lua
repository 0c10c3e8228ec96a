-- check-deps.lua — which object files call each other in a circle (DESIGN: files depend one way).
-- Usage: lua5.4 scripts/tools/check-deps.lua DIR...  Prints each cycle as one line of sources
-- (a strongly connected component of "calls a function defined in"), exits 1 when there is one.
-- Read from `nm`, so inline functions and macros in headers are not dependencies.
local M = {}

local function objects(dirs)
  local list = {}
  for _, dir in ipairs(dirs) do
    for f in io.popen("find '" .. dir .. "' -name '*.o' | sort"):lines() do list[#list + 1] = f end
  end
  return list
end

-- file -> set of files whose symbols it uses
function M.graph(dirs)
  local defined, uses = {}, {}
  local files = objects(dirs)
  for _, o in ipairs(files) do
    uses[o] = {}
    for line in io.popen("nm '" .. o .. "'"):lines() do
      local kind, sym = line:match("(%a)%s+(%S+)$")
      if kind == "U" then uses[o][#uses[o] + 1] = sym
      elseif kind and kind:match("[TDBR]") then defined[sym] = o end
    end
  end
  local edges = {}
  for o, syms in pairs(uses) do
    edges[o] = {}
    for _, s in ipairs(syms) do
      local d = defined[s]
      if d ~= nil and d ~= o then edges[o][d] = true end
    end
  end
  return files, edges
end

-- Tarjan's strongly connected components; returns those of more than one file.
function M.cycles(files, edges)
  local index, low, on, stack, n, out = {}, {}, {}, {}, 0, {}
  local function visit(v)
    n = n + 1
    index[v], low[v] = n, n
    stack[#stack + 1], on[v] = v, true
    for w in pairs(edges[v]) do
      if index[w] == nil then
        visit(w)
        low[v] = math.min(low[v], low[w])
      elseif on[w] then
        low[v] = math.min(low[v], index[w])
      end
    end
    if low[v] == index[v] then
      local c = {}
      repeat
        local w = table.remove(stack)
        on[w] = nil
        c[#c + 1] = w
      until w == v
      if #c > 1 then
        table.sort(c)
        out[#out + 1] = c
      end
    end
  end
  for _, f in ipairs(files) do
    if index[f] == nil then visit(f) end
  end
  return out
end

if arg ~= nil and arg[0] ~= nil and arg[0]:match("check%-deps%.lua$") then
  local cycles = M.cycles(M.graph({ ... }))
  for _, c in ipairs(cycles) do print("cycle: " .. table.concat(c, " ")) end
  os.exit(#cycles == 0 and 0 or 1)
end

return M
