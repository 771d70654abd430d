// Exercise 06.2 -- a view is free, a copy is not: a solution.                (chapter 06_linear)
//
// This step makes W^T contiguous before the product, as code "to be safe" often does. W^T is a
// view (aten::t: new strides, no data moved); .contiguous() turns it into a real copy, every
// step. Find the copy in the table (which ops does it add?) and on a GPU in the GPU lane, then
// remove it: the GEMM reads a transposed operand by itself (the T in its layout suffix).
//
//   build:  cmake --build build --target ex06_2_view_is_free
//   run:    build/bin/ex06_2_view_is_free
//   check:  build/bin/exercise check ex06.2    stuck?  build/bin/exercise hint ex06.2
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex06_2_view_is_free", "Exercise 06.2: a view is free, a copy is not"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t rows = 1024, d_in = 32, d_out = 64;
    auto x = torch::randn({rows, d_in}, run.options());
    auto w = torch::randn({d_out, d_in}, run.options());
    torch::Tensor y;
    auto step = [&] {
      wb::Annotation a("linear_fwd");
      auto wt = w.t();  // a view: strides swapped, no bytes moved; the GEMM reads it transposed
      y = torch::mm(x, wt);
    };
    for (int i = 0; i < 3; ++i) step();
    wb::synchronize_device();
    run.profile(step);
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
