"""examples/minimal/main.cpp in Python: the same loop under torch.profiler, the same two files.

    python minimal.py [OUT_DIR]   ->  OUT_DIR/table.txt, OUT_DIR/trace.json (default: .)

tests/test_examples.cpp runs it with the build's torch; docs/profiler-in-cpp.md quotes it.
"""
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule

out = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(out, exist_ok=True)
dev = "cuda" if torch.cuda.is_available() else "cpu"
x, w, b = torch.randn(64, 64, device=dev), torch.randn(64, 64, device=dev), torch.randn(64, device=dev)

# [snippet:loop]
activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev == "cuda" else [])
with profile(activities=activities, schedule=schedule(wait=1, warmup=1, active=3)) as prof:
    for i in range(5):
        with record_function("matmul_add"):
            y = torch.add(torch.matmul(x, w), b)
        prof.step()
# [/snippet:loop]

# [snippet:save]
prof.export_chrome_trace(os.path.join(out, "trace.json"))
table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)
with open(os.path.join(out, "table.txt"), "w") as f:
    f.write(table)
print(table)
# [/snippet:save]
