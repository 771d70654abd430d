// Exercise 04.1 -- achieved TFLOP/s, by hand: a solution.        (chapter 04_compute_bound_4096)
//
// One multiply-add is 2 floating-point operations, and an n x n by n x n product does n^3 of
// them: 2 n^3 flop per matrix, times the batch. Divide by the time in seconds (us * 1e-6) and
// by 1e12 for tera. At N = 4096 on an H200: 2 * 4096^3 = 137.4 GFLOP in ~170 us = ~800
// TFLOP/s, ~80% of the bf16 peak. The usual slips: forgetting the 2 (half the answer), or the
// microseconds (a million times off).
#include "exercise.hpp"

#include <cstdio>

double achieved_tflops(int64_t n, int64_t batch, double gemm_us) {
  const double nd = static_cast<double>(n);
  const double flop = 2.0 * nd * nd * nd * static_cast<double>(batch);  // a multiply-add is 2 flop
  const double seconds = gemm_us * 1e-6;
  return flop / seconds / 1e12;
}

int main(int argc, char** argv) {
  ex::Exercise e{"ex04_1_tflops_by_hand", "Exercise 04.1: achieved TFLOP/s, by hand"};
  e.defaults().size = 4096;
  e.defaults().cpu_size = 512;

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
    for (int i = 0; i < 3; ++i) step();  // warm, as in chapter 04
    wb::synchronize_device();
    run.profile(step);
    run.result("y", y);  // the harness checks y against the exercise's own numbers

    const double gemm_us = run.gemm_median_us();
    const double tflops = achieved_tflops(n, 1, gemm_us);
    char line[200];
    std::snprintf(line, sizeof line,
                  "The GEMM took %.3f us (median). achieved_tflops(%lld, 1, %.3f) = %.4g TFLOP/s", gemm_us,
                  static_cast<long long>(n), gemm_us, tflops);
    run.say(line);
    run.answer("achieved_tflops", tflops);
    // Your probe (--student): the same function on numbers of your own variation.
    run.answer("probe_tflops", achieved_tflops(run.varied("probe_n", 1000), run.varied("probe_batch", 3),
                                               run.varied_number("probe_us", 500)));
  });
}
