// Exercise 01.1 -- find the hot loop: a solution.                           (chapter 01_cold_64)
//
// Sorted by "# of Calls", the table starts with aten::add_: 16 calls per step, 48 in the three
// recorded steps, from the loop of in-place adds. (On a GPU, cudaLaunchKernel has even more
// calls -- one per add kernel -- but it is a CUDA runtime call, not an aten op.)
#include "exercise.hpp"

// The aten op with the most calls, as the table names it (the _ marks an in-place op).
constexpr const char* kMostCalledOp = "aten::add_";

int main(int argc, char** argv) {
  ex::Exercise e{"ex01_1_hot_loop", "Exercise 01.1: find the hot loop"};
  e.defaults().show_lessons = false;  // the lesson report would give the answer away
  e.defaults().sort_by = "count";     // the "# of Calls" column, most calls first

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t n = run.size();
    auto x = torch::randn({n, n}, run.options());
    auto w = torch::randn({n, n}, run.options());
    auto b = torch::randn({n, n}, run.options());
    torch::Tensor y;

    run.profile([&] {
      wb::Annotation a("matmul_add");
      y = torch::add(torch::matmul(x, w), b);
      for (int layer = 0; layer < 16; ++layer) y.add_(b);  // a small update per layer
    });
    run.result("y", y);  // the harness checks y against the exercise's own numbers
    run.answer("most_called_op", kMostCalledOp);
  });
}
