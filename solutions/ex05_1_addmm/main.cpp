// Exercise 05.1 -- the compiler's rewrite, by hand: a solution.     (chapter 05_compiled_addmm)
//
// addmm(b, x, w) = 1 * b + 1 * (x @ w). matmul_add now calls one op, aten::addmm. But the GPU
// still does two things: addmm first copies b into the output (a "Memcpy DtoD" on the GPU lane,
// issued by a cudaMemcpyAsync inside aten::addmm), then runs a GEMM whose epilogue adds into
// that output (beta = 1; on an H200 its name has _badd_ where eager's has _bz_). One op fewer
// on the CPU; the same kernel count on the GPU. On a CPU the copy is the aten::copy_ under
// aten::addmm.
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex05_1_addmm", "Exercise 05.1: the compiler's rewrite, by hand"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t n = run.size();
    auto x = torch::randn({n, n}, run.options());
    auto w = torch::randn({n, n}, run.options());
    auto b = torch::randn({n, n}, run.options());
    torch::Tensor y;
    auto step = [&] {
      wb::Annotation a("matmul_add");
      y = torch::addmm(b, x, w);  // b + x @ w in one op
    };
    for (int i = 0; i < 3; ++i) step();
    wb::synchronize_device();
    run.profile(step);
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
