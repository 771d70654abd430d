// Exercise 01.2 -- name a region of the step: a solution.                   (chapter 01_cold_64)
//
// A scope: the Annotation's constructor opens the range, its destructor (at the closing brace)
// closes it. The table gets a "bias_add" row with one call per step; in the trace it sits
// inside matmul_add, next to aten::matmul, with aten::add under it.
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex01_2_named_region", "Exercise 01.2: name a region of the step"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t n = run.size();
    auto x = torch::randn({n, n}, run.options());
    auto w = torch::randn({n, n}, run.options());
    auto b = torch::randn({n, n}, run.options());
    torch::Tensor y;

    run.profile([&] {
      wb::Annotation a("matmul_add");
      auto xw = torch::matmul(x, w);
      {
        wb::Annotation bias("bias_add");  // record_function("bias_add")
        y = torch::add(xw, b);
      }
    });
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
