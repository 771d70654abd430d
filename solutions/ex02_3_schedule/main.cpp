// Exercise 02.3 -- choose the steps the profiler keeps: a solution.         (chapter 02_warmup)
//
// To keep steps first .. first+count-1 after one warmup step: steps 0 .. first-2 wait, step
// first-1 warms up, then count active steps. For 3..7: W = 2, WU = 1, A = 5 (8 steps in all).
#include "exercise.hpp"

#include <string>

std::string my_schedule(int64_t first, int64_t count) {
  return std::to_string(first - 1) + ",1," + std::to_string(count);  // wait, warmup, active
}

int main(int argc, char** argv) {
  ex::Exercise e{"ex02_3_schedule", "Exercise 02.3: choose the steps the profiler keeps"};
  e.defaults().schedule_for_steps = my_schedule;

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t n = run.size();
    auto x = torch::randn({n, n}, run.options());
    auto w = torch::randn({n, n}, run.options());
    auto b = torch::randn({n, n}, run.options());
    torch::Tensor y;

    run.profile([&] {
      wb::Annotation a("matmul_add");
      y = torch::add(torch::matmul(x, w), b);
    });
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
