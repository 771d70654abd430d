// A learner's trick on exercise 01.1 (tests/test_exercises.cpp, "gaming"): the 16x add_ loop
// deleted, the table sorted by calls, and the new top op given as the answer. The checker must
// see that the workload did not run as the exercise specifies.
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex01_1_hot_loop", "Exercise 01.1: find the hot loop"};
  e.defaults().show_lessons = false;
  e.defaults().sort_by = "count";
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
    run.answer("most_called_op", "aten::resolve_conj");
  });
}
