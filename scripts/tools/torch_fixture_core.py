"""torch_fixture_core.py — records PyTorch 1.13's values and gradients for linear, the matmul
family, elementwise binary ops, reductions and views.

    /usr/bin/python3 scripts/tools/torch_fixture_core.py > spec/fixtures/ops/core.lua
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from torch_fixture import case, make, write  # noqa: E402

C = []
# linear: 3-D input, bias; 1-D input; no bias
C.append(case("linear", F.linear, [make([2, 3, 4], 1), make([5, 4], 2), make([5], 3)]))
C.append(case("linear", F.linear, [make([4], 4), make([3, 4], 5), make([3], 6)]))
C.append(case("linear_nobias", lambda x, w: F.linear(x, w), [make([6, 4], 7), make([2, 4], 8)]))
# the matmul family
C.append(case("matmul", torch.matmul, [make([3, 4], 9), make([4, 5], 10)]))
C.append(case("matmul", torch.matmul, [make([4], 11), make([4], 12)]))
C.append(case("matmul", torch.matmul, [make([4], 13), make([2, 4, 3], 14)]))
C.append(case("matmul", torch.matmul, [make([2, 3, 4], 15), make([4], 16)]))
C.append(case("matmul", torch.matmul, [make([2, 1, 3, 4], 17), make([3, 4, 2], 18)]))
C.append(case("mm", torch.mm, [make([3, 4], 19), make([4, 2], 20)]))
C.append(case("bmm", torch.bmm, [make([2, 3, 4], 21), make([2, 4, 5], 22)]))
C.append(case("addmm", lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0),
              [make([3], 23), make([2, 4], 24), make([4, 3], 25)], args={"beta": 0.5, "alpha": 2.0}))
C.append(case("baddbmm", lambda c, a, b: torch.baddbmm(c, a, b, beta=1.0, alpha=1.0),
              [make([2, 3, 5], 26), make([2, 3, 4], 27), make([2, 4, 5], 28)], args={"beta": 1.0, "alpha": 1.0}))
# elementwise binary ops with broadcasting, scalars on either side
for i, (name, f) in enumerate([("add", torch.add), ("sub", torch.sub), ("mul", torch.mul), ("div", torch.div)]):
    C.append(case(name, f, [make([2, 3, 4], 30 + i), make([3, 1], 40 + i, low=0.5, high=2.0)]))
    C.append(case(name + "_scalar", lambda a, f=f: f(a, 1.5), [make([3, 4], 50 + i)], args={"s": 1.5}))
    C.append(case(name + "_rscalar", lambda a, f=f: f(2.5, a) if name != "div" else 2.5 / a,
                  [make([3, 4], 60 + i, low=0.5, high=2.0)], args={"s": 2.5}))
C.append(case("pow_scalar", lambda a: a ** 3.0, [make([3, 4], 70)], args={"s": 3.0}))
C.append(case("pow_scalar", lambda a: a ** 0.5, [make([5], 71, low=0.5, high=2.0)], args={"s": 0.5}))
# reductions
C.append(case("sum", lambda x: x.sum(), [make([3, 4], 80)], args={}))
C.append(case("sum", lambda x: x.sum(dim=1), [make([2, 3, 4], 81)], args={"dim": 1}))
C.append(case("sum", lambda x: x.sum(dim=(0, 2), keepdim=True), [make([2, 3, 4], 82)],
              args={"dim": [0, 2], "keepdim": True}))
C.append(case("mean", lambda x: x.mean(dim=-1), [make([2, 3, 4], 83)], args={"dim": -1}))
C.append(case("amax", lambda x: x.amax(dim=1), [make([3, 5], 84)], args={"dim": 1}))
C.append(case("var", lambda x: x.var(dim=1), [make([3, 5], 85)], args={"dim": 1}))
C.append(case("var", lambda x: x.var(dim=0, correction=0) if hasattr(torch, "correction") else x.var(dim=0, unbiased=False),
              [make([4, 3], 86)], args={"dim": 0, "correction": 0}))
# views and copies
C.append(case("view_chain", lambda x: x.transpose(0, 1).reshape(4, 6).narrow(1, 1, 3),
              [make([2, 4, 3], 90)]))
C.append(case("permute_select", lambda x: x.permute(2, 0, 1).select(1, 1), [make([2, 3, 4], 91)]))
C.append(case("expand", lambda x: x.unsqueeze(0).expand(3, 2, 4) * 1.0, [make([2, 4], 92)]))
C.append(case("flatten", lambda x: torch.flatten(x, 1), [make([2, 3, 4], 93)]))

write(C, "torch_fixture_core.py: PyTorch " + torch.__version__ + " values and gradients (linear, matmul, "
      "binary ops, reductions, views)")
