"""torch_fixture_conv.py — records PyTorch 1.13's values and gradients for convolutions, transposed
convolutions, pooling and interpolate.

    /usr/bin/python3 scripts/tools/torch_fixture_conv.py > spec/fixtures/ops/conv.lua

Every case names its family in op ("conv", "conv_transpose", "pool", "interpolate") and carries
what the Lua runner needs in args: nsp, the keyword options as profrun's binding takes them, the
kernel or output size of pools, and transpose = {d0, d1} when the input is fed as a transposed
(non-contiguous) view of the recorded leaf.
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from torch_fixture import case, make, write  # noqa: E402

C = []
CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
CONVT = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def conv(name, nsp, x, w, b=None, transpose=None, seed=0, **opts):
    """conv<nsp>d(x, w, b, **opts); transpose: feed x.transpose(*transpose) instead of x."""
    inputs = [make(x, seed + 1), make(w, seed + 2)] + ([make([w[0]], seed + 3)] if b else [])
    args = {"nsp": nsp, "opts": opts}
    if transpose:
        args["transpose"] = list(transpose)

    def fn(xx, ww, bb=None):
        if transpose:
            xx = xx.transpose(*transpose)
        return CONV[nsp](xx, ww, bb, **opts)
    C.append(case(name, fn, inputs, args=args, op="conv"))


def convt(name, nsp, x, w, cout, b=True, seed=0, **opts):
    inputs = [make(x, seed + 1), make(w, seed + 2)] + ([make([cout], seed + 3)] if b else [])
    C.append(case(name, lambda xx, ww, bb=None: CONVT[nsp](xx, ww, bb, **opts), inputs,
                  args={"nsp": nsp, "opts": opts}, op="conv_transpose"))


# convolutions: plain, strided and padded, grouped, dilated, 'same' (odd and even kernels), depthwise,
# pointwise (the 1×1 fast path), 1-D, 3-D, unbatched, non-contiguous, without bias
conv("conv2d", 2, [2, 3, 5, 5], [4, 3, 3, 3], b=True, seed=100)
conv("conv2d stride 2 padding 1", 2, [2, 3, 7, 6], [4, 3, 3, 3], b=True, seed=110, stride=2, padding=1)
conv("conv2d asymmetric stride and padding", 2, [1, 2, 7, 8], [3, 2, 3, 2], b=True, seed=120,
     stride=[2, 3], padding=[1, 0])
conv("conv2d groups 2", 2, [2, 4, 6, 6], [6, 2, 3, 3], b=True, seed=130, groups=2)
conv("conv2d dilation 2", 2, [1, 3, 9, 8], [2, 3, 3, 3], b=True, seed=140, dilation=2, padding=2)
conv("conv2d same odd kernel", 2, [2, 3, 6, 5], [4, 3, 3, 3], b=True, seed=150, padding="same")
conv("conv2d same even kernel", 2, [1, 2, 6, 7], [3, 2, 4, 2], b=True, seed=160, padding="same")
conv("conv2d same dilated even kernel", 2, [1, 2, 7, 6], [2, 2, 2, 4], b=False, seed=170,
     padding="same", dilation=[3, 1])
conv("conv2d depthwise", 2, [2, 4, 6, 5], [4, 1, 3, 3], b=True, seed=180, groups=4, padding=1)
conv("conv2d 1x1", 2, [2, 5, 4, 3], [3, 5, 1, 1], b=True, seed=190)
conv("conv2d 1x1 stride 2", 2, [2, 4, 5, 5], [3, 4, 1, 1], b=False, seed=200, stride=2)
conv("conv2d no bias", 2, [2, 3, 5, 4], [2, 3, 2, 2], seed=210, stride=1, padding=1)
conv("conv2d non-contiguous input", 2, [2, 3, 6, 5], [4, 3, 3, 3], b=True, seed=220, padding=1,
     transpose=(2, 3))
conv("conv2d unbatched", 2, [3, 6, 6], [2, 3, 3, 3], b=True, seed=230, stride=2)
conv("conv1d", 1, [2, 3, 11], [4, 3, 3], b=True, seed=240, stride=2, padding=1)
conv("conv1d groups dilation", 1, [2, 4, 12], [6, 2, 3], b=True, seed=250, groups=2, dilation=3)
conv("conv1d same even kernel", 1, [2, 2, 9], [3, 2, 4], b=True, seed=260, padding="same")
conv("conv3d", 3, [2, 2, 4, 5, 4], [3, 2, 2, 3, 2], b=True, seed=270, stride=[1, 2, 1],
     padding=[1, 0, 1])
conv("conv3d groups dilation", 3, [1, 4, 5, 5, 5], [4, 2, 2, 2, 2], b=False, seed=280, groups=2,
     dilation=2, padding=1)

# transposed convolutions: stride 2 with output_padding, groups and dilation, 1-D and 3-D, stride 1
# (computed as a conv with the flipped weight), padding that crops a 1-tap kernel
convt("conv_transpose2d stride 2 output_padding 1", 2, [2, 4, 3, 3], [4, 3, 3, 3], 3, seed=300,
      stride=2, padding=1, output_padding=1)
convt("conv_transpose2d groups 2 dilation 2", 2, [1, 4, 4, 3], [4, 2, 3, 2], 4, seed=310, groups=2,
      dilation=2, stride=[1, 2])
convt("conv_transpose2d no bias", 2, [2, 3, 4, 4], [3, 2, 2, 2], 2, b=False, seed=320, stride=2)
convt("conv_transpose1d", 1, [2, 3, 5], [3, 2, 4], 2, seed=330, stride=3, padding=1,
      output_padding=2)
convt("conv_transpose3d", 3, [1, 2, 3, 2, 3], [2, 3, 2, 2, 3], 3, seed=340, stride=2, padding=[0, 1, 1],
      output_padding=[1, 0, 1])
convt("conv_transpose2d stride 1 groups 2", 2, [2, 4, 4, 5], [4, 3, 3, 3], 6, seed=350, padding=1,
      groups=2)
convt("conv_transpose1d kernel 1 cropped", 1, [2, 3, 6], [3, 2, 1], 2, seed=360, padding=1)


def pool(name, kind, nsp, x, size, seed=0, ties=False, **opts):
    """kind: max, avg, adaptive_avg or adaptive_max; size: kernel_size or output_size."""
    f = getattr(F, f"{kind}_pool{nsp}d")
    t = make(x, seed, grad=False)
    if ties:
        t = (t * 2).round() / 2   # values in steps of 0.5: windows with tied maxima
    t.requires_grad_(True)
    C.append(case(name, lambda xx: f(xx, size, **opts), [t],
                  args={"nsp": nsp, "kind": kind, "size": size, "opts": opts}, op="pool"))


pool("max_pool2d k3 s2 p1", "max", 2, [2, 3, 7, 6], 3, seed=400, stride=2, padding=1)
pool("max_pool2d ties", "max", 2, [2, 2, 6, 6], 2, seed=410, ties=True)
pool("max_pool2d ties overlapping", "max", 2, [1, 2, 6, 7], 3, seed=415, ties=True, stride=1)
pool("max_pool2d dilation ceil_mode", "max", 2, [1, 2, 9, 8], [3, 2], seed=420, stride=[2, 1],
     padding=1, dilation=2, ceil_mode=True)
pool("max_pool1d", "max", 1, [2, 3, 11], 3, seed=430, stride=2, padding=1, ceil_mode=True)
pool("max_pool3d", "max", 3, [1, 2, 5, 4, 5], 2, seed=440, stride=[1, 2, 2], padding=1)
pool("max_pool2d unbatched", "max", 2, [3, 5, 5], 2, seed=450)
pool("avg_pool2d k3 s2 p1", "avg", 2, [2, 3, 7, 6], 3, seed=460, stride=2, padding=1)
pool("avg_pool2d exclude pad ceil_mode", "avg", 2, [1, 2, 7, 8], 3, seed=470, stride=2, padding=1,
     count_include_pad=False, ceil_mode=True)
pool("avg_pool2d include pad ceil_mode", "avg", 2, [1, 2, 6, 7], [3, 2], seed=480, stride=2,
     padding=1, ceil_mode=True)
pool("avg_pool1d", "avg", 1, [2, 3, 10], 4, seed=490, stride=3, padding=2)
pool("avg_pool3d", "avg", 3, [1, 2, 4, 5, 6], [2, 3, 2], seed=500, stride=[2, 1, 2], padding=[1, 1, 0],
     count_include_pad=False)
# divisor_override replaces the divisor of every window, clipped (ceil_mode), padded or not, and
# may be negative; avg_pool1d has none
pool("avg_pool2d divisor_override ceil_mode", "avg", 2, [2, 3, 7, 6], 3, seed=502, stride=2,
     padding=1, ceil_mode=True, divisor_override=5)
pool("avg_pool2d divisor_override negative exclude pad", "avg", 2, [1, 2, 6, 5], [2, 3], seed=504,
     stride=[2, 1], padding=1, count_include_pad=False, divisor_override=-4)
pool("avg_pool3d divisor_override", "avg", 3, [1, 2, 4, 5, 4], 2, seed=506, stride=[1, 2, 2],
     padding=[0, 1, 1], divisor_override=3)
pool("adaptive_avg_pool2d", "adaptive_avg", 2, [2, 3, 7, 5], [3, 4], seed=510)
pool("adaptive_avg_pool2d global", "adaptive_avg", 2, [2, 3, 4, 5], 1, seed=515)
pool("adaptive_avg_pool1d", "adaptive_avg", 1, [2, 2, 10], 4, seed=520)
pool("adaptive_avg_pool3d", "adaptive_avg", 3, [1, 2, 5, 4, 6], [2, 3, 4], seed=530)
pool("adaptive_max_pool2d", "adaptive_max", 2, [2, 3, 7, 5], [3, 4], seed=540)
pool("adaptive_max_pool1d", "adaptive_max", 1, [2, 2, 10], 3, seed=550)
pool("adaptive_max_pool3d", "adaptive_max", 3, [1, 2, 5, 4, 6], [2, 3, 4], seed=560)


def interp(name, x, seed=0, **opts):
    C.append(case(name, lambda xx: F.interpolate(xx, **opts), [make(x, seed)], args={"opts": opts},
                  op="interpolate"))


# nearest with sizes and factors (not 1: PyTorch 1.13's nearest backward maps equal sizes as the
# identity while its forward does not), the linear family both ways, bicubic, area
interp("nearest1d scale 1.7", [2, 2, 5], seed=600, scale_factor=1.7)
interp("nearest2d size", [1, 2, 4, 5], seed=610, size=[7, 3])
interp("nearest3d scale 2", [1, 1, 2, 3, 2], seed=620, scale_factor=2.0)
interp("nearest2d scale 0.6", [1, 2, 6, 7], seed=625, scale_factor=[0.6, 0.5])
interp("linear", [2, 2, 5], seed=630, size=9, mode="linear")
interp("linear align_corners", [2, 2, 5], seed=640, scale_factor=1.5, mode="linear", align_corners=True)
interp("bilinear scale 2.5", [1, 2, 3, 4], seed=650, scale_factor=2.5, mode="bilinear")
interp("bilinear downsample", [1, 2, 7, 6], seed=660, size=[4, 4], mode="bilinear")
interp("bilinear align_corners", [1, 2, 3, 4], seed=670, size=[5, 7], mode="bilinear", align_corners=True)
interp("trilinear", [1, 2, 2, 3, 4], seed=680, scale_factor=[2.0, 1.5, 0.75], mode="trilinear")
interp("trilinear align_corners", [1, 1, 3, 2, 3], seed=690, size=[4, 4, 5], mode="trilinear",
       align_corners=True)
interp("bicubic", [1, 2, 4, 5], seed=700, size=[7, 8], mode="bicubic")
interp("bicubic align_corners", [1, 2, 4, 4], seed=710, scale_factor=1.75, mode="bicubic",
       align_corners=True)
interp("area", [2, 2, 7, 5], seed=720, size=[3, 2], mode="area")
interp("area 1d", [2, 2, 9], seed=730, size=4, mode="area")

write(C, "torch_fixture_conv.py: PyTorch " + torch.__version__ + " values and gradients (conv, "
      "conv_transpose, pools, interpolate)")
