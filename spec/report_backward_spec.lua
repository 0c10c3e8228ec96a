-- report_backward_spec.lua — the CSV and markdown reports carry the bytes and the
-- measured backward the JSON has, and the deepspeed tree prints it with detailed_backward.
local build = dofile("spec/fixtures/reports/build.lua")
local csv = dofile("scripts/reports/csv.lua")
local markdown = dofile("scripts/reports/markdown.lua")
local deepspeed = dofile("scripts/reports/deepspeed.lua")

-- Net(fc Linear 10->20) at batch 4, deepspeed conventions: 800 MACs, 1600 flops; bytes by hand:
-- input 4x10 + weight 20x10 + bias 20 read, output 4x20 written, float32: (40+200+20+80)*4 = 1360.
-- A backward of 3200 flops (grad input + grad weight, 800 MACs each) in 2 ms.
local function net()
  return build.profile({ type = "Net", params = 220, macs = 800, flops = 1600, bytes = 1360,
    lat = 0.001, bwd = 0.002, bwd_flops = 3200,
    children = { { name = "fc", type = "Linear", params = 220, macs = 800, flops = 1600, bytes = 1360,
      lat = 0.001, bwd = 0.002, bwd_flops = 3200, extra = "in_features=10, out_features=20, bias=True" } } },
    { bwd_flops = 3200 })
end

describe("backward columns and bytes in the tabular reports", function()
  it("CSV has the JSON's module keys in its order", function()
    assert.are.equal(table.concat({
      "path,type,depth,params,macs,flops,bytes,fwd_latency_s,bwd_latency_s,calls,bwd_flops",
      ",Net,0,220,800,1600,1360,0.001,0.002,1,3200",
      "fc,Linear,1,220,800,1600,1360,0.001,0.002,1,3200",
      "",
    }, "\n"), csv(net()))
  end)

  it("markdown has bytes, bwd FLOPs and bwd latency", function()
    local text = markdown(net(), {})
    assert.truthy(text:find("| &nbsp;&nbsp;fc | Linear | 220 | 100% | 800 MACs | 100% | 1.6 K | 1.36 KB | 1 ms "
      .. "| 100% | 3.2 K | 2 ms |\n", 1, true), text)
  end)

  it("the deepspeed tree prints the backward only when detailed_backward asks", function()
    local plain = deepspeed(net(), {})
    assert.is_nil(plain:find("bwd 3.2 K flops", 1, true))
    local text = deepspeed(net(), { detailed_backward = true })
    -- 3200 flops / 2 ms = 1.6 MFLOPS; forward 1600 / 1 ms = 1.6 MFLOPS
    assert.truthy(text:find("\n  (fc): Linear(220 = 100% Params, 800 MACs = 100% MACs, 1 ms = 100% latency, "
      .. "1.6 MFLOPS, bwd 3.2 K flops, 2 ms, 1.6 MFLOPS, in_features=10, out_features=20, bias=True)\n", 1, true),
      text)
    assert.truthy(text:find("fwd FLOPS, bwd flops, bwd latency, bwd FLOPS (measured)\n", 1, true))
  end)
end)
