// Exercise 02.3 -- choose the steps the profiler keeps: a solution.         (chapter 02_warmup)
//
// Steps 0 and 1: wait. Step 2: warmup (recorded, thrown away). Steps 3..7: active, kept.
// So W = 2, WU = 1, A = 5, and the loop runs 8 steps.
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex02_3_schedule", "Exercise 02.3: choose the steps the profiler keeps"};
  e.defaults().schedule = "2,1,5";  // wait 0-1, warmup 2, keep 3-7

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
  });
}
