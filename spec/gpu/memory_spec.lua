-- memory_spec.lua — the cuda backend's memory: every allocation and free counted as the cpu's
-- are, the caching allocator's blocks zero-filled on reuse, and copies both ways exact.
local T = require "prof.tensor"
local core = require "prof.core"
local cmp = require "spec.gpu.compare"

describe("cuda memory and copies #gpu", function()
  setup(cmp.require_device)

  it("counts each storage's bytes while it lives and none after", function()
    collectgarbage()
    collectgarbage()
    local before = core.live_bytes()
    local x = T.zeros({ 1000 }, { device = cmp.DEVICE })
    assert.equal(before + 4000, core.live_bytes())
    local y = T.zeros({ 3, 5 }, { dtype = "int64", device = cmp.DEVICE })
    assert.equal(before + 4000 + 120, core.live_bytes())
    assert.equal(cmp.DEVICE, x.device)
    assert.equal(cmp.DEVICE, y.device)
    x, y = nil, nil   -- luacheck: ignore 311 (dropped so the collector frees them)
    collectgarbage()
    collectgarbage()
    assert.equal(before, core.live_bytes())
  end)

  it("a reused block comes back zero-filled", function()
    for _ = 1, 3 do
      local a = T.full({ 4096 }, 7.0, { device = cmp.DEVICE })
      assert.equal(7.0, a:sum():item() / 4096)
      a = nil   -- luacheck: ignore 311 (dropped so the collector frees it)
      collectgarbage()
      collectgarbage()
      local z = T.zeros({ 4096 }, { device = cmp.DEVICE })   -- the same size class
      assert.equal(0.0, z:abs():sum():item())
    end
  end)

  it("copies host -> device -> host exactly, strided views included", function()
    local v = {}
    for i = 1, 60 do v[i] = i * 0.5 - 7 end
    local h = T.tensor(v, { device = "cpu" }):reshape({ 5, 12 })
    local d = h:to(cmp.DEVICE)
    assert.same(h:tolist(), d:to("cpu"):tolist())
    assert.same(h:t():contiguous():tolist(), d:t():contiguous():to("cpu"):tolist())
    local ints = T.tensor({ 1, -2, 3, 1 << 40 }, { dtype = "int64", device = "cpu" })
    assert.same(ints:tolist(), ints:to(cmp.DEVICE):to("cpu"):tolist())
  end)
end)
