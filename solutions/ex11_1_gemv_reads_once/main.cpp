// Solution to exercise 11.1 -- a GEMV reads its weights once.      (chapter 11_llm_decode_kernels)
#include <ATen/ops/mv.h>

#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex11_1_gemv_reads_once", "Exercise 11.1: a GEMV reads its weights once"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t n = 2048, k = 512;
    auto x = torch::randn({k}, run.options());
    auto w = torch::randn({n, k}, run.options());
    torch::Tensor y;
    auto step = [&] {
      wb::Annotation a("gemv");
      // A matrix times a vector is its own op: aten::mv reads each weight once and writes n
      // values, where w * x wrote (and sum read back) an n x k product first.
      y = at::mv(w, x);
    };
    for (int i = 0; i < 3; ++i) step();
    wb::synchronize_device();
    run.profile(step);
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
