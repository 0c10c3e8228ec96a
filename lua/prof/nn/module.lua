-- module.lua — nn.Module: PyTorch-style modules as tiny Lua classes, and the per-call profiler hooks.
local core = require "prof.core"

local M = {}

-- State shared by every module call: the session recording calls (also prof.core's recorder),
-- its module ids and the flop rules of its modules (module -> rule, applied by hooks.apply_rule).
-- One per Lua state.
local hooks = { S = nil, ids = nil, rules = nil, apply_rule = nil, returned_nil = nil }
M.hooks = hooks

-- Enter/exit the recorder's module frame (prof.core's recorder is hooks.S whenever it is set).
local enter, exit = core.module_enter, core.module_exit

local Module = {}
Module.__name = "Module"
Module.__index = Module
M.Module = Module

-- Every metatable an instance has (its class's shared one, or its own: see Module:new): an
-- instance is a table with one of them, which no class and no plain table has.
local instance_metas = setmetatable({}, { __mode = "k" })

local function is_module(v)
  return type(v) == "table" and instance_metas[getmetatable(v)] == true
end
M.is_module = is_module

local function is_parameter(v)
  return core.is_tensor(v) and v.is_parameter
end

-- An instance keeps its children and parameters out of its own table, in _slots (key -> value),
-- with their keys in order in _modules and _params, as torch.nn.Module keeps _modules and
-- _parameters: so every assignment of such a key reaches __newindex (Lua calls it only for keys
-- the table lacks), and assignment, replacement and removal take the one path below. Other
-- attributes and buffers stay plain fields. Reads cost no Lua call: the instance's metatable
-- indexes _slots, whose misses go to the class (see Module:new).
--
-- Each of the four is absent until the instance has a first entry for it: a leaf without
-- parameters (a million ReLUs) holds four fields, not eight (152 bytes, not 248). M.slots and
-- M.order read them, an empty shared table standing for an absent one.
local NO_SLOTS, NONE

function M.slots(m)
  return rawget(m, "_slots") or NO_SLOTS
end

-- The keys of m's children ("_modules"), parameters ("_params") or buffers ("_buffers"), in order.
function M.order(m, field)
  return rawget(m, field) or NONE
end
local slots_of, order_of = M.slots, M.order

-- The name a key prints as: list slots are 1-based in Lua and 0-based in PyTorch. The texts of
-- list positions are made once ("0", "1", ...): a million-module walk asked for them anew.
local index_name = setmetatable({}, { __index = function(t, key)
  local s = tostring(key - 1)
  t[key] = s
  return s
end })

local function key_name(key)
  if type(key) == "number" then return index_name[key] end
  return key
end
M.key_name = key_name

local function remove_key(order, key)
  for i, k in ipairs(order) do
    if k == key then
      table.remove(order, i)
      return
    end
  end
end

-- A child keeps the parent and name it was first assigned under (a shared module's first path,
-- as named_modules lists it); leaving that place frees it for the next one.
local function adopt(child, parent, key)
  if rawget(child, "_parent") == nil then
    rawset(child, "_parent", parent)
    rawset(child, "_name", key_name(key))
  end
end

local function release(child, parent, key)
  if rawget(child, "_parent") == parent and rawget(child, "_name") == key_name(key) then
    rawset(child, "_parent", nil)
    rawset(child, "_name", nil)
  end
end

-- The empty list an absent _modules, _params or _buffers reads as (never written: own_order
-- makes the instance its own first).
NONE = setmetatable({}, { __newindex = function() error("nn.Module: the shared empty list was written", 2) end })

-- The slot table an absent _slots reads as (never written: own_slots makes one first).
NO_SLOTS = setmetatable({}, { __newindex = function() error("nn.Module: the shared slot table was written", 2) end })

function M.own_order(self, field)
  local order = rawget(self, field)
  if order == nil then
    order = {}
    rawset(self, field, order)
  end
  return order
end

-- Replacing keeps the key's place in its order; a key new to that order (or re-added after a
-- removal) goes last, as in PyTorch's OrderedDict after `del` and a new assignment.
local function set_slot(self, key, value)
  if value == nil and rawget(self, "_slots") == nil then return end   -- nothing to remove
  local slots = M.own_slots(self)
  local old = rawget(slots, key)
  local old_is_module = is_module(old)
  if old ~= nil and old ~= value then
    if old_is_module then release(old, self, key) end
    if old_is_module ~= is_module(value) or value == nil then
      remove_key(order_of(self, old_is_module and "_modules" or "_params"), key)
      old = nil
    end
  end
  if value ~= nil then
    local child = is_module(value)
    if old == nil then
      local order = M.own_order(self, child and "_modules" or "_params")
      order[#order + 1] = key
    end
    if child then adopt(value, self, key) end
  end
  rawset(slots, key, value)
end

-- Attribute assignment: modules and parameters go to their slots, nil removes one, and anything
-- else under a child's or parameter's name is refused (torch's TypeError); other values are
-- plain fields.
function Module.__newindex(self, key, value)
  local old = rawget(slots_of(self), key)
  if is_module(value) or is_parameter(value) or (old ~= nil and value == nil) then
    set_slot(self, key, value)
  elseif old ~= nil then
    local what = is_module(old) and "child module" or "parameter"
    error(string.format("cannot assign '%s' as %s '%s' (%s or nil expected)",
                        core.is_tensor(value) and "Tensor" or type(value), what, key_name(key),
                        is_module(old) and "nn.Module" or "nn.Parameter"), 2)
  else
    rawset(self, key, value)
  end
end

-- hooks.returned_nil: the module whose call returned last, when it returned nil; an error about
-- a nil value that follows is likely its doing (a forward without `return`), not the next one's.
local function pass(self, ...)
  hooks.returned_nil = (...) == nil and self or nil
  return ...
end

local function leave(self, id, ...)
  exit(id)
  return pass(self, ...)
end

-- A module counted by a flop rule: the rule sees the call's inputs and output, inside the frame.
local function call_ruled(self, id, rule, ...)
  enter(id)
  local inputs = table.pack(...)
  local out = table.pack(self:forward(...))
  hooks.apply_rule(rule, self, id, inputs, out[1])
  exit(id)
  hooks.returned_nil = out[1] == nil and self or nil
  return table.unpack(out, 1, out.n)
end

-- model(x): runs forward inside the module's profiler frame when a session records this module.
-- forward is never a tail call: this frame stays on the Lua stack while it runs, which is how
-- M.innermost finds the module an error happened in, at no cost to calls that succeed.
function Module.__call(self, ...)
  local ids = hooks.ids
  local id = ids and ids[self]
  if id == nil then return pass(self, self:forward(...)) end
  local rule = hooks.rules[self]
  if rule ~= nil then return call_ruled(self, id, rule, ...) end
  enter(id)
  return leave(self, id, self:forward(...))
end

-- The innermost module whose call is on the Lua stack (from a message handler, before the stack
-- unwinds), or nil. Only the INNERMOST_FRAMES nearest the error are looked at: debug.getinfo
-- walks `level` frames, so reading all of a deep stack (a stack overflow) would be quadratic.
M.INNERMOST_FRAMES = 200

function M.innermost(level)
  level = (level or 1) + 1
  for _ = 1, M.INNERMOST_FRAMES do
    local info = debug.getinfo(level, "f")
    if info == nil then return nil end
    if info.func == Module.__call or info.func == call_ruled then
      local _, self = debug.getlocal(level, 1)
      return self
    end
    level = level + 1
  end
  return nil
end

function Module.__tostring(self)
  return self:repr()
end

-- Creates a subclass named like its PyTorch counterpart: nn.Module:extend("LeNet5").
function Module:extend(name)
  assert(type(name) == "string", "extend: the class needs a name")
  local cls = {}
  for k, v in pairs(self) do
    if type(k) == "string" and k:sub(1, 2) == "__" then cls[k] = v end
  end
  cls.__name = name
  -- a class with its own indexer (containers index children by position) passes it on
  cls.__index = self.__make_index and self.__make_index(cls) or cls
  cls.super = self
  return setmetatable(cls, { __index = self, __call = function(c, ...) return c:new(...) end,
                             __tostring = function() return "class " .. name end })
end

-- The metatable of a class's slot tables: a key that is no slot is looked up as the class's
-- __index says (the class, or a container's indexer, which is given the instance: a slot table
-- holds it under OWNER).
local slot_meta = setmetatable({}, { __mode = "k" })
local OWNER = {}

local function slot_meta_of(cls)
  local smt = slot_meta[cls]
  if smt == nil then
    local fallback = cls.__index
    if type(fallback) == "function" then
      smt = { __index = function(slots, k) return fallback(rawget(slots, OWNER), k) end }
    else
      smt = { __index = fallback }
    end
    slot_meta[cls] = smt
  end
  return smt
end

-- An instance's own metatable: the class's metamethods, __index to its slots, and the class
-- behind it (getmetatable(m).key still finds class members). The metamethods are listed once per
-- class, at its first instance (classes are complete before they are instantiated): scanning
-- the class for them per instance was a fifth of building a million-module model.
local class_meta = setmetatable({}, { __mode = "k" })   -- cls -> {__index = cls, names = {...}}

local function instance_meta(cls, slots)
  local behind = class_meta[cls]
  if behind == nil then
    local names = {}
    for k in pairs(cls) do
      if type(k) == "string" and k:sub(1, 2) == "__" then names[#names + 1] = k end
    end
    behind = { __index = cls, names = names }
    class_meta[cls] = behind
  end
  local mt = setmetatable({}, behind)   -- one per class, not per instance (a million modules)
  local names = behind.names
  for i = 1, #names do
    local k = names[i]
    mt[k] = cls[k]
  end
  mt.__index = slots
  return mt
end

-- The metatable instances of cls share while they hold no child and no parameter (a million
-- ReLUs): the class's metamethods, misses to the class's __index. The first slot set gives the
-- instance its own (own_slots); an instance each was 640 bytes of a million-module model.
local shared_meta = setmetatable({}, { __mode = "k" })   -- cls -> metatable
local class_of = setmetatable({}, { __mode = "k" })      -- shared metatable -> cls

local function shared_meta_of(cls)
  local mt = shared_meta[cls]
  if mt == nil then
    mt = instance_meta(cls, nil)
    mt.__index = cls.__index
    shared_meta[cls], class_of[mt] = mt, cls
    instance_metas[mt] = true
  end
  return mt
end

-- The instance's own slot table, made (with its own metatable) on the first slot it holds.
function M.own_slots(self)
  local slots = rawget(self, "_slots")
  if slots ~= nil then return slots end
  local cls = class_of[getmetatable(self)]
  slots = setmetatable({ [OWNER] = self }, slot_meta_of(cls))
  rawset(self, "_slots", slots)
  local mt = instance_meta(cls, slots)
  instance_metas[mt] = true
  setmetatable(self, mt)
  return slots
end

-- Instances: cls(...) calls init(...) on a fresh object.
function Module:new(...)
  local obj = setmetatable({ training = true }, shared_meta_of(self))
  obj:init(...)
  return obj
end

function Module.init() end

function Module:forward()
  error(string.format("%s has no forward()", self.__name), 2)
end

function Module:type_name()
  return self.__name
end

function Module:extra_repr()
  return ""
end

-- Buffers (running statistics, masks) are state that is not a parameter.
function Module:register_buffer(name, tensor)
  if rawget(self, name) == nil then
    local order = M.own_order(self, "_buffers")
    order[#order + 1] = name
  end
  rawset(self, name, tensor)
end

-- Registers tensor as parameter name (nil removes it), also over a plain field of that name.
function Module:register_parameter(name, tensor)
  if tensor ~= nil then tensor:set_flags { parameter = true, requires_grad = true } end
  rawset(self, name, nil)
  set_slot(self, name, tensor)
end

-- Children in registration order as {name, module} pairs (names of list slots are "0", "1", ...).
function Module:named_children()
  local out = {}
  local slots = slots_of(self)
  for _, key in ipairs(order_of(self, "_modules")) do
    out[#out + 1] = { key_name(key), rawget(slots, key) }
  end
  return out
end

function Module:children()
  local out = {}
  for i, pair in ipairs(self:named_children()) do out[i] = pair[2] end
  return out
end

-- Pre-order {path, module} pairs, each module once (the first path wins), as PyTorch does.
function Module:named_modules(prefix)
  local out, seen = {}, {}
  local function walk(m, path)
    if seen[m] then return end
    seen[m] = true
    out[#out + 1] = { path, m }
    for _, pair in ipairs(m:named_children()) do
      walk(pair[2], path == "" and pair[1] or path .. "." .. pair[1])
    end
  end
  walk(self, prefix or "")
  return out
end

-- The same modules in the same order, without their paths: a chain's paths add up to the square
-- of its depth (100,000 nested modules: 10 GB), and train(), eval() and parameters() need none.
-- An explicit stack keeps a deep model off Lua's call stack.
function Module:modules()
  local out, seen, n = {}, {}, 0
  local stack, top = { self }, 1
  while top > 0 do
    local m = stack[top]
    stack[top], top = nil, top - 1
    if not seen[m] then
      seen[m] = true
      n = n + 1
      out[n] = m
      local slots, order = slots_of(m), order_of(m, "_modules")
      for i = #order, 1, -1 do
        top = top + 1
        stack[top] = rawget(slots, order[i])
      end
    end
  end
  return out
end

-- The first of parameters(), or nil: what a model's device and dtype are read from, without
-- listing a million modules (modules() made a list and a set of them, for each of the half
-- dozen calls a profile makes). The walk is modules()' order; only containers are remembered
-- (a shared leaf seen twice costs a look, a shared container would cost its subtree again).
function Module:first_parameter()
  local seen = {}
  local stack, top = { self }, 1
  while top > 0 do
    local m = stack[top]
    stack[top], top = nil, top - 1
    local keys = rawget(m, "_params")   -- raw: absent on most modules of a large model
    if keys ~= nil and #keys > 0 then return rawget(rawget(m, "_slots"), keys[1]) end
    local slots, order = rawget(m, "_slots"), rawget(m, "_modules")
    if order ~= nil and #order > 0 and not seen[m] then
      seen[m] = true
      for i = #order, 1, -1 do
        top = top + 1
        stack[top] = rawget(slots, order[i])
      end
    end
  end
  return nil
end

-- Pre-order {path, tensor} pairs of parameters, each tensor once.
function Module:named_parameters()
  local out, seen = {}, {}
  for _, pair in ipairs(self:named_modules()) do
    local path, m = pair[1], pair[2]
    local slots = slots_of(m)
    for _, key in ipairs(order_of(m, "_params")) do
      local p = rawget(slots, key)
      if not seen[p] then
        seen[p] = true
        out[#out + 1] = { path == "" and key or path .. "." .. key, p }
      end
    end
  end
  return out
end

-- The module's own parameters (not its children's), in registration order.
function Module:parameters_own()
  local out = {}
  local slots = slots_of(self)
  for _, key in ipairs(order_of(self, "_params")) do out[#out + 1] = rawget(slots, key) end
  return out
end

function Module:parameters()
  -- named_parameters' order and sharing, without its paths (see modules)
  local out, seen = {}, {}
  for _, m in ipairs(self:modules()) do
    local slots = slots_of(m)
    for _, key in ipairs(order_of(m, "_params")) do
      local p = rawget(slots, key)
      if not seen[p] then
        seen[p] = true
        out[#out + 1] = p
      end
    end
  end
  return out
end

-- zero_grad(set_to_none = true): drops every parameter's gradient (torch 2's default), or zeroes
-- it in place (a fresh zero tensor where the gradient is strided or not float32), as
-- prof.optim's zero_grad does.
function Module:zero_grad(set_to_none)
  if set_to_none == nil then set_to_none = true end
  for _, p in ipairs(self:parameters()) do
    local g = not set_to_none and p.grad or nil
    if g == nil then
      p.grad = nil
    elseif g.device ~= "cpu" or (g.dtype == "float32" and g:is_contiguous()) then
      g:fill_(0)
    else
      p.grad = core.empty(g.shape, g.dtype, g.device)   -- cpu storage starts zero-filled
    end
  end
end

function Module:named_buffers()
  local out = {}
  for _, pair in ipairs(self:named_modules()) do
    local path, m = pair[1], pair[2]
    for _, key in ipairs(order_of(m, "_buffers")) do
      local b = rawget(m, key)
      if b ~= nil then out[#out + 1] = { path == "" and key or path .. "." .. key, b } end
    end
  end
  return out
end

-- Number of parameter elements, shared parameters counted once.
function Module:num_parameters()
  local n = 0
  for _, p in ipairs(self:parameters()) do n = n + p:numel() end
  return n
end

function Module:apply(fn)
  for _, child in ipairs(self:children()) do child:apply(fn) end
  fn(self)
  return self
end

function Module:train(mode)
  if mode == nil then mode = true end
  for _, m in ipairs(self:modules()) do rawset(m, "training", mode) end
  return self
end

function Module:eval()
  return self:train(false)
end

-- The dotted path through the parents each module was first assigned to ("" for a root).
function Module:path()
  -- collected leaf first and reversed once (inserting at the front is quadratic in depth)
  local parts = {}
  local m = self
  while rawget(m, "_parent") ~= nil do
    parts[#parts + 1] = rawget(m, "_name")
    m = rawget(m, "_parent")
  end
  local n = #parts
  for i = 1, n // 2 do parts[i], parts[n + 1 - i] = parts[n + 1 - i], parts[i] end
  return table.concat(parts, ".")
end

-- PyTorch's Module.__repr__ (what print(model) shows).
local function addindent(s, n)
  local pad = string.rep(" ", n)
  return (s:gsub("\n", "\n" .. pad))
end

function Module:repr(extra_fn)
  local extra = extra_fn and extra_fn(self) or self:extra_repr()
  local lines = {}
  local nextra = 0
  if extra ~= "" then
    for line in (extra .. "\n"):gmatch("(.-)\n") do
      lines[#lines + 1] = line
      nextra = nextra + 1
    end
  end
  local children = self:named_children()
  for _, pair in ipairs(children) do
    lines[#lines + 1] = "(" .. pair[1] .. "): " .. addindent(pair[2]:repr(extra_fn), 2)
  end
  local s = self.__name .. "("
  if #lines > 0 then
    if nextra == 1 and #children == 0 then
      s = s .. lines[1]
    else
      s = s .. "\n  " .. table.concat(lines, "\n  ") .. "\n"
    end
  end
  return s .. ")"
end

return M
