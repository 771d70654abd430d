// The GeGLU pointwise stage y = gelu_tanh(g) * u on [8192, 3072] bf16, three ways, in one run:
//   eager        torch::gelu(g, "tanh") * u: two ATen kernels, 5 x 50.3 MB = 252 MB moved
//   inductor     Inductor's fused Triton kernel (an AOTI package of just gelu(g)*u, built at
//                build time by chapters/export_aoti.py --model geglu): 151 MB
//   handwritten  chapters/07_geglu_mlp/geglu_kernel.cu: 151 MB, in its default launch configuration
//                and in every other one it compiles (wb07::geglu_configs()): the default must win
// against a measured device-to-device copy of 151 MB (302 MB of traffic) as the bandwidth yardstick.
// Timing: CUDA events around `calls` back-to-back calls, after warm-ups; the median of `reps`
// such rounds, the variants interleaved within each round so clock drift hits all alike.
//
//   bench_geglu [--reps 9] [--calls 50] [--out FILE.md]
// Goals (issue 14): handwritten >= 1.7x eager, no slower than Inductor, >= 85% of the copy's
// bandwidth. Needs a GPU; exits 2 with the reason otherwise.
#include <cuda_runtime.h>
#include <torch/cuda.h>
#include <torch/types.h>

#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "geglu.hpp"
#include "geglu_kernel.hpp"
#include "workbook/aoti.hpp"
#include "workbook/stats.hpp"

namespace {

struct Variant {
  std::string name;
  double mb;  // bytes moved per call, MB
  std::function<void()> call;
  std::vector<double> us;  // per-call time of each round
};

double time_calls(const std::function<void()>& f, int calls, cudaStream_t s) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a, s);
  for (int i = 0; i < calls; ++i) f();
  cudaEventRecord(b, s);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return 1000.0 * ms / calls;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 9, calls = 50;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--reps" || a == "--calls" || a == "--out") && i + 1 < argc) {
      const std::string v = argv[++i];
      if (a == "--out")
        out = v;
      else
        (a == "--reps" ? reps : calls) = std::atoi(v.c_str());
    } else {
      std::cerr << "usage: bench_geglu [--reps N] [--calls N] [--out FILE.md]\n";
      return 2;
    }
  }
  if (reps < 1 || calls < 1) {
    std::cerr << "bench_geglu: --reps and --calls must be >= 1\n";
    return 2;
  }
  if (!torch::cuda::is_available()) {
    std::cerr << "bench_geglu: needs a CUDA GPU (none visible to LibTorch)\n";
    return 2;
  }
  const std::string why = wb07::handwritten_unavailable(torch::Device(torch::kCUDA), torch::kBFloat16);
  if (!why.empty()) {
    std::cerr << "bench_geglu: " << why << "\n";
    return 2;
  }
  torch::NoGradGuard no_grad;
  const int64_t rows = 8192, hidden = 3072;
  const auto opts = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kBFloat16);
  torch::manual_seed(0);
  const auto g = torch::randn({rows, hidden}, opts), u = torch::randn({rows, hidden}, opts);
  const auto src = torch::randn({3 * rows, hidden}, opts);  // 151 MB: the fused call's footprint
  auto dst = torch::empty_like(src);
  const double inter_mb = rows * hidden * 2 / 1e6;
  auto stream = static_cast<cudaStream_t>(
      c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getStream(g.device()).native_handle());

  wb::AotiModel inductor(WB07_GEGLU_AOTI_MANIFEST);
  torch::Tensor y;
  std::vector<Variant> vs{
      {"copy (DtoD, 151 MB)", 2 * 3 * inter_mb, [&] { dst.copy_(src); }, {}},
      {"eager gelu + mul", 5 * inter_mb, [&] { y = torch::gelu(g, "tanh") * u; }, {}},
      {"handwritten fused", 3 * inter_mb, [&] { y = wb07::geglu_fused(g, u); }, {}},
  };
  torch::Tensor y_cfg = torch::empty_like(g);
  for (const wb07::GegluConfig& c : wb07::geglu_configs())
    vs.push_back({"handwritten, " + wb07::describe(c),
                  3 * inter_mb,
                  [&, c] {
                    const std::string err = wb07::geglu_tanh_bf16(g.data_ptr(), u.data_ptr(),
                                                                  y_cfg.data_ptr(), g.numel(), stream, c);
                    if (!err.empty()) throw std::runtime_error(err);
                    y = y_cfg;
                  },
                  {}});
  if (inductor.usable_with({g, u}))
    vs.push_back({"inductor fused (AOTI)", 3 * inter_mb, [&] { y = inductor.run({g, u}).at(0); }, {}});
  else
    std::cerr << "bench_geglu: Inductor's kernel unavailable: " << inductor.why_not() << "\n";

  // Correctness first: the fused kernels against eager, in bf16 tolerance.
  const auto want = (torch::gelu(g, "tanh") * u).to(torch::kFloat);
  std::ostringstream check;
  for (auto& v : vs) {
    if (v.name.rfind("copy", 0) == 0 || v.name.rfind("eager", 0) == 0) continue;
    v.call();
    const double diff = (y.to(torch::kFloat) - want).abs().max().item<double>();
    check << "  " << v.name << ": max |y - eager| = " << diff << "\n";
  }
  for (auto& v : vs)
    for (int w = 0; w < 10; ++w) v.call();  // warm-up: allocator, Triton/cuBLAS first calls
  cudaDeviceSynchronize();
  for (int r = 0; r < reps; ++r)
    for (auto& v : vs) v.us.push_back(time_calls(v.call, calls, stream));

  auto find = [&](const std::string& prefix) -> const Variant* {
    for (const auto& v : vs)
      if (v.name.rfind(prefix, 0) == 0) return &v;
    return nullptr;
  };
  const double copy_gbps = vs[0].mb / wb::median(vs[0].us) * 1e3;  // MB/us = TB/s, x1000 = GB/s
  std::ostringstream os;
  os << "## GeGLU pointwise stage, [8192, 3072] bf16 (bench/bench_geglu.cpp)\n\n"
     << "Device: " << static_cast<int>(torch::cuda::device_count()) << " visible; median of " << reps
     << " rounds of " << calls << " calls each (CUDA events), variants interleaved.\n\n"
     << "| kernel(s) | MB per call | us per call (median) | min..max of rounds | GB/s | % of copy | vs eager "
        "|\n"
     << "|---|---:|---:|---:|---:|---:|---:|\n";
  const double eager_us = wb::median(find("eager")->us);
  char line[512];
  for (const auto& v : vs) {
    const double med = wb::median(v.us), gbps = v.mb / med * 1e3;
    double lo = v.us[0], hi = v.us[0];
    for (double x : v.us) lo = std::min(lo, x), hi = std::max(hi, x);
    std::snprintf(line, sizeof line, "| %s | %.1f | %.1f | %.1f..%.1f | %.0f | %.1f%% | %.2fx |\n",
                  v.name.c_str(), v.mb, med, lo, hi, gbps, 100 * gbps / copy_gbps, eager_us / med);
    os << line;
  }
  const Variant* hand = find("handwritten");
  const Variant* ind = find("inductor");
  const double hand_us = wb::median(hand->us), hand_gbps = hand->mb / hand_us * 1e3;
  os << "\nCorrectness (bf16):\n" << check.str() << "\nGoals:\n";
  std::snprintf(line, sizeof line, "  handwritten vs eager: %.2fx faster (goal >= 1.7x): %s\n",
                eager_us / hand_us, eager_us / hand_us >= 1.7 ? "met" : "NOT met");
  os << line;
  if (ind) {
    const double ind_us = wb::median(ind->us);
    std::snprintf(line, sizeof line, "  handwritten vs Inductor: %.1f vs %.1f us (goal: no slower): %s\n",
                  hand_us, ind_us, hand_us <= ind_us * 1.01 ? "met" : "NOT met");
    os << line;
  } else {
    os << "  handwritten vs Inductor: not measured (" << inductor.why_not() << ")\n";
  }
  std::snprintf(
      line, sizeof line,
      "  handwritten bandwidth: %.0f GB/s = %.1f%% of the measured copy's %.0f GB/s (goal >= 85%%): %s\n",
      hand_gbps, 100 * hand_gbps / copy_gbps, copy_gbps, hand_gbps >= 0.85 * copy_gbps ? "met" : "NOT met");
  os << line;
  const Variant* fastest = nullptr;
  for (const auto& v : vs)
    if (v.name.rfind("handwritten, ", 0) == 0 && (!fastest || wb::median(v.us) < wb::median(fastest->us)))
      fastest = &v;
  if (fastest) {
    std::snprintf(line, sizeof line,
                  "  fastest launch configuration: %s, %.1f us (the default, %s: %.1f us)\n",
                  fastest->name.substr(13).c_str(), wb::median(fastest->us),
                  wb07::describe(wb07::GegluConfig{}).c_str(), hand_us);
    os << line;
  }
  std::cout << os.str();
  if (!out.empty()) std::ofstream(out) << os.str();
  return 0;
}
