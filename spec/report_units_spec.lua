-- spec/report_units_spec.lua: DeepSpeed's number formatters, checked against Python's f"{round(x, 2):g}" semantics.
--
-- Every expected string below was printed by python3 running DeepSpeed's number_to_string
-- (profiler.py) on the same input, or is copied from spec/fixtures/reports/deepspeed_lenet5_b1024_cpu.txt.
local U = require "prof.report.units"

describe("prof.report.units", function()
  describe("number_to_string", function()
    local cases = {
      -- { num, units, precision, expected }
      { 0, nil, nil, "0 " },
      { 61706, nil, nil, "61.71 K" },
      { 866076672, nil, nil, "866.08 M" },           -- reference: fwd flops per GPU
      { 999999, nil, nil, "1000 K" },               -- the unit is chosen before rounding
      { 999.999, nil, nil, "1000 " },
      { 999.994, nil, nil, "999.99 " },
      { 1e6, nil, nil, "1 M" },
      { 1, nil, nil, "1 " },
      { 0.5, nil, nil, "500 m" },
      { 0.001, nil, nil, "1 m" },
      { 0.0009999, nil, nil, "999.9 u" },
      { 0.0005, nil, nil, "500 u" },
      { 1e-9, nil, nil, "0 u" },
      { -5, nil, nil, "-5e+06 u" },                 -- negatives fall through to "u", as in DeepSpeed
      { 0.125, "", nil, "0.12 " },                  -- exact tie: half-even
      { 0.375, "", nil, "0.38 " },                  -- exact tie: half-even
      { 2.675, "", nil, "2.67 " },                  -- the double is just below 2.675
      { 1e16, nil, nil, "10000 T" },
      { 1.23456789e18, nil, nil, "1.23457e+06 T" }, -- :g switches to an exponent at 1e6
      { 61706, "M", nil, "0.06 M" },
      { 61706, "K", nil, "61.71 K" },
      { 123456789, "T", nil, "0 T" },
      { 5, "x", nil, "5 x" },                       -- an unknown unit has magnitude 1
      { 866076672, nil, 4, "866.077 M" },           -- :g keeps 6 significant digits
      { 12345, nil, 0, "12 K" },
    }
    for _, c in ipairs(cases) do
      it(string.format("%s units=%s precision=%s -> %q", c[1], c[2], c[3], c[4]), function()
        assert.are.equal(c[4], U.number_to_string(c[1], c[2], c[3]))
      end)
    end

    it("gives n/a for nil and NaN", function()
      assert.are.equal("n/a", U.number_to_string(nil))
      assert.are.equal("n/a", U.number_to_string(0 / 0))
    end)
  end)

  it("formats MACs, FLOPS, durations and bytes as the reference does", function()
    assert.are.equal("426.52 MMACs", U.macs_to_string(426516480))
    assert.are.equal("860.16 KMACs", U.macs_to_string(860160))
    assert.are.equal("0 MACs", U.macs_to_string(0))
    assert.are.equal("7.64 GFLOPS", U.flops_to_string(866076672 / 0.1133))
    assert.are.equal("0 FLOPS", U.flops_to_string(0))
    assert.are.equal("113.3 ms", U.duration_to_string(0.1133))
    assert.are.equal("314.71 us", U.duration_to_string(0.00031471))
    assert.are.equal("76.67 ms", U.duration_to_string(0.07667))
    assert.are.equal("1.89 s", U.duration_to_string(1.89))
    assert.are.equal("1.54 KB", U.bytes_to_string(1536))
    assert.are.equal("n/a", U.macs_to_string(nil))
    assert.are.equal("n/a", U.duration_to_string(0 / 0))
  end)

  it("formats params with B for billions and no trailing space", function()
    assert.are.equal("61.71 K", U.params_to_string(61706))
    assert.are.equal("336.23 M", U.params_to_string(336226108))
    assert.are.equal("6.74 B", U.params_to_string(6738415616))
    assert.are.equal("6.74 B", U.params_to_string(6.74e9, "B"))
    assert.are.equal("110", U.params_to_string(110))
    assert.are.equal("0", U.params_to_string(0))
    assert.are.equal("1000 T", U.params_to_string(1e15))
    assert.are.equal("n/a", U.params_to_string(nil))
  end)

  it("gives DeepSpeed's percentages, 0 for a zero total", function()
    assert.are.equal("0.25", U.pct(156, 61706))
    assert.are.equal("100", U.pct(61706, 61706))
    assert.are.equal("0.2", U.pct(860160, 426516480))
    assert.are.equal("16.47", U.pct(10164, 61706))
    assert.are.equal("99.15", U.pct(0.11234, 0.1133))
    assert.are.equal("33.33", U.pct(1, 3))
    assert.are.equal("66.67", U.pct(2, 3))
    assert.are.equal("12.5", U.pct(1, 8))
    assert.are.equal("0", U.pct(5, 0))
    assert.are.equal("0", U.pct(0, 0))
    assert.are.equal("n/a", U.pct(nil, 10))
  end)

  it("rounds like Python's round(x, 2), keeping the sign of zero", function()
    assert.are.equal(0.12, U.round(0.125, 2))
    assert.are.equal(2.67, U.round(2.675, 2))
    assert.are.equal("-0", U.g(U.round(-0.0004, 2)))
    assert.are.equal("0", U.g(U.round(0.004999, 2)))
    assert.are.equal("float", math.type(U.round(3, 0)))
  end)

  it("formats {:g} factors as DeepSpeed's bwd/fwd+bwd labels do", function()
    assert.are.equal("2", U.g(2 + 0.0))
    assert.are.equal("2.5", U.g(2 + 0.5))
    assert.are.equal("3.5", U.g(3 + 0.5))
    assert.are.equal("4", U.g(3 + 1.0))
  end)

  it("reproduces Python's float repr (samples/second)", function()
    local cases = {
      { 433.07, "433.07" }, { 100.0, "100.0" }, { 1e16, "1e+16" }, { 1e-05, "1e-05" },
      { 0.0001, "0.0001" }, { 123456789012345680.0, "1.2345678901234568e+17" },
      { 0.1 + 0.2, "0.30000000000000004" }, { -2.5, "-2.5" },
      { 1234567890123456.0, "1234567890123456.0" }, { 12345678901234567.0, "1.2345678901234568e+16" },
      { -0.0, "-0.0" },
    }
    for _, c in ipairs(cases) do assert.are.equal(c[2], U.float_repr(c[1])) end
    assert.are.equal("1024", U.pystr(1024))
    assert.are.equal("n/a", U.pystr(nil))
  end)

  it("gives the shortest %g that round-trips", function()
    assert.are.equal("0.00031471", U.shortest(0.00031471))
    assert.are.equal("8.059e-05", U.shortest(0.00008059))
    assert.are.equal("0.30000000000000004", U.shortest(0.1 + 0.2))
    assert.are.equal("700000000000000", U.shortest(700000000000000))
  end)
end)
