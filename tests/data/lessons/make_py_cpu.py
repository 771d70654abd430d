#!/usr/bin/env python3
"""Real Kineto traces from Python's torch.profiler on the CPU, for the lesson tests.

    ~/.cache/libtorch-workbook/torch-2.11.0/bin/python make_py_cpu.py
writes py_cpu_64_bmm.json (batched (8, 64, 64): matmul -> bmm) and py_cpu_64_addmm.json
(torch.addmm(b, x, w): the rewrite chapter 05 teaches). py_cpu_64.json (2-D matmul + add) came
from the same recipe with 2-D inputs and torch.add(torch.matmul(x, w), b).
"""
import torch

def record(name, fn):
    sch = torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], schedule=sch) as prof:
        for _ in range(5):
            with torch.profiler.record_function("matmul_add"):
                fn()
            prof.step()
    prof.export_chrome_trace(name)

torch.manual_seed(0)
x, w, b = (torch.randn(8, 64, 64) for _ in range(3))
record("py_cpu_64_bmm.json", lambda: torch.add(torch.matmul(x, w), b))
x, w, b = (torch.randn(64, 64) for _ in range(3))
record("py_cpu_64_addmm.json", lambda: torch.addmm(b, x, w))
