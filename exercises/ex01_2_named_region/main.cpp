// Exercise 01.2 -- name a region of the step.                               (chapter 01_cold_64)
//
// record_function (wb::Annotation here) gives a piece of code a name. The name becomes a row of
// the table, a bar on the CPU lane of the trace -- and, on a GPU, a bar over the kernels that
// piece of code launched. Chapter 01 names the whole step "matmul_add". Give the add its own
// name, "bias_add", so the table shows how much of the step the add takes.
//
//   build:  cmake --build build --target ex01_2_named_region
//   run:    build/bin/ex01_2_named_region      (outputs in out/ex01_2_named_region/)
//   check:  build/bin/exercise check ex01.2    stuck?  build/bin/exercise hint ex01.2
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
      // TODO(ex01.2): a range named "bias_add" around the add, and around nothing else.
      y = torch::add(xw, b);
    });
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
