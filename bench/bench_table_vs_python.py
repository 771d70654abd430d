#!/usr/bin/env python3
"""The workbook's C++ table vs Python's key_averages().table(), on the same events.

    ~/.cache/libtorch-workbook/torch-2.11.0/bin/python bench/bench_table_vs_python.py \
        --bin build/bench/bench_table_vs_python [--steps 3,300,3000] [--reps 7]

For each --steps S: profiles S active steps of the chapter-01 loop on the CPU with
torch.profiler (64x64 matmul + add under record_function("matmul_add"), schedule wait=1,
warmup=1, active=S), exports the Chrome trace, then times, best of --reps after one warm-up:

  Python, full    prof.key_averages().table(sort_by="cpu_time_total", row_limit=-1) with the
                  lazily built events dropped first (prof.profiler._function_events = None), so
                  it pays what the first call after a profile pays: _parse_kineto_results (the
                  in-memory Kineto events -> FunctionEvents), _build_tree, key_averages, table.
  Python, table   the same call again with the FunctionEvents already built: key_averages + table.
  C++, full       read_trace(trace.json) + key_averages + format_table: from the file on disk
                  (JSON parsing included) to the text.
  C++, table      key_averages + format_table on the events already in memory.

Ratios: full/full (Python starts from in-memory events, C++ from the JSON file) and
table/table (aggregation + text only, like for like). The C++ binary also compares the
"# of Calls" column of both tables row by row. Prints a markdown table.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

os.environ.setdefault("KINETO_LOG_LEVEL", "5")  # CPU only: hide Kineto's "no GPU" error line
warnings.filterwarnings("ignore", message=".*Profiler clears events.*")
import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile, record_function, schedule  # noqa: E402


def profile_loop(steps):
    x, w, b = (torch.randn(64, 64) for _ in range(3))
    sch = schedule(wait=1, warmup=1, active=steps, repeat=1)
    with profile(activities=[ProfilerActivity.CPU], schedule=sch) as prof:
        for _ in range(steps + 2):
            with record_function("matmul_add"):
                torch.add(torch.matmul(x, w), b)
            prof.step()
    return prof


def best(reps, fn):
    fn()  # warm-up
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return min(t)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build/bench/bench_table_vs_python", help="the C++ half")
    ap.add_argument("--steps", default="3,300,3000", help="active steps per case, comma-separated")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--keep", help="folder to keep the traces and tables in")
    args = ap.parse_args()
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"bench_table_vs_python.py: {args.bin} is not built "
                 "(cmake --build build --target bench_table_vs_python)")

    work = args.keep or tempfile.mkdtemp(prefix="wb_bench_table_")
    os.makedirs(work, exist_ok=True)
    rows = []
    for steps in (int(s) for s in args.steps.split(",")):
        prof = profile_loop(steps)
        trace = os.path.join(work, f"py_cpu_{steps}.json")
        prof.export_chrome_trace(trace)
        inner = prof.profiler  # torch.autograd.profiler.profile: holds the lazy FunctionEvents

        def full():
            inner._function_events = None  # as right after the profile: parse again
            inner._needs_processing = True
            return prof.key_averages().table(sort_by="cpu_time_total", row_limit=-1)

        def table_only():
            return prof.key_averages().table(sort_by="cpu_time_total", row_limit=-1)

        py_full = best(args.reps, full)
        py_table = best(args.reps, table_only)
        table_path = os.path.join(work, f"py_cpu_{steps}_table.txt")
        with open(table_path, "w") as f:
            f.write(table_only())
        n_events = len(inner.function_events)

        out = subprocess.run([args.bin, trace, "--python-table", table_path, "--reps", str(args.reps)],
                             capture_output=True, text=True)
        if out.returncode not in (0, 1):
            sys.exit(f"C++ side failed ({out.returncode}): {out.stderr}")
        cpp = json.loads(out.stdout)
        rows.append(dict(steps=steps, py_events=n_events, cpp_events=cpp["events"],
                         py_full=py_full, py_table=py_table, cpp_full=cpp["read_and_table_s"],
                         cpp_table=cpp["table_only_s"], rows=cpp["rows_cpp"], same=cpp["calls_identical"],
                         diffs=cpp["call_differences"]))

    print(f"torch {torch.__version__}, best of {args.reps}, times in ms\n")
    print("| active steps | events (Py / trace) | table rows | # of Calls identical | Python full | "
          "C++ full (read+table) | ratio | Python table only | C++ table only | ratio |")
    print("|---:|---:|---:|:---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['steps']} | {r['py_events']} / {r['cpp_events']} | {r['rows']} | "
              f"{'yes' if r['same'] else 'NO'} | {r['py_full']*1e3:.2f} | {r['cpp_full']*1e3:.3f} | "
              f"{r['py_full']/r['cpp_full']:.0f}x | {r['py_table']*1e3:.2f} | {r['cpp_table']*1e3:.3f} | "
              f"{r['py_table']/r['cpp_table']:.0f}x |")
    for r in rows:
        if not r["same"]:
            print(f"\n# of Calls differ at {r['steps']} steps: {r['diffs']}")
    if not args.keep:
        print(f"\n(traces and tables in {work})")
    return 0 if all(r["same"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
