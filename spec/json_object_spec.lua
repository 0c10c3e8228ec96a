-- json_object_spec.lua — core.json_object (the JSON report's per-module encoder) writes exactly what
-- json_encode.lua writes for the same flat object: the Lua encoder is the reference.
local core = require "prof.core"
local enc = require "prof.report.json_encode"

-- The Lua encoder's text of the object keys -> values (nil written as null, as json_object does).
local function reference(keys, values, n)
  local vals = {}
  for i = 1, n do vals[keys[i]] = values[i] == nil and enc.null or values[i] end
  return enc.encode(enc.object(keys, vals))
end

describe("core.json_object", function()
  it("writes integers, integral and fractional floats, NaN and infinities as json_encode does", function()
    local keys, values = {}, { 0, -7, math.maxinteger, math.mininteger, 3.0, -2.5, 0.1, 1e300,
      2.0 ^ 63, -(2.0 ^ 63), 1 / 0, -1 / 0, 0 / 0, 1e-310, 123456789.125 }
    for i = 1, #values do keys[i] = "k" .. i end
    local text = core.json_object(keys, values, #values, "  ", "")
    assert.are.equal(reference(keys, values, #values), text)
    -- and the forms themselves, derived by hand: 3.0 is integral, 2^63 is outside int64's range
    assert.truthy(text:find('"k5": 3,', 1, true))
    assert.truthy(text:find('"k9": 9.2233720368547758e+18,', 1, true))
    assert.truthy(text:find('"k11": null,', 1, true))
    assert.truthy(text:find('"k13": null,', 1, true))
  end)

  it("escapes quotes, backslashes and control bytes and keeps other bytes as they are", function()
    local values = { 'say "hi"', "back\\slash", "tab\tnl\ncr\r", "nul\0bell\7", "\31\127",
                     "caf\xc3\xa9", "" }
    local keys = {}
    for i = 1, #values do keys[i] = "s" .. i end
    local text = core.json_object(keys, values, #values, "  ", "")
    assert.are.equal(reference(keys, values, #values), text)
    assert.truthy(text:find('"s4": "nul\\u0000bell\\u0007"', 1, true))
  end)

  it("writes nil as null, booleans, and the indentation it is given", function()
    local keys, values = { "a", "b", "c" }, { nil, true, false }
    assert.are.equal('{\n      "a": null,\n      "b": true,\n      "c": false\n    }',
      core.json_object(keys, values, 3, "      ", "    "))
  end)

  it("refuses a table value and a missing key, naming the position", function()
    assert.has_error(function() core.json_object({ "a" }, { {} }, 1, "", "") end,
      "json_object: values[1] (table) is not a scalar")
    assert.has_error(function() core.json_object({}, { 1 }, 1, "", "") end,
      "json_object: keys[1] is not a string")
  end)
end)
