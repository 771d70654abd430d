#!/usr/bin/env python3
"""Traces of three public architectures, written in plain torch (no downloads, no torchvision), for
`inspect` and `table` on models the workbook did not shape (tests/test_model_traces.cpp):

  resnet:       a ResNet-18-style conv net (conv/batch-norm/ReLU basic blocks, 4 stages, 1 block each),
                SGD with momentum;
  transformer:  a small transformer (nn.TransformerEncoder + nn.TransformerDecoder, 2 layers each),
                Adam (its state appears at the first step);
  lstm:         an embedding-bag + LSTM text classifier, Adam.

Each: training steps (forward, loss, backward, optimizer step, zero_grad) with NO record_function
annotations (the phases are found from autograd's and the optimizer's own events), recorded with
torch.profiler's record_shapes, profile_memory, with_stack and with_flops, after two warm-up
steps outside the profiler, schedule(wait=1, warmup=1, active=2). Also Python's own
key_averages().table(...) for a few sorts: `table` must print the same bytes.
Never edit the outputs by hand: rerun this script.

  # CPU (any machine; the workbook's venv has torch 2.11 CPU):
  ~/.cache/libtorch-workbook/torch-2.11.0/bin/python tests/data/models/make_model_fixtures.py
  # GPU (the H200; < 1 min):
  python3 tests/data/models/make_model_fixtures.py --device cuda --out OUT_DIR

Written (<dev> = cpu or cuda): <dev>_<model>.json.gz (the trace) and <dev>_<model>.tables.json.gz
  {"meta": how it was recorded, "tables": {"<sort_by>|<row_limit>": text}}
"""
import argparse
import gzip
import json
import pathlib
import shutil

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, schedule

TABLES = [("self_cpu_time_total", 20), ("cpu_time_total", 15), ("count", 10)]
TABLES_CUDA = [("self_cuda_time_total", 20), ("cuda_time_total", 15)]


class BasicBlock(nn.Module):  # ResNet's (He et al. 2015) basic block
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + (x if self.down is None else self.down(x)))


class ResNet(nn.Module):  # ResNet-18's layout, one block per stage, narrow (16..128 channels)
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        chans = [16, 32, 64, 128]
        blocks, cin = [], 16
        for i, c in enumerate(chans):
            blocks.append(BasicBlock(cin, c, 1 if i == 0 else 2))
            cin = c
        self.layers = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


class Transformer(nn.Module):  # Vaswani et al. 2017, small: d_model 64, 4 heads, 2+2 layers
    def __init__(self, vocab=100, d=64):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.tf = nn.Transformer(d_model=d, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                                 dim_feedforward=128, dropout=0.0, batch_first=True)
        self.out = nn.Linear(d, vocab)

    def forward(self, src, tgt):
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1], device=tgt.device)
        return self.out(self.tf(self.emb(src), self.emb(tgt), tgt_mask=mask))


class LstmClassifier(nn.Module):  # embedding bag (bag-of-words) + LSTM over the sequence
    def __init__(self, vocab=1000, d=64, classes=5):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab, d, mode="mean")
        self.emb = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, d, num_layers=2, batch_first=True)
        self.fc = nn.Linear(2 * d, classes)

    def forward(self, tokens):
        seq, _ = self.lstm(self.emb(tokens))
        return self.fc(torch.cat([seq[:, -1], self.bag(tokens)], dim=1))


def make(kind, device):
    torch.manual_seed(0)
    if kind == "resnet":
        model = ResNet().to(device)
        x, y = torch.randn(4, 3, 32, 32, device=device), torch.randint(0, 10, (4,), device=device)
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        loss = lambda: F.cross_entropy(model(x), y)  # noqa: E731
        return model, opt, loss, {"batch": 4, "input": [3, 32, 32]}
    if kind == "transformer":
        model = Transformer().to(device)
        src = torch.randint(0, 100, (4, 16), device=device)
        tgt = torch.randint(0, 100, (4, 16), device=device)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        loss = lambda: F.cross_entropy(model(src, tgt).flatten(0, 1), tgt.flatten())  # noqa: E731
        return model, opt, loss, {"batch": 4, "seq": 16}
    model = LstmClassifier().to(device)
    tokens = torch.randint(0, 1000, (4, 24), device=device)
    y = torch.randint(0, 5, (4,), device=device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss = lambda: F.cross_entropy(model(tokens), y)  # noqa: E731
    return model, opt, loss, {"batch": 4, "seq": 24}


def record(kind, device, path):
    model, opt, loss_fn, shape = make(kind, device)

    def step():
        loss_fn().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(2):  # warm up outside the profiler
        step()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities, record_shapes=True, profile_memory=True, with_stack=True,
                 with_flops=True, schedule=schedule(wait=1, warmup=1, active=2, repeat=1)) as prof:
        for _ in range(4):
            step()
            if device == "cuda":
                torch.cuda.synchronize()
            prof.step()
    raw = path.with_suffix("")  # <rec>.json
    prof.export_chrome_trace(str(raw))
    with open(raw, "rb") as f_in, gzip.open(path, "wb", compresslevel=9) as f_out:
        shutil.copyfileobj(f_in, f_out)
    raw.unlink()
    return prof, shape


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--out", type=pathlib.Path, default=pathlib.Path(__file__).parent)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    dev = args.device
    if dev == "cuda":
        assert torch.cuda.is_available(), "--device cuda needs a GPU"
    for kind in ("resnet", "transformer", "lstm"):
        rec = f"{dev}_{kind}"
        prof, shape = record(kind, dev, args.out / f"{rec}.json.gz")
        tables = {f"{key}|{limit}": prof.key_averages().table(sort_by=key, row_limit=limit)
                  for key, limit in TABLES + (TABLES_CUDA if dev == "cuda" else [])}
        meta = {"torch": torch.__version__, "device": dev, "model": kind, **shape,
                "device_name": torch.cuda.get_device_name() if dev == "cuda" else "cpu",
                "options": "record_shapes profile_memory with_stack with_flops",
                "schedule": "wait=1 warmup=1 active=2 repeat=1", "annotations": "none"}
        with gzip.open(args.out / f"{rec}.tables.json.gz", "wt", compresslevel=9) as f:
            json.dump({"meta": meta, "tables": tables}, f, indent=0, sort_keys=True)
        print(f"wrote {args.out / rec}.json.gz and {rec}.tables.json.gz", flush=True)


if __name__ == "__main__":
    main()
