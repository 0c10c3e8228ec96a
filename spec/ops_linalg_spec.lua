-- ops_linalg_spec.lua — matmul, mm, bmm, addmm, baddbmm and einsum on the meta device: shapes,
-- dtypes, error messages and the counts each records. Shapes are cross-checked with torch 1.13
-- (quoted); counts are derived by hand in the comments.
local core = require "prof.core"

local recorder = require "spec.support.ops_recorder"

local E, count = recorder.E, recorder.count

describe("matmul", function()
  it("follows torch.matmul's shapes", function()
    -- torch: matmul(empty(2,1,4,8), empty(3,8,5)).shape == [2, 3, 4, 5]
    assert.same({2, 3, 4, 5}, core.matmul(E{2, 1, 4, 8}, E{3, 8, 5}).shape)
    -- torch: [8] @ [8] -> [] (a dot product)
    assert.same({}, core.matmul(E{8}, E{8}).shape)
    -- torch: [3, 8] @ [8] -> [3]
    assert.same({3}, core.matmul(E{3, 8}, E{8}).shape)
    -- torch: [8] @ [2, 8, 5] -> [2, 5]
    assert.same({2, 5}, core.matmul(E{8}, E{2, 8, 5}).shape)
    assert.same({2, 3, 5}, core.matmul(E{2, 3, 4}, E{4, 5}).shape)
  end)

  it("keeps the operands' dtype", function()
    local y = core.matmul(E({2, 3}, "bfloat16"), E({3, 4}, "bfloat16"))
    assert.equal("bfloat16", y.dtype)
    assert.equal("meta", y.device)
  end)

  it("names the op and both shapes in its errors", function()
    assert.has_error(function() core.matmul(E{4, 10}, E{20, 30}) end,
      "matmul: shapes [4, 10] and [20, 30] cannot be multiplied (10 != 20)")
    -- torch: "The size of tensor a (2) must match the size of tensor b (5) at non-singleton dim 0"
    assert.has_error(function() core.matmul(E{2, 3, 4}, E{5, 4, 6}) end,
      "matmul: batch dimensions of [2, 3, 4] and [5, 4, 6] cannot be broadcast together")
    assert.has_error(function() core.matmul(E{}, E{3}) end,
      "matmul: both arguments need at least 1 dimension, got [] and [3]")
    assert.has_error(function() core.matmul(E{2, 3}, E({3, 4}, "float64")) end,
      "matmul: expected all tensors of the same dtype, got float32 and float64")
    assert.has_error(function() core.matmul(E({2, 3}, "int64"), E({3, 4}, "int64")) end,
      "matmul: expected a floating-point input, got int64")
    assert.has_error(function() core.matmul(E{2, 3}, E({3, 4}, nil, "cpu")) end,
      "matmul: expected all tensors on the same device, got meta and cpu")
  end)

  it("records MACs, FLOPs and bytes", function()
    -- [2,3,4] x [4,5]: 2·3·4·5 = 120 MACs, 240 flops; reads (24 + 20)·4 = 176 B, writes 30·4
    local t = count(function() core.matmul(E{2, 3, 4}, E{4, 5}) end)
    assert.same({1, 120, 240, 176, 120}, {t.calls, t.macs, t.flops, t.bytes_read, t.bytes_written})
    -- [2,1,4,8] x [3,8,5]: batch 2·3, 6·4·8·5 = 960 MACs
    assert.equal(960, count(function() core.matmul(E{2, 1, 4, 8}, E{3, 8, 5}) end).macs)
    -- [8] x [8]: 8 MACs exact; DeepSpeed's prod(a)·b[-1] = 8·8 = 64
    assert.equal(8, count(function() core.matmul(E{8}, E{8}) end).macs)
    local ds = count(function() core.matmul(E{8}, E{8}) end, "deepspeed")
    assert.same({64, 128}, {ds.macs, ds.flops})
    -- DeepSpeed on [2,1,4,8] x [3,8,5]: prod(a) = 64, · 5 = 320 (it misses b's batch)
    assert.equal(320, count(function() core.matmul(E{2, 1, 4, 8}, E{3, 8, 5}) end,
      "deepspeed").macs)
  end)
end)

describe("mm and bmm", function()
  it("compute shapes", function()
    assert.same({3, 5}, core.mm(E{3, 4}, E{4, 5}).shape)
    assert.same({2, 3, 5}, core.bmm(E{2, 3, 4}, E{2, 4, 5}).shape)
  end)

  it("reject what torch rejects", function()
    -- torch: "self must be a matrix"
    assert.has_error(function() core.mm(E{2, 3, 5}, E{3, 5, 4}) end,
      "mm: expected 2-D tensors, got [2, 3, 5] and [3, 5, 4]")
    assert.has_error(function() core.mm(E{4, 10}, E{20, 30}) end,
      "mm: shapes [4, 10] and [20, 30] cannot be multiplied (10 != 20)")
    -- torch: "Expected size for first two dimensions of batch2 tensor to be: [2, 5] but got:
    -- [3, 5]."
    assert.has_error(function() core.bmm(E{2, 3, 5}, E{3, 5, 4}) end,
      "bmm: batch sizes of [2, 3, 5] and [3, 5, 4] differ (2 != 3)")
    assert.has_error(function() core.bmm(E{2, 3, 5}, E{2, 4, 4}) end,
      "bmm: shapes [2, 3, 5] and [2, 4, 4] cannot be multiplied (5 != 4)")
    assert.has_error(function() core.bmm(E{3, 5}, E{5, 4}) end,
      "bmm: expected 3-D tensors, got [3, 5] and [5, 4]")
  end)

  it("record their MACs", function()
    -- mm [3,4] x [4,5]: 3·4·5 = 60 MACs, 120 flops
    local t = count(function() core.mm(E{3, 4}, E{4, 5}) end)
    assert.same({1, 60, 120}, {t.calls, t.macs, t.flops})
    -- bmm [2,3,4] x [2,4,5]: 2·3·4·5 = 120 MACs, 240 flops
    t = count(function() core.bmm(E{2, 3, 4}, E{2, 4, 5}) end)
    assert.same({120, 240}, {t.macs, t.flops})
  end)
end)

describe("addmm and baddbmm", function()
  it("broadcast the added term to the product", function()
    -- torch: addmm(empty(4), empty(3,5), empty(5,4)).shape == [3, 4]
    assert.same({3, 4}, core.addmm(E{4}, E{3, 5}, E{5, 4}).shape)
    assert.same({3, 4}, core.addmm(E{3, 4}, E{3, 5}, E{5, 4}, {beta = 0.5, alpha = 2}).shape)
    -- torch: baddbmm(empty(1,3,4), empty(2,3,5), empty(2,5,4)).shape == [2, 3, 4]
    assert.same({2, 3, 4}, core.baddbmm(E{1, 3, 4}, E{2, 3, 5}, E{2, 5, 4}).shape)
  end)

  it("reject an added term that does not broadcast", function()
    -- torch: "The expanded size of the tensor (3) must match the existing size (2) ..."
    assert.has_error(function() core.addmm(E{2, 4}, E{3, 5}, E{5, 4}) end,
      "addmm: input [2, 4] does not broadcast to the product's shape [3, 4]")
    assert.has_error(function() core.addmm(E{4}, E{3, 5}, E{6, 4}) end,
      "addmm: shapes [3, 5] and [6, 4] cannot be multiplied (5 != 6)")
    assert.has_error(function() core.baddbmm(E{3, 3, 4}, E{2, 3, 5}, E{2, 5, 4}) end,
      "baddbmm: input [3, 3, 4] does not broadcast to the product's shape [2, 3, 4]")
  end)

  it("count the add per output element (exact) or per added element (DeepSpeed)", function()
    -- addmm c[5], [3,4] x [4,5]: 60 MACs; exact 120 + 15 output adds = 135; DS 120 + numel(c) 5
    local t = count(function() core.addmm(E{5}, E{3, 4}, E{4, 5}) end)
    assert.same({60, 135}, {t.macs, t.flops})
    t = count(function() core.addmm(E{5}, E{3, 4}, E{4, 5}) end, "deepspeed")
    assert.same({60, 125}, {t.macs, t.flops})
    -- baddbmm c[3,5], [2,3,4] x [2,4,5]: 120 MACs; exact 240 + 30 = 270; DS 240 + 15 = 255
    t = count(function() core.baddbmm(E{3, 5}, E{2, 3, 4}, E{2, 4, 5}) end)
    assert.same({120, 270}, {t.macs, t.flops})
    t = count(function() core.baddbmm(E{3, 5}, E{2, 3, 4}, E{2, 4, 5}) end, "deepspeed")
    assert.same({120, 255}, {t.macs, t.flops})
  end)
end)

describe("einsum", function()
  it("computes explicit and implicit output shapes as torch.einsum", function()
    assert.same({2, 4}, core.einsum("ij,jk->ik", E{2, 3}, E{3, 4}).shape)
    -- implicit: the subscripts seen once, sorted with upper case first.
    -- torch: einsum("ba,Bc", empty(2,3), empty(3,4)).shape == [3, 3, 2, 4]
    assert.same({3, 3, 2, 4}, core.einsum("ba,Bc", E{2, 3}, E{3, 4}).shape)
    -- torch: "ij,jk" -> [2, 4]; "i,i" -> []; "i,j->ij" -> [3, 4]
    assert.same({2, 4}, core.einsum("ij,jk", E{2, 3}, E{3, 4}).shape)
    assert.same({}, core.einsum("i,i", E{3}, E{3}).shape)
    assert.same({3, 4}, core.einsum("i,j->ij", E{3}, E{4}).shape)
    -- ellipses: torch "...ij,jk->ik" [5,2,3],[3,4] -> [2, 4] (the ellipsis is summed away);
    -- "ij...,jk...->ik..." [2,3,5],[3,4,1] -> [2, 4, 5]; "...ij,jk" [5,2,3],[3,4] -> [5, 2, 4]
    assert.same({2, 4}, core.einsum("...ij,jk->ik", E{5, 2, 3}, E{3, 4}).shape)
    assert.same({2, 4, 5}, core.einsum("ij...,jk...->ik...", E{2, 3, 5}, E{3, 4, 1}).shape)
    assert.same({5, 2, 4}, core.einsum("...ij,jk", E{5, 2, 3}, E{3, 4}).shape)
    -- a size-1 subscript broadcasts: torch "ij,jk->ik" [2,1],[3,4] -> [2, 4]
    assert.same({2, 4}, core.einsum("ij,jk->ik", E{2, 1}, E{3, 4}).shape)
    -- spaces are ignored; torch "ij,jk-> i k" -> [2, 4]
    assert.same({2, 4}, core.einsum("ij,jk-> i k", E{2, 3}, E{3, 4}).shape)
    -- one operand and the list form
    assert.same({3}, core.einsum("ii->i", E{3, 3}).shape)
    assert.same({4, 2}, core.einsum("ij,jk->ki", {E{2, 3}, E{3, 4}}).shape)
  end)

  it("validates subscripts and sizes", function()
    -- torch: "more operands were provided than specified in the equation"
    assert.has_error(function() core.einsum("ij", E{2, 3}, E{3, 4}) end,
      'einsum: "ij" has 1 operand terms but 2 tensors were given')
    assert.has_error(function() core.einsum("ij,jk", E{2, 3}) end,
      'einsum: "ij,jk" has 2 operand terms but 1 tensors were given')
    assert.has_error(function() core.einsum("i1,jk", E{2, 3}, E{3, 4}) end,
      "einsum: invalid subscript '1' in \"i1,jk\" (subscripts are letters)")
    assert.has_error(function() core.einsum("i.j,jk->ik", E{2, 3}, E{3, 4}) end,
      "einsum: operand 0 of \"i.j,jk->ik\" has a '.' outside a single ellipsis")
    -- torch: "subscript j has size 4 for operand 1 which does not broadcast with ... size 3"
    assert.has_error(function() core.einsum("ij,jk", E{2, 3}, E{4, 4}) end,
      "einsum: subscript 'j' has size 4 in operand 1 [4, 4] but 3 before")
    -- torch: "the number of subscripts in the equation (3) does not match ... for operand 0"
    assert.has_error(function() core.einsum("ijk,jk", E{2, 3}, E{3, 4}) end,
      'einsum: 3 subscripts of operand 0 in "ijk,jk" do not fit its shape [2, 3]')
    assert.has_error(function() core.einsum("ij,jk->ii", E{2, 3}, E{3, 4}) end,
      "einsum: output subscript 'i' appears more than once in \"ij,jk->ii\"")
    assert.has_error(function() core.einsum("ij,jk->iz", E{2, 3}, E{3, 4}) end,
      "einsum: output subscript 'z' of \"ij,jk->iz\" is in no input")
    -- torch: "subscript i is repeated for operand 0 but the sizes don't match, 4 != 3"
    assert.has_error(function() core.einsum("ii->i", E{3, 4}) end,
      "einsum: subscript 'i' is repeated in operand 0 [3, 4] with sizes 3 and 4")
    assert.has_error(function() core.einsum("...ij,...jk", E{5, 2, 3}, E{4, 3, 4}) end,
      "einsum: the ellipsis dims of operand 1 [4, 3, 4] do not broadcast with those seen before")
    assert.has_error(function() core.einsum("ij,jk->ik", E{2, 3}, E({3, 4}, "float64")) end,
      "einsum: expected all tensors of the same dtype, got float32 and float64")
  end)

  it("records a contraction's MACs, and DeepSpeed's numpy FLOP count", function()
    -- "bij,bjk->bik" [2,3,4],[2,4,5]: every index 2·3·4·5 = 120, j summed: 120 MACs, 240 flops
    local f = function() core.einsum("bij,bjk->bik", E{2, 3, 4}, E{2, 4, 5}) end
    local t = count(f)
    assert.same({1, 120, 240}, {t.calls, t.macs, t.flops})
    -- DeepSpeed: numpy's optimized count P·(1 + 1 for the summed index) + 1 = 241, 0 MACs
    t = count(f, "deepspeed")
    assert.same({0, 241}, {t.macs, t.flops})
    -- an outer product sums nothing: 3·4 = 12 multiplies, 0 MACs; DeepSpeed 12·1 + 1 = 13
    f = function() core.einsum("i,j->ij", E{3}, E{4}) end
    t = count(f)
    assert.same({0, 12}, {t.macs, t.flops})
    assert.equal(13, count(f, "deepspeed").flops)
  end)
end)
