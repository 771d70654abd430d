// Exercise 07.1 -- gate and up in one GEMM: a solution.                     (chapter 07_geglu_mlp)
//
// The GeGLU MLP multiplies the same x by two weights, gate and up. Two GEMMs read x twice and
// launch twice. Stack the two weights into one [2*hidden, dim] weight once, before the loop,
// run one GEMM per step and split its output into g and u (views: no copy). Guess first: how
// many kernels per step will remain? Then look.
//
//   build:  cmake --build build --target ex07_1_gate_up_together
//   run:    build/bin/ex07_1_gate_up_together
//   check:  build/bin/exercise check ex07.1    stuck?  build/bin/exercise hint ex07.1
#include <ATen/ops/cat.h>
#include <ATen/ops/gelu.h>

#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex07_1_gate_up_together", "Exercise 07.1: gate and up in one GEMM"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t batch = 2, seq = 64, dim = 128, hidden = 512;  // small: runs anywhere
    auto x = torch::randn({batch, seq, dim}, run.options());
    auto w_gate = torch::randn({hidden, dim}, run.options());
    auto w_up = torch::randn({hidden, dim}, run.options());
    auto w_down = torch::randn({dim, hidden}, run.options());
    auto w_gate_up = torch::cat({w_gate, w_up});  // [2*hidden, dim], once
    torch::Tensor y;
    auto step = [&] {
      wb::Annotation a("mlp_fwd");
      auto gu = torch::matmul(x, w_gate_up.t());  // one GEMM: [batch, seq, 2*hidden]
      auto g = gu.narrow(-1, 0, hidden), u = gu.narrow(-1, hidden, hidden);  // views
      y = torch::matmul(torch::gelu(g, "tanh").mul(u), w_down.t());
    };
    for (int i = 0; i < 3; ++i) step();
    wb::synchronize_device();
    run.profile(step);
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
