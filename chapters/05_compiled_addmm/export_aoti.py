#!/usr/bin/env python3
"""Build-time step of chapter 05: compile y = add(matmul(x, w), b) with AOTInductor.

torch.export captures the function as a graph; torch._inductor.aoti_compile_and_package runs
Inductor on it (the same compiler torch.compile uses) and packs the generated C++ and the
compiled shared library into a .pt2 file that C++ loads with AOTIModelPackageLoader.

Writes into --out-dir:
  matmul_add.pt2           the package (a zip)
  matmul_add.wrapper.cpp   the generated wrapper source, extracted from the package
  matmul_add.json          the manifest the chapter reads: device, dtype, the generated call...

It never fails the build: if anything goes wrong it writes a manifest with "available": false
and the reason, and the chapter reports the aoti variant as unavailable.
"""
import argparse
import json
import os
import sys
import threading
import time
import traceback
import warnings
import zipfile

T0 = time.monotonic()


def say(msg):
    print(f"[aoti {time.monotonic() - T0:5.1f} s] {msg}", flush=True)


def write_manifest(path, data):
    tmp = path + ".partial"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


class Heartbeat:
    """Prints a line every few seconds while a long step runs, so the build shows progress."""

    def __init__(self, what, every=10.0):
        self.what, self.every, self.stop = what, every, threading.Event()

    def __enter__(self):
        def beat():
            while not self.stop.wait(self.every):
                say(f"... still {self.what}")
        self.thread = threading.Thread(target=beat, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def generated_call(source):
    """The wrapper line that does the work: the first call of an aoti_torch_<device>_* shim
    or of a generated kernel, skipping allocation and bookkeeping calls."""
    skip = ("empty_strided", "get_dtype", "get_device", "dtype_", "device_type", "grad_mode",
            "delete_tensor", "reinterpret", "get_sizes", "get_strides", "new_tensor_handle")
    for number, line in enumerate(source.splitlines(), 1):
        text = line.strip()
        if text.startswith("//"):
            continue
        for marker in ("aoti_torch_cuda_", "aoti_torch_cpu_", "cpp_fused_", "triton_"):
            at = text.find(marker)
            if at >= 0 and not any(s in text[at:at + 60] for s in skip):
                return number, text
    return 0, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    pt2 = os.path.join(args.out_dir, "matmul_add.pt2")
    wrapper = os.path.join(args.out_dir, "matmul_add.wrapper.cpp")
    manifest = os.path.join(args.out_dir, "matmul_add.json")

    try:
        warnings.filterwarnings("ignore")  # e.g. "Failed to initialize NumPy": not needed here
        import torch

        device = args.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        if device == "cuda" and not torch.cuda.is_available():
            raise RuntimeError("--device cuda, but this torch sees no CUDA device")
        # The chapter's default element type on each device (bf16 on GPU, fp32 on CPU).
        dtype = torch.bfloat16 if device == "cuda" else torch.float32
        say(f"torch {torch.__version__}, compiling for {device} / {str(dtype).replace('torch.', '')}")

        class MatmulAdd(torch.nn.Module):
            def forward(self, x, w, b):
                return torch.add(torch.matmul(x, w), b)

        # One package for every size: N is a dynamic dimension shared by the three inputs.
        n = torch.export.Dim("n", min=2)
        shapes = ({0: n, 1: n},) * 3
        example = tuple(torch.randn(64, 64, device=device, dtype=dtype) for _ in range(3))
        say("1/3 torch.export: tracing add(matmul(x, w), b) into a graph")
        exported = torch.export.export(MatmulAdd(), example, dynamic_shapes=shapes)

        say("2/3 Inductor: generating C++ and compiling it (about a minute)")
        if os.path.exists(pt2):
            os.remove(pt2)
        with Heartbeat("compiling with Inductor"):
            torch._inductor.aoti_compile_and_package(exported, package_path=pt2)

        say("3/3 extracting the generated wrapper source from the package")
        with zipfile.ZipFile(pt2) as z:
            sources = [name for name in z.namelist() if name.endswith(".wrapper.cpp")] or \
                      [name for name in z.namelist() if name.endswith(".cpp")]
            if not sources:
                raise RuntimeError(f"{pt2} holds no generated .cpp source")
            inner = sources[0]
            source = z.read(inner).decode("utf-8", errors="replace")
        with open(wrapper, "w") as f:
            f.write(source)
        line_no, call = generated_call(source)

        elapsed = time.monotonic() - T0
        write_manifest(manifest, {
            "available": True,
            "package": os.path.abspath(pt2),
            "device": device,
            "dtype": str(dtype).replace("torch.", ""),
            "torch": torch.__version__,
            "dynamic": "x, w, b are n x n for any n >= 2",
            "wrapper_in_package": inner,
            "wrapper": os.path.abspath(wrapper),
            "generated_call": call,
            "generated_line": line_no,
            "build_seconds": round(elapsed, 1),
        })
        say(f"done: {pt2} ({os.path.getsize(pt2) // 1024} KiB)")
        say(f"generated call (line {line_no} of {inner}): {call}")
    except Exception as e:  # report, never break the build
        traceback.print_exc()
        reason = f"building the AOTI package failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        print(f"WARNING: {reason}\n  The chapter will report the aoti variant as unavailable.", file=sys.stderr)
        write_manifest(manifest, {"available": False, "reason": reason})


if __name__ == "__main__":
    main()
