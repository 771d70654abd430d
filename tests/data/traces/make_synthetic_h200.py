#!/usr/bin/env python3
"""Writes synthetic_h200_eager64.json: a SYNTHETIC, hand-made Kineto trace (not captured).

There is no GPU on the machine that runs the tests, so this file stands in for an H200
capture of the workbook's matmul_add loop (64x64, eager, warm). Its shape follows the
real H200 summaries of an early probe of this workbook (py_64_warm, py_4096_warm, cpp_64_addmm):
the same categories, names, arg keys, pid/tid conventions (GPU pid = device, tid = stream),
ac2g flow events, metadata rows and Kineto's string pids ("Spans", "Traces"). The times
are invented but plausible (launch -> kernel start ~10-20 us, kernels ~1-2 us).

Layout per step (ProfilerStep#2..#4), pid/tid 4242:
  ProfilerStep#N > matmul_add > aten::matmul > aten::mm > cudaMemsetAsync + cuLaunchKernelEx
                              > aten::add > cudaLaunchKernel
  step 2 also uploads the input first: aten::to > aten::_to_copy > aten::copy_ > cudaMemcpyAsync
  step 4 ends with cudaDeviceSynchronize (outside matmul_add).
GPU (device 0, stream 7): memset, nvjet kernel, elementwise kernel, one memcpy in step 2,
and a gpu_user_annotation "matmul_add" spanning each step's kernels.
Regenerate: python3 make_synthetic_h200.py > synthetic_h200_eager64.json
"""
import json

PID = 4242
BASE_NS = 1790857026000000000
events = []
ext = iter(range(1, 10_000))
corr = iter(range(40, 10_000))


def us(x):
    return f"{x:.3f}"


def X(cat, name, ts, dur, pid=PID, tid=PID, args=None):
    events.append(dict(ph="X", cat=cat, name=name, pid=pid, tid=tid, ts=ts, dur=dur, args=args))


def flow(ph, cid, ts, pid, tid):
    e = dict(ph=ph, id=cid, pid=pid, tid=tid, ts=ts, cat="ac2g", name="ac2g")
    if ph == "f":
        e["bp"] = "e"  # Kineto binds the flow end to the enclosing slice
    events.append(e)


def launch(api_cat, api_name, t, dur, ext_id, gpu_name, gpu_cat, gpu_start, gpu_dur, gpu_args):
    c = next(corr)
    X(api_cat, api_name, t, dur, args={"External id": ext_id, "cbid": 211, "correlation": c})
    flow("s", c, t, PID, PID)
    args = {"External id": ext_id, "queued": 0, "device": 0, "context": 1, "stream": 7,
            "correlation": c}
    args.update(gpu_args)
    X(gpu_cat, gpu_name, gpu_start, gpu_dur, pid=0, tid=7, args=args)
    flow("f", c, gpu_start, 0, 7)
    return gpu_start + gpu_dur


NVJET = {"registers per thread": 168, "shared memory": 164308, "blocks per SM": 0.060606,
         "warps per SM": 0.727273, "grid": [4, 2, 1], "block": [384, 1, 1],
         "est. achieved occupancy %": 0}
ELEMWISE = {"registers per thread": 24, "shared memory": 0, "blocks per SM": 0.030303,
            "warps per SM": 0.121212, "grid": [4, 1, 1], "block": [128, 1, 1],
            "est. achieved occupancy %": 3}

t = 5092613772000.000
for step in (2, 3, 4):
    first = step == 2
    s0 = t
    X("user_annotation", f"ProfilerStep#{step}", s0, 0.0, args={"External id": next(ext)})
    step_ev = events[-1]
    gpu_t = s0 + 30.0
    t = s0 + 5.0
    if first:  # the input upload
        to, tc, cp = next(ext), next(ext), next(ext)
        X("cpu_op", "aten::to", t, 30.0, args={"External id": to})
        X("cpu_op", "aten::_to_copy", t + 1.0, 28.0, args={"External id": tc})
        X("cpu_op", "aten::copy_", t + 3.0, 24.0, args={"External id": cp})
        gpu_t = launch("cuda_runtime", "cudaMemcpyAsync", t + 6.0, 15.0, cp,
                       "Memcpy HtoD (Pageable -> Device)", "gpu_memcpy", t + 14.0, 1.5,
                       {"bytes": 8192, "memory bandwidth (GB/s)": 5.461})
        t += 32.0
    ma = next(ext)
    ma_start = t
    X("user_annotation", "matmul_add", ma_start, 0.0, args={"External id": ma})
    ma_ev = events[-1]
    mat_ext, mm_ext, add_ext = next(ext), next(ext), next(ext)
    X("cpu_op", "aten::matmul", t + 4.0, 22.0, args={"External id": mat_ext, "Sequence number": 0})
    X("cpu_op", "aten::mm", t + 5.0, 20.0, args={"External id": mm_ext, "Sequence number": 0})
    g0 = max(gpu_t, t + 12.0)
    g = launch("cuda_runtime", "cudaMemsetAsync", t + 7.0, 4.0, mm_ext, "Memset (Device)",
               "gpu_memset", g0, 0.8, {"bytes": 4, "memory bandwidth (GB/s)": 0.005})
    g = launch("cuda_driver", "cuLaunchKernelEx", t + 12.0, 9.0, mm_ext,
               "nvjet_sm90_tst_64x8_64x16_1x4_h_bz_NNT", "kernel", max(g + 0.5, t + 24.0), 1.9,
               NVJET)
    X("cpu_op", "aten::add", t + 30.0, 8.0, args={"External id": add_ext, "Sequence number": 0})
    g = launch("cuda_runtime", "cudaLaunchKernel", t + 32.0, 5.0, add_ext,
               "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
               "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)",
               "kernel", max(g + 0.5, t + 45.0), 0.9, ELEMWISE)
    ma_ev["dur"] = 40.0
    X("gpu_user_annotation", "matmul_add", g0 - 0.001, g - g0 + 0.002, pid=0, tid=7,
      args={"External id": ma})
    t = ma_start + 41.0
    if step == 4:
        X("cuda_runtime", "cudaDeviceSynchronize", t + 1.0, 20.0,
          args={"External id": 0, "cbid": 165, "correlation": next(corr)})
        t += 22.0
    step_ev["dur"] = t - s0 + 1.0
    t = s0 + step_ev["dur"] + 60.0

span_start = 5092613771990.000
X("Trace", "PyTorch Profiler (0)", span_start, t - span_start, pid="Spans", tid="PyTorch Profiler",
  args={"Op count": 0})
meta = [("process_name", PID, 0, {"name": "python"}), ("process_labels", PID, 0, {"labels": "CPU"}),
        ("thread_name", PID, PID, {"name": f"thread {PID} (python)"}),
        ("process_name", 0, 0, {"name": "python"}), ("process_labels", 0, 0, {"labels": "GPU 0"}),
        ("thread_name", 0, 7, {"name": "stream 7 "}),
        ("process_sort_index", "Spans", 0, {"sort_index": 536870912})]
for name, pid, tid, a in meta:
    events.append(dict(name=name, ph="M", ts=span_start, pid=pid, tid=tid, args=a))
events.append({"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces",
               "tid": "Trace PyTorch Profiler", "ts": span_start})
events.append({"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": t + 5.0})


def render(e):
    parts = []
    for k, v in e.items():
        if v is None:
            continue
        parts.append(f'"{k}": {us(v) if k in ("ts", "dur") else json.dumps(v)}')
    return "  {\n    " + ", ".join(parts) + "\n  }"


device = {"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150754820096, "computeMajor": 9,
          "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
          "regsPerBlock": 65536, "warpSize": 32, "sharedMemPerBlock": 49152, "numSms": 132,
          "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 232448,
          "sharedMemPerMultiprocessor": 233472}
print('{\n  "schemaVersion": 1,\n  "deviceProperties": [\n    ' + json.dumps(device) + "\n  ],")
print('  "comment": "SYNTHETIC trace made by make_synthetic_h200.py; not a real capture",')
print(f'  "displayTimeUnit": "ms",\n  "baseTimeNanoseconds": {BASE_NS},\n  "traceEvents": [')
print(",\n".join(render(e) for e in events))
print('  ],\n  "traceName": "synthetic_h200_eager64.json"\n}')
