#!/usr/bin/env python3
"""Regenerates the golden fixtures of tests/test_table.cpp: Kineto traces saved by torch.profiler
and the key_averages() tables Python prints for them. The test rebuilds each table in C++ from
the trace and compares. Never edit the outputs by hand: rerun this script.

  # CPU fixtures (any machine; the workbook's venv has torch 2.11 CPU):
  ~/.cache/libtorch-workbook/torch-2.11.0/bin/python tests/data/table/generate.py
  # CUDA fixtures (a CUDA machine with torch 2.11):
  python3 tests/data/table/generate.py --cuda

Each trace gets <prefix>_trace.json and one table per entry of TABLES below, named
<prefix>_by_<sort_by>[_top<N>].txt. The cpu_* files were made with the venv's torch 2.11.0 (CPU);
the cuda_* files on an NVIDIA H200 with torch 2.11.0+cu130.
"""
import argparse
import pathlib

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule

# One name longer than the table's 55-character name column, to exercise the "..." truncation.
LONG_NAME = "a_user_annotation_whose_name_is_far_too_long_for_the_name_column"

# (prefix, sort_by, row_limit); row_limit -1 prints every row.
TABLES = {
    "cpu": [("cpu_time_total", -1), ("count", -1), ("self_cpu_time_total", 8)],
    "cuda": [("cuda_time_total", -1), ("self_cuda_time_total", 10), ("count", -1)],
    "cuda_cold": [("cpu_time_total", -1)],
}


def step(x, w, b):
    with record_function("matmul_add"):
        y = torch.add(torch.matmul(x, w), b)
    with record_function("outer"):
        with record_function("inner"):
            z = torch.relu(y).sum()
        with record_function("dup"):
            # Same name, only child: Python merges it into its parent (_remove_dup_nodes).
            with record_function("dup"):
                z = z * 2
    with record_function(LONG_NAME):
        torch.softmax(x, dim=1)
    # Autograd: more rows, and on CUDA the backward ops run on the autograd engine's own thread.
    a = x.detach().clone().requires_grad_()
    (a @ w).sum().backward()
    return z


def capture(out, prefix, device, activities, sched):
    x, w, b = (torch.randn(64, 64, device=device) for _ in range(3))
    steps = 5 if sched else 1
    with profile(activities=activities, schedule=sched) as prof:
        for _ in range(steps):
            step(x, w, b)
            if device == "cuda":
                torch.cuda.synchronize()
            prof.step()
    prof.export_chrome_trace(str(out / f"{prefix}_trace.json"))
    for sort_by, limit in TABLES[prefix]:
        name = f"{prefix}_by_{sort_by}" + (f"_top{limit}" if limit >= 0 else "") + ".txt"
        (out / name).write_text(prof.key_averages().table(sort_by=sort_by, row_limit=limit))
        print(f"wrote {out / name}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cuda", action="store_true", help="write the CUDA fixtures")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path(__file__).parent)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    sched = schedule(wait=1, warmup=1, active=3, repeat=1)
    if args.cuda:
        assert torch.cuda.is_available(), "--cuda needs a GPU"
        both = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
        # First, cold: the process's first profiled GPU work shows the profiler's own overhead
        # (Activity Buffer Request, module loading) as extra CPU rows.
        capture(args.out, "cuda_cold", "cuda", both, None)
        capture(args.out, "cuda", "cuda", both, sched)
    else:
        capture(args.out, "cpu", "cpu", [ProfilerActivity.CPU], sched)


if __name__ == "__main__":
    main()
