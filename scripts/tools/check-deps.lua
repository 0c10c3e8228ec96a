-- check-deps.lua — the layout's two rules: no object files call each other in a circle, and no
-- file includes a header across a product boundary the design forbids (core/README.md).
-- Usage: lua5.4 scripts/tools/check-deps.lua DIR...        each cycle of objects under DIR, one line
--        lua5.4 scripts/tools/check-deps.lua --includes [ROOT]   each forbidden include under ROOT/core
-- Either exits 1 when it found something. Cycles are read from `nm` (a strongly connected component
-- of "calls a function defined in"), so inline functions and macros in headers are not dependencies.
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

-- {====================== include boundaries ======================}

-- The products, by their folder under core/. Each may include its own headers and, of another
-- product, only those listed: runtime, inject and the CLI see the core through prof.h alone
-- (saturate.h is header-only arithmetic, no link dependency); the binding also sees the runtime's
-- interface.
M.PRODUCTS = { "prof", "runtime", "bind", "inject", "cli" }
M.ALLOWED = {
  prof = {},
  runtime = { ["core/prof/prof.h"] = true, ["core/prof/saturate.h"] = true },
  bind = { ["core/prof/prof.h"] = true, ["core/runtime/runtime.h"] = true, ["core/runtime/peaks.h"] = true },
  inject = { ["core/prof/prof.h"] = true },
  cli = { ["core/prof/prof.h"] = true },
}

-- Outside libraries, by header name: the folders that may include them. Lua stays out of the core
-- and the runtime, CUPTI in the capture, CUDA in the cuda backend.
M.EXTERNAL = {
  { "^lua%.h$", { "core/bind/", "core/cli/" } },
  { "^lauxlib%.h$", { "core/bind/", "core/cli/" } },
  { "^lualib%.h$", { "core/bind/", "core/cli/" } },
  { "^cupti", { "core/prof/capture/" } },
  { "^cuda", { "core/runtime/cuda/" } },
  { "^cublas", { "core/runtime/cuda/" } },
  { "^cblas%.h$", { "core/runtime/" } },
  { "^nvtx3/", { "core/inject/", "core/bind/lnvtx.c" } },
  { "^cJSON%.h$", { "core/prof/" } },
  { "^zlib%.h$", { "core/prof/trace/" } },
}

-- Where a quoted include is looked for after the including file's own folder (the union of the
-- build's -I paths, in the Makefile's order).
M.SEARCH = { "core/prof", "core/runtime", "core" }

local function exists(path)
  local f = io.open(path, "r")
  if f == nil then return false end
  f:close()
  return true
end

local function product_of(path)
  return path:match("^core/([^/]+)/")
end

local function sources(root)
  local list = {}
  local cmd = "cd '" .. root .. "' && find core -type f \\( -name '*.c' -o -name '*.h' -o -name '*.cu' "
    .. "-o -name '*.cuh' \\) | sort"
  for f in io.popen(cmd):lines() do list[#list + 1] = f end
  return list
end

-- Every forbidden or unresolvable include under root/core, as "file:line: message" lines.
function M.include_violations(root)
  root = root or "."
  local out = {}
  for _, file in ipairs(sources(root)) do
    local product = product_of(file)
    local dir = file:match("^(.*)/[^/]*$")
    local n = 0
    for line in io.lines(root .. "/" .. file) do
      n = n + 1
      local quoted = line:match('^%s*#%s*include%s+"([^"]+)"')
      local system = line:match("^%s*#%s*include%s+<([^>]+)>")
      local where = file .. ":" .. n .. ": "
      if quoted then
        local found
        for _, base in ipairs({ dir, table.unpack(M.SEARCH) }) do
          local cand = base .. "/" .. quoted
          if exists(root .. "/" .. cand) then
            found = cand
            break
          end
        end
        if found == nil then
          out[#out + 1] = where .. '"' .. quoted .. '" is not in the tree'
        else
          -- "a/../b" and "./x" would hide a crossing: the owner is the normalised path's
          while found:find("/[^/]+/%.%./") do found = found:gsub("/[^/]+/%.%./", "/", 1) end
          found = found:gsub("/%./", "/")
          local owner = product_of(found)
          if file == "core/prof/prof.h" then
            out[#out + 1] = where .. "prof.h, the public header, includes " .. found
          elseif owner ~= product and not (M.ALLOWED[product] or {})[found] then
            out[#out + 1] = where .. product .. " includes " .. found .. " (" .. tostring(owner)
              .. "'s own header)"
          end
        end
      elseif system then
        for _, rule in ipairs(M.EXTERNAL) do
          if system:match(rule[1]) then
            local ok = false
            for _, prefix in ipairs(rule[2]) do
              if file:sub(1, #prefix) == prefix then ok = true end
            end
            if not ok then out[#out + 1] = where .. "<" .. system .. "> outside " .. table.concat(rule[2], ", ") end
          end
        end
      end
    end
  end
  return out
end

if arg ~= nil and arg[0] ~= nil and arg[0]:match("check%-deps%.lua$") then
  if arg[1] == "--includes" then
    local bad = M.include_violations(arg[2])
    for _, l in ipairs(bad) do print(l) end
    if #bad > 0 then print(#bad .. " include(s) across a product boundary (scripts/tools/check-deps.lua)") end
    os.exit(#bad == 0 and 0 or 1)
  end
  local cycles = M.cycles(M.graph({ ... }))
  for _, c in ipairs(cycles) do print("cycle: " .. table.concat(c, " ")) end
  os.exit(#cycles == 0 and 0 or 1)
end

return M
