// The hand-written fused GeGLU pointwise kernel: y = gelu_tanh(g) * u, bf16 in and out.
//
// Memory-bound: per element it reads 4 bytes and writes 2, and does ~10 float operations (with
// --use_fast_math, tanhf is one tanh.approx.f32 instruction), so its speed is its bytes over HBM
// bandwidth. What makes it fast on a Hopper GPU:
//   * 16-byte accesses: each thread loads 8 bf16 of g and 8 of u per vector (uint4), coalesced
//     across the warp (a warp's load is 512 contiguous bytes), and stores 8 of y at once;
//   * bytes in flight: each thread issues `unroll` vector loads of g and of u before it uses the
//     first one (unroll x 32 bytes outstanding per thread);
//   * cache hints: g, u and y are touched once, so loads are streaming (.cs) or, as a variant,
//     non-coherent with an L2 256-byte prefetch; stores are streaming (.cs);
//   * the grid: either persistent (the blocks that fit at once, looping over tiles) or one block
//     per tile of 256 x unroll vectors. A tile's last loads past the end are predicated off; the
//     tail (n not a multiple of 8, or unaligned pointers) is done per element by a second kernel.
// Which launch configuration is fastest is measured, not argued: bench/bench_geglu times every
// one of geglu_configs() on the H200 (docs/bench/geglu_h200_sweep.md), and GegluConfig's default
// is the winner there: one vector per thread and one block per tile, so the GPU's block scheduler
// spreads 12,288 short blocks over the SMs. Persistent grids (a grid-stride loop, the two earlier
// versions of this kernel) and deeper unrolling were slower at this shape: fewer warps resident
// per SM (more registers) and uneven last trips cost more than the launch of more blocks.
// gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), computed in float, as ATen does.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "geglu_kernel.hpp"

namespace wb07 {
namespace {

constexpr int kThreads = 256;
constexpr int kPerVector = 8;  // bf16 in 16 bytes

__device__ __forceinline__ float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  constexpr float kCoeff = 0.044715f;
  const float inner = kSqrt2OverPi * (x + kCoeff * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}

__device__ __forceinline__ uint32_t geglu_pair(uint32_t g2, uint32_t u2) {
  const __nv_bfloat162 g = *reinterpret_cast<const __nv_bfloat162*>(&g2);
  const __nv_bfloat162 u = *reinterpret_cast<const __nv_bfloat162*>(&u2);
  const float2 gf = __bfloat1622float2(g), uf = __bfloat1622float2(u);
  // Round gelu(g) to bf16 before the product, as eager's two kernels do (gelu writes bf16).
  const float h0 = __bfloat162float(__float2bfloat16(gelu_tanh(gf.x)));
  const float h1 = __bfloat162float(__float2bfloat16(gelu_tanh(gf.y)));
  const __nv_bfloat162 y = __floats2bfloat162_rn(h0 * uf.x, h1 * uf.y);
  return *reinterpret_cast<const uint32_t*>(&y);
}

__device__ __forceinline__ uint4 geglu_vector(const uint4& g, const uint4& u) {
  uint4 out;
  out.x = geglu_pair(g.x, u.x);
  out.y = geglu_pair(g.y, u.y);
  out.z = geglu_pair(g.z, u.z);
  out.w = geglu_pair(g.w, u.w);
  return out;
}

template <bool L2Prefetch>
__device__ __forceinline__ uint4 load(const uint4* p) {
  if constexpr (L2Prefetch) {
    uint4 r;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
        : "l"(p));
    return r;
  } else {
    return __ldcs(p);
  }
}

// Tiles of kThreads x Unroll vectors; thread t of a block does vectors t, t + 256, ... of its tile,
// so each of the Unroll loads of a warp reads 512 contiguous bytes. A persistent grid loops over
// the tiles; a full grid makes one trip.
template <int Unroll, bool L2Prefetch>
__global__ void __launch_bounds__(kThreads)
    geglu_tanh_elementwise_kernel(const uint4* __restrict__ g, const uint4* __restrict__ u,
                                  uint4* __restrict__ y, int64_t vectors) {
  constexpr int64_t kTile = int64_t{kThreads} * Unroll;
  const int64_t step = int64_t{gridDim.x} * kTile;
  for (int64_t base = int64_t{blockIdx.x} * kTile + threadIdx.x; base < vectors; base += step) {
    uint4 gv[Unroll], uv[Unroll];
#pragma unroll
    for (int k = 0; k < Unroll; ++k) {
      const int64_t i = base + int64_t{k} * kThreads;
      if (i < vectors) {
        gv[k] = load<L2Prefetch>(g + i);
        uv[k] = load<L2Prefetch>(u + i);
      }
    }
#pragma unroll
    for (int k = 0; k < Unroll; ++k) {
      const int64_t i = base + int64_t{k} * kThreads;
      if (i < vectors) __stcs(y + i, geglu_vector(gv[k], uv[k]));
    }
  }
}

// Elements past the last full vector (n % 8), or every element when a pointer is not 16-byte aligned.
__global__ void geglu_tanh_elementwise_tail_kernel(const __nv_bfloat16* __restrict__ g,
                                                   const __nv_bfloat16* __restrict__ u,
                                                   __nv_bfloat16* __restrict__ y, int64_t begin, int64_t n) {
  for (int64_t i = begin + static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float h = __bfloat162float(__float2bfloat16(gelu_tanh(__bfloat162float(g[i]))));
    y[i] = __float2bfloat16(h * __bfloat162float(u[i]));
  }
}

// The blocks of `kernel` that fit on the current GPU at once (SMs x resident blocks per SM).
template <typename Kernel>
int resident_blocks(Kernel kernel) {
  int device = 0, sms = 0, per_sm = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0);
  return std::max(1, sms) * std::max(1, per_sm);
}

template <int Unroll, bool L2Prefetch>
void launch(const void* g, const void* u, void* y, int64_t vectors, bool persistent, cudaStream_t s) {
  constexpr int64_t kTile = int64_t{kThreads} * Unroll;
  const auto kernel = geglu_tanh_elementwise_kernel<Unroll, L2Prefetch>;
  int64_t grid = std::min<int64_t>((vectors + kTile - 1) / kTile, INT_MAX);
  if (persistent) {
    static const int resident = resident_blocks(kernel);  // per configuration, once
    grid = std::min<int64_t>(grid, resident);
  }
  kernel<<<static_cast<int>(grid), kThreads, 0, s>>>(
      static_cast<const uint4*>(g), static_cast<const uint4*>(u), static_cast<uint4*>(y), vectors);
}

template <bool L2Prefetch>
bool launch_unrolled(int unroll, const void* g, const void* u, void* y, int64_t vectors, bool persistent,
                     cudaStream_t s) {
  switch (unroll) {
    case 1: launch<1, L2Prefetch>(g, u, y, vectors, persistent, s); return true;
    case 2: launch<2, L2Prefetch>(g, u, y, vectors, persistent, s); return true;
    case 4: launch<4, L2Prefetch>(g, u, y, vectors, persistent, s); return true;
    case 8: launch<8, L2Prefetch>(g, u, y, vectors, persistent, s); return true;
    default: return false;
  }
}

}  // namespace

std::vector<GegluConfig> geglu_configs() {
  std::vector<GegluConfig> all;
  for (int unroll : {1, 2, 4, 8})
    for (bool persistent : {true, false})
      for (bool prefetch : {false, true}) all.push_back({unroll, persistent, prefetch});
  return all;
}

std::string describe(const GegluConfig& c) {
  return "unroll " + std::to_string(c.unroll) + (c.persistent ? ", persistent" : ", one trip per block") +
         (c.l2_prefetch ? ", L2::256B prefetch loads" : ", .cs loads");
}

std::string geglu_tanh_bf16(const void* g, const void* u, void* y, int64_t n, void* stream,
                            const GegluConfig& config) {
  if (n <= 0) return {};
  auto s = static_cast<cudaStream_t>(stream);
  const bool aligned =
      (reinterpret_cast<uintptr_t>(g) | reinterpret_cast<uintptr_t>(u) | reinterpret_cast<uintptr_t>(y)) %
          16 ==
      0;
  const int64_t vectors = aligned ? n / kPerVector : 0;
  if (vectors > 0) {
    const bool known = config.l2_prefetch
                           ? launch_unrolled<true>(config.unroll, g, u, y, vectors, config.persistent, s)
                           : launch_unrolled<false>(config.unroll, g, u, y, vectors, config.persistent, s);
    if (!known) return "geglu kernel: no configuration with unroll " + std::to_string(config.unroll);
  }
  if (vectors * kPerVector < n) {
    const int64_t rest = n - vectors * kPerVector;
    static const int tail_blocks = resident_blocks(geglu_tanh_elementwise_tail_kernel);
    const int grid = static_cast<int>(std::min<int64_t>((rest + kThreads - 1) / kThreads, tail_blocks));
    geglu_tanh_elementwise_tail_kernel<<<grid, kThreads, 0, s>>>(
        static_cast<const __nv_bfloat16*>(g), static_cast<const __nv_bfloat16*>(u),
        static_cast<__nv_bfloat16*>(y), vectors * kPerVector, n);
  }
  const cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? std::string()
                            : std::string("geglu kernel launch failed: ") + cudaGetErrorString(err);
}

}  // namespace wb07
