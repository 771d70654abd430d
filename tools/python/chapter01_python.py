#!/usr/bin/env python3
"""Chapter 01's workload in Python, for the C++/Python parity check and the post's compile section.

Runs y = add(matmul(x, w), b) under record_function("matmul_add") with the same schedule as
the C++ chapter (wait=1, warmup=1, active=3, repeat=1) and writes Python's own
key_averages().table() and Chrome trace next to each other:

    python3 tools/python/chapter01_python.py --out out/parity/python [--size 64] [--device cuda]

Compare with build/bin/01_cold_64 --out out/parity/cpp (same flags).

The post's torch.compile experiment (chapter 05 reads these traces):

    python3 tools/python/chapter01_python.py --size 4096 --warmup --out DIR/eager
    python3 tools/python/chapter01_python.py --size 4096 --warmup --compile --out DIR/compile
    python3 tools/python/chapter01_python.py --size 4096 --warmup --compile \
        --mode reduce-overhead --out DIR/reduce_overhead

--warmup runs the step 3 times and synchronizes before the profiler starts (the post's flag:
with --compile, that is where Dynamo and Inductor compile, and where reduce-overhead records
its CUDA graph). Each run also writes run.json: what ran, on what, with which torch.
"""
import argparse
import json
import os
import platform
import sys
import time

import torch

WARMUP_ITERS = 3


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument("--schedule", default="1,1,3,1", help="W,WU,A[,R]")
    p.add_argument("--sort-by", default=None)
    p.add_argument("--row-limit", type=int, default=15)
    p.add_argument("--warmup", action="store_true",
                   help=f"run the step {WARMUP_ITERS} times and synchronize before profiling")
    p.add_argument("--compile", action="store_true", help="torch.compile the function (Inductor)")
    p.add_argument("--mode", default="default",
                   choices=["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"],
                   help="torch.compile's mode (with --compile)")
    p.add_argument("--threads", type=int, default=0,
                   help="CPU threads for torch's ops (torch.set_num_threads; 0: torch's default)")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    if a.size <= 0:
        p.error("--size must be > 0")
    if a.mode != "default" and not a.compile:
        p.error("--mode needs --compile")
    return a


def fn(x, w, b):
    return torch.add(torch.matmul(x, w), b)


def synchronize(dev):
    if dev == "cuda":
        torch.cuda.synchronize()


def describe(a, dev, dtype, schedule):
    """run.json: the flags, the device and the software that made the trace."""
    argv = [("<out>" if v == a.out else v) for v in sys.argv]
    info = {
        "command": " ".join([os.path.basename(sys.executable)] + argv),
        "size": a.size, "device": dev, "dtype": str(dtype).replace("torch.", ""),
        "warmup_iters": WARMUP_ITERS if a.warmup else 0,
        "compile": a.compile, "mode": a.mode if a.compile else None,
        "schedule": dict(zip(["wait", "warmup", "active", "repeat"], schedule)),
        "threads": torch.get_num_threads(),
        "annotation": "matmul_add",
        "torch": torch.__version__, "cuda": torch.version.cuda, "python": platform.python_version(),
        "host": f"{platform.system()} {platform.release()} {platform.machine()}, {os.cpu_count()} cores",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if dev == "cuda":
        info["gpu"] = torch.cuda.get_device_name()
        info["compute_capability"] = ".".join(map(str, torch.cuda.get_device_capability()))
    return info


def main() -> None:
    a = parse_args()
    dev = "cuda" if a.device == "cuda" or (a.device == "auto" and torch.cuda.is_available()) else "cpu"
    dtype = torch.bfloat16 if dev == "cuda" else torch.float32
    parts = [int(v) for v in a.schedule.split(",")]
    wait, warmup, active = parts[:3]
    repeat = parts[3] if len(parts) > 3 else 1
    sort_by = a.sort_by or ("cuda_time_total" if dev == "cuda" else "cpu_time_total")
    os.makedirs(a.out, exist_ok=True)

    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    x, w, b = (torch.randn(a.size, a.size, device=dev, dtype=dtype) for _ in range(3))
    step_fn = torch.compile(fn, mode=None if a.mode == "default" else a.mode) if a.compile else fn

    def step():
        with torch.profiler.record_function("matmul_add"):
            return step_fn(x, w, b)

    compile_s = None
    if a.warmup:
        t0 = time.perf_counter()
        for _ in range(WARMUP_ITERS):
            step()
        synchronize(dev)
        compile_s = round(time.perf_counter() - t0, 3)

    acts = [torch.profiler.ProfilerActivity.CPU]
    if dev == "cuda":
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    sched = torch.profiler.schedule(wait=wait, warmup=warmup, active=active, repeat=repeat)
    with torch.profiler.profile(activities=acts, schedule=sched) as prof:
        for _ in range((wait + warmup + active) * max(repeat, 1)):
            step()
            prof.step()
    prof.export_chrome_trace(os.path.join(a.out, "trace.json"))
    table = prof.key_averages().table(sort_by=sort_by, row_limit=a.row_limit)
    with open(os.path.join(a.out, "table.txt"), "w") as f:
        f.write(table)
    info = describe(a, dev, dtype, [wait, warmup, active, repeat])
    info["warmup_seconds"] = compile_s  # with --compile: mostly Dynamo + Inductor compiling
    with open(os.path.join(a.out, "run.json"), "w") as f:
        json.dump(info, f, indent=2)
        f.write("\n")
    print(table)


if __name__ == "__main__":
    main()
