// Exercise 03.2 -- one weight for the whole batch.                     (chapter 03_batched_bmm)
//
// Here every element of the batch is multiplied by the same weight matrix, yet w is stored
// eight times, as an (8, N, N) tensor, and aten::matmul calls aten::bmm. Pass the weight once,
// as an (N, N) matrix (the batch of x stays), and read the dispatch chain again: what does
// aten::matmul do with a batched x and a plain matrix w? The result y must not change.
//
//   build:  cmake --build build --target ex03_2_fold_into_mm
//   run:    build/bin/ex03_2_fold_into_mm      (the lesson report prints the dispatch chain)
//   check:  build/bin/exercise check ex03.2    stuck?  build/bin/exercise hint ex03.2
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex03_2_fold_into_mm", "Exercise 03.2: one weight for the whole batch"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t n = run.size();
    const int64_t batch = 8;
    auto x = torch::randn({batch, n, n}, run.options());
    auto w1 = torch::randn({n, n}, run.options());  // the one weight matrix
    auto b = torch::randn({batch, n, n}, run.options());
    // TODO(ex03.2): use w1 itself instead of eight copies of it.
    auto w = w1.expand({batch, n, n}).contiguous();
    torch::Tensor y;

    ex::Workload work;
    work.batch = batch;
    run.profile(
        [&] {
          wb::Annotation a("matmul_add");
          y = torch::add(torch::matmul(x, w), b);
        },
        work);
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
