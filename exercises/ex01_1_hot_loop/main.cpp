// Exercise 01.1 -- find the hot loop.                                       (chapter 01_cold_64)
//
// Chapter 01's step with one thing added. A row of the table with many calls is a hot loop:
// each call costs the CPU a few microseconds, and they add up. Find it in the table.
//   1. Make the table list the ops with the most calls first.
//   2. Name the aten op with the most calls.
//
//   build:  cmake --build build --target ex01_1_hot_loop
//   run:    build/bin/ex01_1_hot_loop          (the table is printed and saved in out/ex01_1_hot_loop/)
//   check:  build/bin/exercise check ex01.1    stuck?  build/bin/exercise hint ex01.1
#include "exercise.hpp"

// TODO(ex01.1): the aten op with the most calls, spelled exactly as the table names it.
constexpr const char* kMostCalledOp = "";

int main(int argc, char** argv) {
  ex::Exercise e{"ex01_1_hot_loop", "Exercise 01.1: find the hot loop"};
  e.defaults().show_lessons = false;  // the lesson report would give the answer away
  // TODO(ex01.1): the order of the table. "" sorts by total time (CUDA total on a GPU, CPU total
  // on a CPU); `build/bin/ex01_1_hot_loop --help` lists the other orders (--sort-by).
  e.defaults().sort_by = "";

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
