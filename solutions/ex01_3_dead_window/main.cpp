// Exercise 01.3 -- find the dead window: a solution.                        (chapter 01_cold_64)
//
// The schedule (wait 1, warmup 1, active 3) records steps 2, 3 and 4. In ProfilerStep#2, the
// first recorded one, matmul_add starts well before aten::matmul does (tens of us on a CPU or
// an H200; about 1-2 us in steps 3 and 4): the first recorded step also pays for the profiler
// getting going and, on a cold process, for one-time setup.
#include "exercise.hpp"

constexpr int kDeadWindowStep = 2;                      // the first recorded step
constexpr const char* kFirstOpAfterGap = "aten::matmul";  // matmul_add's first child

int main(int argc, char** argv) {
  ex::Exercise e{"ex01_3_dead_window", "Exercise 01.3: find the dead window"};
  e.defaults().show_lessons = false;  // the lesson report would give the answer away

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
    run.answer("dead_window_step", kDeadWindowStep);
    run.answer("first_op_after_gap", kFirstOpAfterGap);
  });
}
