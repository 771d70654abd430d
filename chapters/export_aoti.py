#!/usr/bin/env python3
"""Build-time step of chapters 05-07 and the GeGLU bench: compile a small function with AOTInductor.

Runs in its own Python process at build time (the CMake function workbook_aoti_package):
torch.export captures the function as a graph, torch._inductor.aoti_compile_and_package runs
Inductor on it (the compiler torch.compile uses) and packs the generated C++ and the compiled
shared library into a .pt2 file that C++ loads with AOTIModelPackageLoader (wb::AotiModel). The
weights are inputs, not constants, so the C++ program passes its own tensors and the outputs can
be compared.

Models (--model):
  matmul_add   y = add(matmul(x, w), b)      x, w, b [n, n] for any n >= 2 (dynamic)  (chapter 05)
  linear       y = linear(x, w, b)           x [1024, 32], w [64, 32], b [64]       (chapter 06)
  mlp          y = down(gelu_tanh(gate(x)) * up(x))  x [64, 128, 768] (GPU) or [4, 128, 256] (CPU),
               weights [3072, 768], [3072, 768], [768, 3072] (GPU) or 1024/256 (CPU)  (chapter 07)
  geglu        y = gelu_tanh(g) * u          g, u [8192, 3072], GPU only             (the bench)
Every model but matmul_add is compiled for one static shape (Inductor specializes on it).
--inductor-config KEY=VALUE (repeatable) passes Inductor options to aoti_compile_and_package, e.g.
triton.autotune_pointwise=False (scripts/gpu/geglu_race.sh: Inductor's first pointwise config, no
autotuning at compile time); VALUE is read as JSON (true/false/numbers) or else as a string.

Writes into --out-dir:
  <model>.pt2           the package (a zip)
  <model>.wrapper.cpp   the generated wrapper source, extracted from the package
  <model>.json          the manifest the C++ side reads: device, dtype, input shapes, the
                        generated call that does the work...
It never fails the build: on any error the manifest says "available": false and why, and the
chapter reports its aoti variant as unavailable.
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
    """Prints a line every few seconds while Inductor compiles, so the build shows progress."""

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
        if text.startswith(("//", "extern")):  # comments, kernel definitions
            continue
        for marker in ("aoti_torch_cuda_", "aoti_torch_cpu_", "cpp_fused_", "triton_"):
            at = text.find(marker)
            if at >= 0 and not any(s in text[at:at + 60] for s in skip):
                return number, text
    return 0, ""


def extract_wrapper(pt2, wrapper):
    """Copies the generated wrapper source out of the package; returns its name inside it."""
    with zipfile.ZipFile(pt2) as z:
        sources = [name for name in z.namelist() if name.endswith(".wrapper.cpp")] or \
                  [name for name in z.namelist() if name.endswith(".cpp")]
        if not sources:
            raise RuntimeError(f"{pt2} holds no generated .cpp source")
        source = z.read(sources[0]).decode("utf-8", errors="replace")
    with open(wrapper, "w") as f:
        f.write(source)
    return sources[0], source


# The shapes of each chapter's edition: (GPU, CPU). Keep in step with the chapters' main.cpp.
LINEAR = dict(rows=1024, d_in=32, d_out=64)
MLP_GPU = dict(batch=64, seq=128, dim=768, hidden=3072)
MLP_CPU = dict(batch=4, seq=128, dim=256, hidden=1024)
GEGLU = dict(rows=8192, hidden=3072)


def build(model, device, dtype, torch):
    """The module, its example inputs, the shapes to record and the dynamic_shapes for export."""
    F = torch.nn.functional

    def rnd(*shape):
        return torch.randn(*shape, device=device, dtype=dtype)

    if model == "matmul_add":
        class MatmulAdd(torch.nn.Module):
            def forward(self, x, w, b):
                return torch.add(torch.matmul(x, w), b)
        # One package for every size: N is a dynamic dimension shared by the three inputs.
        n = torch.export.Dim("n", min=2)
        return MatmulAdd(), tuple(rnd(64, 64) for _ in range(3)), "x, w, b are n x n for any n >= 2", \
            ({0: n, 1: n},) * 3

    if model == "linear":
        class Linear(torch.nn.Module):
            def forward(self, x, w, b):
                return F.linear(x, w, b)
        s = LINEAR
        return Linear(), (rnd(s["rows"], s["d_in"]), rnd(s["d_out"], s["d_in"]), rnd(s["d_out"])), s, None
    if model == "mlp":
        class GeGLU(torch.nn.Module):
            def forward(self, x, w_gate, w_up, w_down):
                return F.linear(F.gelu(F.linear(x, w_gate), approximate="tanh") * F.linear(x, w_up), w_down)
        s = MLP_GPU if device == "cuda" else MLP_CPU
        return GeGLU(), (rnd(s["batch"], s["seq"], s["dim"]), rnd(s["hidden"], s["dim"]),
                         rnd(s["hidden"], s["dim"]), rnd(s["dim"], s["hidden"])), s, None
    if model == "geglu":
        if device != "cuda":
            raise RuntimeError("the geglu package is for the GPU bench; this torch sees no CUDA device")

        class Pointwise(torch.nn.Module):
            def forward(self, g, u):
                return F.gelu(g, approximate="tanh") * u
        s = GEGLU
        return Pointwise(), (rnd(s["rows"], s["hidden"]), rnd(s["rows"], s["hidden"])), s, None
    raise ValueError(f"unknown model {model}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--model", choices=["matmul_add", "linear", "mlp", "geglu"], required=True)
    ap.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    ap.add_argument("--inductor-config", action="append", default=[], metavar="KEY=VALUE",
                    help="an Inductor option for aoti_compile_and_package (repeatable)")
    args = ap.parse_args()
    inductor_configs = {}
    for kv in args.inductor_config:
        key, eq, value = kv.partition("=")
        if not eq or not key:
            ap.error(f"--inductor-config wants KEY=VALUE, got {kv!r}")
        try:
            inductor_configs[key] = json.loads(value.lower() if value in ("True", "False") else value)
        except json.JSONDecodeError:
            inductor_configs[key] = value
    os.makedirs(args.out_dir, exist_ok=True)
    pt2 = os.path.join(args.out_dir, f"{args.model}.pt2")
    wrapper = os.path.join(args.out_dir, f"{args.model}.wrapper.cpp")
    manifest = os.path.join(args.out_dir, f"{args.model}.json")
    try:
        warnings.filterwarnings("ignore")  # e.g. "Failed to initialize NumPy": not needed here
        import torch

        device = args.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        if device == "cuda" and not torch.cuda.is_available():
            raise RuntimeError("--device cuda, but this torch sees no CUDA device")
        dtype = torch.bfloat16 if device == "cuda" else torch.float32  # the chapters' defaults
        say(f"torch {torch.__version__}: {args.model} for {device} / {str(dtype).replace('torch.', '')}")
        module, example, shapes, dynamic = build(args.model, device, dtype, torch)
        say(f"1/3 torch.export: tracing {args.model} into a graph")
        with torch.no_grad():
            exported = torch.export.export(module, example, dynamic_shapes=dynamic)
            say("2/3 Inductor: generating C++ and compiling it (about a minute)")
            if os.path.exists(pt2):
                os.remove(pt2)
            with Heartbeat(f"compiling {args.model} with Inductor"):
                torch._inductor.aoti_compile_and_package(exported, package_path=pt2,
                                                         inductor_configs=inductor_configs or None)
        say("3/3 extracting the generated wrapper source from the package")
        inner, source = extract_wrapper(pt2, wrapper)
        line_no, call = generated_call(source)
        write_manifest(manifest, {
            "available": True,
            "model": args.model,
            "package": os.path.abspath(pt2),
            "device": device,
            "dtype": str(dtype).replace("torch.", ""),
            "torch": torch.__version__,
            # a dynamic package takes any shape it describes; a static one only "inputs"
            "dynamic": shapes if dynamic else "",
            "shapes": {} if dynamic else shapes,
            "inputs": [] if dynamic else [list(t.shape) for t in example],
            "wrapper_in_package": inner,
            "wrapper": os.path.abspath(wrapper),
            "generated_call": call,
            "generated_line": line_no,
            "inductor_configs": inductor_configs,
            "build_seconds": round(time.monotonic() - T0, 1),
        })
        say(f"done: {pt2} ({os.path.getsize(pt2) // 1024} KiB)")
        say(f"generated call (line {line_no} of {inner}): {call}")
    except Exception as e:  # report, never break the build
        traceback.print_exc()
        first = str(e).splitlines()[0] if str(e) else ""
        reason = f"building the {args.model} AOTI package failed: {type(e).__name__}: {first}"
        print(f"WARNING: {reason}\n  The chapter will report its aoti variant as unavailable.", file=sys.stderr)
        write_manifest(manifest, {"available": False, "model": args.model, "reason": reason})


if __name__ == "__main__":
    main()
