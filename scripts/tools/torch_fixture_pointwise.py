"""torch_fixture_pointwise.py — records PyTorch 1.13's values and gradients for activations,
elementwise math, clamp, prelu, softmax, maximum/minimum, masked_fill, where, triu/tril, cat, stack,
chunk and split: transposed (non-contiguous) inputs, broadcasting, and the edge values where the
kernels make choices (kinks, bounds, ties, large logits).

    /usr/bin/python3 scripts/tools/torch_fixture_pointwise.py > spec/fixtures/ops/pointwise.lua
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from torch_fixture import case, make, write  # noqa: E402


def vals(values, shape=None, grad=True):
    """A leaf of the given values (rounded to float32, as profrun holds them)."""
    t = torch.tensor(values, dtype=torch.float32).to(torch.float64)
    if shape is not None:
        t = t.reshape(shape)
    return t.requires_grad_(grad)


def mask(values, shape=None):
    """A bool tensor; recorded as int64 0/1 (the runner casts it back to bool)."""
    t = torch.tensor(values, dtype=torch.int64)
    return t.reshape(shape) if shape is not None else t


C = []
U = lambda name, fn, x, args=None: C.append(case(name, fn, [x], args=args, op=name))  # noqa: E731
T = lambda name, fn, x, args=None: C.append(case(name + "_t", lambda a: fn(a.t()), [x], args=args,  # noqa: E731
                                                   op=name + "_t"))

# activations: random inputs, a transposed input, and the kinks with PyTorch's one-sided choices
# 16 values: PyTorch's vectorised kernels take every element (a shorter tail runs scalar code,
# which for hardswish at 3 chooses differently)
KINKS = [-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0, 7.0, -4.0, 2.0, -2.0, 4.0, 5.0, -0.25, 0.25]
U("relu", F.relu, make([3, 4], 1))
U("relu", F.relu, vals(KINKS))
T("relu", F.relu, make([4, 3], 2))
U("relu6", F.relu6, make([3, 4], 3, low=-2.0, high=8.0))
U("relu6", F.relu6, vals(KINKS))
U("leaky_relu", F.leaky_relu, vals(KINKS), args={})
U("leaky_relu", lambda x: F.leaky_relu(x, 0.2), make([3, 4], 4), args={"slope": 0.2})
T("leaky_relu", lambda x: F.leaky_relu(x, 0.2), make([4, 3], 5), args={"slope": 0.2})
U("elu", F.elu, make([3, 4], 6, low=-3.0, high=2.0), args={})
U("elu", lambda x: F.elu(x, 1.5), vals(KINKS), args={"alpha": 1.5})
U("gelu", F.gelu, make([3, 4], 7, low=-4.0, high=4.0), args={})
U("gelu", F.gelu, vals(KINKS), args={})
U("gelu", lambda x: F.gelu(x, approximate="tanh"), make([3, 4], 8, low=-4.0, high=4.0),
  args={"approximate": "tanh"})
T("gelu", lambda x: F.gelu(x, approximate="tanh"), make([4, 3], 9, low=-4.0, high=4.0),
  args={"approximate": "tanh"})
U("silu", F.silu, make([3, 4], 10, low=-6.0, high=6.0))
U("tanh", torch.tanh, make([3, 4], 11, low=-3.0, high=3.0))
U("tanh", torch.tanh, vals([-30.0, -5.0, 0.0, 5.0, 30.0]))
U("sigmoid", torch.sigmoid, make([3, 4], 12, low=-6.0, high=6.0))
U("sigmoid", torch.sigmoid, vals([-100.0, -20.0, 0.0, 20.0, 100.0]))
T("sigmoid", torch.sigmoid, make([4, 3], 13, low=-6.0, high=6.0))
U("softplus", F.softplus, make([3, 4], 14, low=-5.0, high=5.0), args={})
U("softplus", F.softplus, vals([-50.0, 0.0, 19.0, 20.0, 21.0, 50.0]), args={})
# beta 2, threshold 5: x = 2.5 sits exactly on the threshold (still the log form in PyTorch)
U("softplus", lambda x: F.softplus(x, 2.0, 5.0), vals([-1.0, 0.0, 2.0, 2.5, 3.0, 10.0]),
  args={"beta": 2.0, "threshold": 5.0})
U("hardswish", F.hardswish, make([3, 4], 15, low=-5.0, high=5.0))
U("hardswish", F.hardswish, vals(KINKS))
U("mish", F.mish, make([3, 4], 16, low=-5.0, high=5.0))
U("mish", F.mish, vals([-30.0, -1.0, 0.0, 1.0, 30.0]))
T("mish", F.mish, make([4, 3], 17, low=-3.0, high=3.0))

# elementwise math
U("neg", torch.neg, make([3, 4], 20))
U("exp", torch.exp, make([3, 4], 21, low=-5.0, high=5.0))
U("log", torch.log, make([3, 4], 22, low=0.05, high=5.0))
U("sqrt", torch.sqrt, make([3, 4], 23, low=0.05, high=5.0))
U("rsqrt", torch.rsqrt, make([3, 4], 24, low=0.05, high=5.0))
U("abs", torch.abs, make([3, 4], 25))
U("abs", torch.abs, vals([-2.0, -0.0, 0.0, 1.5]))
U("sin", torch.sin, make([3, 4], 26, low=-4.0, high=4.0))
U("cos", torch.cos, make([3, 4], 27, low=-4.0, high=4.0))
U("erf", torch.erf, make([3, 4], 28, low=-3.0, high=3.0))
U("reciprocal", torch.reciprocal, make([3, 4], 29, low=0.2, high=3.0))
T("exp", torch.exp, make([4, 3], 30))
T("log", torch.log, make([4, 3], 31, low=0.1, high=2.0))
C.append(case("neg_operator", lambda x: -x, [make([2, 3], 32)]))

# clamp: gradient 1 inside and at the bounds, 0 outside
U("clamp", lambda x: x.clamp(-0.5, 0.5), vals([-1.0, -0.5, -0.25, 0.0, 0.5, 0.75]),
  args={"lo": -0.5, "hi": 0.5})
U("clamp", lambda x: x.clamp(min=0.0), make([3, 4], 33), args={"lo": 0.0})
U("clamp", lambda x: x.clamp(max=0.25), make([3, 4], 34), args={"hi": 0.25})
T("clamp", lambda x: x.clamp(-0.3, 0.6), make([4, 3], 35), args={"lo": -0.3, "hi": 0.6})

# prelu: a weight per channel (dim 1), a shared weight, a transposed input
C.append(case("prelu", F.prelu, [make([2, 3, 4], 40), make([3], 41, low=0.0, high=0.5)]))
C.append(case("prelu", F.prelu, [vals(KINKS, [2, 8]), vals([0.25])]))
C.append(case("prelu_t", lambda x, w: F.prelu(x.t(), w), [make([4, 3], 42), make([4], 43)]))

# softmax and log_softmax along each kind of dim; large logits must not overflow
for name, f in [("softmax", F.softmax), ("log_softmax", F.log_softmax)]:
    C.append(case(name, lambda x, f=f: f(x, dim=-1), [make([3, 5], 50)], args={"dim": -1}, op=name))
    C.append(case(name, lambda x, f=f: f(x, dim=0), [make([3, 5], 51)], args={"dim": 0}, op=name))
    C.append(case(name, lambda x, f=f: f(x, dim=1), [make([2, 3, 4], 52)], args={"dim": 1}, op=name))
    C.append(case(name, lambda x, f=f: f(x, dim=-1), [make([2, 6], 53, low=-1000.0, high=1000.0)],
                  args={"dim": -1}, op=name))
    C.append(case(name, lambda x, f=f: f(x, dim=1), [vals([1000.0, 1001.0, 999.0, -1000.0, 0.0, 1000.0], [2, 3])],
                  args={"dim": 1}, op=name))
    C.append(case(name + "_t", lambda x, f=f: f(x.t(), dim=-1), [make([5, 3], 54)], args={"dim": -1},
                  op=name + "_t"))

# maximum/minimum: broadcasting, ties (the gradient halves), a transposed operand
for name, f in [("maximum", torch.maximum), ("minimum", torch.minimum)]:
    C.append(case(name, f, [make([2, 3, 4], 60), make([3, 1], 61)], op=name))
    C.append(case(name, f, [vals([1.0, 2.0, 3.0, 0.5, -1.0, 2.0], [2, 3]), vals([1.0, 1.0, 2.0])], op=name))
    C.append(case(name + "_t", lambda a, b, f=f: f(a.t(), b), [make([4, 3], 62), make([3, 4], 63)],
                  op=name + "_t"))

# selections
MASK = [[1, 0, 0, 1], [0, 1, 0, 0], [1, 1, 0, 0]]
C.append(case("masked_fill", lambda x, m: x.masked_fill(m.bool(), -1.5), [make([3, 4], 70), mask(MASK)],
              args={"value": -1.5}))
C.append(case("masked_fill", lambda x, m: x.masked_fill(m.bool(), 2.0), [make([3, 4], 71), mask([1, 0, 1, 0])],
              args={"value": 2.0}))
C.append(case("masked_fill", lambda x, m: x.masked_fill(m.bool(), 0.0), [make([4], 72), mask(MASK)],
              args={"value": 0.0}))
C.append(case("masked_fill_t", lambda x, m: x.t().masked_fill(m.bool(), 3.0), [make([4, 3], 73), mask(MASK)],
              args={"value": 3.0}))
C.append(case("where", lambda c, a, b: torch.where(c.bool(), a, b), [mask(MASK), make([3, 1], 74), make([4], 75)]))
C.append(case("where", lambda c, a, b: torch.where(c.bool(), a, b), [mask(MASK), make([3, 4], 76), make([3, 4], 77)]))
C.append(case("where_sa", lambda c, b: torch.where(c.bool(), torch.tensor(0.5, dtype=torch.float64), b),
              [mask(MASK), make([3, 4], 78)], args={"s": 0.5}))
C.append(case("where_sb", lambda c, a: torch.where(c.bool(), a, torch.tensor(-2.0, dtype=torch.float64)),
              [mask([1, 0, 1, 1]), make([3, 4], 79)], args={"s": -2.0}))
C.append(case("where_t", lambda c, a, b: torch.where(c.bool(), a.t(), b), [mask(MASK), make([4, 3], 80), make([4], 81)]))
for name, f in [("triu", torch.triu), ("tril", torch.tril)]:
    for k, diag in enumerate([0, 1, -1, 3]):
        C.append(case(name, lambda x, f=f, diag=diag: f(x, diag), [make([2, 3, 4], 82 + k)],
                      args={"diagonal": diag}, op=name))
    C.append(case(name + "_t", lambda x, f=f: f(x.t(), 1), [make([5, 3], 86)], args={"diagonal": 1},
                  op=name + "_t"))

# cat, stack, chunk, split: copies of any layout, gradients as slices
C.append(case("cat", lambda a, b: torch.cat([a, b], 0), [make([2, 3], 90), make([1, 3], 91)], args={"dim": 0}))
C.append(case("cat", lambda a, b, c: torch.cat([a, b, c], 1), [make([2, 1, 3], 92), make([2, 2, 3], 93),
                                                               make([2, 3, 3], 94)], args={"dim": 1}))
C.append(case("cat", lambda a, b: torch.cat([a, b], -1), [make([2, 3], 95), make([2, 2], 96, grad=False)],
              args={"dim": -1}))
C.append(case("cat_t", lambda a, b: torch.cat([a.t(), b], 1), [make([3, 2], 97), make([2, 4], 98)], args={"dim": 1}))
C.append(case("cat", lambda *xs: torch.cat(list(xs), 1),
              [make([2, k + 1], 100 + k, grad=(k % 3 != 1)) for k in range(7)], args={"dim": 1}))
C.append(case("stack", lambda a, b: torch.stack([a, b], 0), [make([2, 3], 110), make([2, 3], 111)], args={"dim": 0}))
C.append(case("stack", lambda a, b, c: torch.stack([a, b, c], 2), [make([2, 3], 112), make([2, 3], 113),
                                                                   make([2, 3], 114)], args={"dim": 2}))
C.append(case("stack_t", lambda a, b: torch.stack([a.t(), b], 1), [make([3, 2], 115), make([2, 3], 116)],
              args={"dim": 1}))
C.append(case("stack", lambda *xs: torch.stack(list(xs), -1),
              [make([2, 2], 120 + k, grad=(k != 2)) for k in range(6)], args={"dim": -1}))
C.append(case("chunk_cat", lambda x: (lambda a, b, c: torch.cat([c, a * 2.0, b], 1))(*x.chunk(3, 1)),
              [make([2, 5], 130)]))
C.append(case("split_one", lambda x: x.split([1, 2], 0)[1] * 3.0, [make([3, 4], 131)]))
C.append(case("split_t", lambda x: (lambda a, b: a * b)(*x.t().split(2, 0)), [make([3, 4], 132)]))

write(C, "torch_fixture_pointwise.py: PyTorch " + torch.__version__ + " values and gradients (activations, "
      "elementwise math, clamp, prelu, softmax, maximum/minimum, masked_fill, where, triu/tril, cat, "
      "stack, chunk, split)")
