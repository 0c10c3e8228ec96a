-- vit.lua — torchvision 0.14's VisionTransformer (ViT-B/16: 86,567,656 parameters); build{name = "vit_b_16"}.
local nn = require "prof.nn"
local T = require "prof.tensor"

local M = {}

-- Convention shared by the vision zoo files: build(opts) picks the variant by opts.name (one of
-- M.NAMES, default "vit_b_16"); the other opts are the PyTorch constructor's keywords.
M.NAMES = { "vit_b_16" }

local function layer_norm(dim)
  -- torchvision's norm_layer default: partial(nn.LayerNorm, eps=1e-6)
  return nn.LayerNorm(dim, { eps = 1e-6 })
end

-- MLPBlock(in_dim, mlp_dim, dropout): torchvision.ops.MLP, a Sequential whose children are
-- named 0..4 (Linear, GELU, Dropout, Linear, Dropout) since torchvision 0.14.
local MLPBlock = nn.Module.extend(nn.Sequential, "MLPBlock")
M.MLPBlock = MLPBlock

function MLPBlock:init(in_dim, mlp_dim, dropout)
  nn.Sequential.init(self, nn.Linear(in_dim, mlp_dim), nn.GELU(), nn.Dropout(dropout),
                     nn.Linear(mlp_dim, in_dim), nn.Dropout(dropout))
end

-- EncoderBlock(num_heads, hidden_dim, mlp_dim, dropout, attention_dropout): pre-norm
-- self-attention and MLP, each with a residual.
local EncoderBlock = nn.Module:extend("EncoderBlock")
M.EncoderBlock = EncoderBlock

function EncoderBlock:init(num_heads, hidden_dim, mlp_dim, dropout, attention_dropout)
  self.num_heads = num_heads
  self.ln_1 = layer_norm(hidden_dim)
  self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads, {
    dropout = attention_dropout, batch_first = true,
  })
  self.dropout = nn.Dropout(dropout)
  self.ln_2 = layer_norm(hidden_dim)
  self.mlp = MLPBlock(hidden_dim, mlp_dim, dropout)
end

function EncoderBlock:forward(input)
  if input:dim() ~= 3 then
    error(string.format("EncoderBlock: Expected (batch_size, seq_length, hidden_dim) got [%s]",
                        table.concat(input.shape, ", ")), 2)
  end
  local x = self.ln_1(input)
  x = self.self_attention(x, x, x, { need_weights = false })
  x = self.dropout(x) + input
  return x + self.mlp(self.ln_2(x))
end

-- Encoder(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout)
local Encoder = nn.Module:extend("Encoder")
M.Encoder = Encoder

function Encoder:init(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout,
                      attention_dropout)
  -- registered before the children, as in torchvision (named_parameters' order)
  self:register_parameter("pos_embedding", T.empty({ 1, seq_length, hidden_dim }))
  self.dropout = nn.Dropout(dropout)
  local layers = {}
  for i = 1, num_layers do
    layers[i] = { "encoder_layer_" .. (i - 1),
                  EncoderBlock(num_heads, hidden_dim, mlp_dim, dropout, attention_dropout) }
  end
  self.layers = nn.Sequential(layers)
  self.ln = layer_norm(hidden_dim)
end

function Encoder:forward(input)
  return self.ln(self.layers(self.dropout(input + self.pos_embedding)))
end

-- VisionTransformer(image_size, patch_size, num_layers, num_heads, hidden_dim, mlp_dim,
-- dropout=0, attention_dropout=0, num_classes=1000): patchify with a strided conv, prepend a
-- class token, encode, classify the class token.
local VisionTransformer = nn.Module:extend("VisionTransformer")
M.VisionTransformer = VisionTransformer

function VisionTransformer:init(o)
  if o.image_size % o.patch_size ~= 0 then
    error("VisionTransformer: Input shape indivisible by patch size!", 3)
  end
  self.image_size, self.patch_size = o.image_size, o.patch_size
  self.hidden_dim, self.mlp_dim = o.hidden_dim, o.mlp_dim
  self.num_classes = o.num_classes or 1000
  self.conv_proj = nn.Conv2d(3, o.hidden_dim, o.patch_size, { stride = o.patch_size })
  local side = o.image_size // o.patch_size
  self:register_parameter("class_token", T.empty({ 1, 1, o.hidden_dim }))
  self.seq_length = side * side + 1
  self.encoder = Encoder(self.seq_length, o.num_layers, o.num_heads, o.hidden_dim, o.mlp_dim,
                         o.dropout or 0.0, o.attention_dropout or 0.0)
  self.heads = nn.Sequential { { "head", nn.Linear(o.hidden_dim, self.num_classes) } }
end

-- _process_input: [n, 3, h, w] -> [n, (h/p)*(w/p), hidden_dim]
function VisionTransformer:process_input(x)
  local n, h, w = x:size(0), x:size(2), x:size(3)
  local p = self.patch_size
  if h ~= self.image_size or w ~= self.image_size then
    error(string.format("VisionTransformer: Wrong image size! Expected %d but got %dx%d",
                        self.image_size, h, w), 3)
  end
  x = self.conv_proj(x)
  x = x:reshape({ n, self.hidden_dim, (h // p) * (w // p) })
  return x:permute({ 0, 2, 1 })
end

function VisionTransformer:forward(x)
  x = self:process_input(x)
  local n = x:size(0)
  x = T.cat({ self.class_token:expand({ n, -1, -1 }), x }, 1)
  x = self.encoder(x)
  return self.heads(x:select(1, 0))
end

local SPECS = {
  vit_b_16 = { patch_size = 16, num_layers = 12, num_heads = 12, hidden_dim = 768,
               mlp_dim = 3072 },
}

-- build{name = "vit_b_16", image_size = 224, num_classes = 1000, dropout = 0.0,
-- attention_dropout = 0.0}
function M.build(opts)
  opts = opts or {}
  local spec = SPECS[opts.name or "vit_b_16"]
  if spec == nil then
    error(string.format("vit: unknown variant '%s' (known: %s)", tostring(opts.name),
                        table.concat(M.NAMES, ", ")), 2)
  end
  local o = {}
  for k, v in pairs(spec) do o[k] = v end
  o.image_size = opts.image_size or 224
  o.num_classes, o.dropout, o.attention_dropout = opts.num_classes, opts.dropout,
                                                  opts.attention_dropout
  return VisionTransformer(o)
end

-- The image must be the model's image_size (224 unless built otherwise).
function M.input(opts)
  opts = opts or {}
  local s = opts.image or 224
  return { T.empty({ opts.batch or 1, 3, s, s }) }
end

return M
