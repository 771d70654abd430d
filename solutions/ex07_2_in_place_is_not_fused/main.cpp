// Exercise 07.2 -- in place is not fused: a solution.                      (chapter 07_geglu_mlp)
//
// The pointwise stage of the GeGLU MLP, gelu_tanh(g) * u, allocates a new tensor for the
// product. Write the product into gelu's output instead (an in-place multiply), then read the
// trace: which op name changes, and does the number of pointwise kernels (and so the bytes that
// go through memory) change? Only fusion removes the round trip; in place saves an allocation.
//
//   build:  cmake --build build --target ex07_2_in_place_is_not_fused
//   run:    build/bin/ex07_2_in_place_is_not_fused
//   check:  build/bin/exercise check ex07.2    stuck?  build/bin/exercise hint ex07.2
#include <ATen/ops/gelu.h>

#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex07_2_in_place_is_not_fused", "Exercise 07.2: in place is not fused"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t tokens = 1024, hidden = 1024;
    auto g = torch::randn({tokens, hidden}, run.options());
    auto u = torch::randn({tokens, hidden}, run.options());
    torch::Tensor y;
    auto step = [&] {
      wb::Annotation a("mlp_fwd");
      y = torch::gelu(g, "tanh");
      y.mul_(u);  // aten::mul_: no new tensor, but still its own kernel reading h back from memory
    };
    for (int i = 0; i < 3; ++i) step();
    wb::synchronize_device();
    run.profile(step);
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
