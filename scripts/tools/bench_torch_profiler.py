# bench_torch_profiler.py — torch.profiler's costs on this machine, measured as bench_activity.lua
# measures ours: overhead on a ResNet-18 batch-1 training step (plain and profiled steps
# alternating, median of per-round ratios), record_function per call, export_chrome_trace of
# 100,000 ranges. Usage: python3 bench_torch_profiler.py THREADS ROUNDS
import os
import statistics
import sys
import tempfile
import time

import torch
import torch.nn.functional as F
import torchvision
from torch.profiler import ProfilerActivity, profile, record_function


def training_overhead(rounds):
    model = torchvision.models.resnet18()
    model.train()
    x, labels = torch.randn(1, 3, 224, 224), torch.zeros(1, dtype=torch.long)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)

    def step():
        loss = F.cross_entropy(model(x), labels)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    def timed():
        t0 = time.perf_counter()
        step()
        return time.perf_counter() - t0

    step()
    plain, profiled, ratios = [], [], []
    def recorded():
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True):
            return timed()

    for r in range(rounds):
        # A B, then B A, as bench_activity.lua: the order's own effect cancels
        if r % 2 == 0:
            plain.append(timed())
            profiled.append(recorded())
        else:
            profiled.append(recorded())
            plain.append(timed())
        ratios.append(profiled[-1] / plain[-1])
    print(f"torch overhead resnet18 batch 1 step: plain {statistics.median(plain):.4f} s "
          f"profiled {statistics.median(profiled):.4f} s ratio {statistics.median(ratios):.4f}",
          flush=True)


def ranges_and_export(n, export_events):
    def ranges():
        for _ in range(n):
            with record_function("step"):
                pass

    def empty():
        for _ in range(n):
            pass

    per_call = []
    for _ in range(3):
        t0 = time.perf_counter()
        empty()
        base = time.perf_counter() - t0
        with profile(activities=[ProfilerActivity.CPU]) as p:
            t0 = time.perf_counter()
            ranges()
            per_call.append((time.perf_counter() - t0 - base) / n)
    print(f"torch record_function {statistics.median(per_call) * 1e9:.0f} ns per call", flush=True)
    # a range gives torch several events (the range and the ops of its bookkeeping): record
    # as many ranges as make export_events events, the count profrun's export was timed on
    per_range = max(1, len(p.events()) // n)
    with profile(activities=[ProfilerActivity.CPU]) as p:
        for _ in range(export_events // per_range):
            with record_function("step"):
                pass
    events = len(p.events())
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.json")
        t0 = time.perf_counter()
        p.export_chrome_trace(path)
        dt = time.perf_counter() - t0
        size = os.path.getsize(path)
    print(f"torch export {events} events: {events / dt / 1e6:.2f} M events/s "
          f"{size / events:.0f} B/event", flush=True)


def main():
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    training_overhead(rounds)
    ranges_and_export(100000, 100000)


if __name__ == "__main__":
    main()
