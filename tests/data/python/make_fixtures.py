#!/usr/bin/env python3
"""Python parity fixtures for `table` (tests/test_table_tool.cpp): torch.profiler on a small
transformer block's training step, the backward pass on a second thread, then Python's own
key_averages().table() for every sort key it accepts, with and without group_by_input_shape.
The C++ `table` tool must print the same bytes from the saved trace. Never edit the outputs by
hand: rerun this script.

  # CPU (any machine; the workbook's venv has torch 2.11 CPU):
  ~/.cache/libtorch-workbook/torch-2.11.0/bin/python tests/data/python/make_fixtures.py
  # GPU (the H200: scripts/gpu/python_fixtures.sh tools):
  python3 tests/data/python/make_fixtures.py --device cuda --out $OUT/python
  # A big trace for the bench (many steps; not committed):
  python make_fixtures.py --bench-steps 2000 --out /tmp/bench

Written, per recording <rec> (cpu_shapes_flops, cpu_plain; cuda_* with --device cuda):
  <rec>.json.gz          the trace (prof.export_chrome_trace, then gzip)
  <rec>.tables.json.gz   {"meta": how it was recorded, "tables": {"<sort_by>|<row_limit>|
                         <max_name_width>|<group_by_input_shape>": Python's table text}}:
                         every sort key (SORT_KEYS, and "" for None), with and without
                         group_by_input_shape (the latter only when shapes were recorded)
"""
import argparse
import gzip
import json
import pathlib
import shutil
import threading

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._C._profiler import _ExperimentalConfig
from torch.profiler import ProfilerActivity, profile, record_function, schedule

# Every attribute key_averages().table(sort_by=...) can sort on: _build_table sorts with
# getattr(evt, sort_by.replace("cuda", "device")...), so these are FunctionEventAvg's numeric
# attributes and properties. The cuda_ spellings and device_ ones both work.
SORT_KEYS = [
    "cpu_time", "cuda_time", "device_time",
    "cpu_time_total", "cuda_time_total", "device_time_total",
    "self_cpu_time_total", "self_cuda_time_total", "self_device_time_total",
    "cpu_memory_usage", "cuda_memory_usage", "device_memory_usage",
    "self_cpu_memory_usage", "self_cuda_memory_usage", "self_device_memory_usage",
    "count", "flops",
]


class Block(nn.Module):
    """A pre-norm transformer block: LayerNorm, scaled-dot-product attention, GELU MLP."""

    def __init__(self, d=64, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class Model(nn.Module):
    def __init__(self, vocab=128, d=64):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.block = Block(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, tokens):
        return self.head(self.block(self.emb(tokens)))


def backward_on_second_thread(loss):
    """loss.backward() on another Python thread. On CUDA the autograd engine runs the backward
    ops on its device thread anyway; on CPU it would run them on the caller's thread. The
    profiler sees the second thread because of profile_all_threads (see record())."""
    t = threading.Thread(target=loss.backward)
    t.start()
    t.join()


def train_step(model, opt, tokens, targets):
    with record_function("train_step"):
        logits = model(tokens)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        backward_on_second_thread(loss)
        opt.step()
        opt.zero_grad(set_to_none=True)
    return loss


def export_gzipped(prof, path):
    """The Chrome trace, gzipped into `path` (<rec>.json.gz), as Python writes it."""
    raw = path.with_suffix("")  # <rec>.json
    prof.export_chrome_trace(str(raw))
    with open(raw, "rb") as f_in, gzip.open(path, "wb", compresslevel=9) as f_out:
        shutil.copyfileobj(f_in, f_out)
    raw.unlink()


def write_tables(out, rec, meta, tables):
    """<rec>.tables.json.gz: {"meta": how it was recorded, "tables": Python's table texts}."""
    with gzip.open(out / f"{rec}.tables.json.gz", "wt", compresslevel=9) as f:
        json.dump({"meta": meta, "tables": tables}, f, indent=0, sort_keys=True)
    print(f"wrote {out / rec}.json.gz and {rec}.tables.json.gz")


def record(device, steps, record_shapes, with_flops, path):
    torch.manual_seed(0)
    model = Model().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, 128, (4, 32), device=device)
    targets = torch.randint(0, 128, (4, 32), device=device)
    for _ in range(2):  # warm up outside the profiler (lazy init, AdamW state)
        train_step(model, opt, tokens, targets)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities, record_shapes=record_shapes, with_flops=with_flops,
                 schedule=schedule(wait=0, warmup=1, active=steps, repeat=1),
                 experimental_config=_ExperimentalConfig(profile_all_threads=True)) as prof:
        for _ in range(steps + 1):
            train_step(model, opt, tokens, targets)
            if device == "cuda":
                torch.cuda.synchronize()
            prof.step()
    export_gzipped(prof, path)
    return prof


def tables(prof, record_shapes):
    """Python's table text for every case, keyed "<sort_by>|<row_limit>|<max_name_width>|<by_shape>"
    (sort_by "" for None; the tool's flags map one to one)."""
    out = {}
    for by_shape in ([False, True] if record_shapes else [False]):
        events = prof.key_averages(group_by_input_shape=by_shape)
        cases = [(key, -1, 55) for key in SORT_KEYS + [None]]
        # Python's defaults (row_limit=100), a short limit with a narrow name column, no limit.
        cases += [("cpu_time_total", 100, 55), ("self_cpu_time_total", 5, 30),
                  ("count", 10, 80)]
        for key, limit, width in cases:
            text = events.table(sort_by=key, row_limit=limit, max_name_column_width=width)
            out[f"{key or ''}|{limit}|{width}|{int(by_shape)}"] = text
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--out", type=pathlib.Path, default=pathlib.Path(__file__).parent)
    ap.add_argument("--steps", type=int, default=3, help="profiled steps per recording")
    ap.add_argument("--bench-steps", type=int, default=0,
                    help="only record one big trace of this many steps (bench input), no tables")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.device == "cuda":
        assert torch.cuda.is_available(), "--device cuda needs a GPU"
    if args.bench_steps:
        path = args.out / f"{args.device}_bench_{args.bench_steps}.json.gz"
        record(args.device, args.bench_steps, True, True, path)
        print(f"wrote {path}")
        return
    for name, shapes, flops in [("shapes_flops", True, True), ("plain", False, False)]:
        rec = f"{args.device}_{name}"
        prof = record(args.device, args.steps, shapes, flops, args.out / f"{rec}.json.gz")
        meta = {"torch": torch.__version__, "device": args.device,
                "device_name": torch.cuda.get_device_name() if args.device == "cuda" else "cpu",
                "record_shapes": shapes, "with_flops": flops, "steps": args.steps,
                "trace_start_ns": prof.profiler.kineto_results.trace_start_ns()}
        write_tables(args.out, rec, meta, tables(prof, shapes))


if __name__ == "__main__":
    main()
