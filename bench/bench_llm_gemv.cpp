// The M = 1 bf16 GEMV of models/llm_kernels on the five projection shapes of the 1b decoder,
// against cuBLAS (torch::linear, as the eager model calls it) and a device copy, in one run.
//
//   build/bench/bench_llm_gemv [--reps N]
//
// Each shape is timed as a CUDA graph of 64 launches that cycle over enough weight copies to
// spill the L2 (>= 256 MB), replayed --reps times: the median per launch. GB/s counts the weight
// and x read plus y written; the copy counts read + write, so both are bytes moved per second.
#include <torch/types.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "decode_kernels.hpp"
#include "workbook/profiler.hpp"  // wb::synchronize_device, wb::cuda_available

#ifdef WORKBOOK_WITH_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Median microseconds per call of `body(i)` for i in 0..63, captured once as a graph.
double time_us(const std::function<void(int)>& body, int reps) {
#ifdef WORKBOOK_WITH_CUDA
  constexpr int kCalls = 64;
  at::cuda::CUDAGraph graph;
  c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
  {
    c10::cuda::CUDAStreamGuard guard(side);
    for (int i = 0; i < kCalls; ++i) body(i);  // warm-up outside the capture
    side.synchronize();
    graph.capture_begin();
    for (int i = 0; i < kCalls; ++i) body(i);
    graph.capture_end();
    side.synchronize();
  }
  std::vector<double> t;
  for (int r = 0; r < reps + 1; ++r) {
    wb::synchronize_device();
    const auto t0 = std::chrono::steady_clock::now();
    graph.replay();
    wb::synchronize_device();
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    if (r > 0) t.push_back(us / kCalls);
  }
  return median(t);
#else
  (void)body;
  (void)reps;
  return 0;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "bench_llm_gemv: unknown argument '%s'\nusage: bench_llm_gemv [--reps N]\n",
                   a.c_str());
      return 2;
    }
  }
  if (reps < 1) {
    std::fprintf(stderr, "bench_llm_gemv: --reps must be >= 1\n");
    return 2;
  }
  const std::string why = llmk::kernels_unavailable(torch::kCUDA, torch::kBFloat16);
  if (!wb::cuda_available() || !why.empty()) {
    std::fprintf(stderr, "bench_llm_gemv: needs a CUDA device and the compiled kernels (%s)\n",
                 why.empty() ? "no CUDA device" : why.c_str());
    return 2;
  }
  torch::NoGradGuard ng;
  const auto o = torch::TensorOptions().dtype(torch::kBFloat16).device(torch::kCUDA);
  // The copy: 1 GiB, read + write.
  const auto src = torch::empty({int64_t{1} << 29}, o).uniform_();
  auto dst = torch::empty_like(src);
  for (int i = 0; i < 3; ++i) dst.copy_(src);
  wb::synchronize_device();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) dst.copy_(src);
  wb::synchronize_device();
  const double copy_gbps = 2.0 * static_cast<double>(src.nbytes()) * 20 /
                           (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()) /
                           1e9;
  std::printf("bench_llm_gemv: bf16, M = 1; copy %.0f GB/s (1 GiB, read + write)\n", copy_gbps);
  std::printf("%-8s %6s %6s %8s | %-22s %9s %7s | %9s %7s | best/cuBLAS\n", "shape", "n", "k", "MB",
              "kernel (k_split, grid)", "us", "% copy", "cuBLAS us", "% copy");
  struct Shape {
    const char* name;
    int64_t n, k;
  };
  const std::vector<Shape> shapes = {{"qkv", 2560, 2048},
                                     {"o", 2048, 2048},
                                     {"gate_up", 11264, 2048},
                                     {"down", 2048, 5632},
                                     {"lm_head", 32000, 2048}};
  for (const auto& s : shapes) {
    const double bytes = 2.0 * (s.n * s.k + s.k + s.n);
    const int copies = static_cast<int>(std::max<double>(1, std::ceil(256e6 / bytes)));
    std::vector<torch::Tensor> W, X, Y;
    for (int c = 0; c < copies; ++c) {
      W.push_back(torch::randn({s.n, s.k}, o).mul_(0.02));
      X.push_back(torch::randn({1, s.k}, o));
      Y.push_back(torch::empty({1, s.n}, o));
    }
    const double cublas_us = time_us(
        [&](int i) {
          const int c = i % copies;
          at::mm_out(Y[c], X[c], W[c].t());
        },
        reps);
    double best_us = 1e30;
    std::string best;
    for (int ks : {1, 2, 4, 8})
      for (int grid : {0, 1 << 30}) {  // resident blocks looping, or one trip per block
        llmk::GemvConfig cfg;
        cfg.k_split = ks;
        cfg.max_blocks = grid;
        const double us = time_us(
            [&](int i) {
              const int c = i % copies;
              torch::Tensor y = Y[c].view({-1});
              llmk::gemv(W[c], X[c].view({-1}), y, {}, 1e-5, llmk::Epilogue::Store, {}, cfg);
            },
            reps);
        const std::string what = "k_split " + std::to_string(ks) + (grid ? ", one trip" : ", resident");
        std::printf("%-8s %6lld %6lld %8.1f | %-22s %9.2f %6.1f%% |\n", s.name, static_cast<long long>(s.n),
                    static_cast<long long>(s.k), bytes / 1e6, what.c_str(), us,
                    100 * bytes / (us * 1e-6) / 1e9 / copy_gbps);
        if (us < best_us) {
          best_us = us;
          best = what;
        }
      }
    const llmk::GemvConfig d = llmk::gemv_default(s.n, s.k);
    const double def_us = time_us(
        [&](int i) {
          const int c = i % copies;
          torch::Tensor y = Y[c].view({-1});
          llmk::gemv(W[c], X[c].view({-1}), y, {}, 1e-5, llmk::Epilogue::Store, {});
        },
        reps);
    llmk::GemvConfig ov = d;
    ov.overlap = true;  // each launch starts streaming its weights while the one before finishes
    double ov_us = 0;
    try {
      ov_us = time_us(
          [&](int i) {
            const int c = i % copies;
            torch::Tensor y = Y[c].view({-1});
            llmk::gemv(W[c], X[c].view({-1}), y, {}, 1e-5, llmk::Epilogue::Store, {}, ov);
          },
          reps);
    } catch (const std::exception& e) {
      std::printf("overlap: %s\n", e.what());
    }
    std::printf("%-8s %6lld %6lld %8.1f | default + overlap      %9.2f %6.1f%% |\n", s.name,
                static_cast<long long>(s.n), static_cast<long long>(s.k), bytes / 1e6, ov_us,
                100 * bytes / (ov_us * 1e-6) / 1e9 / copy_gbps);
    std::printf(
        "%-8s %6lld %6lld %8.1f | default (k_split %d)  %9.2f %6.1f%% | %9.2f %6.1f%% | %.2fx (best: %s, "
        "%.1f%%)\n",
        s.name, static_cast<long long>(s.n), static_cast<long long>(s.k), bytes / 1e6, d.k_split, def_us,
        100 * bytes / (def_us * 1e-6) / 1e9 / copy_gbps, cublas_us,
        100 * bytes / (cublas_us * 1e-6) / 1e9 / copy_gbps, cublas_us / def_us, best.c_str(),
        100 * bytes / (best_us * 1e-6) / 1e9 / copy_gbps);
  }
  return 0;
}
