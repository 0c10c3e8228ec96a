"""torch_fixture_nn.py — records PyTorch 1.13's values and gradients for the norms, embedding,
losses, scaled dot-product attention, recurrent layers and cells, and einsum.

    /usr/bin/python3 scripts/tools/torch_fixture_nn.py > spec/fixtures/ops/nn.lua

Attention is written out as its definition (torch 1.13 has no public scaled_dot_product_attention)
and RMS norm too (torch 1.13 has none). Ops with several results (recurrent layers) record each
output and one upstream weight per output: the gradients are those of sum_i sum(out_i * w_i).
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from torch_fixture import case, f32, make, write  # noqa: E402

C = []


def idx(values, shape):
    return torch.tensor(values, dtype=torch.int64).reshape(shape)


def multi(name, fn, inputs, args=None):
    """A case whose fn returns several tensors: outs and ws instead of out and w."""
    outs = fn(*inputs)
    ws = []
    for k, o in enumerate(outs):
        g = torch.Generator().manual_seed(1234 + k)
        ws.append((torch.rand(o.shape, generator=g) * 2 - 1).to(torch.float32).to(torch.float64))
    if any(isinstance(x, torch.Tensor) and x.requires_grad for x in inputs):
        sum((o * w).sum() for o, w in zip(outs, ws)).backward()
    rec = case(name, lambda *xs: outs[0].detach(), [x.detach() if isinstance(x, torch.Tensor) else x
                                                    for x in inputs], args)
    rec["outs"] = [{"shape": list(o.shape), "values": f32(o)} for o in outs]
    rec["ws"] = [f32(w) for w in ws]
    del rec["out"], rec["w"]
    for item, x in zip(rec["inputs"], inputs):
        if isinstance(x, torch.Tensor) and x.requires_grad:
            item["grad"] = f32(x.grad) if x.grad is not None else None
    return rec


# {====================== norms ======================}

def bn_train(x, w, b):
    rm, rv = torch.zeros(x.shape[1]), torch.ones(x.shape[1])
    return F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.1, eps=1e-5)


C.append(case("batch_norm_train", bn_train, [make([4, 3], 1), make([3], 2), make([3], 3)]))
C.append(case("batch_norm_train_t", lambda x, w, b: bn_train(x.transpose(1, 2), w, b),
              [make([2, 4, 3, 5], 4), make([3], 5), make([3], 6)]))
C.append(case("batch_norm_noaffine", lambda x: bn_train(x, None, None), [make([3, 2, 4], 7)]))
C.append(case("batch_norm_eval", lambda x, w, b, rm, rv: F.batch_norm(x, rm, rv, w, b, training=False, eps=1e-5),
              [make([3, 4, 2], 8), make([4], 9), make([4], 10), make([4], 11, grad=False),
               make([4], 12, grad=False, low=0.5, high=2.0)]))


def bn_two_steps(x1, x2, which):
    rm, rv = torch.full((x1.shape[1],), 0.5), torch.full((x1.shape[1],), 2.0)
    F.batch_norm(x1, rm, rv, None, None, training=True, momentum=0.1, eps=1e-5)
    F.batch_norm(x2, rm, rv, None, None, training=True, momentum=0.1, eps=1e-5)
    return rm if which == "mean" else rv


for which in ("mean", "var"):
    C.append(case("batch_norm_running_" + which, lambda a, b, w=which: bn_two_steps(a, b, w),
                  [make([4, 3, 2], 13, grad=False), make([4, 3, 2], 14, grad=False, low=-2.0, high=3.0)]))


def in_running(x):
    rm, rv = torch.full((x.shape[1],), 0.5), torch.full((x.shape[1],), 2.0)
    F.instance_norm(x, rm, rv, None, None, use_input_stats=True, momentum=0.2, eps=1e-5)
    return torch.cat([rm, rv])


C.append(case("instance_norm", lambda x, w, b: F.instance_norm(x, weight=w, bias=b, eps=1e-5),
              [make([2, 3, 5], 15), make([3], 16), make([3], 17)]))
C.append(case("instance_norm_running", in_running, [make([3, 2, 4], 18, grad=False)]))
C.append(case("layer_norm", lambda x, w, b: F.layer_norm(x, (4,), w, b, eps=1e-5),
              [make([2, 3, 4], 19), make([4], 20), make([4], 21)]))
C.append(case("layer_norm_2d_t", lambda x: F.layer_norm(x.transpose(0, 2), (3, 2), eps=1e-5),
              [make([2, 3, 4], 22)]))
C.append(case("group_norm", lambda x, w, b: F.group_norm(x, 3, w, b, eps=1e-5),
              [make([2, 6, 3, 2], 23), make([6], 24), make([6], 25)]))


def rms(x, w, eps):
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return y * w if w is not None else y


C.append(case("rms_norm", lambda x, w: rms(x, w, 1e-6), [make([3, 5], 26), make([5], 27)], args={"eps": 1e-6}))
C.append(case("rms_norm_default_eps", lambda x: rms(x, None, torch.finfo(torch.float32).eps),
              [make([2, 2, 4], 28, low=-0.01, high=0.01)]))
C.append(case("embedding", lambda i, w: F.embedding(i, w),
              [idx([0, 3, 1, 3, 4, 0], [2, 3]), make([5, 4], 29)]))
C.append(case("embedding_pad", lambda i, w: F.embedding(i, w, padding_idx=1),
              [idx([1, 2, 1, 4], [4]), make([5, 3], 30)], args={"padding_idx": 1}))

# {====================== losses ======================}

T4 = idx([1, 0, 4, 2], [4])
C.append(case("cross_entropy", lambda x, t: F.cross_entropy(x, t), [make([4, 5], 40, low=-3.0, high=3.0), T4]))
C.append(case("cross_entropy", lambda x, t: F.cross_entropy(x, t, reduction="sum"),
              [make([4, 5], 41), T4], args={"reduction": "sum"}))
C.append(case("cross_entropy", lambda x, t: F.cross_entropy(x, t, reduction="none", ignore_index=4),
              [make([4, 5], 42), T4], args={"reduction": "none", "ignore_index": 4}))
C.append(case("cross_entropy_w", lambda x, t, w: F.cross_entropy(x, t, weight=w, ignore_index=0),
              [make([4, 5], 43), T4, make([5], 44, grad=False, low=0.5, high=2.0)], args={"ignore_index": 0}))
C.append(case("cross_entropy", lambda x, t: F.cross_entropy(x, t, label_smoothing=0.2, ignore_index=2),
              [make([4, 5], 45), T4], args={"label_smoothing": 0.2, "ignore_index": 2}))
C.append(case("cross_entropy_w", lambda x, t, w: F.cross_entropy(x, t, weight=w, label_smoothing=0.1, ignore_index=2),
              [make([4, 5], 46), T4, make([5], 47, grad=False, low=0.5, high=2.0)],
              args={"label_smoothing": 0.1, "ignore_index": 2}))
C.append(case("cross_entropy_w", lambda x, t, w: F.cross_entropy(x, t, weight=w, label_smoothing=0.1, reduction="none"),
              [make([4, 5], 48), T4, make([5], 49, grad=False, low=0.5, high=2.0)],
              args={"label_smoothing": 0.1, "reduction": "none"}))
C.append(case("cross_entropy", lambda x, t: F.cross_entropy(x.transpose(1, 2), t),
              [make([2, 3, 4], 50), idx([0, 3, 1, 2, 2, 0], [2, 3])]))
C.append(case("cross_entropy", lambda x, t: F.cross_entropy(x, t), [make([5], 51), idx([3], [])]))
C.append(case("cross_entropy", lambda x, t: F.cross_entropy(x, t, label_smoothing=0.25),
              [make([3, 4], 52), make([3, 4], 53, low=0.0, high=0.5)], args={"label_smoothing": 0.25}))
C.append(case("cross_entropy_w", lambda x, t, w: F.cross_entropy(x, t, weight=w, reduction="sum"),
              [make([2, 4, 2], 54), make([2, 4, 2], 55, low=0.0, high=0.5), make([4], 56, grad=False, low=0.5, high=2.0)],
              args={"reduction": "sum"}))
C.append(case("nll_loss", lambda x, t: F.nll_loss(x, t), [make([4, 5], 57), T4]))
C.append(case("nll_loss_w", lambda x, t, w: F.nll_loss(x, t, weight=w, ignore_index=1, reduction="mean"),
              [make([4, 5], 58), T4, make([5], 59, grad=False, low=0.5, high=2.0)], args={"ignore_index": 1}))
C.append(case("nll_loss", lambda x, t: F.nll_loss(x, t, reduction="none"),
              [make([2, 5, 3], 60), idx([0, 4, 2, 1, 1, 3], [2, 3])], args={"reduction": "none"}))
C.append(case("mse_loss", lambda x, t: F.mse_loss(x, t), [make([3, 4], 61), make([3, 4], 62)]))
C.append(case("mse_loss", lambda x, t: F.mse_loss(x, t, reduction="sum"), [make([3, 4], 63), make([3, 4], 64)],
              args={"reduction": "sum"}))
C.append(case("mse_loss", lambda x, t: F.mse_loss(x, t.expand(3, 4), reduction="none"),
              [make([3, 4], 65), make([4], 66)], args={"reduction": "none"}))

# {====================== attention ======================}


def sdpa(q, k, v, mask=None, causal=False, scale=None, gqa=1):
    if gqa > 1:
        k, v = k.repeat_interleave(gqa, dim=-3), v.repeat_interleave(gqa, dim=-3)
    s = q @ k.transpose(-2, -1) * (scale if scale is not None else 1.0 / q.shape[-1] ** 0.5)
    L, S = s.shape[-2], s.shape[-1]
    if causal:
        s = s.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), float("-inf"))
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else s + mask
    return torch.softmax(s, -1) @ v


C.append(case("sdpa", sdpa, [make([2, 3, 4, 5], 70), make([2, 3, 6, 5], 71), make([2, 3, 6, 7], 72)]))
C.append(case("sdpa_causal", lambda q, k, v: sdpa(q, k, v, causal=True),
              [make([2, 4, 3], 73), make([2, 5, 3], 74), make([2, 5, 2], 75)]))
MASK = [[True, False, True, True, False], [True, True, False, True, True], [False, True, True, True, True]]
C.append(case("sdpa_bool_mask", lambda q, k, v: sdpa(q, k, v, mask=torch.tensor(MASK)),
              [make([2, 2, 3, 4], 76), make([2, 2, 5, 4], 77), make([2, 2, 5, 3], 78)],
              args={"mask": sum(MASK, []), "mask_shape": [3, 5]}))
C.append(case("sdpa_float_mask", lambda q, k, v, m: sdpa(q, k, v, mask=m),
              [make([2, 3, 4], 79), make([2, 5, 4], 80), make([2, 5, 4], 81), make([2, 1, 5], 82, grad=False)]))
C.append(case("sdpa_gqa", lambda q, k, v: sdpa(q, k, v, gqa=2, scale=0.3),
              [make([2, 4, 3, 5], 83), make([2, 2, 6, 5], 84), make([2, 2, 6, 4], 85)], args={"scale": 0.3}))
C.append(case("sdpa_t", lambda q, k, v: sdpa(q.transpose(1, 2), k, v),
              [make([2, 3, 2, 4], 86), make([1, 2, 5, 4], 87), make([1, 2, 5, 3], 88)]))

# {====================== recurrent layers and cells ======================}


def rnn_weights(kind, I, H, L, D, bias, seed):
    G = {"rnn_tanh": 1, "rnn_relu": 1, "gru": 3, "lstm": 4}[kind] * H
    ws = []
    for layer in range(L):
        for _ in range(D):
            n = I if layer == 0 else D * H
            ws += [make([G, n], seed), make([G, H], seed + 1)]
            if bias:
                ws += [make([G], seed + 2), make([G], seed + 3)]
            seed += 4
    return ws


def layer(kind, L, D, bias, batch_first, unbatched=False):
    def fn(x, h0, c0, *ws):
        if unbatched:  # torch runs it as a batch of one
            x = x.unsqueeze(1)
            h0 = h0.unsqueeze(1) if h0 is not None else None
            c0 = c0.unsqueeze(1) if c0 is not None else None
        N = x.shape[0 if batch_first else 1]
        H = ws[1].shape[1]
        h = h0 if h0 is not None else torch.zeros(L * D, N, H)
        if kind == "lstm":
            c = c0 if c0 is not None else torch.zeros(L * D, N, H)
            outs = torch._VF.lstm(x, (h, c), list(ws), bias, L, 0.0, False, D == 2, batch_first)
        else:
            f = {"rnn_tanh": torch._VF.rnn_tanh, "rnn_relu": torch._VF.rnn_relu, "gru": torch._VF.gru}[kind]
            outs = f(x, h, list(ws), bias, L, 0.0, False, D == 2, batch_first)
        if unbatched:
            outs = [outs[0].squeeze(1)] + [o.squeeze(1) for o in outs[1:]]
        return list(outs)
    return fn


def rnn_case(name, kind, T, N, I, H, L, D, bias, batch_first, states, seed, unbatched=False):
    x = make([T, I] if unbatched else ([N, T, I] if batch_first else [T, N, I]), seed)
    hs = [N, H] if not unbatched else [H]
    h0 = make([L * D] + hs, seed + 1) if states else None
    c0 = make([L * D] + hs, seed + 2) if states and kind == "lstm" else None
    ws = rnn_weights(kind, I, H, L, D, bias, seed + 10)
    fn = layer(kind, L, D, bias, batch_first, unbatched)
    args = {"kind": kind.split("_")[0], "relu": kind == "rnn_relu", "hidden_size": H, "num_layers": L,
            "bidirectional": D == 2, "bias": bias, "batch_first": batch_first}
    C.append(multi(name, fn, [x, h0, c0] + ws, args))


rnn_case("rnn", "rnn_tanh", 4, 2, 3, 5, 1, 1, True, False, True, 100)
rnn_case("rnn", "rnn_relu", 3, 2, 3, 4, 2, 2, False, True, False, 120)
rnn_case("rnn", "gru", 3, 2, 4, 3, 2, 1, True, False, True, 140)
rnn_case("rnn", "gru", 4, 3, 2, 3, 1, 2, True, True, True, 160)
rnn_case("rnn", "lstm", 3, 2, 4, 3, 2, 2, True, False, True, 180)
rnn_case("rnn", "lstm", 5, 1, 3, 2, 1, 1, False, False, False, 200, unbatched=True)
rnn_case("rnn", "gru", 3, 1, 2, 3, 2, 1, True, False, True, 210, unbatched=True)
rnn_case("rnn", "lstm", 4, 2, 3, 4, 1, 1, True, True, True, 220)


def cell_case(kind, N, I, H, bias, states, seed, unbatched=False):
    x = make([I] if unbatched else [N, I], seed)
    hs = [H] if unbatched else [N, H]
    h = make(hs, seed + 1) if states else None
    c = make(hs, seed + 2) if states and kind == "lstm" else None
    ws = rnn_weights(kind, I, H, 1, 1, bias, seed + 10)

    def fn(x, h, c, *w):
        b = list(w[2:]) if bias else [None, None]
        xb = x.unsqueeze(0) if unbatched else x
        n = xb.shape[0]
        hb = (h.unsqueeze(0) if unbatched else h) if h is not None else torch.zeros(n, H)
        if kind == "lstm":
            cb = (c.unsqueeze(0) if unbatched else c) if c is not None else torch.zeros(n, H)
            outs = list(torch._VF.lstm_cell(xb, (hb, cb), w[0], w[1], *b))
        else:
            f = {"rnn_tanh": torch._VF.rnn_tanh_cell, "rnn_relu": torch._VF.rnn_relu_cell,
                 "gru": torch._VF.gru_cell}[kind]
            outs = [f(xb, hb, w[0], w[1], *b)]
        return [o.squeeze(0) for o in outs] if unbatched else outs
    args = {"kind": kind.split("_")[0], "relu": kind == "rnn_relu", "hidden_size": H, "bias": bias}
    C.append(multi("rnn_cell", fn, [x, h, c] + ws, args))


cell_case("rnn_tanh", 3, 4, 2, True, True, 300)
cell_case("rnn_relu", 2, 3, 4, False, False, 320)
cell_case("gru", 3, 2, 4, True, True, 340)
cell_case("gru", 1, 3, 2, True, False, 360, unbatched=True)
cell_case("lstm", 2, 3, 4, True, True, 380)
cell_case("lstm", 2, 4, 3, False, False, 400)

# {====================== einsum ======================}

for k, (eq, shapes) in enumerate([
        ("ij,jk->ik", [[3, 4], [4, 2]]),
        ("bij,bjk->bik", [[2, 3, 4], [2, 4, 5]]),
        ("bhld,bhsd->bhls", [[2, 2, 3, 4], [2, 2, 5, 4]]),
        ("ij->ji", [[3, 4]]),
        ("ii->i", [[3, 3]]),
        ("ij->", [[3, 4]]),
        ("ijk->ki", [[2, 3, 4]]),
        ("i,j->ij", [[3], [4]]),
        ("...ij,...jk->...ik", [[2, 1, 3, 4], [3, 4, 5]]),
        ("bij,j->bi", [[2, 3, 4], [4]]),
        ("ij,jk", [[2, 3], [3, 4]]),
        ("abc,ac->b", [[2, 3, 4], [2, 4]]),
        ("iij,jk->ik", [[3, 3, 2], [2, 4]]),
        ("ab,ab->a", [[3, 4], [3, 4]]),
        ("ijk,ilk->jl", [[1, 3, 4], [2, 5, 4]])]):
    C.append(case("einsum", lambda *xs, eq=eq: torch.einsum(eq, *xs),
                  [make(s, 500 + 10 * k + i) for i, s in enumerate(shapes)], args={"equation": eq}))
C.append(case("einsum_t", lambda a, b: torch.einsum("ij,jk->ik", a.t(), b), [make([4, 3], 700), make([4, 2], 701)],
              args={"equation": "ij,jk->ik"}))

write(C, "torch_fixture_nn.py: PyTorch " + torch.__version__ + " values and gradients (norms, embedding, losses, "
      "attention, recurrent layers and cells, einsum)")
