// The decode kernels of llm_kernels.hpp. Decode at batch 1 is a weight read: every GEMV reads
// each weight once and does 2 FLOPs per 2 bytes, so its speed is its bytes over HBM bandwidth,
// and the small kernels between the GEMVs cost launches and gaps, not bytes.
//
// GEMV (what makes it fast on a Hopper GPU):
//   * 16-byte weight loads (8 bf16, uint4), coalesced across the warp (a warp's load is 512
//     contiguous bytes of one row), streaming (.cs: the weights are read once per token and are
//     40 times the L2);
//   * bytes in flight: each lane issues 8 loads before the first FMA (4 KB per warp);
//   * the grid: 256-thread blocks looping over groups of outputs; within a block, k_split warps
//     share one output's k range and add their sums in shared memory, so a small n (2048 rows)
//     still puts enough warps on the 132 SMs, and there is no second reduce kernel;
//   * x lives in shared memory as fp32, loaded once per block (with the RMSNorm applied there,
//     from x's sum of squares that each block computes: 4 KB from L2 instead of a kernel).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <string>

#include "llm_kernels.hpp"

namespace llmk {
namespace {

using bf16 = __nv_bfloat16;
constexpr int kThreads = 256, kWarps = kThreads / 32, kUnroll = 8;

__device__ __forceinline__ float round_bf16(float v) { return __bfloat162float(__float2bfloat16(v)); }

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// 8 bf16 weights (one uint4) times 8 fp32 x values from shared memory.
__device__ __forceinline__ float dot8(const uint4& w, const float4& a, const float4& b) {
  const float2 w0 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w.x));
  const float2 w1 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w.y));
  const float2 w2 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w.z));
  const float2 w3 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w.w));
  float s = w0.x * a.x;
  s = fmaf(w0.y, a.y, s);
  s = fmaf(w1.x, a.z, s);
  s = fmaf(w1.y, a.w, s);
  s = fmaf(w2.x, b.x, s);
  s = fmaf(w2.y, b.y, s);
  s = fmaf(w3.x, b.z, s);
  s = fmaf(w3.y, b.w, s);
  return s;
}

// x (bf16, k) into shared memory as fp32; with norm_w, as eager's RMSNorm rounds it:
// bf16(bf16(x * rsqrt(mean(x^2) + eps)) * w).
__device__ void load_x(const bf16* __restrict__ x, const bf16* __restrict__ norm_w, float eps, float* xs,
                       int k, float* red) {
  float ss = 0;
  for (int i = threadIdx.x; i < k; i += kThreads) {
    const float v = __bfloat162float(x[i]);
    xs[i] = v;
    ss = fmaf(v, v, ss);
  }
  if (norm_w == nullptr) {
    __syncthreads();
    return;
  }
  ss = warp_sum(ss);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = ss;
  __syncthreads();
  float total = 0;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) total += red[w];
  const float rstd = rsqrtf(total / static_cast<float>(k) + eps);
  for (int i = threadIdx.x; i < k; i += kThreads)
    xs[i] = round_bf16(round_bf16(xs[i] * rstd) * __bfloat162float(norm_w[i]));
  __syncthreads();
}

// Programmatic dependent launch (Hopper): a kernel launched with the attribute may start while
// the kernel before it still runs; griddepcontrol.wait blocks until that one has finished and its
// writes are visible. Before the wait a GEMV may read only what no earlier kernel writes: its
// weights. launch_dependents lets the next such kernel start as soon as every block of this one
// runs. Without the attribute, both are no-ops.
__device__ __forceinline__ void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void let_next_kernel_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

// One block: kWarps / KSplit outputs per trip; warp w does output (w % rows) over k slice (w / rows).
// The first trip's first kUnroll weight loads are issued before x is read (before the wait for the
// previous kernel, and before the prologue): the weight stream starts at once.
template <int KSplit, int Epi>
__global__ void __launch_bounds__(kThreads)
    gemv_kernel(const uint4* __restrict__ W, const bf16* __restrict__ x, bf16* y, int n_out, int k,
                const bf16* __restrict__ norm_w, float eps, const bf16* residual) {
  extern __shared__ float4 smem4[];
  float* xs = reinterpret_cast<float*>(smem4);
  __shared__ float red[2][kWarps];
  constexpr int kRows = kWarps / KSplit;
  constexpr bool kGated = Epi == static_cast<int>(Epilogue::SwiGLU);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int r = warp % kRows, ks = warp / kRows;
  const int kv = k / 8;  // uint4 per row
  const int seg = (kv + KSplit - 1) / KSplit;
  const int begin = ks * seg, end = min(kv, begin + seg);
  const float4* xs4 = smem4;
  const int groups = (n_out + kRows - 1) / kRows;

  uint4 a[kUnroll], b[kUnroll];
  auto load_batch = [&](int row, int v) {
    const uint4* w0 = W + static_cast<int64_t>(row) * kv;
    const uint4* w1 = W + static_cast<int64_t>(row + n_out) * kv;  // SwiGLU's up row
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = v + 32 * u;
      if (i < end) {
        a[u] = __ldcs(w0 + i);
        if constexpr (kGated) b[u] = __ldcs(w1 + i);
      }
    }
  };
  bool preloaded = false;
  if (blockIdx.x < groups && static_cast<int>(blockIdx.x) * kRows + r < n_out) {
    load_batch(blockIdx.x * kRows + r, begin + lane);
    preloaded = true;
  }
  let_next_kernel_start();
  wait_for_previous_kernel();
  load_x(x, norm_w, eps, xs, k, red[0]);
  __syncthreads();  // red[0] is reused below

  for (int g = blockIdx.x; g < groups; g += gridDim.x) {
    const int row = g * kRows + r;
    float acc0 = 0, acc1 = 0;
    if (row < n_out) {
      for (int v = begin + lane; v < end; v += 32 * kUnroll) {
        if (!preloaded) load_batch(row, v);
        preloaded = false;
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int i = v + 32 * u;
          if (i < end) {
            const float4 xa = xs4[2 * i], xb = xs4[2 * i + 1];
            acc0 += dot8(a[u], xa, xb);
            if constexpr (kGated) acc1 += dot8(b[u], xa, xb);
          }
        }
      }
    }
    preloaded = false;  // (a lane with no k range of its own in the first trip)
    acc0 = warp_sum(acc0);
    if constexpr (kGated) acc1 = warp_sum(acc1);
    if constexpr (KSplit > 1) {
      if (lane == 0) {
        red[0][warp] = acc0;
        red[1][warp] = acc1;
      }
      __syncthreads();
      if (ks == 0 && lane == 0) {
#pragma unroll
        for (int s = 1; s < KSplit; ++s) {
          acc0 += red[0][r + s * kRows];
          acc1 += red[1][r + s * kRows];
        }
      }
      __syncthreads();
    }
    if (ks == 0 && lane == 0 && row < n_out) {
      if constexpr (Epi == static_cast<int>(Epilogue::Store)) {
        y[row] = __float2bfloat16(acc0);
      } else if constexpr (Epi == static_cast<int>(Epilogue::AddResidual)) {
        y[row] = __float2bfloat16(__bfloat162float(residual[row]) + acc0);
      } else {  // eager: gate and up rounded to bf16, silu(gate) rounded, times up
        const float gt = round_bf16(acc0), up = round_bf16(acc1);
        y[row] = __float2bfloat16(round_bf16(gt / (1.0f + __expf(-gt))) * up);
      }
    }
  }
}

template <int KSplit, int Epi>
std::string launch_gemv(const void* W, const void* x, void* y, int n_out, int k, const void* norm_w,
                        float eps, const void* residual, int max_blocks, bool overlap, cudaStream_t s) {
  const auto kernel = gemv_kernel<KSplit, Epi>;
  const size_t smem = static_cast<size_t>(k) * sizeof(float);
  if (smem > 48 * 1024) return "gemv: k = " + std::to_string(k) + " needs more than 48 KB of shared memory";
  int device = 0, sms = 0, per_sm = 0;  // the blocks resident at once with this shared memory
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem);
  const int resident = std::max(1, sms) * std::max(1, per_sm);
  constexpr int kRows = kWarps / KSplit;
  const int groups = (n_out + kRows - 1) / kRows;
  const int grid = std::min(groups, max_blocks > 0 ? max_blocks : resident);
  cudaLaunchConfig_t lc = {};
  lc.gridDim = dim3(grid);
  lc.blockDim = dim3(kThreads);
  lc.dynamicSmemBytes = smem;
  lc.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  lc.attrs = attr;
  lc.numAttrs = overlap ? 1 : 0;
  const cudaError_t err = cudaLaunchKernelEx(
      &lc, kernel, static_cast<const uint4*>(W), static_cast<const bf16*>(x), static_cast<bf16*>(y), n_out, k,
      static_cast<const bf16*>(norm_w), eps, static_cast<const bf16*>(residual));
  return err == cudaSuccess ? std::string() : std::string("gemv launch: ") + cudaGetErrorString(err);
}

template <int Epi>
std::string gemv_split(int k_split, const void* W, const void* x, void* y, int n_out, int k,
                       const void* norm_w, float eps, const void* residual, int max_blocks, bool overlap,
                       cudaStream_t s) {
  switch (k_split) {
    case 1: return launch_gemv<1, Epi>(W, x, y, n_out, k, norm_w, eps, residual, max_blocks, overlap, s);
    case 2: return launch_gemv<2, Epi>(W, x, y, n_out, k, norm_w, eps, residual, max_blocks, overlap, s);
    case 4: return launch_gemv<4, Epi>(W, x, y, n_out, k, norm_w, eps, residual, max_blocks, overlap, s);
    case 8: return launch_gemv<8, Epi>(W, x, y, n_out, k, norm_w, eps, residual, max_blocks, overlap, s);
    default: return "gemv: k_split " + std::to_string(k_split) + " is not 1, 2, 4 or 8";
  }
}

std::string last_error(const char* what) {
  const cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? std::string() : std::string(what) + ": " + cudaGetErrorString(err);
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// ---- RoPE + KV-cache write ---------------------------------------------------------------
__global__ void rope_kv_write_kernel(const bf16* __restrict__ qkv, const bf16* __restrict__ cos,
                                     const bf16* __restrict__ sin_signed, const int64_t* __restrict__ pos_p,
                                     bf16* __restrict__ q, bf16* __restrict__ kc, bf16* __restrict__ vc,
                                     int heads, int kv_heads, int hd, int64_t capacity) {
  const int64_t pos = *pos_p;
  if (pos < 0 || pos >= capacity) return;  // past the cache: nothing is written
  const int total = (heads + 2 * kv_heads) * hd;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int h = i / hd, d = i % hd, half = hd / 2;
  if (h < heads + kv_heads) {  // q or k: rotate-half, rounded as eager's x*cos + swapped*sin
    const float xv = __bfloat162float(qkv[i]);
    const float partner = __bfloat162float(qkv[h * hd + (d < half ? d + half : d - half)]);
    const float c = __bfloat162float(cos[pos * hd + d]), sn = __bfloat162float(sin_signed[pos * hd + d]);
    const bf16 out = __float2bfloat16(round_bf16(xv * c) + round_bf16(partner * sn));
    if (h < heads)
      q[i] = out;
    else
      kc[(static_cast<int64_t>(h - heads) * capacity + pos) * hd + d] = out;
  } else {  // v: copied into its cache row
    vc[(static_cast<int64_t>(h - heads - kv_heads) * capacity + pos) * hd + d] = qkv[i];
  }
}

// ---- attention: one query, split over the sequence, combined by the last block -----------
constexpr int kChunk = 64, kHd = 64, kPitch = kHd + 8;  // K rows padded: 16-byte reads without bank conflicts

struct AttnWorkspace {  // laid out in the caller's buffer
  float* o;             // [KV][chunks][group][64]
  float* m;             // [KV][chunks][group]
  float* l;
  unsigned* done;  // [KV]: blocks finished (the last resets it)
};

__host__ __device__ inline AttnWorkspace attn_workspace(void* base, int heads, int kv_heads, int chunks) {
  const int group = heads / kv_heads;
  char* p = static_cast<char*>(base);
  AttnWorkspace w;
  w.done = reinterpret_cast<unsigned*>(p);
  p += 256;  // counters first, padded
  w.o = reinterpret_cast<float*>(p);
  p += static_cast<int64_t>(kv_heads) * chunks * group * kHd * sizeof(float);
  w.m = reinterpret_cast<float*>(p);
  p += static_cast<int64_t>(kv_heads) * chunks * group * sizeof(float);
  w.l = reinterpret_cast<float*>(p);
  return w;
}

__global__ void __launch_bounds__(kThreads)
    attention_kernel(const bf16* __restrict__ q, const bf16* __restrict__ kc, const bf16* __restrict__ vc,
                     const int64_t* __restrict__ pos_p, bf16* __restrict__ out, int heads, int kv_heads,
                     int64_t capacity, float scale, AttnWorkspace ws) {
  __shared__ __align__(16) bf16 ks[kChunk * kPitch];
  __shared__ __align__(16) bf16 vs[kChunk * kHd];
  __shared__ float qs[kWarps][kHd];
  __shared__ unsigned is_last;
  const int kvh = blockIdx.x, chunk = blockIdx.y, chunks = gridDim.y;
  const int group = heads / kv_heads;
  const int64_t len = min(*pos_p + 1, capacity);  // (a position past the cache attends to all of it)
  const int valid = static_cast<int>((len + kChunk - 1) / kChunk);
  if (chunk >= valid) return;  // past the position: this block has nothing to read
  const int start = chunk * kChunk;
  const int rows = static_cast<int>(len - start < kChunk ? len - start : kChunk);
  const bf16* kbase = kc + (static_cast<int64_t>(kvh) * capacity + start) * kHd;
  const bf16* vbase = vc + (static_cast<int64_t>(kvh) * capacity + start) * kHd;
  for (int i = threadIdx.x; i < rows * (kHd / 8); i += kThreads) {  // 8 uint4 per row
    const int row = i / (kHd / 8), col = i % (kHd / 8);
    *reinterpret_cast<uint4*>(&ks[row * kPitch + col * 8]) = reinterpret_cast<const uint4*>(kbase)[i];
    *reinterpret_cast<uint4*>(&vs[row * kHd + col * 8]) = reinterpret_cast<const uint4*>(vbase)[i];
  }
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (warp < group)
    for (int d = lane; d < kHd; d += 32) qs[warp][d] = __bfloat162float(q[(kvh * group + warp) * kHd + d]);
  __syncthreads();
  if (warp < group) {
    float s[2];
#pragma unroll
    for (int j = 0; j < 2; ++j) {  // lane's rows: lane, lane + 32
      const int p = lane + 32 * j;
      float acc = 0;
      if (p < rows) {
#pragma unroll
        for (int c = 0; c < kHd / 8; ++c) {
          const uint4 kv8 = *reinterpret_cast<const uint4*>(&ks[p * kPitch + c * 8]);
          const float4 qa = *reinterpret_cast<const float4*>(&qs[warp][c * 8]);
          const float4 qb = *reinterpret_cast<const float4*>(&qs[warp][c * 8 + 4]);
          acc += dot8(kv8, qa, qb);
        }
        s[j] = acc * scale;
      } else {
        s[j] = -FLT_MAX;
      }
    }
    const float m = warp_max(fmaxf(s[0], s[1]));
    const float e0 = lane < rows ? __expf(s[0] - m) : 0.f, e1 = lane + 32 < rows ? __expf(s[1] - m) : 0.f;
    const float l = warp_sum(e0 + e1);
    float o0 = 0, o1 = 0;  // dims 2 lane, 2 lane + 1
    for (int p = 0; p < rows; ++p) {
      const float e = __shfl_sync(0xffffffffu, p < 32 ? e0 : e1, p & 31);
      const float2 v = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&vs[p * kHd + 2 * lane]));
      o0 = fmaf(e, v.x, o0);
      o1 = fmaf(e, v.y, o1);
    }
    const int64_t slot = (static_cast<int64_t>(kvh) * chunks + chunk) * group + warp;
    *reinterpret_cast<float2*>(&ws.o[slot * kHd + 2 * lane]) = make_float2(o0, o1);
    if (lane == 0) {
      ws.m[slot] = m;
      ws.l[slot] = l;
    }
  }
  __threadfence();  // the partials are visible before this block counts itself done
  __syncthreads();
  if (threadIdx.x == 0) is_last = atomicAdd(&ws.done[kvh], 1u) == static_cast<unsigned>(valid - 1);
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  if (warp < group) {  // lane c holds chunk c's max and sum (chunks <= 32)
    const int64_t base =
        static_cast<int64_t>(kvh) * chunks * group + warp;  // slot of chunk c: base + c * group
    const float mc = lane < valid ? __ldcg(&ws.m[base + lane * group]) : -FLT_MAX;
    const float mx = warp_max(mc);
    const float f = lane < valid ? __expf(mc - mx) : 0.f;
    const float l = warp_sum(lane < valid ? __ldcg(&ws.l[base + lane * group]) * f : 0.f);
    float o0 = 0, o1 = 0;
    for (int c0 = 0; c0 < valid; c0 += 8) {  // 8 independent loads in flight, then the sums
      float2 ov[8];
#pragma unroll
      for (int u = 0; u < 8; ++u)
        if (c0 + u < valid)
          ov[u] = __ldcg(reinterpret_cast<const float2*>(&ws.o[(base + (c0 + u) * group) * kHd + 2 * lane]));
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        const float fc = __shfl_sync(0xffffffffu, f, (c0 + u) & 31);
        if (c0 + u < valid) {
          o0 = fmaf(ov[u].x, fc, o0);
          o1 = fmaf(ov[u].y, fc, o1);
        }
      }
    }
    const int h = kvh * group + warp;
    *reinterpret_cast<__nv_bfloat162*>(&out[h * kHd + 2 * lane]) = __floats2bfloat162_rn(o0 / l, o1 / l);
  }
  if (threadIdx.x == 0) ws.done[kvh] = 0;  // ready for the next call
}

// ---- embedding row, greedy next token ------------------------------------------------------
__global__ void embed_kernel(const bf16* __restrict__ table, const int64_t* __restrict__ token,
                             bf16* __restrict__ x, int64_t dim) {
  const int64_t t = *token;
  for (int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < dim; i += gridDim.x * blockDim.x)
    x[i] = table[t * dim + i];
}

__global__ void __launch_bounds__(1024)
    argmax_next_kernel(const bf16* __restrict__ logits, int64_t vocab, int64_t* token, int64_t* pos) {
  __shared__ float best_v[32];
  __shared__ int64_t best_i[32];
  float bv = -FLT_MAX;
  int64_t bi = 0;
  for (int64_t i = threadIdx.x; i < vocab; i += blockDim.x) {
    const float v = __bfloat162float(logits[i]);
    if (v > bv) {  // strictly greater: the first index of a maximum within the thread
      bv = v;
      bi = i;
    }
  }
  for (int o = 16; o > 0; o >>= 1) {
    const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
    const int64_t oi = __shfl_xor_sync(0xffffffffu, bi, o);
    if (ov > bv || (ov == bv && oi < bi)) {
      bv = ov;
      bi = oi;
    }
  }
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (lane == 0) {
    best_v[warp] = bv;
    best_i[warp] = bi;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < static_cast<int>(blockDim.x >> 5); ++w)
      if (best_v[w] > bv || (best_v[w] == bv && best_i[w] < bi)) {
        bv = best_v[w];
        bi = best_i[w];
      }
    *token = bi;
    *pos += 1;
  }
}

}  // namespace

bool compiled() { return true; }

GemvConfig gemv_default(int64_t n, int64_t k) {
  GemvConfig c;
  // bench_llm_gemv on the H200: k_split 1 was fastest or within 2 % everywhere but the 2048 x 2048
  // output projection, where k_split 2 gained 2 %; 4 and 8 lost on every shape.
  c.k_split = (n <= 2048 && k <= 2048) ? 2 : 1;
  c.max_blocks = 0;
  return c;
}

std::string gemv(const void* W, const void* x, void* y, int64_t n, int64_t k, const void* norm_w, float eps,
                 Epilogue epi, const void* residual, void* stream, const GemvConfig& cfg) {
  if (k % 8 != 0 || !aligned16(W)) return "gemv: needs k % 8 == 0 and a 16-byte aligned weight";
  if (epi == Epilogue::SwiGLU && n % 2 != 0) return "gemv: SwiGLU needs an even number of rows";
  if (n <= 0 || n > (1 << 30) || k > (1 << 30)) return "gemv: shape out of range";
  const GemvConfig d = gemv_default(n, k);
  const int ks = cfg.k_split > 0 ? cfg.k_split : d.k_split;
  const int mb = cfg.max_blocks > 0 ? cfg.max_blocks : d.max_blocks;
  auto s = static_cast<cudaStream_t>(stream);
  const int nn = static_cast<int>(n), kk = static_cast<int>(k);
  std::string why;
  switch (epi) {
    case Epilogue::Store:
      why = gemv_split<0>(ks, W, x, y, nn, kk, norm_w, eps, residual, mb, cfg.overlap, s);
      break;
    case Epilogue::AddResidual:
      why = gemv_split<1>(ks, W, x, y, nn, kk, norm_w, eps, residual, mb, cfg.overlap, s);
      break;
    case Epilogue::SwiGLU:
      why = gemv_split<2>(ks, W, x, y, nn / 2, kk, norm_w, eps, residual, mb, cfg.overlap, s);
      break;
  }
  return why.empty() ? last_error("gemv launch") : why;
}

std::string rope_kv_write(const void* qkv, const void* cos, const void* sin_signed, const int64_t* pos,
                          void* q, void* k_cache, void* v_cache, int heads, int kv_heads, int head_dim,
                          int64_t capacity, void* stream) {
  if (head_dim % 2 != 0) return "rope: odd head_dim";
  const int total = (heads + 2 * kv_heads) * head_dim;
  rope_kv_write_kernel<<<(total + kThreads - 1) / kThreads, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const bf16*>(qkv), static_cast<const bf16*>(cos), static_cast<const bf16*>(sin_signed), pos,
      static_cast<bf16*>(q), static_cast<bf16*>(k_cache), static_cast<bf16*>(v_cache), heads, kv_heads,
      head_dim, capacity);
  return last_error("rope_kv_write launch");
}

int64_t attention_workspace_bytes(int heads, int kv_heads, int head_dim, int64_t capacity) {
  (void)head_dim;
  const int64_t chunks = (capacity + kChunk - 1) / kChunk, group = heads / kv_heads;
  return 256 + kv_heads * chunks * group * (kHd + 2) * static_cast<int64_t>(sizeof(float));
}

std::string attention(const void* q, const void* k_cache, const void* v_cache, const int64_t* pos, void* out,
                      int heads, int kv_heads, int head_dim, int64_t capacity, float scale, void* workspace,
                      void* stream) {
  if (head_dim != kHd) return "attention: head_dim " + std::to_string(head_dim) + " (this kernel: 64 only)";
  if (kv_heads <= 0 || heads % kv_heads != 0 || heads / kv_heads > kWarps || kv_heads > 64)
    return "attention: needs a group of at most 8 query heads per kv head";
  if (!aligned16(k_cache) || !aligned16(v_cache)) return "attention: cache not 16-byte aligned";
  const int chunks = static_cast<int>((capacity + kChunk - 1) / kChunk);
  if (chunks > 32) return "attention: a cache of more than 32 x 64 rows (the combine holds a chunk per lane)";
  const dim3 grid(kv_heads, chunks);
  attention_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const bf16*>(q), static_cast<const bf16*>(k_cache), static_cast<const bf16*>(v_cache), pos,
      static_cast<bf16*>(out), heads, kv_heads, capacity, scale,
      attn_workspace(workspace, heads, kv_heads, chunks));
  return last_error("attention launch");
}

std::string embed(const void* table, const int64_t* token, void* x, int64_t dim, void* stream) {
  embed_kernel<<<static_cast<int>((dim + kThreads - 1) / kThreads), kThreads, 0,
                 static_cast<cudaStream_t>(stream)>>>(static_cast<const bf16*>(table), token,
                                                      static_cast<bf16*>(x), dim);
  return last_error("embed launch");
}

std::string argmax_next(const void* logits, int64_t vocab, int64_t* token, int64_t* pos, void* stream) {
  argmax_next_kernel<<<1, 1024, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const bf16*>(logits),
                                                                        vocab, token, pos);
  return last_error("argmax launch");
}

}  // namespace llmk
