#!/usr/bin/env python3
"""Python half of bench_llm_decode: chapter 09's decoder (models/llm/llm.cpp)
written again in PyTorch, same shapes and the same ops (RMSNorm in fp32, flip-RoPE, fused QKV
and gate-up weights, SDPA with enable_gqa, a static KV cache written with index_copy_), random
bf16 weights. Tokens/s at batch 1, N new tokens after a P-token prompt:
  eager                    the decode step as written (attention over cache[:, :, :pos+1])
  reduce-overhead          torch.compile(mode="reduce-overhead", fullgraph=True) of the graph-safe
                           step (position tensor, masked attention over the whole cache)
The weights differ from the C++ run's (another generator); the shapes, hence the work, are the
same, and nothing here depends on the values.

  python bench/bench_llm_decode.py [--config 1b] [--prompt 512] [--new-tokens 64] [--json FILE]
"""
import argparse, json, math, os, statistics, sys, time

import torch
import torch.nn.functional as F

CONFIGS = {
    "tiny": dict(dim=256, layers=4, heads=4, kv_heads=2, mlp=704, vocab=4096),
    "1b": dict(dim=2048, layers=22, heads=32, kv_heads=4, mlp=5632, vocab=32000),
}


class Decoder(torch.nn.Module):
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="1b", choices=sorted(CONFIGS))
    ap.add_argument("--prompt", type=int, default=512)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--no-compile", action="store_true", help="eager only")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                    help="cpu: a smoke test of the Python model only (no bound, no graphs)")
    a = ap.parse_args()
    if a.prompt < 1 or a.new_tokens < 2 or a.repeats < 1:
        ap.error("--prompt >= 1, --new-tokens >= 2, --repeats >= 1")
    if a.device == "cuda" and not torch.cuda.is_available():
        print("bench_llm_decode.py: needs a CUDA device", file=sys.stderr)
        sys.exit(2)
    torch.manual_seed(0)
    dev, dt = a.device, (torch.bfloat16 if a.device == "cuda" else torch.float32)
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    cap = a.prompt + a.new_tokens + 8
    c = CONFIGS[a.config]
    m = Decoder(c, cap, 1, dev, dt)
    prompt = torch.randint(0, c["vocab"], (1, a.prompt), device=dev)
    read = 2 * sum(p.numel() for n, p in m.named_parameters() if n != "embed")
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
    res = dict(config=a.config, prompt=a.prompt, new_tokens=a.new_tokens, copy_gbps=bw, bound_ms=bound_ms)

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

    with torch.inference_mode():
        def eager_step(tok, pos, p):
            return m(tok, m.arange[p : p + 1], "sliced", p + 1).argmax(-1, keepdim=True)
        res["py_eager_ms"] = timed(eager_step)
        if not a.no_compile:
            def masked(tok, pos):
                return m(tok, pos, "masked").argmax(-1, keepdim=True)
            compiled = torch.compile(masked, mode="reduce-overhead", fullgraph=True)
            t = time.perf_counter()
            for _ in range(3):  # compile, record, replay
                compiled(torch.zeros(1, 1, dtype=torch.long, device=dev), torch.full((1,), a.prompt, device=dev))
            sync()
            res["compile_s"] = time.perf_counter() - t

            def compiled_step(tok, pos, p):
                out = compiled(tok, pos).clone()  # the graph's output buffer is reused by the next replay
                pos.add_(1)
                return out
            res["py_reduce_overhead_ms"] = timed(compiled_step)
    print(f"bench_llm_decode.py: {a.config}, batch 1, {a.new_tokens} new tokens after a {a.prompt}-token prompt, "
          f"torch {torch.__version__}")
    print(f"  copy bandwidth {bw:.0f} GB/s; bound {bound_ms:.3f} ms/token")
    for k, name in (("py_eager_ms", "Python eager"), ("py_reduce_overhead_ms", "Python reduce-overhead")):
        if k in res:
            print(f"  {name:24s} {res[k]:8.3f} ms/token {1e3 / res[k]:7.1f} tokens/s "
                  f"{100 * bound_ms / res[k]:5.1f}% of the bound")
    if a.json:
        tmp = a.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(res, f, indent=1)
        os.replace(tmp, a.json)


if __name__ == "__main__":
    main()
