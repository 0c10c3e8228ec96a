-- spec/report_json_spec.lua: the JSON report is a valid "profrun.profile/1" document (read back by a tiny decoder).
local build = dofile("spec/fixtures/reports/build.lua")
local render = dofile("scripts/reports/json.lua")
local enc = require "prof.report.json_encode"

local NULL = setmetatable({}, { __tostring = function() return "NULL" end })

-- A strict little RFC 8259 decoder: objects keep their key order in t[KEYS]; integers stay integers.
local KEYS = {}
local function decode(text)
  local pos = 1
  local function fail(msg) error(string.format("json: %s at byte %d", msg, pos), 0) end
  local function ws() pos = text:find("[^ \t\r\n]", pos) or #text + 1 end
  local value
  local function str()
    local out = {}
    pos = pos + 1
    while true do
      local c = text:sub(pos, pos)
      if c == "" then fail("unterminated string") end
      if c == '"' then pos = pos + 1 break end
      if c:byte() < 0x20 then fail("raw control character") end
      if c == "\\" then
        local e = text:sub(pos + 1, pos + 1)
        local simple = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r", t = "\t" }
        if simple[e] then
          out[#out + 1] = simple[e]
          pos = pos + 2
        elseif e == "u" then
          local hex = text:sub(pos + 2, pos + 5)
          if not hex:match("^%x%x%x%x$") then fail("bad \\u escape") end
          out[#out + 1] = utf8.char(tonumber(hex, 16))
          pos = pos + 6
        else
          fail("bad escape")
        end
      else
        out[#out + 1] = c
        pos = pos + 1
      end
    end
    return table.concat(out)
  end
  function value()
    ws()
    local c = text:sub(pos, pos)
    if c == "{" then
      local t = { [KEYS] = {} }
      pos = pos + 1
      ws()
      if text:sub(pos, pos) == "}" then pos = pos + 1 return t end
      while true do
        ws()
        if text:sub(pos, pos) ~= '"' then fail("key expected") end
        local k = str()
        ws()
        if text:sub(pos, pos) ~= ":" then fail("':' expected") end
        pos = pos + 1
        if t[k] ~= nil then fail("duplicate key " .. k) end
        t[k] = value()
        table.insert(t[KEYS], k)
        ws()
        local d = text:sub(pos, pos)
        pos = pos + 1
        if d == "}" then return t end
        if d ~= "," then fail("',' or '}' expected") end
      end
    elseif c == "[" then
      local t = {}
      pos = pos + 1
      ws()
      if text:sub(pos, pos) == "]" then pos = pos + 1 return t end
      while true do
        t[#t + 1] = value()
        ws()
        local d = text:sub(pos, pos)
        pos = pos + 1
        if d == "]" then return t end
        if d ~= "," then fail("',' or ']' expected") end
      end
    elseif c == '"' then
      return str()
    elseif text:sub(pos, pos + 3) == "null" then
      pos = pos + 4
      return NULL
    elseif text:sub(pos, pos + 3) == "true" then
      pos = pos + 4
      return true
    elseif text:sub(pos, pos + 4) == "false" then
      pos = pos + 5
      return false
    else
      local num = text:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
      if not num or num == "" then fail("unexpected character") end
      if not num:match("^-?0$") and num:match("^-?0%d") then fail("leading zero") end
      pos = pos + #num
      if num:match("^-?%d+$") then return math.tointeger(tonumber(num)) end
      return tonumber(num)
    end
  end
  local v = value()
  ws()
  if pos <= #text then fail("trailing text") end
  return v
end

local SUMMARY_KEYS = {
  "schema", "device", "conventions", "world_size", "dp_size", "mp_size", "batch_size",
  "params", "params_model", "fwd_macs", "fwd_flops", "fwd_flops_model", "bwd_flops",
  "fwd_latency_s", "bwd_latency_s", "step_latency_s", "iter_latency_s", "samples_per_s", "modules",
}
local MODULE_KEYS = { "id", "parent", "name", "type", "depth", "params", "macs", "flops",
  "fwd_latency_s", "bwd_latency_s", "calls" }

local function is_int(v) return math.type(v) == "integer" end
local function int_or_null(v) return v == NULL or is_int(v) end
local function num_or_null(v) return v == NULL or type(v) == "number" end

describe("scripts/reports/json.lua", function()
  local p = dofile("spec/fixtures/reports/lenet5.lua")
  local text = render(p)
  local doc = decode(text)

  it("writes the summary keys in the documented order, with the right types", function()
    assert.are.same(SUMMARY_KEYS, doc[KEYS])
    assert.are.equal("profrun.profile/1", doc.schema)
    assert.are.equal("cpu", doc.device)
    assert.are.equal("deepspeed", doc.conventions)
    for _, k in ipairs({ "world_size", "dp_size", "mp_size", "params", "params_model", "fwd_macs",
      "fwd_flops", "fwd_flops_model" }) do
      assert.is_true(is_int(doc[k]), k)
    end
    assert.is_true(int_or_null(doc.batch_size))
    assert.is_true(int_or_null(doc.bwd_flops))
    for _, k in ipairs({ "fwd_latency_s", "bwd_latency_s", "step_latency_s", "iter_latency_s", "samples_per_s" }) do
      assert.is_true(num_or_null(doc[k]), k)
    end
    assert.are.equal(61706, doc.params)
    assert.are.equal(426516480, doc.fwd_macs)
    assert.are.equal(866076672, doc.fwd_flops)
    assert.are.equal(1024, doc.batch_size)
    assert.are.equal(0.1133, doc.fwd_latency_s)
    assert.are.equal(NULL, doc.bwd_flops)
    assert.are.equal(NULL, doc.bwd_latency_s)
    assert.are.equal(NULL, doc.samples_per_s)
    assert.are.equal("\n", text:sub(-1))
  end)

  it("lists the modules in pre-order with 0-based ids, parents before children and dotted names", function()
    assert.are.equal(14, #doc.modules)
    local names = {}
    for i, m in ipairs(doc.modules) do
      assert.are.same(MODULE_KEYS, m[KEYS])
      assert.are.equal(i - 1, m.id)
      if i == 1 then
        assert.are.equal(NULL, m.parent)
      else
        assert.is_true(is_int(m.parent) and m.parent < m.id)
        assert.are.equal(doc.modules[m.parent + 1].depth + 1, m.depth)
      end
      for _, k in ipairs({ "depth", "params", "macs", "flops", "calls" }) do assert.is_true(is_int(m[k]), k) end
      assert.is_true(num_or_null(m.fwd_latency_s) and num_or_null(m.bwd_latency_s))
      names[i] = m.name
    end
    assert.are.same({ "", "feature_extractor", "feature_extractor.0", "feature_extractor.1",
      "feature_extractor.2", "feature_extractor.3", "feature_extractor.4", "feature_extractor.5",
      "feature_extractor.6", "feature_extractor.7", "classifier", "classifier.0", "classifier.1",
      "classifier.2" }, names)
    local conv = doc.modules[3]
    assert.are.equal("Conv2d", conv.type)
    assert.are.equal(156, conv.params)
    assert.are.equal(120422400, conv.macs)
    assert.are.equal(245661696, conv.flops)
    assert.are.equal(0.04817, conv.fwd_latency_s)
    assert.are.equal(10, doc.modules[12].parent)
  end)

  it("keeps large integers exact and floats round-tripping; nil is null", function()
    local q = build.profile({ type = "Big", params = 175000000000, macs = 700000000000000,
      flops = 7e14 * 2, lat = 0.1 + 0.2, bytes = 123456789012, children = {
        { name = "x", type = "Linear", params = 1, macs = 7e14, flops = 0, lat = 1 / 3 } } },
      { fwd_flops = 1400000000000000, batch_size = nil, samples_per_s = 1e-7 })
    local t = render(q)
    assert.truthy(t:find('"macs": 700000000000000,', 1, true))
    assert.truthy(t:find('"flops": 1400000000000000,', 1, true))
    assert.falsy(t:find("e+", 1, true))
    assert.falsy(t:find("%.0[,\n]"))
    local d = decode(t)
    assert.are.equal(700000000000000, d.modules[1].macs)
    assert.are.equal(700000000000000, d.modules[2].macs)   -- given as the float 7e14
    assert.is_true(is_int(d.modules[2].macs))
    assert.are.equal(175000000000, d.params)
    assert.are.equal(0.1 + 0.2, d.fwd_latency_s)
    assert.are.equal(1 / 3, d.modules[2].fwd_latency_s)
    assert.are.equal(1e-7, d.samples_per_s)
    assert.are.equal(NULL, d.batch_size)
    assert.are.equal(123456789012, d.modules[1].bytes)
    assert.are.same({ "id", "parent", "name", "type", "depth", "params", "macs", "flops", "bytes",
      "fwd_latency_s", "bwd_latency_s", "calls" }, d.modules[1][KEYS])
    assert.are.same(MODULE_KEYS, d.modules[2][KEYS])     -- bytes unknown: left out
  end)

  it("leaves hidden modules out and re-parents their children", function()
    local q = build.profile({ type = "Root", params = 81, children = {
      { name = "enc", type = "Encoder", params = 72, hidden = true, children = {
        { name = "a", type = "Linear", params = 72 }, { name = "b", type = "ReLU" } } },
      { name = "out", type = "Linear", params = 9 } } })
    local d = decode(render(q))
    local got = {}
    for i, m in ipairs(d.modules) do got[i] = { m.id, m.parent, m.name, m.type } end
    assert.are.same({ { 0, NULL, "", "Root" }, { 1, 0, "enc.a", "Linear" }, { 2, 0, "enc.b", "ReLU" },
      { 3, 0, "out", "Linear" } }, got)
  end)

  it("escapes strings per RFC 8259", function()
    assert.are.equal([["a\"b\\c\u0001\n\t\r\u001f/é"]], enc.string('a"b\\c\1\n\t\r\31/é'))
    local q = build.profile({ type = 'We"ird\\\1Net' })
    local d = decode(render(q))
    assert.are.equal('We"ird\\\1Net', d.modules[1].type)
  end)

  it("encodes empty containers, NaN and ordered objects", function()
    assert.are.equal("[]", enc.encode({}))
    assert.are.equal("{}", enc.encode(enc.object({})))
    assert.are.equal("null", enc.encode(0 / 0))
    assert.are.equal("null", enc.encode(math.huge))
    assert.are.equal('{\n  "b": 1,\n  "a": [\n    true,\n    null\n  ]\n}',
      enc.encode(enc.object({ "b", "a" }, { b = 1, a = { true, enc.null } })))
  end)
  it("streams a wide profile in pieces of at most 64 KiB whose join is the whole document", function()
    local kids = {}
    for i = 1, 2500 do kids[i] = { name = tostring(i - 1), type = "ReLU", flops = i, bytes = 8 * i } end
    local q = build.profile({ type = "Sequential", flops = 3126250, children = kids })
    local pieces = {}
    assert.are.equal("", render(q, { emit = function(s) pieces[#pieces + 1] = s end }))
    -- 2,501 modules of about 250 bytes: several pieces, none held beyond the writer's 64 KiB
    assert.is_true(#pieces >= 8, #pieces)
    for i, s in ipairs(pieces) do assert.is_true(#s <= 65536, "piece " .. i .. ": " .. #s) end
    assert.are.equal(render(q), table.concat(pieces))
    local d = decode(table.concat(pieces))
    assert.are.equal(2501, #d.modules)
    assert.are.equal(2500, d.modules[2501].flops)
    assert.are.equal(20000, d.modules[2501].bytes)
    assert.are.equal(2500, d.modules[2501].id)
    assert.are.equal(0, d.modules[2501].parent)
  end)
end)
