// The loop of examples/minimal with the raw LibTorch calls that wb::Profiler makes for you
// (common/torch/src/profiler.cpp): no schedule object, no step scopes, no atomic save.
//   example_raw_kineto [OUT_DIR]   ->  OUT_DIR/trace.json (default: .)
// docs/profiler-in-cpp.md maps each call to Python's torch.profiler and to wb::Profiler.
#include <ATen/record_function.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/cuda.h>
#include <torch/types.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <string>

namespace tp = torch::autograd::profiler;
namespace ti = torch::profiler::impl;

int main(int argc, char** argv) {
  const std::filesystem::path out = argc > 1 ? argv[1] : ".";
  std::filesystem::create_directories(out);
  const bool cuda = torch::cuda::is_available();
  const auto dev = cuda ? torch::kCUDA : torch::kCPU;
  auto x = torch::randn({64, 64}, dev), w = torch::randn({64, 64}, dev), b = torch::randn({64}, dev);
  torch::Tensor y;

  // [snippet:config]
  const ti::ProfilerConfig config(ti::ProfilerState::KINETO, /*report_input_shapes=*/false,
                                  /*profile_memory=*/false, /*with_stack=*/false,
                                  /*with_flops=*/false, /*with_modules=*/false,
                                  ti::ExperimentalConfig());  // Python's _ExperimentalConfig()
  std::set<ti::ActivityType> activities{ti::ActivityType::CPU};
  if (cuda) activities.insert(ti::ActivityType::CUDA);
  // [/snippet:config]

  // [snippet:loop]
  std::unique_ptr<tp::ProfilerResult> result;
  for (int step = 0; step < 5; ++step) {                     // schedule wait=1, warmup=1, active=3
    if (step == 1) tp::prepareProfiler(config, activities);  // warmup starts: prepare
    if (step == 2) tp::enableProfiler(config, activities);   // active starts: record
    const std::string step_name = "ProfilerStep#" + std::to_string(step);
    at::RecordFunction step_scope(at::RecordScope::USER_SCOPE);
    step_scope.before(step_name);  // a no-op while no profiler listens
    {
      RECORD_USER_SCOPE("matmul_add");  // record_function("matmul_add")
      y = torch::add(torch::matmul(x, w), b);
    }
    step_scope.end();
  }
  if (cuda) torch::cuda::synchronize();  // the last kernels must finish before the stop
  result = tp::disableProfiler();
  result->save((out / "trace.json").string());  // once per result, before the next prepare
  // [/snippet:loop]
  std::cout << result->events().size() << " events; trace in " << (out / "trace.json").string() << "\n";
}
