-- torch_cases.lua — runs PyTorch-recorded cases (spec/fixtures/ops/*.lua) against profrun's cpu ops.
local T = require "prof.tensor"
local luassert = require "luassert"
local gc = require "spec.support.gradcheck"

local M = {}

-- The case's inputs as profrun tensors (float inputs with a recorded gradient require grad).
function M.inputs(c)
  local xs = {}
  for i, item in ipairs(c.inputs) do
    if item.value ~= nil then
      xs[i] = item.value
    elseif item.dtype == "int64" then
      xs[i] = (#item.shape == 0) and T.tensor(item.values[1], { dtype = "int64", device = "cpu" })
        or T.tensor(item.values, { dtype = "int64", device = "cpu" }):reshape(item.shape)
    else
      xs[i] = gc.tensor(item.values, item.shape)
      if item.grad ~= nil then xs[i].requires_grad = true end
    end
  end
  return xs
end

--[[
Runs case c through fn(inputs, args) and returns the worst relative error of the output and of
every recorded gradient (of sum(output * w)), and a description of where it was.
]]
function M.run(c, fn)
  local xs = M.inputs(c)
  local out = fn(xs, c.args or {})
  local worst, where = gc.max_rel(out:tolist(), c.out.values), "output"
  local shape = out.shape
  for i, d in ipairs(c.out.shape) do
    if shape[i] ~= d then return math.huge, "output shape" end
  end
  local wants = false
  for _, item in ipairs(c.inputs) do wants = wants or item.grad ~= nil end
  if wants then
    T.sum(out * gc.tensor(c.w, c.out.shape)):backward()
    for i, item in ipairs(c.inputs) do
      if item.grad ~= nil then
        local g = xs[i].grad
        if g == nil then return math.huge, "no gradient for input " .. i end
        local e = gc.max_rel(g:tolist(), item.grad)
        if e > worst then worst, where = e, "gradient of input " .. i end
      end
    end
  end
  return worst, where
end

-- Asserts that the worst relative error err (where, from M.run) is within 1e-4.
function M.assert_close(err, where)
  luassert.is_true(err < 1e-4, string.format("%s off by %.3g relative", where, err))
end

-- Asserts that case c run through fn matches PyTorch's values and gradients within 1e-4.
function M.check(c, fn) M.assert_close(M.run(c, fn)) end

--[[
The tests of the fixture's cases that ops has a runner for, as a list of {name, function} for
`it`. ops is a table of runners by c.op or a function(c) returning one (nil skips the case);
label(c) names a case in the test name (c.name unless given).
]]
function M.tests(fixture, ops, label)
  local list = {}
  for i, c in ipairs(fixture) do
    local fn
    if type(ops) == "function" then fn = ops(c) else fn = ops[c.op] end
    if fn then
      local name = string.format("%d %s: values and gradients within 1e-4", i,
                                 label and label(c) or c.name)
      list[#list + 1] = { name, function() M.check(c, fn) end }
    end
  end
  return list
end

return M
