// Exercise 01.3 -- find the dead window.                                    (chapter 01_cold_64)
//
// Chapter 01's program, unchanged. In one of the recorded steps, matmul_add starts and then
// nothing happens for a while before its first op begins: a dead window, time the step pays
// for work that is not the workload (setup the first time through). Find it in the trace:
//   1. Which step is it in? (the N of ProfilerStep#N)
//   2. Which op starts when the gap ends?
// Run the program, open out/ex01_3_dead_window/trace.json at https://ui.perfetto.dev (or
// look at timeline.svg next to it), and compare where matmul_add starts with where its first
// child starts, step by step.
//
// Your schedule, and so the steps your trace keeps, depend on your name (--student).
//
//   build:  cmake --build build --target ex01_3_dead_window
//   run:    build/bin/ex01_3_dead_window --student YOUR_NAME
//   check:  build/bin/exercise check ex01.3 --student YOUR_NAME    stuck?  build/bin/exercise hint ex01.3
#include "exercise.hpp"

// TODO(ex01.3): your answers, read from the trace.
constexpr int kDeadWindowStep = -1;           // N of the ProfilerStep#N with the longest gap
constexpr const char* kFirstOpAfterGap = "";  // the op that starts when the gap ends, e.g. "aten::something"

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
    run.result("y", y);  // the harness checks y against the exercise's own numbers
    run.answer("dead_window_step", kDeadWindowStep);
    run.answer("first_op_after_gap", kFirstOpAfterGap);
  });
}
