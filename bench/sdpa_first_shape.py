# Does the first scaled_dot_product_attention call at a new key length pay one-time work?
# Decode-shaped calls as chapter 09's 1b model makes them (q [1,32,1,64], K/V [1,4,L,64] bf16,
# GQA), each key length L timed on its first call and again, with the default backends (cuDNN
# attention on Hopper) and with cuDNN attention switched off. Needs a CUDA GPU.
#   python3 bench/sdpa_first_shape.py     (the H200's output: docs/bench/sdpa_first_shape_h200.txt)
import time, torch, torch.nn.functional as F
dev = "cuda"; H, KV, hd, cap = 32, 4, 64, 1024
kc = torch.randn(1, KV, cap, hd, device=dev, dtype=torch.bfloat16)
vc = torch.randn_like(kc)
q = torch.randn(1, H, 1, hd, device=dev, dtype=torch.bfloat16)
def call(L): return F.scaled_dot_product_attention(q, kc[:, :, :L], vc[:, :, :L], enable_gqa=True)
def timed(lengths):
    out = []
    for L in lengths:
        torch.cuda.synchronize(); t = time.perf_counter(); call(L); torch.cuda.synchronize()
        out.append((time.perf_counter() - t) * 1e3)
    return out
def backend_name(L):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as p: call(L)
    return sorted({e.name for e in p.events() if "attention" in e.name})
for label, cudnn, lengths in (("cudnn on (default)", True, range(512, 576)), ("cudnn off", False, range(640, 704))):
    torch.backends.cuda.enable_cudnn_sdp(cudnn)
    call(300); torch.cuda.synchronize()
    first, second = timed(lengths), timed(lengths)
    med = lambda xs: sorted(xs)[len(xs) // 2]
    print(f"{label}: ops {backend_name(lengths[0])}; first call per new length median {med(first):.3f} ms "
          f"(mean {sum(first)/len(first):.3f}), same lengths again median {med(second):.3f} ms, over {len(first)} lengths")
