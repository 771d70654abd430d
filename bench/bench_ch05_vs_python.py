#!/usr/bin/env python3
"""Chapter 05's variants against Python eager and torch.compile, side by side in one run.

    python3 bench/bench_ch05_vs_python.py --bin build/bin/05_compiled_addmm \
        [--sizes 64,4096] [--rounds 3] [--dtype bf16] [--markdown FILE]

Needs a CUDA device. For each size, each round runs both sides back to back:
  C++     05_compiled_addmm --size N --census only --quiet: the chapter times every variant
          (eager, addmm, aoti, graph, aoti with 2 runners) without the profiler and writes
          comparison.json (fact cpu_per_step); --census only skips the profiled runs.
  Python  the same step, y = add(matmul(x, w), b), in this process: eager, torch.compile()
          and torch.compile(mode="reduce-overhead"), compiled once before the first round.
Both sides measure alike, as wb::time_steps does: synchronize, then time every step on its
own (steady clock / perf_counter) for up to 200 steps or 0.5 s, synchronize, take the median.
Rounds alternate C++ and Python so that drift on the machine hits both; the table shows the
median over the rounds and each variant's ratio to Python eager and to torch.compile.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CPP_VARIANTS = ["eager", "addmm", "aoti", "aoti x2", "graph"]
PY_VARIANTS = ["eager", "torch.compile", "torch.compile reduce-overhead"]
DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


def cpp_round(binary, n, dtype, out):
    cmd = [binary, "--size", str(n), "--dtype", dtype, "--device", "cuda", "--census", "only",
           "--quiet", "--out", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"bench_ch05_vs_python.py: {' '.join(cmd)} exited {r.returncode}:\n{r.stderr or r.stdout}")
    with open(os.path.join(out, "comparison.json")) as f:
        facts = {x["id"]: x for x in json.load(f)["facts"]}
    data = facts["cpu_per_step"]["data"]
    return {v: data[v]["cpu_us"] for v in CPP_VARIANTS if isinstance(data.get(v), dict)}


def time_steps(fn, torch, max_steps=200, budget_s=0.5):
    """wb::time_steps in Python: every step timed on its own, the median."""
    torch.cuda.synchronize()
    us = []
    t0 = time.perf_counter()
    while len(us) < max_steps:
        a = time.perf_counter()
        fn()
        b = time.perf_counter()
        us.append((b - a) * 1e6)
        if len(us) >= 3 and b - t0 > budget_s:
            break
    torch.cuda.synchronize()
    return statistics.median(us)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build/bin/05_compiled_addmm", help="the chapter-05 program")
    ap.add_argument("--sizes", default="64,4096")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    ap.add_argument("--markdown", help="also write the table to this file")
    a = ap.parse_args()
    try:
        sizes = [int(s) for s in a.sizes.split(",")]
    except ValueError:
        sys.exit(f"bench_ch05_vs_python.py: --sizes wants integers like 64,4096, got '{a.sizes}'")
    if any(n <= 0 for n in sizes) or a.rounds <= 0:
        sys.exit("bench_ch05_vs_python.py: sizes and --rounds must be > 0")
    if not os.access(a.bin, os.X_OK):
        sys.exit(f"bench_ch05_vs_python.py: {a.bin} is not built (cmake --build build --target 05_compiled_addmm)")
    import torch  # after the flag checks: importing torch takes seconds
    if not torch.cuda.is_available():
        sys.exit("bench_ch05_vs_python.py: needs a CUDA device")
    dtype = getattr(torch, DTYPES[a.dtype])

    lines = [f"torch {torch.__version__}, {torch.cuda.get_device_name()}, {a.dtype}; CPU us per step "
             f"(median of each side's per-step times, then the median over {a.rounds} rounds)", ""]
    header = "| N | side | variant | CPU us/step | / Python eager | / torch.compile |"
    rows = []
    for n in sizes:
        x, w, b = (torch.randn(n, n, device="cuda", dtype=dtype) for _ in range(3))

        def step(x=x, w=w, b=b):
            return torch.add(torch.matmul(x, w), b)

        compiled = torch.compile(step)
        reduce_overhead = torch.compile(step, mode="reduce-overhead")
        py_fns = {"eager": step, "torch.compile": compiled, "torch.compile reduce-overhead": reduce_overhead}
        print(f"N={n}: compiling and warming up the Python variants ...", file=sys.stderr, flush=True)
        for fn in py_fns.values():
            for _ in range(20):
                fn()
        torch.cuda.synchronize()

        cpp = {v: [] for v in CPP_VARIANTS}
        py = {v: [] for v in PY_VARIANTS}
        with tempfile.TemporaryDirectory(prefix="bench_ch05_") as tmp:
            for r in range(a.rounds):
                print(f"N={n}: round {r + 1}/{a.rounds}", file=sys.stderr, flush=True)
                for v, us in cpp_round(a.bin, n, a.dtype, os.path.join(tmp, f"r{r}")).items():
                    cpp[v].append(us)
                for v, fn in py_fns.items():
                    py[v].append(time_steps(fn, torch))
        med = lambda xs: statistics.median(xs) if xs else float("nan")
        py_eager, py_compile = med(py["eager"]), med(py["torch.compile"])
        for side, table in (("C++", cpp), ("Python", py)):
            for v, xs in table.items():
                if not xs:
                    continue
                m = med(xs)
                rows.append(f"| {n} | {side} | {v} | {m:.2f} | {m / py_eager:.2f}x | {m / py_compile:.2f}x |")
    text = "\n".join(lines + [header, "|---:|---|---|---:|---:|---:|"] + rows) + "\n"
    print(text)
    if a.markdown:
        tmp = a.markdown + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, a.markdown)


if __name__ == "__main__":
    main()
