// Exercise 04.2 -- a distribution, not a mean.                   (chapter 04_compute_bound_4096)
//
// The same GEMM on the same data does not always take the same time: clocks, temperature and
// whatever else the machine does get in the way. Three recorded steps give three samples --
// too few to tell a typical run from an unlucky one. Record at least as many steps as your
// variation's min_samples (the first line of the output), so that the program (and the lesson
// report's kernel-duration table, on a GPU) shows a distribution. Then write median_us() and
// mean_us(): the program calls them on the GEMM samples of its own trace. Which of the two
// describes a typical step, and why?
//
//   build:  cmake --build build --target ex04_2_distribution
//   run:    build/bin/ex04_2_distribution --student YOUR_NAME
//   check:  build/bin/exercise check ex04.2 --student YOUR_NAME    stuck?  build/bin/exercise hint ex04.2
#include "exercise.hpp"

#include <vector>

// TODO(ex04.2): the median and the mean of the samples (microseconds).
double median_us(std::vector<double> samples) {
  (void)samples;
  return 0.0;
}
double mean_us(const std::vector<double>& samples) {
  (void)samples;
  return 0.0;
}

int main(int argc, char** argv) {
  ex::Exercise e{"ex04_2_distribution", "Exercise 04.2: a distribution, not a mean"};
  e.defaults().size = 4096;
  e.defaults().cpu_size = 512;
  // TODO(ex04.2): a schedule "W,WU,A" that records at least your min_samples steps.
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
    run.result("y", y);  // the harness checks y against the exercise's own numbers
    run.say("GEMM durations: " + run.gemm_summary());
    const std::vector<double> samples = run.gemm_samples_us();
    run.answer("median_us", median_us(samples));
    run.answer("mean_us", mean_us(samples));
    run.say("median " + std::to_string(median_us(samples)) + " us, mean " + std::to_string(mean_us(samples)) +
            " us");
  });
}
