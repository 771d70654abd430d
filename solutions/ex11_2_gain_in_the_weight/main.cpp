// Solution to exercise 11.2 -- the norm's gain folded into the weight. (chapter 11_llm_decode_kernels)
#include <ATen/ops/linear.h>

#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex11_2_gain_in_the_weight", "Exercise 11.2: the norm's gain folded into the weight"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t dim = 512, out = 1536;
    const double eps = 1e-5;
    auto x = torch::randn({1, dim}, run.options());
    auto g = torch::rand({dim}, run.options()) + 0.5;
    auto w = torch::randn({out, dim}, run.options());
    // w @ (g * h) = (w * g) @ h: each column of w scaled by its gain, once, before any token.
    const auto wg = w * g;
    torch::Tensor y;
    auto step = [&] {
      wb::Annotation a("norm_gemv");
      const auto h = x * (x.pow(2).mean(-1, true) + eps).rsqrt();
      y = at::linear(h, wg);  // one multiply left in the step: the normalisation's
    };
    for (int i = 0; i < 3; ++i) step();
    wb::synchronize_device();
    run.profile(step);
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
