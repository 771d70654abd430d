#!/usr/bin/env python3
"""Chapter 01's workload in Python, for the C++/Python parity check.

Runs y = add(matmul(x, w), b) under record_function("matmul_add") with the same schedule as
the C++ chapter (wait=1, warmup=1, active=3, repeat=1) and writes Python's own
key_averages().table() and Chrome trace next to each other:

    python3 tools/python/chapter01_python.py --out out/parity/python [--size 64] [--device cuda]

Compare with build/bin/01_cold_64 --out out/parity/cpp (same flags).
"""
import argparse
import os

import torch


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument("--schedule", default="1,1,3,1", help="W,WU,A[,R]")
    p.add_argument("--sort-by", default=None)
    p.add_argument("--row-limit", type=int, default=15)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    if a.size <= 0:
        p.error("--size must be > 0")
    dev = "cuda" if a.device == "cuda" or (a.device == "auto" and torch.cuda.is_available()) else "cpu"
    dtype = torch.bfloat16 if dev == "cuda" else torch.float32
    parts = [int(v) for v in a.schedule.split(",")]
    wait, warmup, active = parts[:3]
    repeat = parts[3] if len(parts) > 3 else 1
    sort_by = a.sort_by or ("cuda_time_total" if dev == "cuda" else "cpu_time_total")
    os.makedirs(a.out, exist_ok=True)

    torch.manual_seed(0)
    x, w, b = (torch.randn(a.size, a.size, device=dev, dtype=dtype) for _ in range(3))
    acts = [torch.profiler.ProfilerActivity.CPU]
    if dev == "cuda":
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    sched = torch.profiler.schedule(wait=wait, warmup=warmup, active=active, repeat=repeat)
    with torch.profiler.profile(activities=acts, schedule=sched) as prof:
        for _ in range((wait + warmup + active) * max(repeat, 1)):
            with torch.profiler.record_function("matmul_add"):
                torch.add(torch.matmul(x, w), b)
            prof.step()
    prof.export_chrome_trace(os.path.join(a.out, "trace.json"))
    table = prof.key_averages().table(sort_by=sort_by, row_limit=a.row_limit)
    with open(os.path.join(a.out, "table.txt"), "w") as f:
        f.write(table)
    print(table)


if __name__ == "__main__":
    main()
