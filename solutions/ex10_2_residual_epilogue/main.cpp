// Solution to exercise 10.2 -- the residual in the GEMM's epilogue. (chapter 10_llm_decode_graphs)
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex10_2_residual_epilogue", "Exercise 10.2: the residual in the GEMM's epilogue"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t tokens = 8, dim = 512;
    auto x = torch::randn({tokens, dim}, run.options());
    auto a = torch::randn({tokens, dim}, run.options());
    auto w = torch::randn({dim, dim}, run.options());
    torch::Tensor y;
    auto step = [&] {
      wb::Annotation a_("residual");
      y = torch::addmm(x, a, w.t());  // x + a @ w^T, the add in the GEMM's epilogue
    };
    for (int i = 0; i < 3; ++i) step();
    wb::synchronize_device();
    run.profile(step);
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
