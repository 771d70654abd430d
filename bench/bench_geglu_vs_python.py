#!/usr/bin/env python3
"""The GeGLU pointwise race, Python's half: torch.compile's fused kernel, timed as bench_geglu times its own.

y = gelu_tanh(g) * u on [8192, 3072] bf16 (chapter 07's intermediate). Contenders here:
  python eager gelu + mul              two ATen kernels (a cross-check of bench_geglu's eager row)
  torch.compile                        Inductor's Triton kernel as Python users get it (autotuned at
                                       the first call among Inductor's pointwise configs)
  torch.compile, autotune_pointwise off  Inductor's first config only (no autotuning)
  torch.compile MLP (its fused kernel) the whole GeGLU MLP compiled, as the H200 probe ran it: the
                                       Triton kernel's time right after the gate and up GEMMs
Two clocks, as bench_geglu names them:
  kernel      the kernels' own device time per call, from torch.profiler's trace (CUPTI), median of
              --profile-calls calls, in three conditions: back to back, L2 flushed (a 256 MB buffer
              written before each call), after the MLP's gate and up GEMMs wrote g and u
  end-to-end  CUDA events around --calls back-to-back calls, median of --reps rounds
Writes into --out: python_race.json (every number), python_kernels/*.py (the code Inductor generated,
with the Triton kernels' source) and, with --cpp-json (bench_geglu --json), race.md: the race table of
all contenders, ready to paste into docs/performance.md, also printed.

  bench_geglu_vs_python.py --out DIR [--cpp-json FILE] [--calls 50] [--reps 9] [--profile-calls 20]
Exit 2 (before any work) on bad arguments or without a CUDA device.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

ROWS, HIDDEN, DIM = 8192, 3072, 768
CONDITIONS = ("back to back", "L2 flushed", "after gate+up GEMMs")
FLUSHED = CONDITIONS[1]


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--cpp-json", help="bench_geglu --json output: adds the C++ contenders to the race table")
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--profile-calls", type=int, default=20)
    a = ap.parse_args()
    if min(a.calls, a.reps, a.profile_calls) < 1:
        ap.error("--calls, --reps and --profile-calls must be >= 1")
    if a.cpp_json and not os.path.isfile(a.cpp_json):
        ap.error(f"--cpp-json {a.cpp_json}: no such file")
    return a


def write_atomic(path, text):
    tmp = path + ".partial"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def kernel_times(trace_path):
    """{contender: {condition: [device us of each call]}}, {contender: [kernel names]}, {contender: launch}."""
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    launch_at = {}
    calls = []
    for e in events:
        cat = e.get("cat")
        if cat in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            launch_at[e["args"]["correlation"]] = e["ts"]
        elif cat == "user_annotation" and e.get("name", "").startswith("race|"):
            calls.append(e)
    calls.sort(key=lambda e: e["ts"])
    starts = [c["ts"] for c in calls]
    per_call, names, launch = {}, {}, {}
    import bisect
    for e in events:
        if e.get("cat") != "kernel":
            continue
        t = launch_at.get(e.get("args", {}).get("correlation"))
        if t is None:
            continue
        i = bisect.bisect_right(starts, t) - 1
        if i < 0 or t > calls[i]["ts"] + calls[i]["dur"]:
            continue  # a prelude's kernel (the flush, the GEMMs)
        per_call[i] = per_call.get(i, 0.0) + e["dur"]
        _, who, _cond = calls[i]["name"].split("|")
        if e["name"] not in names.setdefault(who, []):
            names[who].append(e["name"])
            a = e["args"]
            cfg = f"grid {a.get('grid', ['?'])[0]} x block {a.get('block', ['?'])[0]}"
            if "registers per thread" in a:
                cfg += f" ({a['registers per thread']} regs)"
            launch[who] = (launch.get(who, "") + " + " if who in launch else "") + cfg
    out = {}
    for i, us in per_call.items():
        _, who, cond = calls[i]["name"].split("|")
        out.setdefault(who, {}).setdefault(cond, []).append(us)
    return out, names, launch


def main():
    args = parse_args()
    import torch
    import torch.nn.functional as F
    from torch.profiler import ProfilerActivity, profile, record_function

    if not torch.cuda.is_available():
        print("bench_geglu_vs_python: needs a CUDA GPU (torch sees none)", file=sys.stderr)
        return 2
    os.makedirs(os.path.join(args.out, "python_kernels"), exist_ok=True)
    torch.set_grad_enabled(False)  # inference, as the C++ bench: one Dynamo guard state throughout
    torch.manual_seed(0)
    dev, dt = "cuda", torch.bfloat16
    g = torch.randn(ROWS, HIDDEN, device=dev, dtype=dt)
    u = torch.randn(ROWS, HIDDEN, device=dev, dtype=dt)
    x = torch.randn(ROWS, DIM, device=dev, dtype=dt)
    w_gate = torch.randn(HIDDEN, DIM, device=dev, dtype=dt) / 27.7
    w_up = torch.randn(HIDDEN, DIM, device=dev, dtype=dt) / 27.7
    w_down = torch.randn(DIM, HIDDEN, device=dev, dtype=dt) / 55.4
    flush = torch.empty(256 << 20, device=dev, dtype=torch.uint8)

    def geglu_default(a, b):
        return F.gelu(a, approximate="tanh") * b

    def geglu_no_autotune(a, b):  # a separate function: its own Dynamo cache entry
        return F.gelu(a, approximate="tanh") * b

    compiled = torch.compile(geglu_default)
    compiled_fixed = torch.compile(geglu_no_autotune, options={"triton.autotune_pointwise": False})
    from torch._inductor.utils import run_and_get_code
    with torch.no_grad():
        for tag, fn in (("torch_compile", compiled), ("torch_compile_autotune_off", compiled_fixed)):
            _, sources = run_and_get_code(fn, g, u)  # compiles on this call; the generated modules
            for k, src in enumerate(sources):
                write_atomic(os.path.join(args.out, "python_kernels", f"{tag}_{k}.py"), src)

    contenders = {
        "python eager gelu + mul": lambda: F.gelu(g, approximate="tanh") * u,
        "torch.compile": lambda: compiled(g, u),
        "torch.compile, autotune_pointwise off": lambda: compiled_fixed(g, u),
    }
    want = (F.gelu(g.float(), approximate="tanh") * u.float())
    check = {n: float((fn().float() - want).abs().max()) for n, fn in contenders.items()}

    # End-to-end: CUDA events around back-to-back calls.
    with torch.no_grad():
        for fn in contenders.values():
            for _ in range(10):
                fn()
        torch.cuda.synchronize()
        e2e = {n: [] for n in contenders}
        for _ in range(args.reps):
            for n, fn in contenders.items():
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                for _ in range(args.calls):
                    fn()
                e.record()
                torch.cuda.synchronize()
                e2e[n].append(s.elapsed_time(e) * 1000 / args.calls)

        # Kernel time: every call in its own record_function, three conditions (the GEMM one last:
        # it overwrites g and u in place).
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for cond in CONDITIONS:
                for n, fn in contenders.items():
                    for i in range(args.profile_calls):
                        if cond == CONDITIONS[1]:
                            with record_function("prelude"):
                                flush.fill_(i & 0xFF)
                        elif cond == CONDITIONS[2]:
                            with record_function("prelude"):
                                torch.mm(x, w_gate.t(), out=g)
                                torch.mm(x, w_up.t(), out=u)
                        with record_function(f"race|{n}|{cond}"):
                            fn()
            torch.cuda.synchronize()
        trace = os.path.join(tempfile.mkdtemp(prefix="geglu_race_"), "python_race_trace.json")
        prof.export_chrome_trace(trace)
        kus, names, launch = kernel_times(trace)

        # The whole MLP compiled (as the probe): its fused kernel right after the GEMMs.
        class GeGLU(torch.nn.Module):
            def forward(self, x, wg, wu, wd):
                return F.linear(F.gelu(F.linear(x, wg), approximate="tanh") * F.linear(x, wu), wd)
        mlp = torch.compile(GeGLU())
        x3 = x.view(64, 128, DIM)
        _, mlp_sources = run_and_get_code(mlp, x3, w_gate, w_up, w_down)
        for k, src in enumerate(mlp_sources):
            write_atomic(os.path.join(args.out, "python_kernels", f"torch_compile_mlp_{k}.py"), src)
        for _ in range(5):
            mlp(x3, w_gate, w_up, w_down)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof2:
            for _ in range(args.profile_calls):
                with record_function("race|torch.compile MLP|after gate+up GEMMs"):
                    mlp(x3, w_gate, w_up, w_down)
            torch.cuda.synchronize()
        trace2 = os.path.join(os.path.dirname(trace), "python_mlp_trace.json")
        prof2.export_chrome_trace(trace2)
        with open(trace2) as f:
            ev = json.load(f)["traceEvents"]
        fused = [e for e in ev if e.get("cat") == "kernel" and e["name"].startswith("triton_")]
        if fused:
            kus["torch.compile MLP"] = {CONDITIONS[2]: [e["dur"] for e in fused]}
            names["torch.compile MLP"] = sorted({e["name"] for e in fused})
            a = fused[0]["args"]
            launch["torch.compile MLP"] = (f"grid {a.get('grid', ['?'])[0]} x block {a.get('block', ['?'])[0]}"
                                           + (f" ({a['registers per thread']} regs)" if "registers per thread" in a else ""))

    def med(who, cond):
        v = kus.get(who, {}).get(cond)
        return statistics.median(v) if v else None

    py = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0),
          "calls": args.calls, "reps": args.reps, "profile_calls": args.profile_calls,
          "max_abs_diff_vs_fp32": check, "contenders": []}
    for who in list(contenders) + ["torch.compile MLP"]:
        if who not in kus:
            continue
        py["contenders"].append({
            "name": who, "mb": (5 if "eager" in who else 3) * ROWS * HIDDEN * 2 / 1e6,
            "kernels": names.get(who, []), "launch": launch.get(who, ""),
            "kernel_us": {"back_to_back": med(who, CONDITIONS[0]), "l2_flushed": med(who, FLUSHED),
                          "after_gemms": med(who, CONDITIONS[2])},
            "kernel_samples": kus.get(who, {}),
            "e2e_us": statistics.median(e2e[who]) if who in e2e else None,
            "e2e_rounds_us": e2e.get(who, []),
        })
    write_atomic(os.path.join(args.out, "python_race.json"), json.dumps(py, indent=1) + "\n")
    print(f"python: torch {torch.__version__} on {py['device']}; max |y - fp32| {check}")

    if args.cpp_json:
        with open(args.cpp_json) as f:
            cpp = json.load(f)
        table = race_table(cpp, py)
        write_atomic(os.path.join(args.out, "race.md"), table)
        print(table)
    return 0


def fmt(v, digits=1):
    return "-" if v is None or v < 0 else f"{v:.{digits}f}"


def race_table(cpp, py):
    """The race table: C++ (bench_geglu) and Python contenders, kernel time and end-to-end."""
    rows = [("C++", c) for c in cpp["contenders"]] + [("Python", c) for c in py["contenders"]]
    by = {c["name"]: c for _, c in rows}
    eager = by.get("eager gelu + mul") or by.get("python eager gelu + mul")
    eager_k = eager["kernel_us"]["l2_flushed"] if eager else None
    copy_tbps = cpp.get("copy_gbps", 0) / 1e3
    out = ["| contender | from | kernel(s), launch | kernel us, L2 flushed | kernel us, after gate+up GEMMs "
           "| kernel us, back to back | end-to-end us per call | vs eager (kernel, L2 flushed) "
           "| TB/s after GEMMs |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for side, c in rows:
        k = c["kernel_us"]
        names = " + ".join(n if len(n) < 50 else n[:47] + "..." for n in c["kernels"])
        hot = k.get("after_gemms")
        tbps = c["mb"] / hot if hot else None  # MB per us = TB/s
        vs = f"{eager_k / k['l2_flushed']:.2f}x" if eager_k and k.get("l2_flushed") else "-"
        out.append(f"| {c['name']} | {side} | `{names}` {c.get('launch', '')} | {fmt(k.get('l2_flushed'))} "
                   f"| {fmt(hot)} | {fmt(k.get('back_to_back'))} | {fmt(c.get('e2e_us'))} | {vs} | {fmt(tbps, 2)} |")
    out.append("")
    out.append(f"Measured copy (DtoD, 151 MB each way): {copy_tbps:.2f} TB/s. kernel: the kernels' own device time "
               f"per call from the profiler's trace (CUPTI), median of {py['profile_calls']} calls; end-to-end: CUDA "
               f"events around {py['calls']} back-to-back calls, median of {py['reps']} rounds (it includes what "
               "the host adds between calls).")
    hand = by.get("handwritten fused")
    goals = []
    if hand and eager_k:
        hk = hand["kernel_us"]["l2_flushed"]
        goals.append(f"hand-written vs eager: {eager_k / hk:.2f}x on kernel time, L2 flushed (goal >= 1.7x): "
                     + ("met" if eager_k / hk >= 1.7 else "NOT met"))
        for rival in ("inductor fused (AOTI)", "torch.compile"):
            r = by.get(rival)
            if r and r["kernel_us"].get("l2_flushed"):
                rk = r["kernel_us"]["l2_flushed"]
                goals.append(f"hand-written vs {rival}: {hk:.1f} vs {rk:.1f} us kernel time, L2 flushed "
                             f"(goal: no slower, 1% tolerance): " + ("met" if hk <= rk * 1.01 else "NOT met"))
    if goals:
        out.append("")
        out += [f"- {g}" for g in goals]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
