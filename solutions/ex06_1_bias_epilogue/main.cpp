// Exercise 06.1 -- the bias rides in the epilogue: a solution.               (chapter 06_linear)
//
// This step computes a linear layer the long way: y = matmul(x, W^T) + b. That is two ops and,
// on a GPU, two kernels. nn.Linear does it in one op whose GEMM adds the bias as it writes each
// tile (its epilogue). Make the step one op, keep W^T a view, and read the trace: which op
// remains under linear_fwd, and how many kernels does a step launch?
//
//   build:  cmake --build build --target ex06_1_bias_epilogue
//   run:    build/bin/ex06_1_bias_epilogue
//   check:  build/bin/exercise check ex06.1    stuck?  build/bin/exercise hint ex06.1
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex06_1_bias_epilogue", "Exercise 06.1: the bias rides in the epilogue"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t rows = 1024, d_in = 32, d_out = 64;
    auto x = torch::randn({rows, d_in}, run.options());
    auto w = torch::randn({d_out, d_in}, run.options());  // nn.Linear's weight: [out, in]
    auto b = torch::randn({d_out}, run.options());
    torch::Tensor y;
    auto step = [&] {
      wb::Annotation a("linear_fwd");
      y = torch::addmm(b, x, w.t());  // b + x @ W^T: what nn::Linear calls; W^T stays a view
    };
    for (int i = 0; i < 3; ++i) step();
    wb::synchronize_device();
    run.profile(step);
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
