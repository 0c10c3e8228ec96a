-- models_vision_spec.lua — VGG, ResNet, MobileNetV2 and ViT-B/16 against torchvision 0.14 and torch's own MAC count.
local flops_profiler = require "prof.flops_profiler"

-- torch's numbers (scripts/tools/torch_vision_fixture.py; CI never runs torch): parameters,
-- named_modules() with class names, print(model) for resnet18 and mobilenet_v2, and per-layer
-- MACs counted by forward hooks on nn.Conv2d, nn.Linear and nn.MultiheadAttention.
local HERE = debug.getinfo(1, "S").source:sub(2):gsub("[^/]*$", "")
local TORCH = dofile(HERE .. "fixtures/models/vision_torch.lua").models

local FILES = {
  vgg = require "prof.models.vgg",
  resnet = require "prof.models.resnet",
  mobilenet_v2 = require "prof.models.mobilenet_v2",
  vit = require "prof.models.vit",
}
local ORDER = { "vgg", "resnet", "mobilenet_v2", "vit" }

-- Published by torchvision in its weights' meta: num_params (0.14) and _ops, the GFLOPS of its
-- docs table (0.15+; really multiply-accumulates, conv + linear + attention, batch 1, 224x224,
-- three decimals). Neither comes from the fixture or from profrun.
local PUBLISHED = {
  vgg11 = { 132863336, "7.609" }, vgg11_bn = { 132868840, "7.609" },
  vgg13 = { 133047848, "11.308" }, vgg13_bn = { 133053736, "11.308" },
  vgg16 = { 138357544, "15.470" }, vgg16_bn = { 138365992, "15.470" },
  vgg19 = { 143667240, "19.632" }, vgg19_bn = { 143678248, "19.632" },
  resnet18 = { 11689512, "1.814" }, resnet34 = { 21797672, "3.664" },
  resnet50 = { 25557032, "4.089" }, resnet101 = { 44549160, "7.801" },
  resnet152 = { 60192808, "11.514" },
  mobilenet_v2 = { 3504872, "0.301" },
  vit_b_16 = { 86567656, "17.564" },
}

-- ViT-B/16 at 224: 14*14 patches + the class token, 12 heads of 64, 12 encoder layers.
-- Per layer, QK^T is heads x [197, 64] @ [64, 197] and AV is heads x [197, 197] @ [197, 64]:
-- 2 * 12 * 197^2 * 64 = 59,610,624 MACs; 715,327,488 for the 12 layers.
local VIT_SEQ, VIT_HEADS, VIT_HEAD_DIM, VIT_LAYERS = 197, 12, 64, 12
local VIT_ATTN_MACS_PER_LAYER = 2 * VIT_HEADS * VIT_SEQ * VIT_SEQ * VIT_HEAD_DIM

-- Profiles one forward (meta, batch 1, 224x224) under the given conventions; rows by path.
local function profile(file, name, conventions)
  local model = file.build { name = name }
  model:eval()
  local p = flops_profiler.FlopsProfiler(model)
  p.conventions = conventions
  p:start_profile()
  model(table.unpack(file.input()))
  p:stop_profile()
  local result = p:profile()
  p:end_profile()
  local rows = {}
  for _, r in ipairs(result.modules) do rows[r.path] = r end
  return result, rows
end

local function sum_macs(result, type_name)
  local n = 0
  for _, r in ipairs(result.modules) do
    if r.type == type_name then n = n + r.macs end
  end
  return n
end

describe("vision models", function()
  for _, file_name in ipairs(ORDER) do
    local file = FILES[file_name]
    for _, name in ipairs(file.NAMES) do
      local torch = TORCH[name]
      describe(name, function()
        it("has torchvision's parameter count", function()
          local n = file.build({ name = name }):num_parameters()
          assert.equal(torch.params, n)
          assert.equal(PUBLISHED[name][1], n)
        end)

        it("has torch's named_modules() paths and class names, in order", function()
          local got = {}
          for i, pair in ipairs(file.build({ name = name }):named_modules()) do
            got[i] = { pair[1], pair[2].__name }
          end
          assert.same(torch.modules, got)
        end)

        for _, conventions in ipairs { "exact", "deepspeed" } do
          it("counts torch's Conv2d and Linear MACs, in total and per layer (" .. conventions
             .. ")", function()
            local result, rows = profile(file, name, conventions)
            assert.equal(torch.conv_macs, sum_macs(result, "Conv2d"))
            assert.equal(torch.linear_macs, sum_macs(result, "Linear"))
            for path, macs in pairs(torch.layers) do
              local row = assert(rows[path], "no profiled module " .. path)
              if row.type == "MultiheadAttention" then
                -- torch counted the projections; the two attention matmuls come on top
                assert.equal(macs + VIT_ATTN_MACS_PER_LAYER, row.macs, path)
              else
                assert.equal(macs, row.macs, path)
              end
            end
            -- nothing else multiplies: the model total is these layers' sum, and it rounds to
            -- torchvision's published GFLOPS
            local attention = torch.mha_proj_macs > 0 and VIT_LAYERS * VIT_ATTN_MACS_PER_LAYER or 0
            assert.equal(torch.conv_macs + torch.linear_macs + torch.mha_proj_macs + attention,
                         result.fwd_macs)
            assert.equal(PUBLISHED[name][2], string.format("%.3f", result.fwd_macs / 1e9))
          end)
        end
      end)
    end
  end

  it("prints resnet18 and mobilenet_v2 exactly as torchvision does", function()
    assert.equal(TORCH.resnet18.repr, tostring(FILES.resnet.build { name = "resnet18" }))
    assert.equal(TORCH.mobilenet_v2.repr, tostring(FILES.mobilenet_v2.build()))
  end)

  it("counts ViT-B/16's attention matmuls as 2*heads*197^2*64 per layer", function()
    assert.equal(59610624, VIT_ATTN_MACS_PER_LAYER)
    local result, rows = profile(FILES.vit, "vit_b_16", "exact")
    local mha = sum_macs(result, "MultiheadAttention")
    assert.equal(715327488, mha - TORCH.vit_b_16.mha_proj_macs)
    -- in_proj [2304, 768] and out_proj [768, 768] over 197 rows, as torch's hook counted them
    assert.equal(197 * 768 * (3 * 768 + 768), TORCH.vit_b_16.layers
                 ["encoder.layers.encoder_layer_0.self_attention"])
    assert.equal(197 * 768 * (4 * 768) + VIT_ATTN_MACS_PER_LAYER,
                 rows["encoder.layers.encoder_layer_11.self_attention"].macs)
    -- out_proj is never called as a module (PyTorch runs its weight through F.linear)
    assert.equal(0, rows["encoder.layers.encoder_layer_0.self_attention.out_proj"].calls)
  end)

  it("hand-checks a few layers of resnet50 and vgg16", function()
    local _, r50 = profile(FILES.resnet, "resnet50", "exact")
    -- conv1: 64 x 112 x 112 outputs, each 3 * 7 * 7 MACs
    assert.equal(64 * 112 * 112 * 3 * 7 * 7, r50["conv1"].macs)
    -- layer4.0.conv2 (ResNet V1.5: the stride is on the 3x3): 512 x 7 x 7 outputs, 512 * 9 each
    assert.equal(512 * 7 * 7 * 512 * 9, r50["layer4.0.conv2"].macs)
    assert.equal(2048 * 1000, r50["fc"].macs)
    local _, v16 = profile(FILES.vgg, "vgg16", "exact")
    assert.equal(64 * 224 * 224 * 3 * 9, v16["features.0"].macs)
    assert.equal(25088 * 4096, v16["classifier.0"].macs)
  end)

  it("scales MACs with the batch and builds named variants only", function()
    local model = FILES.resnet.build { name = "resnet18" }
    local _, macs = flops_profiler.get_model_profile {
      model = model, args = FILES.resnet.input { batch = 2 }, print_profile = false,
      as_string = false,
    }
    assert.equal(2 * (TORCH.resnet18.conv_macs + TORCH.resnet18.linear_macs), macs)
    assert.same({ 1, 3, 224, 224 }, FILES.vgg.input()[1].shape)
    assert.error_matches(function() FILES.resnet.build { name = "resnet19" } end,
                         "resnet: unknown variant 'resnet19' (known: resnet18, resnet34, "
                         .. "resnet50, resnet101, resnet152)", 1, true)
    assert.error_matches(function() FILES.vgg.build { name = "vgg16_gn" } end,
                         "vgg: unknown variant 'vgg16_gn'", 1, true)
  end)
end)
