// Exercise 05.1 -- the compiler's rewrite, by hand.                 (chapter 05_compiled_addmm)
//
// torch.compile turns add(matmul(x, w), b) into a single op, addmm(b, x, w): "b + x @ w" in
// one call, which tells the GEMM to add b as it writes its result. Do the same rewrite by
// hand with torch::addmm, then read the trace: how many ops does matmul_add call now? And on
// a GPU, what does the GPU do before the GEMM kernel (look at the GPU lane, not only the
// table)?
//
//   build:  cmake --build build --target ex05_1_addmm
//   run:    build/bin/ex05_1_addmm
//   check:  build/bin/exercise check ex05.1    stuck?  build/bin/exercise hint ex05.1
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex05_1_addmm", "Exercise 05.1: the compiler's rewrite, by hand"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t n = run.size();
    auto x = torch::randn({n, n}, run.options());
    auto w = torch::randn({n, n}, run.options());
    auto b = torch::randn({n, n}, run.options());
    torch::Tensor y;
    auto step = [&] {
      wb::Annotation a("matmul_add");
      // TODO(ex05.1): one op instead of two: the same y with torch::addmm.
      y = torch::add(torch::matmul(x, w), b);
    };
    for (int i = 0; i < 3; ++i) step();
    wb::synchronize_device();
    run.profile(step);
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
