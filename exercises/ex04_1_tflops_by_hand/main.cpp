// Exercise 04.1 -- achieved TFLOP/s, by hand.                    (chapter 04_compute_bound_4096)
//
// A GEMM of two N x N matrices does N^3 multiply-adds. The trace says how long it took. From
// those two numbers comes the throughput it achieved -- the number to hold against the chip's
// peak (an H200: ~989 TFLOP/s dense bf16). Write the function that computes it; the program
// calls it with the median GEMM time of its own trace (the GEMM kernel on a GPU, aten::mm on
// a CPU) and the checker compares your number with the one the lesson report computes.
//
//   build:  cmake --build build --target ex04_1_tflops_by_hand
//   run:    build/bin/ex04_1_tflops_by_hand --student YOUR_NAME   (your N: the first line)
//   check:  build/bin/exercise check ex04.1 --student YOUR_NAME    stuck?  build/bin/exercise hint ex04.1
#include "exercise.hpp"

#include <cstdio>

// TODO(ex04.1): the achieved throughput in TFLOP/s (10^12 floating-point operations per second)
// of `batch` products of two n x n matrices that took `gemm_us` microseconds.
double achieved_tflops(int64_t n, int64_t batch, double gemm_us) {
  (void)n, (void)batch, (void)gemm_us;
  return 0.0;
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
