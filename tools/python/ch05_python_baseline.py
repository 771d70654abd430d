#!/usr/bin/env python3
"""Python's side of chapter 05's per-step CPU table: eager, torch.compile (default) and
torch.compile(mode="reduce-overhead") on add(matmul(x, w), b), unprofiled.

    python3 tools/python/ch05_python_baseline.py [--sizes 64,4096] [--iters 2000]

For each variant and size it prints the median over 5 rounds of the CPU time per step (the
loop's wall time before the final synchronize, divided by the steps) and the wall time per
step including that synchronize -- the same two numbers the C++ chapter reports.
"""
import argparse
import statistics
import time

import torch


def step_fn(x, w, b):
    return torch.add(torch.matmul(x, w), b)


def measure(fn, x, w, b, iters):
    for _ in range(20):
        fn(x, w, b)
    torch.cuda.synchronize()
    cpu, wall = [], []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn(x, w, b)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        cpu.append((t1 - t0) / iters * 1e6)
        wall.append((t2 - t0) / iters * 1e6)
    return statistics.median(cpu), statistics.median(wall)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="64,4096")
    p.add_argument("--iters", type=int, default=2000)
    a = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("needs a CUDA device")
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    print(f"{'size':>6} {'variant':<26} {'CPU us/step':>12} {'wall us/step':>13}")
    for n in (int(s) for s in a.sizes.split(",")):
        x, w, b = (torch.randn(n, n, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        iters = a.iters if n < 2048 else max(20, a.iters // 50)
        variants = [("eager", step_fn),
                    ("torch.compile default", torch.compile(step_fn)),
                    ("torch.compile reduce-overhead", torch.compile(step_fn, mode="reduce-overhead"))]
        for name, fn in variants:
            c, wl = measure(fn, x, w, b, iters)
            print(f"{n:>6} {name:<26} {c:>12.2f} {wl:>13.2f}", flush=True)


if __name__ == "__main__":
    main()
