// The hand-written fused gelu_tanh(g) * u CUDA kernel (geglu_kernel.cu, compiled by nvcc), on raw
// device pointers: no torch headers here, so nvcc never compiles LibTorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace wb07 {

// How the kernel is launched. The chapter uses the default; bench/bench_geglu times every
// configuration in geglu_configs() on the H200, and the default is the one that won there
// (docs/bench/geglu_h200_sweep.md: one 16-byte vector of g and u per thread, one block per 256
// vectors, streaming loads: 94.7% of a device copy's speed, where the persistent grid-stride
// loops of the earlier versions reached 82-92%).
struct GegluConfig {
  int unroll = 1;            // 16-byte vectors of g (and of u) each thread loads before the first use
  bool persistent = false;   // grid = the blocks that fit on the GPU at once (a grid-stride loop),
                             // else one block per tile of 256 x unroll vectors (one trip each)
  bool l2_prefetch = false;  // loads with the L2::256B prefetch hint instead of streaming (.cs)
};

// The configurations compiled in (unroll 1, 2, 4, 8; each persistent or not; each hint).
std::vector<GegluConfig> geglu_configs();
std::string describe(const GegluConfig& c);  // "unroll 4, persistent, .cs loads"

// y[i] = gelu_tanh(g[i]) * u[i] for n bf16 elements on the device, enqueued on `stream` (a
// cudaStream_t). Returns "" or the launch error.
std::string geglu_tanh_bf16(const void* g, const void* u, void* y, int64_t n, void* stream,
                            const GegluConfig& config = {});

}  // namespace wb07
