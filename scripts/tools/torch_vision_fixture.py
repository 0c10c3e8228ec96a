"""torch_vision_fixture.py — torchvision 0.14's vision models as a Lua fixture: params, module paths, reprs, MACs.

Regenerate (torch 1.13 and torchvision 0.14 are installed for the system Python, not pyenv's):

    /usr/bin/python3 scripts/tools/torch_vision_fixture.py > spec/fixtures/models/vision_torch.lua

The MAC counts are independent of profrun and of DeepSpeed: plain torch forward hooks, batch 1,
3x224x224, eval mode, no_grad.

* nn.Conv2d: out.numel() * in_channels / groups * prod(kernel_size)
* nn.Linear: rows * in_features * out_features, rows = in.numel() / in_features
* nn.MultiheadAttention: its projections are not calls of nn.Linear (PyTorch runs in_proj_weight
  and out_proj.weight through F.linear or the fused fast path), so a hook on the MHA module counts
  them from the module's own weights: rows * E * 3E for in_proj_weight [3E, E] and rows * E * E
  for out_proj.weight [E, E], rows = out.numel() / E. Hooks in torch 1.13 see no keyword
  arguments (ViT calls self_attention(query=x, key=x, value=x)), so the rows come from the
  output; that is exact for self-attention, where the key and value rows equal the query rows.
  The attention matmuls (QK^T and AV) are not counted here: the spec derives them by hand.
"""
import sys

import torch
import torchvision
from torch import nn
from torchvision import models

MODELS = [
    "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn",
    "resnet18", "resnet34", "resnet50", "resnet101", "resnet152",
    "mobilenet_v2", "vit_b_16",
]
# print(model) is stored only for these (the spec compares it character for character).
REPRS = {"resnet18", "mobilenet_v2"}


def lua_str(s):
    """A Lua string literal: long brackets for multi-line text, quotes otherwise."""
    if "\n" in s:
        level = "=="
        assert "]" + level + "]" not in s
        return "[" + level + "[\n" + s + "]" + level + "]"
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def count(model):
    """Per-layer MACs of every Conv2d, Linear and MultiheadAttention call, keyed by path."""
    layers, kinds, handles = {}, {}, []

    def conv_hook(path):
        def hook(m, inp, out):
            k = 1
            for s in m.kernel_size:
                k *= s
            layers[path] = layers.get(path, 0) + out.numel() * (m.in_channels // m.groups) * k
        return hook

    def linear_hook(path):
        def hook(m, inp, out):
            rows = inp[0].numel() // m.in_features
            layers[path] = layers.get(path, 0) + rows * m.in_features * m.out_features
        return hook

    def mha_hook(path):
        def hook(m, inp, out):
            e = m.embed_dim
            rows = out[0].numel() // e
            w_in, w_out = m.in_proj_weight.shape, m.out_proj.weight.shape
            layers[path] = layers.get(path, 0) + rows * w_in[1] * w_in[0] + rows * w_out[1] * w_out[0]
        return hook

    for path, m in model.named_modules():
        # exact types: MHA's out_proj is a Linear subclass that forward never calls
        if type(m) is nn.Conv2d:
            kinds[path] = "conv"
            handles.append(m.register_forward_hook(conv_hook(path)))
        elif type(m) is nn.Linear:
            kinds[path] = "linear"
            handles.append(m.register_forward_hook(linear_hook(path)))
        elif type(m) is nn.MultiheadAttention:
            kinds[path] = "mha"
            handles.append(m.register_forward_hook(mha_hook(path)))
    with torch.no_grad():
        model(torch.zeros(1, 3, 224, 224))
    for h in handles:
        h.remove()
    totals = {"conv": 0, "linear": 0, "mha": 0}
    for path, macs in layers.items():
        totals[kinds[path]] += macs
    return layers, kinds, totals


def main():
    torch.manual_seed(0)
    out = sys.stdout
    out.write("-- vision_torch.lua — torchvision %s (torch %s): params, module paths, reprs, "
              "hook-counted MACs.\n" % (torchvision.__version__, torch.__version__))
    out.write("-- Generated (do not edit): /usr/bin/python3 scripts/tools/torch_vision_fixture.py\n"
              "--   > spec/fixtures/models/vision_torch.lua\n")
    out.write("return {\n")
    out.write("  torch = %s,\n  torchvision = %s,\n" % (lua_str(torch.__version__),
                                                      lua_str(torchvision.__version__)))
    out.write("  models = {\n")
    for name in MODELS:
        model = getattr(models, name)().eval()
        layers, kinds, totals = count(model)
        params = sum(p.numel() for p in model.parameters())
        out.write("    %s = {\n" % name)
        out.write("      params = %d,\n" % params)
        out.write("      conv_macs = %d,\n      linear_macs = %d,\n      mha_proj_macs = %d,\n"
                  % (totals["conv"], totals["linear"], totals["mha"]))
        out.write("      -- {path, class name} of named_modules(), in order\n")
        out.write("      modules = {\n")
        for path, m in model.named_modules():
            out.write("        { %s, %s },\n" % (lua_str(path), lua_str(type(m).__name__)))
        out.write("      },\n")
        out.write("      -- path -> MACs of each Conv2d, Linear and MultiheadAttention (projections)\n")
        out.write("      layers = {\n")
        for path, _ in model.named_modules():
            if path in layers:
                out.write("        [%s] = %d,\n" % (lua_str(path), layers[path]))
        out.write("      },\n")
        if name in REPRS:
            out.write("      repr = %s,\n" % lua_str(str(model)))
        out.write("    },\n")
        out.flush()
        del model
    out.write("  },\n}\n")


if __name__ == "__main__":
    main()
