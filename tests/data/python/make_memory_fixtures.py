#!/usr/bin/env python3
"""Python parity fixtures for `table`'s memory columns (tests/test_table_tool.cpp, "[memory]"):
torch.profiler with profile_memory=True on a training step (forward, backward, AdamW step) of
make_fixtures.py's transformer block, then Python's key_averages().table() for every sort key,
with and without group_by_input_shape. The C++ `table` tool must print the same bytes from the
saved trace. Never edit the outputs by hand: rerun this script.

  # CPU (any machine; the workbook's venv has torch 2.11 CPU):
  ~/.cache/libtorch-workbook/torch-2.11.0/bin/python tests/data/python/make_memory_fixtures.py
  # GPU (the H200: scripts/gpu/python_fixtures.sh memory):
  python3 tests/data/python/make_memory_fixtures.py --device cuda --out $OUT/python
  # A big trace for bench/bench_tools (many steps; not committed):
  python make_memory_fixtures.py --bench-steps 200 --out /tmp/bench

Each recording holds what the memory columns must get right:
  - a fresh AdamW whose state (exp_avg, exp_avg_sq) appears at its first profiled step;
  - a "free_grads" region (zero_grad(set_to_none=True)) and a "drop_buffer" region that frees
    more than it allocates: negative self memory;
  - a "big_buffer" region: a 400 MB tensor per step (never touched), so the rows' sums reach GB;
  - tiny allocations (B and KB), the activations (KB, MB).

Written, per recording <rec>:
  <dev>_memory          record_shapes, backward on the calling thread, no schedule (every step)
  <dev>_memory_sched    no shapes, a schedule with a warmup step (the optimizer's state then
                        exists before the first recorded step)
(No backward on a second Python thread as in make_fixtures.py: that needs profile_all_threads,
and torch 2.11 records no [memory] event at all with it. On CUDA the backward runs on autograd's
device thread anyway, so the CUDA fixtures attribute records across threads.)
  <rec>.json.gz          the trace (prof.export_chrome_trace, then gzip)
  <rec>.tables.json.gz   {"meta": ..., "tables": {"<sort_by>|<row_limit>|<max_name_width>|
                         <group_by_input_shape>": Python's table text}} (make_fixtures.py's layout)
"""
import argparse
import pathlib
import sys

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function, schedule

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from make_fixtures import SORT_KEYS, Model, export_gzipped, write_tables  # noqa: E402

BIG = 400 * 1024 * 1024  # bytes: the "big_buffer" tensor (uninitialised, so never touched)


def train_step(model, opt, tokens, targets, device, held):
    with record_function("train_step"):
        logits = model(tokens)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        loss.backward()
        with record_function("optimizer_step"):
            opt.step()
        with record_function("free_grads"):
            opt.zero_grad(set_to_none=True)
    with record_function("big_buffer"):
        held.append(torch.empty(BIG, dtype=torch.uint8, device=device))
    with record_function("drop_buffer"):
        # frees the 400 MB and allocates 4 KB: self memory about -400 MB
        small = torch.zeros(1024, device=device)
        held.clear()
        held.append(small)
    return loss


def record(device, steps, sched, record_shapes, path):
    torch.manual_seed(0)
    model = Model().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, 128, (4, 32), device=device)
    targets = torch.randint(0, 128, (4, 32), device=device)
    held = []
    # Warm up the model, not the optimizer: a step without opt.step() (lazy init, allocator).
    model(tokens).sum().backward()
    model.zero_grad(set_to_none=True)
    if device == "cuda":
        torch.cuda.synchronize()
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    kwargs = dict(activities=activities, record_shapes=record_shapes, profile_memory=True)
    if sched:
        kwargs["schedule"] = schedule(wait=0, warmup=1, active=steps, repeat=1)
    with profile(**kwargs) as prof:
        for _ in range(steps + (1 if sched else 0)):
            train_step(model, opt, tokens, targets, device, held)
            if device == "cuda":
                torch.cuda.synchronize()
            prof.step()
    export_gzipped(prof, path)
    return prof


def tables(prof, record_shapes):
    out = {}
    for by_shape in ([False, True] if record_shapes else [False]):
        events = prof.key_averages(group_by_input_shape=by_shape)
        cases = [(key, -1, 55) for key in SORT_KEYS + [None]]
        cases += [("self_cpu_memory_usage", 10, 30), ("cuda_memory_usage", 100, 55)]
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
                    help="only record one big trace of this many steps with shapes (bench input), no tables")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.device == "cuda":
        assert torch.cuda.is_available(), "--device cuda needs a GPU"
    if args.bench_steps:
        path = args.out / f"{args.device}_memory_bench_{args.bench_steps}.json.gz"
        record(args.device, args.bench_steps, True, True, path)
        print(f"wrote {path}")
        return
    for name, sched, shapes in [("memory", False, True), ("memory_sched", True, False)]:
        rec = f"{args.device}_{name}"
        prof = record(args.device, args.steps, sched, shapes, args.out / f"{rec}.json.gz")
        meta = {"torch": torch.__version__, "device": args.device,
                "device_name": torch.cuda.get_device_name() if args.device == "cuda" else "cpu",
                "record_shapes": shapes, "profile_memory": True, "schedule": sched,
                "steps": args.steps, "script": "tests/data/python/make_memory_fixtures.py",
                "trace_start_ns": prof.profiler.kineto_results.trace_start_ns()}
        write_tables(args.out, rec, meta, tables(prof, shapes))


if __name__ == "__main__":
    main()
