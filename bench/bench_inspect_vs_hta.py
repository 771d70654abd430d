#!/usr/bin/env python3
"""`inspect` vs Holistic Trace Analysis (HTA) on the same GPU traces.

    ~/.cache/libtorch-workbook/torch-2.11.0/bin/python -m pip install HolisticTraceAnalysis
    ~/.cache/libtorch-workbook/torch-2.11.0/bin/python bench/bench_inspect_vs_hta.py \
        --build-dir build [--mb 5,25] [--reps 3]

Traces: tests/data/traces/synthetic_h200_eager64.json (3 steps) and, for each --mb N, a
generated H200 eager trace of about N MB (bench_trace_reader --mb N --keep writes it: step
after step of matmul_add with memsets, GEMM and elementwise kernels, launches and ac2g flows),
in two shapes:
  many steps   as generated: one ProfilerStep per 100 us, so thousands of steps. HTA finds the
               step of each event by scanning every step (hta/common/trace.py, add_iteration),
               so its load grows as events x steps; above --max-many-steps-mb it is skipped.
  5 steps      the same events with the ProfilerStep spans replaced by 5 long ones, like a
               profile of a few big iterations: HTA at its best.
No GPU is needed: the traces are synthetic.

What each side does -- a comparable analysis, and inspect does more of it:
  HTA      TraceAnalysis(trace_files={0: TRACE}, include_last_profiler_step=True)   (load)
           + get_gpu_kernel_breakdown(visualize=False)      time per kernel type and kernel
           + get_temporal_breakdown(visualize=False)        GPU idle / compute / other time
  inspect  read_trace + TraceModel + every cheatsheet rule (overhead- vs compute-bound with GPU
           busy time, step widths, dead window, dispatch chain, launch paths, copies, ...),
           rendered as JSON (`inspect TRACE --format json`)

Timed, best of --reps:
  in process   HTA: load + the two analyses, after `import hta` (perf_counter);
               C++: the same pipeline in one process (bench_inspect_vs_hta, steady_clock)
  end to end   a fresh process each: `python -c "import hta; ...the same..."` vs `inspect`,
               wall clock from start to exit (what a user waits for)
The kernel time both sides find (HTA's compute_time vs the C++ sum over kernel events) is
printed next to the times, so they are seen to have read the same trace. HTA by default rounds
nanosecond timestamps to whole microseconds (start up, end down: a 0.9 us kernel lasts 0 us);
HTA_DISABLE_NS_ROUNDING=1 turns that off here, which keeps the totals comparable and also
spares HTA a per-row Python pass (so it makes HTA faster, not slower).
"""
import argparse
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import time
from decimal import Decimal

os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"  # before HTA is imported; the children inherit it

HTA_SCRIPT = r"""
import logging, sys, warnings
warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)
from hta.trace_analysis import TraceAnalysis
ta = TraceAnalysis(trace_files={0: sys.argv[1]}, include_last_profiler_step=True)
ta.get_gpu_kernel_breakdown(visualize=False)
ta.get_temporal_breakdown(visualize=False)
"""


STEP_EVENT = re.compile(r',?\n  \{\n    "ph": "X", "cat": "user_annotation", "name": "ProfilerStep#\d+",'
                        r'.*?"ts": ([0-9.]+), "dur": ([0-9.]+),.*?\n  \}', re.S)


def five_steps(src, dst, n=5):
    """Copies a bench_trace_reader trace with its ProfilerStep events replaced by n that tile
    the same time range. Text surgery on the generator's fixed layout, so that every other
    event keeps its exact nanosecond timestamps (a float round trip would not)."""
    with open(src) as f:
        text = f.read()
    spans = [(Decimal(ts), Decimal(dur)) for ts, dur in STEP_EVENT.findall(text)]
    if not spans:
        sys.exit(f"{src}: no ProfilerStep events in the expected layout")
    text = STEP_EVENT.sub("", text).replace('"traceEvents": [,', '"traceEvents": [', 1)
    t0, t1 = spans[0][0], max(ts + dur for ts, dur in spans)
    width = (t1 - t0) / n
    steps = "".join(
        f'\n  {{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{i}", "pid": 4242, "tid": 4242, '
        f'"ts": {t0 + i * width:.3f}, "dur": {width - Decimal("0.001"):.3f}, '
        f'"args": {{"External id": {10**9 + i}}}}},' for i in range(n))
    text = text.replace('"traceEvents": [', '"traceEvents": [' + steps, 1)
    with open(dst, "w") as f:
        f.write(text)


def best_wall(reps, cmd):
    best = 1e300
    for _ in range(reps):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - t0)
    return best


def hta_in_process(path, reps):
    from hta.trace_analysis import TraceAnalysis

    load = analysis = 1e300
    for i in range(reps + 1):  # the first one warms up imports and caches; it is not counted
        t0 = time.perf_counter()
        ta = TraceAnalysis(trace_files={0: path}, include_last_profiler_step=True)
        t1 = time.perf_counter()
        ta.get_gpu_kernel_breakdown(visualize=False)
        temporal = ta.get_temporal_breakdown(visualize=False)
        t2 = time.perf_counter()
        if i > 0:
            load, analysis = min(load, t1 - t0), min(analysis, t2 - t1)
    # The kernel-type table sums into an int column (whole us); the temporal breakdown keeps
    # the fractions.
    return dict(load=load, analysis=analysis, kernel_sum_us=float(temporal["compute_time(us)"].iloc[0]),
                idle_pct=float(temporal["idle_time_pctg"].iloc[0]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--mb", default="5,25", help="sizes of the generated traces, comma-separated")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--max-many-steps-mb", type=float, default=30,
                    help="skip the many-steps shape above this size (HTA takes minutes there)")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    bins = {n: os.path.join(args.build_dir, sub, n) for sub, n in
            (("bench", "bench_trace_reader"), ("bench", "bench_inspect_vs_hta"), ("bin", "inspect"))}
    for n, p in bins.items():
        if not os.access(p, os.X_OK):
            sys.exit(f"bench_inspect_vs_hta.py: {p} is not built (cmake --build {args.build_dir} --target {n})")
    try:
        import hta  # noqa: F401
    except ImportError:
        sys.exit("bench_inspect_vs_hta.py: HTA is not installed here: "
                 f"{sys.executable} -m pip install HolisticTraceAnalysis")
    logging.disable(logging.CRITICAL)  # HTA logs every file it parses

    traces = [("3 steps", os.path.join(root, "tests/data/traces/synthetic_h200_eager64.json"))]
    made = []
    for mb in args.mb.split(","):
        out = subprocess.run([bins["bench_trace_reader"], "--mb", mb, "--keep"], check=True,
                             capture_output=True, text=True).stdout
        many = out.split("kept: ")[1].strip()
        few = os.path.join(os.path.dirname(many), "five_steps.json")
        five_steps(many, few)
        made.append(os.path.dirname(many))
        traces.append(("5 steps", few))
        if float(mb) <= args.max_many_steps_mb:
            traces.append(("many steps", many))

    rows = []
    for shape, path in traces:
        cpp = json.loads(subprocess.run([bins["bench_inspect_vs_hta"], path, "--reps", str(args.reps)],
                                        check=True, capture_output=True, text=True).stdout)
        h = hta_in_process(path, args.reps)
        e2e_hta = best_wall(args.reps, [sys.executable, "-c", HTA_SCRIPT, path])
        e2e_inspect = best_wall(args.reps, [bins["inspect"], path, "--format", "json"])
        rows.append(dict(name=shape, mb=os.path.getsize(path) / 2**20, events=cpp["events"],
                         hta=h["load"] + h["analysis"], hta_load=h["load"], cpp=cpp["total_s"],
                         e2e_hta=e2e_hta, e2e_inspect=e2e_inspect,
                         k_hta=h["kernel_sum_us"], k_cpp=cpp["kernels"]["sum_us"], idle=h["idle_pct"]))

    import hta as hta_mod
    print(f"HTA {getattr(hta_mod, '__version__', '?')}, best of {args.reps}; times in s\n")
    print("| trace shape | MB | events | HTA in process (load) | inspect in process | ratio | "
          "HTA end to end | inspect end to end | ratio | kernel time HTA / C++ (us) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['name']} | {r['mb']:.2f} | {r['events']} | {r['hta']:.3f} ({r['hta_load']:.3f}) | "
              f"{r['cpp']:.4f} | {r['hta']/r['cpp']:.0f}x | {r['e2e_hta']:.2f} | {r['e2e_inspect']:.3f} | "
              f"{r['e2e_hta']/r['e2e_inspect']:.0f}x | {r['k_hta']:.1f} / {r['k_cpp']:.1f} |")
    for d in made:
        shutil.rmtree(d)  # bench_trace_reader's folder: the .json, .json.gz and five_steps.json
    return 0


if __name__ == "__main__":
    sys.exit(main())
