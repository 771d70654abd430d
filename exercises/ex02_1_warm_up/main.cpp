// Exercise 02.1 -- keep the first call's setup out of the profile.     (chapter 02_warmup; GPU)
//
// This program profiles from the very first step (schedule 0,0,3: no wait, no warmup), and
// nothing runs before the profiler starts. So the first recorded GEMM pays for everything a
// process does once: loading the GEMM kernel's module onto the GPU, setting its attributes,
// cuBLAS's first-call work. The trace shows those events next to the workload.
// Keep them out of the recorded steps, without removing anything from the step itself.
//
//   build:  cmake --build build --target ex02_1_warm_up
//   run:    build/bin/ex02_1_warm_up           (a GPU run shows the setup events in the table)
//   check:  build/bin/exercise check ex02.1    stuck?  build/bin/exercise hint ex02.1
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex02_1_warm_up", "Exercise 02.1: keep the first call's setup out of the profile"};
  e.defaults().schedule = "0,0,3";  // record from the first step on

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t n = run.size();
    auto x = torch::randn({n, n}, run.options());
    auto w = torch::randn({n, n}, run.options());
    auto b = torch::randn({n, n}, run.options());
    torch::Tensor y;
    auto step = [&] {
      wb::Annotation a("matmul_add");
      y = torch::add(torch::matmul(x, w), b);
    };

    // TODO(ex02.1): make the first-call work happen here, before the profiler starts.

    run.profile(step);
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
