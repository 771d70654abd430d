#!/usr/bin/env python3
"""Writes synthetic Kineto traces shaped like the H200 runs (expected_output/h200/).

Not measurements: small, deterministic stand-ins with the same event names, nesting, launch
APIs, kernel footprints and timing *relationships* as the real H200 traces, so the lesson
checks can be tested without a GPU. The real traces go to expected_output/h200/ later.

    python3 make_synthetic.py            # rewrites the h200_*.json files next to this script
Standard library only.
"""
import gzip
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
PID, TID, DEV, STREAM = 4242, 4242, 0, 7
GEMM_64 = "nvjet_sm90_tst_64x8_64x16_1x4_h_bz_NNT"
GEMM_64_BADD = "nvjet_sm90_tst_64x8_64x16_1x4_h_badd_NNT"
GEMM_4096 = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"
GEMM_4096_BADD = "nvjet_sm90_tst_256x128_64x4_1x2_h_badd_coopA_NNT"
ADD = ("void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, "
       "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)")


def gemm_args(grid):
    return {"registers per thread": 168, "shared memory": 164308, "blocks per SM": 0.06,
            "warps per SM": 0.73, "grid": grid, "block": [384, 1, 1], "est. achieved occupancy %": 0}


ADD_ARGS = {"registers per thread": 30, "shared memory": 0, "blocks per SM": 0.02,
            "warps per SM": 0.12, "grid": [2, 1, 1], "block": [128, 1, 1], "est. achieved occupancy %": 0}


class Gen:
    """A tiny CPU/GPU simulator: one host thread, one stream, kernels queue behind each other."""

    def __init__(self, device=True):
        self.events, self.now, self.ext, self.corr = [], 1000.0, 0, 0
        self.stream_free = 0.0
        self.op_stack = []          # External ids of the open cpu_ops
        self.device = device
        self.annotation_kernels = []

    def x(self, cat, name, ts, dur, pid=PID, tid=TID, args=None):
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
                            "ts": round(5092763000000.0 + ts, 3), "dur": round(dur, 3), "args": args or {}})

    def span(self, cat, name, body, pre, post):
        """A CPU event that encloses whatever body() records."""
        start = self.now
        self.ext += 1
        ext = self.ext
        self.now += pre
        if cat == "cpu_op":
            self.op_stack.append(ext)
        body()
        if cat == "cpu_op":
            self.op_stack.pop()
        self.now += post
        self.x(cat, name, start, self.now - start, args={"External id": ext})
        return ext

    def op(self, name, body=lambda: None, pre=1.0, post=1.0):
        return self.span("cpu_op", name, body, pre, post)

    def call(self, name, dur, cat="cuda_runtime", work=None, latency=8.0):
        """A runtime/driver call; `work` = (cat, name, dur, extra_args) runs on the GPU."""
        start = self.now
        self.corr += 1
        ext = self.op_stack[-1] if self.op_stack else 0
        self.x(cat, name, start, dur, args={"External id": ext, "correlation": self.corr})
        if work:
            wcat, wname, wdur, extra = work
            ks = max(start + latency, self.stream_free)
            args = {"External id": ext, "device": DEV, "context": 1, "stream": STREAM,
                    "correlation": self.corr}
            args.update(extra)
            self.x(wcat, wname, ks, wdur, pid=DEV, tid=STREAM, args=args)
            self.stream_free = ks + wdur
            self.annotation_kernels.append((ks, ks + wdur))
        self.now += dur

    def step(self, number, body, pre=2.0, post=2.0):
        self.span("user_annotation", f"ProfilerStep#{number}", body, pre, post)

    def annotation(self, name, body, gap):
        self.annotation_kernels = []
        ext = self.span("user_annotation", name, body, gap, 1.0)
        if self.annotation_kernels:
            s = min(k[0] for k in self.annotation_kernels)
            e = max(k[1] for k in self.annotation_kernels)
            self.x("gpu_user_annotation", name, s, e - s, pid=DEV, tid=STREAM, args={"External id": ext})

    def write(self, name, device_name="NVIDIA H200", cc=(9, 0), gz=False):
        end = max(e["ts"] + e["dur"] for e in self.events) - 5092763000000.0
        self.x("Trace", "PyTorch Profiler (0)", 900.0, end - 900.0 + 10, pid="Spans", tid="PyTorch Profiler")
        doc = {"schemaVersion": 1, "deviceProperties": [], "displayTimeUnit": "ms",
               "baseTimeNanoseconds": 1790857026000000000, "traceEvents": self.events,
               "traceName": name}
        if self.device:
            doc["deviceProperties"] = [{"id": 0, "name": device_name, "totalGlobalMem": 150000000000,
                                        "computeMajor": cc[0], "computeMinor": cc[1], "numSms": 132}]
        path = os.path.join(HERE, name)
        text = json.dumps(doc, indent=None)
        if gz:
            with gzip.GzipFile(path, "wb", mtime=0) as f:
                f.write(text.encode())
        else:
            with open(path, "w") as f:
                f.write(text)


def eager(n, widths_gap, sync_extra, gemm, gemm_dur, add_dur, grid, memset=False, bmm=False,
          first_call=False, name="", gz=False, device_name="NVIDIA H200", cc=(9, 0),
          gemm_launch="cuLaunchKernelEx", occupancy=False):
    """matmul_add = add(matmul(x, w), b) for 3 active steps (#2..#4)."""
    g = Gen()
    for i, (gap, mm_cpu) in enumerate(widths_gap):
        def mm_body():
            if first_call and i == 0:
                # The very first GEMM of a process: one-time setup before its launch.
                g.call("cudaFuncSetAttribute", 215.0)
                for _ in range(3):
                    g.call("cudaDeviceGetAttribute", 0.5)
                g.x("overhead", "Runtime Triggered Module Loading", g.now, 142.0, pid=DEV, tid=STREAM)
                g.call("cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", 3.0)
                g.call("cudaOccupancyMaxActiveClusters", 2.0)
            g.now += mm_cpu
            if memset:
                g.call("cudaMemsetAsync", 5.0, work=("gpu_memset", "Memset (Device)", 0.8, {"bytes": 4}))
            if occupancy:  # the A100 post: a query before every GEMM launch
                g.call("cudaOccupancyMaxActiveBlocksPerMultiprocessor", 2.0)
            g.call(gemm_launch, 6.0, cat="cuda_driver" if gemm_launch.startswith("cu") and
                   not gemm_launch.startswith("cuda") else "cuda_runtime",
                   work=("kernel", gemm, gemm_dur[i], gemm_args(grid)))

        def matmul():
            if bmm:
                for v in ("aten::expand", "aten::reshape", "aten::view", "aten::expand", "aten::reshape",
                          "aten::view"):
                    g.op(v, pre=0.5, post=0.5)
                g.op("aten::bmm", mm_body, pre=3.0, post=2.0)
                g.op("aten::_unsafe_view", pre=0.5, post=0.5)
            else:
                g.op("aten::mm", mm_body, pre=3.0, post=2.0)

        def body():
            g.op("aten::matmul", matmul, pre=1.0, post=1.0)
            g.op("aten::add", lambda: g.call("cudaLaunchKernel", 5.0, work=("kernel", ADD, add_dur[i], ADD_ARGS)),
                 pre=3.0, post=2.0)

        if first_call and i == 0:
            g.x("overhead", "Activity Buffer Request", g.now, 1900.0, pid=DEV, tid=STREAM)
        g.step(2 + i, lambda: g.annotation("matmul_add", body, gap))
        g.now += 6.0
    g.call("cudaDeviceSynchronize", max(g.stream_free - g.now, 0) + sync_extra)
    g.write(name, device_name=device_name, cc=cc, gz=gz)


def addmm(name, steps_gap, copy_dur, gemm, gemm_dur, memset, n_bytes):
    g = Gen()
    for i, gap in enumerate(steps_gap):
        def addmm_body():
            g.op("aten::squeeze", lambda: g.op("aten::as_strided", pre=0.5, post=0.5), pre=1.0, post=1.0)
            g.call("cudaMemcpyAsync", 6.0,
                   work=("gpu_memcpy", "Memcpy DtoD (Device -> Device)", copy_dur, {"bytes": n_bytes}))
            if memset:
                g.call("cudaMemsetAsync", 5.0, work=("gpu_memset", "Memset (Device)", 0.8, {"bytes": 4}))
            g.call("cuLaunchKernelEx", 6.0, cat="cuda_driver", work=("kernel", gemm, gemm_dur[i], gemm_args([4, 2, 1])))
        g.step(2 + i, lambda: g.annotation("matmul_add", lambda: g.op("aten::addmm", addmm_body, 8.0, 3.0), gap))
        g.now += 6.0
    g.call("cudaDeviceSynchronize", max(g.stream_free - g.now, 0) + 3.0)
    g.write(name)


if __name__ == "__main__":
    # Cold 64: first step wide (~220 us) with a 21 us dead window, then ~70 us steps.
    eager(64, [(21.0, 150.0), (1.7, 25.0), (1.1, 15.0)], 12.0, GEMM_64, [1.9, 1.9, 1.9], [0.9, 0.9, 0.9],
          [4, 2, 1], name="h200_64_cold.json")
    # 4096: the GEMM (~170 us) is slower than the CPU can issue: the queue fills.
    eager(4096, [(17.0, 120.0), (1.3, 30.0), (1.5, 12.0)], 5.0, GEMM_4096, [175.5, 169.6, 169.2],
          [23.4, 23.3, 23.2], [32, 32, 1], memset=True, name="h200_4096_warm.json.gz", gz=True)
    # Batched (8, 64, 64): bmm, grid [4,16,1].
    eager(64, [(34.0, 200.0), (1.3, 40.0), (1.1, 30.0)], 12.0, GEMM_64, [2.0, 2.0, 2.0], [1.0, 1.1, 1.1],
          [4, 16, 1], bmm=True, name="h200_64_bmm.json")
    # The very first GEMM of a process profiled (wait=0): one-time setup inside step #2.
    eager(64, [(21.0, 150.0), (1.7, 25.0), (1.1, 15.0)], 12.0, GEMM_64, [1.9, 1.9, 1.9], [0.9, 0.9, 0.9],
          [4, 2, 1], first_call=True, name="h200_64_first_call.json")
    # addmm at 4096: DtoD copy of the bias, memset, then the beta-add GEMM.
    addmm("h200_4096_addmm.json", [17.6, 1.9, 1.3], 15.8, GEMM_4096_BADD, [176.8, 171.1, 171.1], True,
          4096 * 4096 * 2)
    # An A100-like 64 run (compute capability 8.0): Hopper-only patterns must not apply.
    eager(64, [(227.8, 150.0), (5.5, 25.0), (4.5, 15.0)], 1700.0, "ampere_bf16_s16816gemm_bf16_64x64_ldg8_f2f_tn",
          [4.0, 4.0, 4.0], [2.0, 2.0, 2.0], [1, 1, 1], name="a100_64_cold.json",
          device_name="NVIDIA A100-SXM4-80GB", cc=(8, 0), gemm_launch="cudaLaunchKernel", occupancy=True)
