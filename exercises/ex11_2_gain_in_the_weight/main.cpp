// Exercise 11.2 -- the norm's gain folded into the weight.         (chapter 11_llm_decode_kernels)
//
// Every projection after an RMSNorm reads x, normalises it, scales it by the norm's gain g, then
// multiplies by w. Chapter 11's fused step does the normalisation in the GEMV's prologue. The
// gain needs no op at all: w @ (g * h) = (w * g) @ h, and w * g can be computed once, before
// the first token, not every step. Take the gain's multiply out of the step, then count again.
//
//   build:  cmake --build build --target ex11_2_gain_in_the_weight
//   run:    build/bin/ex11_2_gain_in_the_weight
//   check:  build/bin/exercise check ex11.2    stuck?  build/bin/exercise hint ex11.2
#include <ATen/ops/linear.h>

#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex11_2_gain_in_the_weight", "Exercise 11.2: the norm's gain folded into the weight"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t dim = 512, out = 1536;
    const double eps = 1e-5;
    auto x = torch::randn({1, dim}, run.options());    // one token's residual stream
    auto g = torch::rand({dim}, run.options()) + 0.5;  // the RMSNorm's gain
    auto w = torch::randn({out, dim}, run.options());  // the projection's [out, in] weight
    // TODO(ex11.2): prepare the weight here, once.
    torch::Tensor y;
    auto step = [&] {
      wb::Annotation a("norm_gemv");
      const auto h = x * (x.pow(2).mean(-1, true) + eps).rsqrt();
      // TODO(ex11.2): no multiply by g in the step.
      y = at::linear(h * g, w);
    };
    for (int i = 0; i < 3; ++i) step();
    wb::synchronize_device();
    run.profile(step);
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
