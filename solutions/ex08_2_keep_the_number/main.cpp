// Exercise 08.2 -- memory that grows every step: a solution.                      (chapter 08_memory)
//
// Each step computes y = gelu(x @ w) and keeps it in `history` to print the loss curve later.
// Read the memory lane of timeline.svg: allocated memory climbs step after step, and the
// lesson memory_per_step names the bytes each step keeps. Keep what the curve needs (a number
// per step) instead of the tensor, and the climb stops.
//
//   build:  cmake --build build --target ex08_2_keep_the_number
//   run:    build/bin/ex08_2_keep_the_number
//   check:  build/bin/exercise check ex08.2    stuck?  build/bin/exercise hint ex08.2
#include <ATen/ops/gelu.h>

#include <vector>

#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex08_2_keep_the_number", "Exercise 08.2: memory that grows every step"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t tokens = 512, hidden = 512;
    const auto x = torch::randn({tokens, hidden}, run.options());
    const auto w = torch::randn({hidden, hidden}, run.options());
    std::vector<torch::Tensor> history;
    std::vector<double> curve;
    auto step = [&] {
      wb::Annotation a("forward");
      const auto y = torch::gelu(x.matmul(w), "tanh");
      curve.push_back(y.mean().item<double>());  // a number per step: y is freed when the step ends
    };
    for (int i = 0; i < 3; ++i) step();
    wb::synchronize_device();
    ex::Workload wl;
    wl.annotation = "forward";
    wl.profile_memory = true;
    run.profile(step, wl);
    for (const auto& y : history) curve.push_back(y.mean().item<double>());  // history is empty now
    run.result("curve", curve);  // the harness checks the curve against the exercise's own numbers
  });
}
