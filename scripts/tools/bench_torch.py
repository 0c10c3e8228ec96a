"""bench_torch.py — PyTorch 1.13's seconds per forward and per training step for the models
`make bench` compares profrun with (same batch, same thread count), in bench_train.lua's format.

    /usr/bin/python3 scripts/tools/bench_torch.py THREADS
"""
import math
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


class SelfAttention(nn.Module):
    """BERT's eager self-attention, as transformers writes it."""

    def __init__(self, h, heads):
        super().__init__()
        self.heads, self.d = heads, h // heads
        self.query, self.key, self.value = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)
        self.dense, self.ln, self.drop = nn.Linear(h, h), nn.LayerNorm(h, eps=1e-12), nn.Dropout(0.1)

    def split(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.d).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d) + mask
        ctx = torch.matmul(self.drop(F.softmax(scores, dim=-1)), v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(x.shape[0], x.shape[1], -1)
        return self.ln(self.drop(self.dense(ctx)) + x)


class Layer(nn.Module):
    def __init__(self, h, heads, inter):
        super().__init__()
        self.attention = SelfAttention(h, heads)
        self.fc1, self.fc2 = nn.Linear(h, inter), nn.Linear(inter, h)
        self.ln, self.drop = nn.LayerNorm(h, eps=1e-12), nn.Dropout(0.1)

    def forward(self, x, mask):
        a = self.attention(x, mask)
        return self.ln(self.drop(self.fc2(F.gelu(self.fc1(a)))) + a)


class Bert(nn.Module):
    """bert-base-uncased for sequence classification: the same structure as profrun's zoo model."""

    def __init__(self, vocab=30522, h=768, layers=12, heads=12, inter=3072, labels=2):
        super().__init__()
        self.words, self.pos, self.types = nn.Embedding(vocab, h, padding_idx=0), nn.Embedding(512, h), nn.Embedding(2, h)
        self.ln, self.drop = nn.LayerNorm(h, eps=1e-12), nn.Dropout(0.1)
        self.layers = nn.ModuleList([Layer(h, heads, inter) for _ in range(layers)])
        self.pool, self.cls = nn.Linear(h, h), nn.Linear(h, labels)

    def forward(self, ids, types, mask):
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.drop(self.ln(self.words(ids) + self.types(types) + self.pos(pos)))
        m = (1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for layer in self.layers:
            x = layer(x, m)
        return self.cls(self.drop(torch.tanh(self.pool(x[:, 0]))))


def timed(fn, n):
    fn()
    runs = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def bench(name, model, inputs, iters):
    labels = torch.zeros(inputs[0].shape[0], dtype=torch.long)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    model.eval()
    with torch.no_grad():
        fwd = timed(lambda: model(*inputs), iters)
    model.train()

    def step():
        loss = F.cross_entropy(model(*inputs), labels)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    print(f"{name} forward {fwd:.4f} step {timed(step, iters):.4f}", flush=True)


def main():
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    bench("resnet18", torchvision.models.resnet18(), [torch.randn(16, 3, 224, 224)], 3)
    ids = torch.zeros(8, 128, dtype=torch.long)
    bench("bert-base", Bert(), [ids, ids, torch.ones(8, 128, dtype=torch.long)], 3)


if __name__ == "__main__":
    main()
