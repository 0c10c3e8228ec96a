"""torch_op_names.py — torch 1.13's profiler event trees for the calls profrun names as torch does.

One section per program ("## title"), then every event of the window in start order, indented two
spaces per enclosing event (by time: torch 1.13's cpu_parent links lose some parents). spec/op_names_spec.lua runs the same programs
(spec/fixtures/cli/op_names.lua) under profrun and checks its trees against these.

    OMP_NUM_THREADS=1 /usr/bin/python3 scripts/tools/torch_op_names.py > spec/fixtures/torch/op_names.txt
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile


def show(title, fn):
    with profile(activities=[ProfilerActivity.CPU]) as p:
        fn()
    print("## " + title)
    events = sorted(p.events(), key=lambda e: (e.thread, e.time_range.start, -e.time_range.end))
    open_ends, thread = [], None
    for e in events:
        if e.thread != thread:
            open_ends, thread = [], e.thread
        b, end = e.time_range.start, e.time_range.end
        while open_ends and open_ends[-1] <= b and open_ends[-1] < end:
            open_ends.pop()
        print("  " * len(open_ends) + e.name)
        open_ends.append(end)


def main():
    torch.manual_seed(0)
    x1, x2, x3 = torch.randn(2, 3, 16), torch.randn(2, 3, 16, 16), torch.randn(2, 3, 8, 8, 8)
    w1, w2, w3 = torch.randn(4, 3, 3), torch.randn(4, 3, 3, 3), torch.randn(4, 3, 3, 3, 3)
    wt2 = torch.randn(3, 4, 3, 3)
    show("conv1d", lambda: F.conv1d(x1, w1))
    show("conv2d", lambda: F.conv2d(x2, w2))
    show("conv3d", lambda: F.conv3d(x3, w3))
    show("conv_transpose2d", lambda: F.conv_transpose2d(x2, wt2))
    show("max_pool1d", lambda: F.max_pool1d(x1, 2))
    show("max_pool2d", lambda: F.max_pool2d(x2, 2))
    show("max_pool3d", lambda: F.max_pool3d(x3, 2))
    show("avg_pool2d", lambda: F.avg_pool2d(x2, 2))
    show("adaptive_avg_pool2d", lambda: F.adaptive_avg_pool2d(x2, 4))
    show("adaptive_max_pool2d", lambda: F.adaptive_max_pool2d(x2, 4))
    show("nearest2d", lambda: F.interpolate(x2, scale_factor=2, mode="nearest"))
    show("bilinear", lambda: F.interpolate(x2, scale_factor=2, mode="bilinear"))
    logits, target = torch.randn(4, 10), torch.tensor([1, 2, 3, 4])
    show("cross_entropy", lambda: F.cross_entropy(logits, target))
    show("flatten", lambda: torch.flatten(x2, 1))
    show("transpose", lambda: x2.transpose(0, 1))
    a, w, b = torch.randn(4, 8), torch.randn(5, 8), torch.randn(5)
    show("linear", lambda: F.linear(a, w, b))
    show("linear without bias", lambda: F.linear(a, w))
    show("linear 3-d", lambda: F.linear(torch.randn(2, 4, 8), w, b))
    show("relu", lambda: F.relu(x2))
    show("softmax", lambda: F.softmax(a, 1))
    show("layer_norm", lambda: F.layer_norm(a, (8,)))
    show("randn", lambda: torch.randn(4, 4))
    show("empty", lambda: torch.empty(4, 4))
    show("zeros", lambda: torch.zeros(4, 4))
    show("ones", lambda: torch.ones(4, 4))
    m = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    inp, tgt = torch.randn(3, 8), torch.tensor([0, 1, 2])

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(m(inp), tgt)
        loss.backward()
        opt.step()
    step()   # the gradients exist: zero_grad has work, as in a training loop's later steps
    show("train step", step)


if __name__ == "__main__":
    main()
