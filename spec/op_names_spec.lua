-- op_names_spec.lua — the op names a torch user sorts by: profrun's trace of the same programs as
-- torch 1.13's profiler (scripts/tools/torch_op_names.py -> spec/fixtures/torch/op_names.txt),
-- through the CLI as a user runs it.
local json = require "dkjson"
local run = require "spec.support.run"
local op_tree = require "spec.support.op_tree"

-- torch's sections: { {title=, lines={...}}, ... } in the programs' order
local function torch_sections()
  local out, cur = {}, nil
  for line in io.lines("spec/fixtures/torch/op_names.txt") do
    local t = line:match("^## (.+)$")
    if t then
      cur = { title = t, lines = {} }
      out[#out + 1] = cur
    elseif cur then
      cur.lines[#cur.lines + 1] = line
    end
  end
  return out
end

local function decode(path)
  local doc, _, err = json.decode(run.read(path), 1, json.null)
  assert(doc, err)
  return doc
end

-- A trace's cpu ops and user annotations as a tree (the shape op_tree writes), and the events.
local function trace_tree(doc)
  local evs = {}
  for _, e in ipairs(doc.traceEvents) do
    if e.ph == "X" and (e.cat == "cpu_op" or e.cat == "user_annotation") then
      local b = math.floor(e.ts * 1000 + 0.5)
      evs[#evs + 1] = { kind = "op", name = e.name, thread = e.tid, t_begin_ns = b,
                        t_end_ns = b + math.floor(e.dur * 1000 + 0.5), args = e.args }
    end
  end
  return op_tree.lines(evs), evs
end

local function depth(line) return #line:match("^ *") // 2 end

-- Lines at most max_depth deep.
local function upto(lines, max_depth)
  local out = {}
  for _, l in ipairs(lines) do
    if depth(l) <= max_depth then out[#out + 1] = l end
  end
  return out
end

-- Torch's own bookkeeping under an op, which profrun's kernels have no counterpart for: the
-- views and scratch tensors aten makes inside (aten::empty under a non-factory op, the
-- aten::as_strided of a view, aten::ones of upsample's scale table).
local FACTORY = { ["aten::randn"] = true, ["aten::zeros"] = true, ["aten::ones"] = true,
                  ["aten::empty"] = true, ["aten::ones_like"] = true }
local INTERNAL = { ["aten::empty"] = true, ["aten::as_strided"] = true, ["aten::ones"] = true }
local function without_internals(lines)
  local out, parent = {}, nil
  for _, l in ipairs(lines) do
    local name = l:gsub("^ *", "")
    if depth(l) == 0 then parent = name end
    if not (depth(l) == 1 and INTERNAL[name] and not FACTORY[parent]) then out[#out + 1] = l end
  end
  return out
end

describe("op names, as torch 1.13 writes them", function()
  local dir, r, torch
  setup(function()
    dir = run.tmpdir()
    r = run.profrun({ "spec/fixtures/cli/op_names.lua", "--", dir })
    torch = torch_sections()
  end)
  teardown(function() run.rmdir_all(dir) end)

  local function tree_of(i) return trace_tree(decode(string.format("%s/%02d.json", dir, i))) end

  it("runs every program", function()
    assert.equal(0, r.code, r.stderr)
    assert.equal(26, #torch)
  end)

  it("names each call and its children as torch does (conv2d, pools, upsample, linear, relu, factories)", function()
    for i, sec in ipairs(torch) do
      if sec.title ~= "cross_entropy" and sec.title ~= "train step" then
        local mine = tree_of(i)
        assert.same(without_internals(upto(sec.lines, 1)), upto(mine, 1), sec.title)
      end
    end
  end)

  it("names cross_entropy torch's aten::cross_entropy_loss (its fused kernel has no children)", function()
    for i, sec in ipairs(torch) do
      if sec.title == "cross_entropy" then
        assert.same(upto(sec.lines, 0), upto(tree_of(i), 0))
        assert.same({ "aten::cross_entropy_loss" }, upto(tree_of(i), 0))
      end
    end
  end)

  it("shows a training step's autograd rows and optimizer ranges as torch's", function()
    local mine = upto(tree_of(26), 1)
    -- torch 1.13's rows for the same step, but for what profrun computes otherwise: one
    -- cross-entropy node (torch: NllLossBackward0 then LogSoftmaxBackward0), the weight's
    -- gradient inside AddmmBackward0 (torch: a TBackward0 node for aten::t) and the bias's sum
    -- inside the node, one fused SGD update (torch: aten::add_ per parameter), and zero_grad's
    -- set_to_none (torch 2's default: 1.13 zeroes each gradient in place)
    local E, N = "autograd::engine::evaluate_function: ", "torch::autograd::AccumulateGrad"
    assert.same({
      "Optimizer.zero_grad#SGD.zero_grad",
      "aten::linear", "  aten::t", "  aten::addmm",
      "aten::relu", "  aten::clamp_min",
      "aten::linear", "  aten::t", "  aten::addmm",
      "aten::cross_entropy_loss",
      "aten::ones_like", "  aten::empty_like", "  aten::fill_",
      E .. "CrossEntropyBackward0", "  CrossEntropyBackward0",
      E .. "AddmmBackward0", "  AddmmBackward0",
      E .. N, "  " .. N, E .. N, "  " .. N,
      E .. "ReluBackward0", "  ReluBackward0",
      E .. "AddmmBackward0", "  AddmmBackward0",
      E .. N, "  " .. N, E .. N, "  " .. N,
      "Optimizer.step#SGD.step", "  profrun::sgd_step",
    }, mine)
    -- and every row profrun shares with torch is there in torch's, in the same order
    local theirs, k = upto(torch[26].lines, 1), 1
    for _, line in ipairs(mine) do
      if not line:find("CrossEntropy", 1, true) and not line:find("profrun::", 1, true) then
        while k <= #theirs and theirs[k] ~= line do k = k + 1 end
        assert.is_true(k <= #theirs, "torch has no row " .. line .. " in this order")
      end
    end
  end)

  it("gives backward ops Input Dims under record_shapes, the gradient first as torch's", function()
    local _, evs = tree_of(27)
    local dims = {}
    for _, e in ipairs(evs) do dims[e.name] = dims[e.name] or (e.args or {})["Input Dims"] end
    -- torch 1.13: aten::threshold_backward [[3, 16], [3, 16], []] (the threshold is a scalar)
    assert.same({ { 3, 16 }, { 3, 16 } }, dims["aten::threshold_backward"])
    assert.same({ { 3, 4 } }, dims["AddmmBackward0"])
    assert.same({ { 16 }, { 3, 8 }, { 8, 16 } }, dims["aten::addmm"])
  end)

  it("puts the GEMM first when sorted by self time", function()
    -- the table's first row: after the rule under its header
    local after_header = r.stdout:match("Name%s+Self CPU %%[^\n]*\n%-[^\n]*\n(.*)")
    assert.is_not_nil(after_header, r.stdout)
    assert.equal("aten::addmm", after_header:match("^%s*(%S+)"))
  end)
end)
