#!/usr/bin/env python3
"""User-shaped traces for the tools (tests/test_user_traces.cpp): code a LibTorch or PyTorch user
writes, not a chapter. torch.profiler on
  * mlp:     a 3-layer MLP's training step (Linear/ReLU, cross-entropy, backward, SGD) under
             record_function("train_step"); and the same step at batch 32 and 64 without
             with_stack (the pair `diff` compares);
  * convnet: a small ConvNet's training step (conv, batch norm, ReLU, max pool, adaptive average
             pool, Linear), with three annotations per step: "forward", "backward", "optimizer".
The *_stack recordings use with_stack=True and experimental_config=_ExperimentalConfig(
verbose=True): torch 2.11 keeps a stack per op (FunctionEvent.stack, the trace's "Call stack")
only when verbose; with with_stack alone the Chrome trace has Python's frames as events but the
table no Source Location (mlp_stack_plain records that case). With each, Python's own
key_averages(group_by_stack_n=N).table(...) for the cases in TABLES: the C++
`table --group-by-stack-n N` must print the same bytes. Never edit the outputs by hand: rerun
this script.

  # CPU (any machine; the workbook's venv has torch 2.11 CPU):
  ~/.cache/libtorch-workbook/torch-2.11.0/bin/python tests/data/python/make_user_fixtures.py
  # GPU (the H200: scripts/gpu/python_fixtures.sh user):
  python3 tests/data/python/make_user_fixtures.py --device cuda --out $OUT/python

Written (<dev> = cpu or cuda):
  <dev>_{mlp,convnet}_stack.json.gz, <dev>_mlp_stack_plain.json.gz   the traces (with_stack)
  <dev>_{mlp,convnet}_stack.tables.json.gz, <dev>_mlp_stack_plain.tables.json.gz
      {"meta": how it was recorded, "tables": {"<sort_by>|<row_limit>|<group_by_stack_n>": text}}
  <dev>_mlp_b32.json.gz, <dev>_mlp_b64.json.gz                    the batch pair, no stack
"""
import argparse
import gzip
import json
import pathlib
import shutil

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._C._profiler import _ExperimentalConfig
from torch.profiler import ProfilerActivity, profile, record_function, schedule

# (sort_by, row_limit, group_by_stack_n): the tool's flags map one to one.
TABLES = [("self_cpu_time_total", -1, 1), ("self_cpu_time_total", -1, 3), ("self_cpu_time_total", 15, 5),
          ("cpu_time_total", -1, 5), ("count", 20, 2), ("", -1, 4), ("self_cpu_time_total", -1, 0)]
TABLES_CUDA = [("self_cuda_time_total", -1, 5), ("cuda_time_total", 25, 3)]


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(784, 256), nn.Linear(256, 128), nn.Linear(128, 10)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16)
        self.conv2, self.bn2 = nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32)
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.adaptive_avg_pool2d(F.relu(self.bn2(self.conv2(x))), 1)
        return self.head(x.flatten(1))


def mlp_step(model, opt, x, y):
    with record_function("train_step"):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)


def convnet_step(model, opt, x, y):
    with record_function("forward"):
        loss = F.cross_entropy(model(x), y)
    with record_function("backward"):
        loss.backward()
    with record_function("optimizer"):
        opt.step()
        opt.zero_grad(set_to_none=True)


def record(device, kind, batch, with_stack, path, steps=2, verbose=True):
    torch.manual_seed(0)
    if kind == "mlp":
        model, step = MLP().to(device), mlp_step
        x, y = torch.randn(batch, 784, device=device), torch.randint(0, 10, (batch,), device=device)
    else:
        model, step = ConvNet().to(device), convnet_step
        x, y = torch.randn(batch, 3, 32, 32, device=device), torch.randint(0, 10, (batch,), device=device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for _ in range(2):  # warm up outside the profiler
        step(model, opt, x, y)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities, with_stack=with_stack,
                 experimental_config=_ExperimentalConfig(verbose=with_stack and verbose),
                 schedule=schedule(wait=1, warmup=1, active=steps, repeat=1)) as prof:
        for _ in range(steps + 2):
            step(model, opt, x, y)
            if device == "cuda":
                torch.cuda.synchronize()
            prof.step()
    raw = path.with_suffix("")  # <rec>.json
    prof.export_chrome_trace(str(raw))
    with open(raw, "rb") as f_in, gzip.open(path, "wb", compresslevel=9) as f_out:
        shutil.copyfileobj(f_in, f_out)
    raw.unlink()
    return prof


def tables(prof, device):
    out = {}
    for key, limit, n in TABLES + (TABLES_CUDA if device == "cuda" else []):
        text = prof.key_averages(group_by_stack_n=n).table(sort_by=key or None, row_limit=limit)
        out[f"{key}|{limit}|{n}"] = text
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--out", type=pathlib.Path, default=pathlib.Path(__file__).parent)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.device == "cuda":
        assert torch.cuda.is_available(), "--device cuda needs a GPU"
    dev = args.device
    for kind, batch, verbose, rec in [("mlp", 64, True, f"{dev}_mlp_stack"),
                                      ("convnet", 16, True, f"{dev}_convnet_stack"),
                                      ("mlp", 64, False, f"{dev}_mlp_stack_plain")]:
        prof = record(dev, kind, batch, True, args.out / f"{rec}.json.gz", verbose=verbose)
        meta = {"torch": torch.__version__, "device": dev, "model": kind, "batch": batch, "with_stack": True,
                "verbose": verbose, "device_name": torch.cuda.get_device_name() if dev == "cuda" else "cpu"}
        with gzip.open(args.out / f"{rec}.tables.json.gz", "wt", compresslevel=9) as f:
            json.dump({"meta": meta, "tables": tables(prof, dev)}, f, indent=0, sort_keys=True)
        print(f"wrote {args.out / rec}.json.gz and {rec}.tables.json.gz")
    for batch in (32, 64):
        path = args.out / f"{dev}_mlp_b{batch}.json.gz"
        record(dev, "mlp", batch, False, path, steps=3)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
