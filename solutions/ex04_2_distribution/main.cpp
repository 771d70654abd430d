// Exercise 04.2 -- a distribution, not a mean: a solution.       (chapter 04_compute_bound_4096)
//
// 0,0,20 records the first 20 steps (the warm-up loop above already paid the first-call costs).
// With 20 samples one slow GEMM moves the mean but hardly the median: read the median and the
// spread (min..max), and look at the slow ones in the trace rather than averaging them away.
#include "exercise.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

double median_us(std::vector<double> samples) {
  if (samples.empty()) return 0.0;
  std::sort(samples.begin(), samples.end());
  const size_t h = samples.size() / 2;
  return samples.size() % 2 ? samples[h] : (samples[h - 1] + samples[h]) / 2;  // even: mean of the middle two
}
double mean_us(const std::vector<double>& samples) {
  if (samples.empty()) return 0.0;
  return std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
}

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
    run.result("y", y);  // the harness checks y against the exercise's own numbers
    run.say("GEMM durations: " + run.gemm_summary());
    const std::vector<double> samples = run.gemm_samples_us();
    run.answer("median_us", median_us(samples));
    run.answer("mean_us", mean_us(samples));
    run.say("median " + std::to_string(median_us(samples)) + " us, mean " + std::to_string(mean_us(samples)) +
            " us");
  });
}
