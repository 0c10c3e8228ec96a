"""torch_fixture_models.py — reduced AlexNet, ResNet-18 and BERT (same structure as profrun's zoo
models, small widths) in PyTorch 1.13: weights, an input, the output and the gradient of
sum(output * w) for every parameter, for spec/cpu_models_spec.lua.

    /usr/bin/python3 scripts/tools/torch_fixture_models.py spec/fixtures/models

Writes NAME.lua (manifest: names, shapes, dtypes and byte offsets) and NAME.f32 (the values,
little-endian float32, int64 for token ids) per model. Models run in eval mode (dropout off, batch norm on running statistics
seeded non-trivially) so that the comparison is deterministic; training-mode batch norm is
covered op by op in spec/cpu_norm_spec.lua.
"""
import math
import os
import struct
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.models.resnet import BasicBlock


class AlexNet(nn.Module):
    def __init__(self, c=(8, 16, 24, 16, 16), hidden=32, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, c[0], 11, stride=4, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2),
            nn.Conv2d(c[0], c[1], 5, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2),
            nn.Conv2d(c[1], c[2], 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(c[2], c[3], 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(c[3], c[4], 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2))
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(0.5), nn.Linear(c[4] * 36, hidden), nn.ReLU(inplace=True),
            nn.Dropout(0.5), nn.Linear(hidden, hidden), nn.ReLU(inplace=True), nn.Linear(hidden, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


class ResNet(nn.Module):
    """torchvision's ResNet-18 with the stage widths scaled from 64 to w."""

    def __init__(self, w=8, classes=10):
        super().__init__()
        self.inplanes = w
        self.conv1 = nn.Conv2d(3, w, 7, stride=2, padding=3, bias=False)
        self.bn1, self.relu = nn.BatchNorm2d(w), nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self.make(w, 2)
        self.layer2 = self.make(2 * w, 2, 2)
        self.layer3 = self.make(4 * w, 2, 2)
        self.layer4 = self.make(8 * w, 2, 2)
        self.avgpool, self.fc = nn.AdaptiveAvgPool2d((1, 1)), nn.Linear(8 * w, classes)

    def make(self, planes, blocks, stride=1):
        down = None
        if stride != 1 or self.inplanes != planes:
            down = nn.Sequential(nn.Conv2d(self.inplanes, planes, 1, stride=stride, bias=False),
                                 nn.BatchNorm2d(planes))
        layers = [BasicBlock(self.inplanes, planes, stride, down)]
        self.inplanes = planes
        layers += [BasicBlock(planes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


# BERT for sequence classification with Hugging Face's attribute names (eager attention).
class SelfAttention(nn.Module):
    def __init__(self, h, heads):
        super().__init__()
        self.heads, self.d = heads, h // heads
        self.query, self.key, self.value = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)
        self.dropout = nn.Dropout(0.1)

    def split(self, x):
        return x.view(x.shape[0], x.shape[1], self.heads, self.d).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d) + mask
        c = torch.matmul(self.dropout(F.softmax(s, dim=-1)), v).permute(0, 2, 1, 3).contiguous()
        return c.view(x.shape[0], x.shape[1], -1)


class Residual(nn.Module):
    def __init__(self, d_in, h):
        super().__init__()
        self.dense, self.LayerNorm, self.dropout = nn.Linear(d_in, h), nn.LayerNorm(h, eps=1e-12), nn.Dropout(0.1)

    def forward(self, x, res):
        return self.LayerNorm(self.dropout(self.dense(x)) + res)


class Attention(nn.Module):
    def __init__(self, h, heads):
        super().__init__()
        self.self, self.output = SelfAttention(h, heads), Residual(h, h)

    def forward(self, x, mask):
        return self.output(self.self(x, mask), x)


class Intermediate(nn.Module):
    def __init__(self, h, inter):
        super().__init__()
        self.dense = nn.Linear(h, inter)

    def forward(self, x):
        return F.gelu(self.dense(x))


class Layer(nn.Module):
    def __init__(self, h, heads, inter):
        super().__init__()
        self.attention, self.intermediate, self.output = Attention(h, heads), Intermediate(h, inter), Residual(inter, h)

    def forward(self, x, mask):
        a = self.attention(x, mask)
        return self.output(self.intermediate(a), a)


class Embeddings(nn.Module):
    def __init__(self, vocab, h, positions):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, h, padding_idx=0)
        self.position_embeddings = nn.Embedding(positions, h)
        self.token_type_embeddings = nn.Embedding(2, h)
        self.LayerNorm, self.dropout = nn.LayerNorm(h, eps=1e-12), nn.Dropout(0.1)

    def forward(self, ids, types):
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        e = self.word_embeddings(ids) + self.token_type_embeddings(types) + self.position_embeddings(pos)
        return self.dropout(self.LayerNorm(e))


class Encoder(nn.Module):
    def __init__(self, h, heads, inter, layers):
        super().__init__()
        self.layer = nn.ModuleList([Layer(h, heads, inter) for _ in range(layers)])


class Pooler(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.dense, self.activation = nn.Linear(h, h), nn.Tanh()


class BertModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = Embeddings(c["vocab_size"], c["hidden_size"], c["max_position_embeddings"])
        self.encoder = Encoder(c["hidden_size"], c["num_attention_heads"], c["intermediate_size"],
                               c["num_hidden_layers"])
        self.pooler = Pooler(c["hidden_size"])


class BertForSequenceClassification(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.bert, self.dropout = BertModel(c), nn.Dropout(0.1)
        self.classifier = nn.Linear(c["hidden_size"], 2)

    def forward(self, ids, types, mask):
        m = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
        x = self.bert.embeddings(ids, types)
        for layer in self.bert.encoder.layer:
            x = layer(x, m)
        pooled = self.bert.pooler.activation(self.bert.pooler.dense(x[:, 0]))
        return self.classifier(self.dropout(pooled))


BERT_CONFIG = {"vocab_size": 50, "hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2,
               "intermediate_size": 32, "max_position_embeddings": 16}


def lua(v):
    if isinstance(v, str):
        return '"' + v + '"'
    if isinstance(v, (list, tuple)):
        return "{ " + ", ".join(lua(x) for x in v) + " }"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {lua(x)}" for k, x in v.items()) + " }"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def dump(path, name, model, inputs, opts):
    torch.manual_seed(1)
    with torch.no_grad():
        for n, b in model.named_buffers():
            if n.endswith("running_mean"):
                b.uniform_(-0.2, 0.2)
            elif n.endswith("running_var"):
                b.uniform_(0.5, 1.5)
        for p in model.parameters():   # round every weight to what a float32 file holds
            p.copy_(p.float())
    model.eval()
    out = model(*inputs)
    g = torch.Generator().manual_seed(99)
    w = torch.rand(out.shape, generator=g) * 2 - 1
    (out * w).sum().backward()
    blob, entries = bytearray(), []

    def add(kind, n, t):
        is_float = t.dtype.is_floating_point
        values = t.detach().flatten().tolist()
        entries.append({"kind": kind, "name": n, "shape": list(t.shape), "offset": len(blob),
                        "dtype": "float32" if is_float else "int64"})
        blob.extend(struct.pack("<%d%s" % (len(values), "f" if is_float else "q"),
                                *[float(v) if is_float else int(v) for v in values]))

    for n, p in model.named_parameters():
        add("param", n, p)
    for n, b in model.named_buffers():
        if not n.endswith("num_batches_tracked"):
            add("buffer", n, b)
    for i, x in enumerate(inputs):
        add("input", str(i + 1), x)
    add("w", "w", w)
    add("output", "output", out)
    for n, p in model.named_parameters():
        add("grad", n, p.grad)
    with open(os.path.join(path, name + ".f32"), "wb") as f:
        f.write(bytes(blob))
    with open(os.path.join(path, name + ".lua"), "w") as f:
        f.write(f"-- {name}: PyTorch {torch.__version__} weights, input, output and parameter gradients of\n")
        f.write(f"-- sum(output * w) ({name}.f32). Generated by scripts/tools/torch_fixture_models.py.\n")
        f.write("return " + lua({"opts": opts, "entries": entries}) + "\n")


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "spec/fixtures/models"
    os.makedirs(path, exist_ok=True)
    torch.manual_seed(0)
    dump(path, "alexnet_small", AlexNet(), [torch.randn(2, 3, 64, 64)],
         {"model": "alexnet", "channels": [8, 16, 24, 16, 16], "hidden": 32, "num_classes": 10})
    torch.manual_seed(0)
    dump(path, "resnet18_small", ResNet(), [torch.randn(2, 3, 32, 32)],
         {"model": "resnet18", "width": 8, "num_classes": 10})
    torch.manual_seed(0)
    ids = torch.randint(1, 50, (2, 8))
    dump(path, "bert_small", BertForSequenceClassification(BERT_CONFIG),
         [ids, torch.zeros(2, 8, dtype=torch.long), torch.tensor([[1] * 8, [1] * 6 + [0] * 2])],
         {"model": "bert-base", "config": BERT_CONFIG})


if __name__ == "__main__":
    main()
