// Per-step cost of wb::Profiler against the raw Kineto calls it wraps, on the same loop.
//
//   build/bench/bench_profiler_overhead [--steps 2000] [--reps 7] [--size 64] [--device auto]
//
// Both sides record every step (schedule 0,0,steps) and run the chapter-01 step:
//   raw:     prepareProfiler; enableProfiler; per step: RecordFunction("ProfilerStep#i") + work;
//            synchronize; disableProfiler
//   wrapper: wb::Profiler with the same work, step() per iteration
// The two are interleaved (raw, wrapper, raw, ...) and the median of --reps runs is compared,
// so clock drift and warm-up affect both alike.
#include <ATen/record_function.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/types.h>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <vector>

#include "workbook/profiler.hpp"
#include "workbook/rules.hpp"
#include "workbook/stats.hpp"

namespace tp = torch::autograd::profiler;
namespace ti = torch::profiler::impl;
using Clock = std::chrono::steady_clock;

namespace {
struct Work {
  torch::Tensor x, w, b, y;
  void operator()() {
    wb::Annotation a("matmul_add");
    y = torch::add(torch::matmul(x, w), b);
  }
};

double raw_run(Work& work, int steps, bool cuda) {
  std::set<ti::ActivityType> acts{ti::ActivityType::CPU};
  if (cuda) acts.insert(ti::ActivityType::CUDA);
  ti::ProfilerConfig cfg(ti::ProfilerState::KINETO);
  auto t0 = Clock::now();
  tp::prepareProfiler(cfg, acts);
  tp::enableProfiler(cfg, acts);
  for (int i = 0; i < steps; ++i) {
    at::RecordFunction rf(at::RecordScope::USER_SCOPE);
    const std::string name = std::string(wb::kStepPrefix) + std::to_string(i);
    if (rf.isActive()) rf.before(name);
    work();
  }
  if (cuda) wb::synchronize_device();
  auto result = tp::disableProfiler();
  auto t1 = Clock::now();
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / steps;
}

double wrapper_run(Work& work, int steps, bool cuda) {
  wb::ProfilerOptions o;
  o.schedule = wb::Schedule{0, 0, steps, 1, 0};
  o.cuda = cuda;
  auto t0 = Clock::now();
  wb::Profiler prof(o);
  prof.start();
  for (int i = 0; i < steps; ++i) {
    work();
    prof.step();
  }
  prof.stop();
  auto t1 = Clock::now();
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / steps;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"wb::Profiler per-step overhead against raw Kineto calls"};
  int steps = 2000, reps = 7;
  int64_t size = 64;
  std::string device = "auto";
  app.add_option("--steps", steps, "profiled steps per run")->check(CLI::Range(10, 1000000));
  app.add_option("--reps", reps, "runs per side (median taken)")->check(CLI::Range(1, 101));
  app.add_option("--size", size, "matrix size")->check(CLI::PositiveNumber);
  app.add_option("--device", device)->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  CLI11_PARSE(app, argc, argv);
  const bool cuda = device == "cuda" || (device == "auto" && wb::cuda_available());
  if (device == "cuda" && !wb::cuda_available()) {
    std::fprintf(stderr, "--device cuda: no CUDA device\n");
    return 2;
  }
  auto opts = torch::TensorOptions()
                  .device(cuda ? torch::kCUDA : torch::kCPU)
                  .dtype(cuda ? torch::kBFloat16 : torch::kFloat);
  Work work{torch::randn({size, size}, opts),
            torch::randn({size, size}, opts),
            torch::randn({size, size}, opts),
            {}};
  for (int i = 0; i < 50; ++i) work();  // warm both sides' libraries before timing
  raw_run(work, steps / 10, cuda);      // and Kineto itself

  std::vector<double> raw, wrapped;
  for (int r = 0; r < reps; ++r) {
    raw.push_back(raw_run(work, steps, cuda));
    wrapped.push_back(wrapper_run(work, steps, cuda));
  }
  const double mr = wb::median(raw), mw = wb::median(wrapped);
  std::printf("device %s, size %lld, %d steps x %d runs each (median)\n", cuda ? "cuda" : "cpu",
              static_cast<long long>(size), steps, reps);
  std::printf("raw Kineto calls : %8.2f us/step\n", mr);
  std::printf("wb::Profiler     : %8.2f us/step\n", mw);
  std::printf("overhead         : %+8.2f us/step = %+.2f%% (goal: <= 2%%)\n", mw - mr,
              (mw - mr) / mr * 100.0);
  return 0;
}
