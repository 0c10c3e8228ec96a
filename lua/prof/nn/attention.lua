-- attention.lua — nn.MultiheadAttention, running PyTorch 1.13's multi_head_attention_forward.
local module = require "prof.nn.module"
local args = require "prof.nn.args"
local F = require "prof.nn.functional"
local T = require "prof.tensor"
local core = require "prof.core"
local Linear = require("prof.nn.linear").Linear
local initializers = require "prof.nn.initializers"

local Module = module.Module

-- PyTorch's out_proj class: a Linear that only prints under another name.
local NonDynamicallyQuantizableLinear = Linear:extend("NonDynamicallyQuantizableLinear")

-- Ops looked up per call (specs spy on them; a missing one is named in the error).
local function op(name)
  local f = F[name] or T[name] or core[name]
  if f == nil then error(string.format("prof.core has no '%s' op yet", name), 2) end
  return f
end

-- chunk/split give several tensors: as Lua results or as one list, either is taken.
local function parts(first, ...)
  if type(first) == "table" then return table.unpack(first) end
  return first, ...
end

local function shape_of(t)
  return "[" .. table.concat(t.shape, ", ") .. "]"
end

local function same_shape(t, expected)
  local s = t.shape
  if #s ~= #expected then return false end
  for i, v in ipairs(expected) do
    if s[i] ~= v then return false end
  end
  return true
end

local function fail(fmt, ...)
  error("MultiheadAttention: " .. string.format(fmt, ...), 3)
end

-- Appends a zero column on the last dimension (F.pad(mask, (0, 1)) in PyTorch).
local function pad_last(mask)
  local shape = mask.shape
  shape[#shape] = 1
  return op("cat")({ mask, T.zeros(shape, { dtype = mask.dtype, device = mask.device }) }, -1)
end

-- F.multi_head_attention_forward (PyTorch 1.13, the non-fast path), op for op: in-projection
-- with linear, q / sqrt(head_dim) (an operator), bmm or baddbmm, softmax, dropout, bmm, linear.
-- query [L, N, E], key [S, N, Ek], value [S, N, Ev] or unbatched [L, E], ...
local function mha_forward(m, query, key, value, o)
  local nd = query:dim()
  if nd ~= 2 and nd ~= 3 then
    fail("query should be unbatched 2D or batched 3D tensor but received %d-D query tensor %s",
         nd, shape_of(query))
  end
  if key:dim() ~= nd or value:dim() ~= nd then
    fail("for %d-D query %s, expected key and value to be %d-D but found key %s and value %s",
         nd, shape_of(query), nd, shape_of(key), shape_of(value))
  end
  local batched = nd == 3
  local kpm, attn_mask = o.key_padding_mask, o.attn_mask
  if not batched then
    query, key, value = query:unsqueeze(1), key:unsqueeze(1), value:unsqueeze(1)
    if kpm ~= nil then kpm = kpm:unsqueeze(0) end
  end
  local tgt_len, bsz, embed_dim = query:size(0), query:size(1), query:size(2)
  local src_len = key:size(0)
  if embed_dim ~= m.embed_dim then
    fail("was expecting embedding dimension of %d, but got %d (query %s)", m.embed_dim,
         embed_dim, shape_of(query))
  end
  local H, E = m.num_heads, embed_dim
  local head_dim = E // H
  local q, k, v
  local linear = op("linear")
  if m._qkv_same_embed_dim then
    if not same_shape(key, value.shape) then
      fail("key shape %s does not match value shape %s", shape_of(key), shape_of(value))
    end
    -- _in_projection_packed: one linear when q, k and v are the same tensor
    local w, b = m.in_proj_weight, m.in_proj_bias
    if rawequal(key, value) then
      if rawequal(query, key) then
        q, k, v = parts(op("chunk")(linear(query, w, b), 3, -1))
      else
        local w_q, w_kv = parts(op("split")(w, { E, 2 * E }))
        local b_q, b_kv
        if b ~= nil then b_q, b_kv = parts(op("split")(b, { E, 2 * E })) end
        q = linear(query, w_q, b_q)
        k, v = parts(op("chunk")(linear(key, w_kv, b_kv), 2, -1))
      end
    else
      local w_q, w_k, w_v = parts(op("chunk")(w, 3))
      local b_q, b_k, b_v
      if b ~= nil then b_q, b_k, b_v = parts(op("chunk")(b, 3)) end
      q, k, v = linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)
    end
  else
    local b_q, b_k, b_v
    if m.in_proj_bias ~= nil then b_q, b_k, b_v = parts(op("chunk")(m.in_proj_bias, 3)) end
    q = linear(query, m.q_proj_weight, b_q)
    k = linear(key, m.k_proj_weight, b_k)
    v = linear(value, m.v_proj_weight, b_v)
  end
  if attn_mask ~= nil then
    if attn_mask:dim() == 2 then
      if not same_shape(attn_mask, { tgt_len, src_len }) then
        fail("the shape of the 2D attn_mask is %s, but should be (%d, %d)", shape_of(attn_mask),
             tgt_len, src_len)
      end
      attn_mask = attn_mask:unsqueeze(0)
    elseif attn_mask:dim() == 3 then
      if not same_shape(attn_mask, { bsz * H, tgt_len, src_len }) then
        fail("the shape of the 3D attn_mask is %s, but should be (%d, %d, %d)",
             shape_of(attn_mask), bsz * H, tgt_len, src_len)
      end
    else
      fail("attn_mask's dimension %d is not supported", attn_mask:dim())
    end
    -- a boolean mask becomes an additive one (PyTorch does this after merging key_padding_mask
    -- with logical_or; filling the float mask with the padding mask gives the same values)
    if attn_mask.dtype == "bool" then
      attn_mask = op("masked_fill")(T.zeros(attn_mask.shape, {
        dtype = q.dtype, device = q.device,
      }), attn_mask, -math.huge)
    end
  end
  if m.bias_k ~= nil then
    k = op("cat")({ k, m.bias_k:expand({ 1, bsz, E }) }, 0)
    v = op("cat")({ v, m.bias_v:expand({ 1, bsz, E }) }, 0)
    if attn_mask ~= nil then attn_mask = pad_last(attn_mask) end
    if kpm ~= nil then kpm = pad_last(kpm) end
  end
  -- heads become batches: [L, N, E] -> [N*H, L, head_dim]
  q = q:contiguous():view({ tgt_len, bsz * H, head_dim }):transpose(0, 1)
  k = k:contiguous():view({ k:size(0), bsz * H, head_dim }):transpose(0, 1)
  v = v:contiguous():view({ v:size(0), bsz * H, head_dim }):transpose(0, 1)
  if m.add_zero_attn then
    local zshape = { bsz * H, 1, head_dim }
    k = op("cat")({ k, T.zeros(zshape, { dtype = k.dtype, device = k.device }) }, 1)
    v = op("cat")({ v, T.zeros(zshape, { dtype = v.dtype, device = v.device }) }, 1)
    if attn_mask ~= nil then attn_mask = pad_last(attn_mask) end
    if kpm ~= nil then kpm = pad_last(kpm) end
  end
  src_len = k:size(1)
  if kpm ~= nil then
    if not same_shape(kpm, { bsz, src_len }) then
      fail("expecting key_padding_mask shape of (%d, %d), but got %s", bsz, src_len,
           shape_of(kpm))
    end
    kpm = kpm:view({ bsz, 1, 1, src_len }):expand({ -1, H, -1, -1 })
             :reshape({ bsz * H, 1, src_len })
    if attn_mask == nil then
      attn_mask = kpm
      if kpm.dtype == "bool" then
        attn_mask = op("masked_fill")(T.zeros(kpm.shape, { dtype = q.dtype, device = q.device }),
                                      kpm, -math.huge)
      end
    else
      attn_mask = op("masked_fill")(attn_mask, kpm, -math.huge)
    end
  end
  local dropout_p = m.training and m.dropout or 0.0
  -- the scale is an operator in PyTorch (q / math.sqrt(E)): DeepSpeed does not count it
  local q_scaled = q / math.sqrt(q:size(2))
  local w
  if attn_mask ~= nil then
    w = op("baddbmm")(attn_mask, q_scaled, k:transpose(-2, -1))
  else
    w = op("bmm")(q_scaled, k:transpose(-2, -1))
  end
  w = op("softmax")(w, -1)
  if dropout_p > 0 then w = op("dropout")(w, dropout_p, true) end
  local out = op("bmm")(w, v)
  out = out:transpose(0, 1):contiguous():view({ tgt_len * bsz, embed_dim })
  -- out_proj's weights through F.linear: PyTorch never calls out_proj as a module
  out = linear(out, m.out_proj.weight, m.out_proj.bias)
  out = out:view({ tgt_len, bsz, out:size(1) })
  if not o.need_weights then
    if not batched then out = out:squeeze(1) end
    return out, nil
  end
  w = w:view({ bsz, H, tgt_len, src_len })
  if o.average_attn_weights then w = op("sum")(w, 1) / H end
  if not batched then
    out, w = out:squeeze(1), w:squeeze(0)
  end
  return out, w
end

-- nn.MultiheadAttention(embed_dim, num_heads, dropout=0, bias=true, add_bias_kv=false,
-- add_zero_attn=false, kdim=nil, vdim=nil, batch_first=false, {device=, dtype=})
local MultiheadAttention = Module:extend("MultiheadAttention")

function MultiheadAttention:init(...)
  local a = args.parse(self.__name, {
    "embed_dim", "num_heads", { "dropout", 0.0 }, { "bias", true }, { "add_bias_kv", false },
    { "add_zero_attn", false }, { "kdim" }, { "vdim" }, { "batch_first", false }, { "device" },
    { "dtype" },
  }, ...)
  local E, fk = a.embed_dim, args.factory(a)
  self.embed_dim = E
  self.kdim = a.kdim or E
  self.vdim = a.vdim or E
  self._qkv_same_embed_dim = self.kdim == E and self.vdim == E
  self.num_heads, self.dropout, self.batch_first = a.num_heads, a.dropout, a.batch_first
  self.head_dim = E // a.num_heads
  if self.head_dim * a.num_heads ~= E then
    error(self.__name .. ": embed_dim must be divisible by num_heads", 3)
  end
  -- registration order decides named_parameters' order: PyTorch's, below
  if self._qkv_same_embed_dim then
    self:register_parameter("in_proj_weight", T.empty({ 3 * E, E }, fk))
  else
    self:register_parameter("q_proj_weight", T.empty({ E, E }, fk))
    self:register_parameter("k_proj_weight", T.empty({ E, self.kdim }, fk))
    self:register_parameter("v_proj_weight", T.empty({ E, self.vdim }, fk))
  end
  if a.bias then self:register_parameter("in_proj_bias", T.empty({ 3 * E }, fk)) end
  self.out_proj = NonDynamicallyQuantizableLinear(E, E, { bias = a.bias, device = a.device,
                                                         dtype = a.dtype })
  if a.add_bias_kv then
    self:register_parameter("bias_k", T.empty({ 1, 1, E }, fk))
    self:register_parameter("bias_v", T.empty({ 1, 1, E }, fk))
  end
  self.add_zero_attn = a.add_zero_attn
  self:_reset_parameters()
end

-- MultiheadAttention._reset_parameters: xavier_uniform_ projections, zero biases (out_proj's
-- weight stays as Linear made it), xavier_normal_ bias_k/bias_v. Only cpu values are written.
function MultiheadAttention:_reset_parameters()
  local function apply(fn, t)
    if initializers.has_values(t) then fn(t) end
  end
  apply(initializers.xavier_uniform_, self.in_proj_weight)
  apply(initializers.xavier_uniform_, self.q_proj_weight)
  apply(initializers.xavier_uniform_, self.k_proj_weight)
  apply(initializers.xavier_uniform_, self.v_proj_weight)
  if self.in_proj_bias ~= nil then
    apply(initializers.zeros_, self.in_proj_bias)
    apply(initializers.zeros_, self.out_proj.bias)
  end
  apply(initializers.xavier_normal_, self.bias_k)
  apply(initializers.xavier_normal_, self.bias_v)
end

-- forward(query, key, value, key_padding_mask=nil, need_weights=true, attn_mask=nil,
-- average_attn_weights=true) -> attn_output, attn_weights (nil when need_weights is false).
-- Always the general path: PyTorch's fused fast path is invisible to DeepSpeed's counting.
function MultiheadAttention:forward(...)
  local o = args.parse("MultiheadAttention.forward", {
    "query", "key", "value", { "key_padding_mask" }, { "need_weights", true }, { "attn_mask" },
    { "average_attn_weights", true },
  }, ...)
  local query, key, value = o.query, o.key, o.value
  local batched = query:dim() == 3
  if self.batch_first and batched then
    -- keep the identities _in_projection_packed tests (q is k is v, k is v)
    if rawequal(key, value) then
      if rawequal(query, key) then
        query = query:transpose(1, 0)
        key, value = query, query
      else
        query, key = query:transpose(1, 0), key:transpose(1, 0)
        value = key
      end
    else
      query, key, value = query:transpose(1, 0), key:transpose(1, 0), value:transpose(1, 0)
    end
  end
  local out, w = mha_forward(self, query, key, value, o)
  if self.batch_first and batched then out = out:transpose(1, 0) end
  return out, w
end

return { MultiheadAttention = MultiheadAttention }
