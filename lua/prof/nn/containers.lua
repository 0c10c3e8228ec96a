-- containers.lua — nn.Sequential, nn.ModuleList and nn.ModuleDict, indexed from 1, printed from 0.
local module = require "prof.nn.module"

local Module, is_module, slots_of = module.Module, module.is_module, module.slots

-- Children sit in the module's slots under their key (an integer slot k prints as "(k-1)", as
-- Module names it) and in _modules, the registration order.
local function order_of(self)
  return module.order(self, "_modules")
end

local function nth(self, k)
  local order = order_of(self)
  if k < 0 then k = #order + k + 1 end
  local key = order[k]
  if key == nil then return nil end
  return rawget(slots_of(self), key)
end

-- Integer keys that are not slots (negative ones, or positions of named children) resolve to
-- the k-th child, as PyTorch's seq[-1] and seq[0] of an OrderedDict-built Sequential do.
-- Out of range gives nil, so ipairs(seq) stops after the last child.
local function indexer(cls)
  return function(self, k)
    if math.type(k) == "integer" then return nth(self, k) end
    return cls[k]
  end
end

local function count(self)
  return #order_of(self)
end

-- add_module's checks: a module, and a name that neither has a dot nor hides an attribute.
-- what (and its number i) names the value in a message: made only for one.
local function add(self, key, m, what, i)
  local who = self.__name
  if not is_module(m) then
    if i ~= nil then what = what .. " " .. i end
    error(string.format("%s: %s is not a Module (got %s)", who, what, type(m)), 4)
  end
  if type(key) == "string" then
    if key == "" or key:find(".", 1, true) then
      error(string.format("%s: module name can't be empty or contain \".\", got: '%s'", who, key),
            4)
    end
    local cur = rawget(slots_of(self), key) or rawget(self, key)
    if (cur ~= nil and not is_module(cur)) or (cur == nil and getmetatable(self)[key] ~= nil) then
      error(string.format("%s: attribute '%s' already exists", who, key), 4)
    end
  end
  self[key] = m
end

local function append(self, m)
  add(self, count(self) + 1, m, "the appended value")
  return self
end

-- insert(pos, m) as table.insert: pos in 1..n+1 (negative counts from the end, -1 = before the
-- last one); later children move up a slot and are renamed, as PyTorch renames them.
local function insert(self, pos, m)
  local order = order_of(self)
  local n = #order
  for _, key in ipairs(order) do
    if math.type(key) ~= "integer" then
      error(self.__name .. ": insert needs a container without named children", 2)
    end
  end
  if math.type(pos) ~= "integer" or pos < -n or pos > n + 1 or pos == 0 then
    error(string.format("%s: index %s out of range for %d modules", self.__name, tostring(pos),
                        n), 2)
  end
  if not is_module(m) then
    error(string.format("%s: the inserted value is not a Module (got %s)", self.__name, type(m)),
          2)
  end
  if pos < 0 then pos = n + pos + 1 end
  local slots = module.own_slots(self)
  order = module.own_order(self, "_modules")
  for j = n, pos, -1 do
    local child = rawget(slots, j)
    rawset(slots, j + 1, child)
    if rawget(child, "_parent") == self then rawset(child, "_name", tostring(j)) end
  end
  order[n + 1] = n + 1
  if rawget(m, "_parent") == nil then
    rawset(m, "_parent", self)
    rawset(m, "_name", tostring(pos - 1))
  end
  rawset(slots, pos, m)
  return self
end

-- Modules of a list, or the children of another container, in order.
local function modules_of(v, who)
  if is_module(v) then return v:children() end
  if type(v) ~= "table" then
    error(string.format("%s: expected a list of modules, got %s", who, type(v)), 4)
  end
  return v
end

-- list:extend(modules) appends; called on a class, it is Module:extend (a subclass named list).
local function extend(self, list)
  if not is_module(self) then return Module.extend(self, list) end
  for _, m in ipairs(modules_of(list, self.__name)) do append(self, m) end
  return self
end

---------------------------------------------------------------------------------------------------
-- nn.Sequential(a, b, ...), nn.Sequential{a, b, ...} or nn.Sequential{{"conv", a}, {"act", b}}
-- (PyTorch's OrderedDict form: named children). forward chains the children.
local Sequential = Module:extend("Sequential")
Sequential.__make_index = indexer
Sequential.__index = indexer(Sequential)
Sequential.__len = count

function Sequential:init(...)
  local n, first = select("#", ...), ...
  if n == 1 and type(first) == "table" and not is_module(first) then
    if #first == 0 and next(first) ~= nil then
      error("Sequential: a table of named modules has no order; pass a list of {name, module} "
            .. "pairs", 3)
    end
    for i, item in ipairs(first) do
      if type(item) == "table" and not is_module(item) then
        if type(item[1]) ~= "string" then
          error(string.format("Sequential: item %d should be a module or a {name, module} pair",
                              i), 3)
        end
        add(self, item[1], item[2], "item", i)
      else
        add(self, count(self) + 1, item, "item", i)
      end
    end
    return
  end
  -- packed once: select(i, ...) copies the arguments from i on, quadratic in their number
  local items = { ... }
  for i = 1, n do add(self, i, items[i], "argument", i) end
end

-- A child whose forward returns nothing would be blamed on the next one (its input is nil): the
-- child that returned nil is named instead.
local function returned_nil(self, child, next_child)
  local errors = require "prof.util.errors"   -- lazy: prof.errors needs the nn classes loaded
  local function name(m)
    local p = errors.module_path(m)
    return p == "" and "the model (" .. m.__name .. ")" or string.format("'%s' (%s)", p, m.__name)
  end
  error(string.format("in module %s: forward returned nil, the input of the next module %s in "
    .. "%s; return the output tensor", name(child), name(next_child), name(self)), 0)
end

function Sequential:forward(x)
  local slots, order = slots_of(self), order_of(self)
  for i, key in ipairs(order) do
    local child = rawget(slots, key)
    x = child(x)
    if x == nil and order[i + 1] ~= nil then returned_nil(self, child, rawget(slots, order[i + 1])) end
  end
  return x
end

Sequential.append = append
Sequential.insert = insert
Sequential.extend = extend

---------------------------------------------------------------------------------------------------
-- nn.ModuleList(list): holds modules (registered, printed, counted) without calling them.
local ModuleList = Module:extend("ModuleList")
ModuleList.__make_index = indexer
ModuleList.__index = indexer(ModuleList)
ModuleList.__len = count

function ModuleList:init(list)
  if list ~= nil then extend(self, list) end
end

-- PyTorch's message for a container that has no forward.
local function no_forward(self)
  error(string.format('Module [%s] is missing the required "forward" function', self.__name), 3)
end

ModuleList.forward = no_forward
ModuleList.append = append
ModuleList.insert = insert
ModuleList.extend = extend

---------------------------------------------------------------------------------------------------
-- nn.ModuleDict(modules): modules by name. modules is a list of {name, module} pairs (ordered),
-- another ModuleDict, or a table name -> module (Lua tables have no order: sorted by name).
local ModuleDict = Module:extend("ModuleDict")
ModuleDict.__len = count

function ModuleDict:update(modules)
  if is_module(modules) then
    for _, pair in ipairs(modules:named_children()) do add(self, pair[1], pair[2], pair[1]) end
    return self
  end
  if type(modules) ~= "table" then
    error(string.format("ModuleDict.update: expected a table of modules, got %s", type(modules)),
          2)
  end
  if #modules > 0 then
    for i, pair in ipairs(modules) do
      if type(pair) ~= "table" or is_module(pair) or type(pair[1]) ~= "string" then
        error(string.format("ModuleDict.update: item %d should be a {name, module} pair", i), 2)
      end
      add(self, pair[1], pair[2], pair[1])
    end
    return self
  end
  local names = {}
  for k in pairs(modules) do
    if type(k) ~= "string" then
      error("ModuleDict.update: keys must be strings, got " .. type(k), 2)
    end
    names[#names + 1] = k
  end
  table.sort(names)
  for _, k in ipairs(names) do add(self, k, modules[k], k) end
  return self
end

function ModuleDict:init(modules)
  if modules ~= nil then self:update(modules) end
end

ModuleDict.forward = no_forward

-- Ordered views for ipairs: items() as {name, module} pairs, keys(), values().
function ModuleDict:items()
  return self:named_children()
end

function ModuleDict:keys()
  local out = {}
  for i, pair in ipairs(self:named_children()) do out[i] = pair[1] end
  return out
end

function ModuleDict:values()
  return self:children()
end

function ModuleDict:contains(name)
  return is_module(rawget(slots_of(self), name))
end

return { Sequential = Sequential, ModuleList = ModuleList, ModuleDict = ModuleDict }
