-- ignore_filter_spec.lua — S:apply_ignore, the Lua face of prof_ignore_apply that ignore lists go through.
local core = require "prof.core"

-- Net { enc: Linear { proj: Linear }, drop: Dropout }, added by hand: the paths are known.
local function tree()
  local S = core.new()
  local net = S:add_module(nil, "", "Net", 0)
  local enc = S:add_module(net, "enc", "Linear", 0)
  S:add_module(enc, "proj", "Linear", 0)
  S:add_module(net, "drop", "Dropout", 0)
  return S
end

describe("S:apply_ignore (prof_ignore_apply)", function()
  it("asks about every module in pre-order with its id, dotted path and type, and counts the ignored", function()
    local S = tree()
    local seen = {}
    local n = S:apply_ignore(function(id, path, type)
      seen[#seen + 1] = { id, path, type }
      return type == "Dropout" or path == "enc.proj"
    end)
    assert.equal(2, n)
    assert.same({ { 0, "", "Net" }, { 1, "enc", "Linear" }, { 2, "enc.proj", "Linear" },
      { 3, "drop", "Dropout" } }, seen)
    S:start()
    S:stop()   -- the snapshot says what is hidden
    local hidden = {}
    for _, r in ipairs(S:modules(1, 4)) do hidden[#hidden + 1] = r.hidden end
    assert.same({ false, false, true, true }, hidden)
    S:close()
  end)

  it("raises the filter's error after the core returns, asking no later module", function()
    local S = tree()
    local asked = 0
    assert.error_matches(function()
      S:apply_ignore(function(_, path)
        asked = asked + 1
        if path == "enc" then error("filter broke at " .. path, 0) end
        return false
      end)
    end, "filter broke at enc")
    assert.equal(2, asked)
    assert.error_matches(function() S:apply_ignore(42) end, "function expected")
    S:close()
  end)
end)
