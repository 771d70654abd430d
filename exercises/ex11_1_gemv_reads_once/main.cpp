// Exercise 11.1 -- a GEMV reads its weights once.                  (chapter 11_llm_decode_kernels)
//
// At batch 1 every projection of the decoder is a GEMV: y[i] = sum over j of w[i][j] * x[j].
// Chapter 11's gemv_kernel runs that inner loop as each block streams its rows of w, so every
// weight byte is read once and nothing else is written. The step below writes the same loop as
// two tensor ops: a product the size of w, written and read back, then a sum. Make the step one
// op that reads w once, then count the ops (and on a GPU the kernels) again.
//
//   build:  cmake --build build --target ex11_1_gemv_reads_once
//   run:    build/bin/ex11_1_gemv_reads_once
//   check:  build/bin/exercise check ex11.1    stuck?  build/bin/exercise hint ex11.1
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex11_1_gemv_reads_once", "Exercise 11.1: a GEMV reads its weights once"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t n = 2048, k = 512;
    auto x = torch::randn({k}, run.options());     // one token's activations
    auto w = torch::randn({n, k}, run.options());  // nn.Linear's [out, in] weight
    torch::Tensor y;
    auto step = [&] {
      wb::Annotation a("gemv");
      // TODO(ex11.1): one op for the whole GEMV.
      y = (w * x).sum(-1);
    };
    for (int i = 0; i < 3; ++i) step();
    wb::synchronize_device();
    run.profile(step);
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
