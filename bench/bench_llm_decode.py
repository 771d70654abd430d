#!/usr/bin/env python3
"""Python half of bench_llm_decode: chapter 09's decoder (models/llm/llm.cpp)
written again in PyTorch, same shapes and the same ops (RMSNorm in fp32, flip-RoPE, fused QKV
and gate-up weights, SDPA with enable_gqa, a static KV cache written with index_copy_), random
bf16 weights (fp32 on the CPU). Tokens/s at batch B (B sequences, one token each per step), N new tokens after a
P-token prompt:
  eager                    the decode step as written (attention over cache[:, :, :pos+1])
  reduce-overhead          torch.compile(mode="reduce-overhead", fullgraph=True) of the graph-safe
                           step (position tensor, masked attention over the whole cache)
  max-autotune             the same with mode="max-autotune" (Inductor tries GEMM configurations;
                           minutes of compilation; --no-max-autotune skips it)
The weights differ from the C++ run's (another generator); the shapes, hence the work, are the
same, and nothing here depends on the values. The napkin rows (weight bytes and FLOPs per step,
the intensity against the device's ridge point from common/core/data/device_peaks.json) are
the C++ bench's, so that one run per batch compares both sides. A step reads every weight once
whatever B is: while it is bandwidth-bound, its time stays flat as B grows.

  python bench/bench_llm_decode.py [--config 1b] [--batch 1] [--prompt 512] [--new-tokens 64] [--json FILE]
"""
import argparse, json, math, os, pathlib, re, statistics, sys, time

try:  # --help works without PyTorch; a run says what is missing
    import torch
    import torch.nn.functional as F
    _NO_TORCH = None
except ImportError as e:
    torch, F, _NO_TORCH = None, None, e

PEAKS = pathlib.Path(__file__).resolve().parent.parent / "common" / "core" / "data" / "device_peaks.json"

CONFIGS = {
    "tiny": dict(dim=256, layers=4, heads=4, kv_heads=2, mlp=704, vocab=4096),
    "1b": dict(dim=2048, layers=22, heads=32, kv_heads=4, mlp=5632, vocab=32000),
}


class Decoder(torch.nn.Module if torch else object):
    def __init__(self, c, capacity, batch, dev, dt):
        super().__init__()
        self.c, self.cap = c, capacity
        d, hd = c["dim"], c["dim"] // c["heads"]
        self.hd = hd
        qkv_out = (c["heads"] + 2 * c["kv_heads"]) * hd
        P = lambda *s, std=None: torch.nn.Parameter(
            torch.randn(*s, device=dev, dtype=dt) * (std if std is not None else 1 / math.sqrt(s[-1])), requires_grad=False)
        ones = lambda: torch.nn.Parameter(torch.ones(d, device=dev, dtype=dt), requires_grad=False)
        self.embed = P(c["vocab"], d, std=1.0)
        self.layers = torch.nn.ModuleList()
        for _ in range(c["layers"]):
            m = torch.nn.Module()
            m.attn_norm, m.wqkv, m.wo = ones(), P(qkv_out, d), P(d, d)
            m.mlp_norm, m.w_gate_up, m.w_down = ones(), P(2 * c["mlp"], d), P(d, c["mlp"])
            m.register_buffer("k", torch.zeros(batch, c["kv_heads"], capacity, hd, device=dev, dtype=dt))
            m.register_buffer("v", torch.zeros(batch, c["kv_heads"], capacity, hd, device=dev, dtype=dt))
            self.layers.append(m)
        self.final_norm, self.lm_head = ones(), P(c["vocab"], d)
        inv = c.get("rope_theta", 10000.0) ** (-torch.arange(0, hd, 2, dtype=torch.float32) / hd)
        ang = torch.outer(torch.arange(capacity, dtype=torch.float32), inv)
        self.register_buffer("cos", torch.cat([ang.cos(), ang.cos()], -1).to(dev, dt))
        self.register_buffer("sin_signed", torch.cat([-ang.sin(), ang.sin()], -1).to(dev, dt))
        self.register_buffer("arange", torch.arange(capacity, device=dev))

    @staticmethod
    def rms(x, w):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).to(x.dtype) * w

    def rope(self, x, cos, sin):
        swapped = torch.flip(x.unflatten(-1, (2, self.hd // 2)), (-2,)).flatten(-2)
        return x * cos + swapped * sin

    def forward(self, tokens, positions, mode, host_len=0):
        """mode: 'prefill' (causal over the prompt), 'sliced' (eager decode), 'masked' (graph-safe)."""
        c, hd = self.c, self.hd
        B, T = tokens.shape
        H, KV = c["heads"], c["kv_heads"]
        x = F.embedding(tokens, self.embed)
        cos, sin = self.cos.index_select(0, positions), self.sin_signed.index_select(0, positions)
        mask = self.arange.view(1, self.cap) <= positions.view(T, 1) if mode == "masked" else None
        for L in self.layers:
            qkv = F.linear(self.rms(x, L.attn_norm), L.wqkv)
            q = qkv[..., : H * hd].view(B, T, H, hd).transpose(1, 2)
            k = qkv[..., H * hd : (H + KV) * hd].view(B, T, KV, hd).transpose(1, 2)
            v = qkv[..., (H + KV) * hd :].view(B, T, KV, hd).transpose(1, 2)
            q, k = self.rope(q, cos, sin), self.rope(k, cos, sin)
            L.k.index_copy_(2, positions, k)
            L.v.index_copy_(2, positions, v)
            if mode == "prefill":
                keys, values = k, v
            elif mode == "sliced":
                keys, values = L.k[:, :, :host_len], L.v[:, :, :host_len]
            else:
                keys, values = L.k, L.v
            a = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask, is_causal=(mode == "prefill"),
                                               enable_gqa=True)
            x = x + F.linear(a.transpose(1, 2).reshape(B, T, c["dim"]), L.wo)
            gu = F.linear(self.rms(x, L.mlp_norm), L.w_gate_up)
            g, u = gu.split(c["mlp"], -1)
            x = x + F.linear(F.silu(g) * u, L.w_down)
        return F.linear(self.rms(x[:, -1:], self.final_norm), self.lm_head).view(B, c["vocab"])


def find_peak(name):
    """device_peaks.json's entry for a device name (every word of "match" a whole word of the
    name, first match wins: common/core/src/peaks.cpp's rule), or None."""
    if not name:
        return None
    words = lambda t: re.findall(r"[a-z0-9]+", t.lower())
    have = set(words(name))
    for d in json.loads(PEAKS.read_text())["devices"]:
        if all(w in have for w in words(d["match"])):
            return d
    return None


def napkin(c, params_read, batch, mean_pos, elem, peak):
    """The C++ bench's napkin math of one decode step at batch `batch` (bench_llm_decode.cpp)."""
    hd = c["dim"] // c["heads"]
    n = dict(weight_bytes=params_read * elem)
    kv_seq = c["layers"] * 2 * c["kv_heads"] * hd * mean_pos * elem
    attn_seq = c["layers"] * 4 * c["dim"] * mean_pos
    n["kv_bytes"], n["attn_flop"] = kv_seq * batch, attn_seq * batch
    n["flop"] = 2 * params_read * batch + n["attn_flop"]
    n["intensity_weights"] = 2 * params_read * batch / n["weight_bytes"]
    n["intensity"] = n["flop"] / (n["weight_bytes"] + n["kv_bytes"])
    tflops = (peak["bf16_tflops"] if elem == 2 else peak["fp32_tflops"]) if peak else 0
    n["tflops"], n["ridge"], n["ridge_batch_weights"], n["ridge_batch"] = tflops, None, None, None
    if tflops > 0:
        n["ridge"] = tflops / peak["mem_tbps"]
        n["ridge_batch_weights"] = n["ridge"] * elem / 2
        denom = 2 * params_read + attn_seq - n["ridge"] * kv_seq
        n["ridge_batch"] = n["ridge"] * n["weight_bytes"] / denom if denom > 0 else None
    return n


def print_napkin(n, batch, mean_pos, bound_ms, peak, where):
    print(f"  napkin per step: weights {n['weight_bytes'] / 1e9:.3f} GB (read once per step whatever the batch), "
          f"KV cache {n['kv_bytes'] / 1e9:.3f} GB ({batch} x {mean_pos:.0f} positions on average); "
          f"{n['flop'] / 1e9:.2f} GFLOP (2 x {n['params'] / 1e9:.3f} B parameters x {batch} + attention "
          f"{n['attn_flop'] / 1e9:.2f} GFLOP)")
    if n["ridge"]:
        compute_ms = n["flop"] / (n["tflops"] * 1e12) * 1e3
        print(f"  intensity {n['intensity_weights']:.1f} FLOP/byte on the weights ({n['intensity']:.1f} with the KV cache); "
              f"{peak['model']} ridge point {n['ridge']:.0f} FLOP/byte ({n['tflops']:.0f} TFLOP/s / {peak['mem_tbps']:.2f} TB/s, "
              f"datasheet): {'bandwidth-bound' if n['intensity'] < n['ridge'] else 'compute-bound'}")
        print(f"  compute floor {compute_ms:.3f} ms/step at the datasheet's {n['tflops']:.0f} TFLOP/s "
              f"({100 * compute_ms / bound_ms:.1f}% of the weight-read bound)")
        tail = (f"~{n['ridge_batch']:.0f} with the KV cache of a {mean_pos:.0f}-token context" if n["ridge_batch"] else
                f"never with the KV cache of a {mean_pos:.0f}-token context (each sequence's own cache reads grow with "
                "the batch as fast as its FLOPs)")
        print(f"  compute-bound from batch ~{n['ridge_batch_weights']:.0f} on the weights alone (intensity = batch for bf16); "
              + tail)
    else:
        print(f"  intensity {n['intensity_weights']:.1f} FLOP/byte on the weights ({n['intensity']:.1f} with the KV cache); "
              f"{where}: no peak known, no ridge point")
    print("  a bandwidth-bound step takes about the same time at any batch: ms/step flat from --batch 1 to 8 to 64 is "
          "the sign; ms/step growing with the batch, the step turning compute-bound")


def bytes_available(cuda):
    if cuda:
        return torch.cuda.mem_get_info()[0]
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return -1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="1b", choices=sorted(CONFIGS))

    def whole(lo, hi):
        def parse(text):
            try:
                v = int(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"'{text}' is not a whole number ({lo} .. {hi})")
            if not lo <= v <= hi:
                raise argparse.ArgumentTypeError(f"{v} is out of range ({lo} .. {hi})")
            return v
        return parse
    ap.add_argument("--batch", type=whole(1, 4096), default=1,
                    help="sequences decoded together: B tokens per step (default 1)")
    ap.add_argument("--prompt", type=whole(1, 8192), default=512, help="prompt tokens (default 512)")
    ap.add_argument("--new-tokens", type=whole(2, 4096), default=64,
                    help="decode steps timed per generation (default 64)")
    ap.add_argument("--repeats", type=whole(1, 1000), default=5,
                    help="timed generations, the median printed; one more warms up (default 5)")
    ap.add_argument("--json", help="also write the figures as JSON to FILE (atomically)")
    ap.add_argument("--no-compile", action="store_true", help="eager only")
    ap.add_argument("--no-max-autotune", action="store_true",
                    help="skip torch.compile(mode=\"max-autotune\") (its autotuning takes minutes)")
    ap.add_argument("--device", default="auto", choices=["auto", "cuda", "cpu"],
                    help="auto: cuda when there is one (default); cpu: a smoke test of the Python model only "
                         "(eager, fp32, no peak, no graphs)")
    a = ap.parse_args()
    if _NO_TORCH is not None:
        print(f"bench_llm_decode.py: needs PyTorch (import torch: {_NO_TORCH}); run it with the Python that has "
              "torch (the build's WORKBOOK_TORCH_PYTHON)", file=sys.stderr)
        sys.exit(2)
    have_cuda = torch.cuda.is_available()
    if a.device == "cuda" and not have_cuda:
        print("bench_llm_decode.py: --device cuda: no CUDA device is visible to torch (use --device cpu or auto)",
              file=sys.stderr)
        sys.exit(2)
    dev = "cuda" if a.device == "cuda" or (a.device == "auto" and have_cuda) else "cpu"
    dt, elem = (torch.bfloat16, 2) if dev == "cuda" else (torch.float32, 4)
    c = CONFIGS[a.config]
    cap = a.prompt + a.new_tokens + 8  # the prompt, the new tokens, 8 rows of slack (the compile's warm-up writes)
    hd = c["dim"] // c["heads"]
    kv = a.batch * c["layers"] * 2 * c["kv_heads"] * hd * cap * elem
    per_layer = (c["heads"] + 2 * c["kv_heads"]) * hd * c["dim"] + c["dim"] ** 2 + 3 * c["mlp"] * c["dim"] + 2 * c["dim"]
    params_read = c["layers"] * per_layer + c["dim"] + c["vocab"] * c["dim"]
    weights = (params_read + c["vocab"] * c["dim"]) * elem
    copy = 2 * (1 << (29 if dev == "cuda" else 24)) * elem
    need, avail = weights + kv + copy, bytes_available(dev == "cuda")
    if avail >= 0 and need > avail:
        ap.error(f"--batch {a.batch}: {a.batch} sequences x {cap} positions (--prompt {a.prompt} + --new-tokens "
                 f"{a.new_tokens} + 8): the KV cache ({kv / 1e9:.2f} GB) + the weights ({weights / 1e9:.2f} GB) + the "
                 f"copy buffers need {need / 1e9:.2f} GB, but only {avail / 1e9:.2f} GB of "
                 f"{'GPU' if dev == 'cuda' else 'host'} memory is available")
    torch.manual_seed(0)
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    device_name = torch.cuda.get_device_name() if dev == "cuda" else ""
    say = lambda msg: print(f"bench_llm_decode.py: {msg}", file=sys.stderr, flush=True)
    say(f"{a.config} at batch {a.batch} on {device_name or 'the CPU'}: building the model...")
    m = Decoder(c, cap, a.batch, dev, dt)
    prompt = torch.randint(0, c["vocab"], (a.batch, a.prompt), device=dev)
    assert params_read == sum(p.numel() for n, p in m.named_parameters() if n != "embed")
    read = elem * params_read
    src = torch.empty(1 << (29 if dev == "cuda" else 24), device=dev, dtype=dt)
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    sync()
    t = time.perf_counter()
    for _ in range(20):
        dst.copy_(src)
    sync()
    bw = 2 * src.nbytes * 20 / (time.perf_counter() - t) / 1e9
    del src, dst
    bound_ms = read / (bw * 1e9) * 1e3
    mean_pos = a.prompt + a.new_tokens / 2
    peak = find_peak(device_name)
    nk = napkin(c, params_read, a.batch, mean_pos, elem, peak)
    nk["params"] = params_read
    res = dict(config=a.config, batch=a.batch, prompt=a.prompt, new_tokens=a.new_tokens, device=device_name or "cpu",
               copy_gbps=bw, bound_ms=bound_ms, weight_bytes_per_step=nk["weight_bytes"],
               kv_bytes_per_step=nk["kv_bytes"], flop_per_step=nk["flop"], intensity_weights=nk["intensity_weights"],
               intensity=nk["intensity"], ridge_flop_per_byte=nk["ridge"],
               ridge_batch_weights=nk["ridge_batch_weights"], ridge_batch=nk["ridge_batch"])

    def timed(step):
        out = []
        for r in range(a.repeats + 1):
            nxt = m(prompt, m.arange[: a.prompt], "prefill").argmax(-1, keepdim=True)
            pos = torch.full((1,), a.prompt, device=dev, dtype=torch.long)
            sync()
            t = time.perf_counter()
            for i in range(a.new_tokens):
                nxt = step(nxt, pos, a.prompt + i)
            sync()
            if r > 0:
                out.append((time.perf_counter() - t) * 1e3 / a.new_tokens)
        return statistics.median(out)

    skipped = []
    with torch.inference_mode():
        def eager_step(tok, pos, p):
            return m(tok, m.arange[p : p + 1], "sliced", p + 1).argmax(-1, keepdim=True)
        say("timing eager...")
        res["py_eager_ms"] = timed(eager_step)
        modes = [] if a.no_compile else ["reduce-overhead"] + ([] if a.no_max_autotune else ["max-autotune"])
        if dev == "cpu" and modes:
            skipped += [f"Python {mode}: torch.compile's CUDA graphs and GEMM autotuning need a CUDA device"
                        for mode in modes]
            modes = []
        for mode in modes:
            key = mode.replace("-", "_")
            torch._dynamo.reset()  # each mode compiles afresh
            say(f"compiling {mode} (a minute or more)...")

            def masked(tok, pos):
                return m(tok, pos, "masked").argmax(-1, keepdim=True)
            compiled = torch.compile(masked, mode=mode, fullgraph=True)
            t = time.perf_counter()
            for _ in range(3):  # compile, record, replay
                compiled(torch.zeros(a.batch, 1, dtype=torch.long, device=dev),
                         torch.full((1,), a.prompt, device=dev))
            sync()
            res[f"compile_{key}_s"] = time.perf_counter() - t

            def compiled_step(tok, pos, p, compiled=compiled):
                out = compiled(tok, pos).clone()  # the graph's output buffer is reused by the next replay
                pos.add_(1)
                return out
            say(f"timing {mode}...")
            res[f"py_{key}_ms"] = timed(compiled_step)
    unit = "ms/token" if a.batch == 1 else "ms/step"  # a step is B tokens: one at batch 1
    print(f"bench_llm_decode.py: {a.config}, batch {a.batch}, {a.new_tokens} new tokens after a {a.prompt}-token prompt, "
          f"{'bf16' if elem == 2 else 'fp32'}, {device_name or 'CPU'}, torch {torch.__version__}")
    print(f"  copy bandwidth {bw:.0f} GB/s; weights read per step {read / 1e9:.3f} GB; bound {bound_ms:.3f} {unit} "
          f"({1e3 / bound_ms * a.batch:.0f} tokens/s at batch {a.batch})")
    print_napkin(nk, a.batch, mean_pos, bound_ms, peak, f"GPU '{device_name}' is not in {PEAKS.name}" if device_name
                 else "CPU")
    for k, name in (("py_eager_ms", "Python eager"), ("py_reduce_overhead_ms", "Python reduce-overhead"),
                    ("py_max_autotune_ms", "Python max-autotune")):
        if k in res:
            res[k.replace("_ms", "_tokens_per_s")] = 1e3 / res[k] * a.batch
            ck = "compile_" + k[3:-3] + "_s"
            print(f"  {name:24s} {res[k]:8.3f} {unit}  {1e3 / res[k] * a.batch:8.1f} tokens/s  "
                  f"{100 * bound_ms / res[k]:5.1f}% of the bound"
                  + (f"  (compiled in {res[ck]:.0f} s)" if ck in res else ""))
    for s in skipped:
        print(f"  skipped: {s}")
    if a.json:
        tmp = a.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(res, f, indent=1)
        os.replace(tmp, a.json)


if __name__ == "__main__":
    main()
