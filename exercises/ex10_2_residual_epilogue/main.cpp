// Exercise 10.2 -- the residual in the GEMM's epilogue.            (chapter 10_llm_decode_graphs)
//
// Every layer of chapter 09's decoder ends its attention and its MLP with a residual add:
// x + linear(a, w). That is a GEMM, then an add that reads the GEMM's output back: two ops,
// two kernels on a GPU. A GEMM can add a matrix to its product as it writes it (its epilogue),
// as chapter 06's bias rides in addmm. Fold the residual into the GEMM, then count again.
//
//   build:  cmake --build build --target ex10_2_residual_epilogue
//   run:    build/bin/ex10_2_residual_epilogue
//   check:  build/bin/exercise check ex10.2    stuck?  build/bin/exercise hint ex10.2
#include <ATen/ops/linear.h>

#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex10_2_residual_epilogue", "Exercise 10.2: the residual in the GEMM's epilogue"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t tokens = 8, dim = 512;
    auto x = torch::randn({tokens, dim}, run.options());  // the residual stream
    auto a = torch::randn({tokens, dim}, run.options());  // the attention's output
    auto w = torch::randn({dim, dim}, run.options());     // nn.Linear's [out, in] weight
    torch::Tensor y;
    auto step = [&] {
      wb::Annotation a_("residual");
      // TODO(ex10.2): one op for the projection and the residual add.
      y = x + at::linear(a, w);
    };
    for (int i = 0; i < 3; ++i) step();
    wb::synchronize_device();
    run.profile(step);
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
