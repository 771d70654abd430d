// Exercise 09.2 -- RMSNorm in one op.                              (chapter 09_llm_prefill_decode)
//
// Chapter 09's RMSNorm is written as plain tensor ops, the way Llama's reference code writes
// it: on a GPU each is its own small kernel, and the model runs it twice per layer. LibTorch
// has RMSNorm as one op. Call it instead (same input, weight and eps), then count the ops on
// the CPU lane and, on a GPU, the kernels per step.
//
//   build:  cmake --build build --target ex09_2_one_op_norm
//   run:    build/bin/ex09_2_one_op_norm
//   check:  build/bin/exercise check ex09.2    stuck?  build/bin/exercise hint ex09.2
#include <ATen/ops/mean.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/rsqrt.h>

#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex09_2_one_op_norm", "Exercise 09.2: RMSNorm in one op"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t dim = 2048;
    const double eps = 1e-5;
    auto x = torch::randn({1, 1, dim}, run.options());
    auto w = torch::ones({dim}, run.options());
    torch::Tensor y;
    auto step = [&] {
      wb::Annotation a("rms_norm");
      // TODO(ex09.2): one op instead of these.
      const auto xf = x.to(at::kFloat);
      y = (xf * torch::rsqrt(xf.pow(2).mean(-1, true) + eps)).to(x.scalar_type()) * w;
    };
    for (int i = 0; i < 3; ++i) step();
    wb::synchronize_device();
    run.profile(step);
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
