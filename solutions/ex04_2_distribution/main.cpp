// Exercise 04.2 -- a distribution, not a mean: a solution.       (chapter 04_compute_bound_4096)
//
// 0,0,20 records the first 20 steps (the warm-up loop above already paid the first-call costs).
// With 20 samples one slow GEMM moves the mean but hardly the median: read the median and the
// spread (min..max), and look at the slow ones in the trace rather than averaging them away.
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex04_2_distribution", "Exercise 04.2: a distribution, not a mean"};
  e.defaults().size = 4096;
  e.defaults().cpu_size = 512;
  e.defaults().schedule = "0,0,20";  // 20 recorded steps, 20 GEMM samples

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
