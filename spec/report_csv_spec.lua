-- spec/report_csv_spec.lua: scripts/reports/csv.lua rows, RFC 4180 quoting and empty fields for unknown values.
local build = dofile("spec/fixtures/reports/build.lua")
local render = dofile("scripts/reports/csv.lua")

describe("scripts/reports/csv.lua", function()
  it("writes one row per shown module in pre-order", function()
    local p = build.profile({ type = "Net", params = 70, macs = 112, flops = 224, lat = 0.01, calls = 1,
      children = {
        { name = "enc", type = "Wrapper", params = 60, macs = 96, flops = 192, hidden = true, children = {
          { name = "fc,1", type = "Linear", params = 60, macs = 96, flops = 192, lat = 0.00008059, calls = 3 } } },
        { name = 'say "hi"', type = "Odd\nType", params = 10, macs = 16, flops = 32, lat = 0.001, bwd = 0.25 },
        { name = "idle", type = "Dropout" },
      } })
    p.modules[5].calls = 0
    assert.are.equal(table.concat({
      "path,type,depth,params,macs,flops,bytes,fwd_latency_s,bwd_latency_s,calls,bwd_flops",
      ",Net,0,70,112,224,,0.01,,1,",
      '"enc.fc,1",Linear,2,60,96,192,,8.059e-05,,3,',
      '"say ""hi""","Odd\nType",1,10,16,32,,0.001,0.25,1,',
      "idle,Dropout,1,0,0,0,,,,0,",
      "",
    }, "\n"), render(p))
  end)

  it("leaves unknown latencies empty on meta and keeps large counts exact", function()
    local p = build.meta(build.profile({ type = "Big", params = 175000000000, macs = 7e14, flops = 1400000000000000 }))
    assert.are.equal("path,type,depth,params,macs,flops,bytes,fwd_latency_s,bwd_latency_s,calls,bwd_flops\n"
      .. ",Big,0,175000000000,700000000000000,1400000000000000,,,,1,\n", render(p))
  end)
end)
