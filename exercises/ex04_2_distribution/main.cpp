// Exercise 04.2 -- a distribution, not a mean.                   (chapter 04_compute_bound_4096)
//
// The same GEMM on the same data does not always take the same time: clocks, temperature and
// whatever else the machine does get in the way. Three recorded steps give three samples --
// too few to tell a typical run from an unlucky one. Record at least 10 steps, so that the
// program (and the lesson report's kernel-duration table, on a GPU) shows a distribution; then
// compare its median with its mean.
//
//   build:  cmake --build build --target ex04_2_distribution
//   run:    build/bin/ex04_2_distribution      (N = 4096 on a GPU, 512 on a CPU)
//   check:  build/bin/exercise check ex04.2    stuck?  build/bin/exercise hint ex04.2
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex04_2_distribution", "Exercise 04.2: a distribution, not a mean"};
  e.defaults().size = 4096;
  e.defaults().cpu_size = 512;
  // TODO(ex04.2): a schedule "W,WU,A" that records at least 10 steps.
  e.defaults().schedule = "1,1,3";

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
    for (int i = 0; i < 3; ++i) step();
    wb::synchronize_device();
    run.profile(step);
    run.say("GEMM durations: " + run.gemm_summary());
  });
}
