// Exercise 03.2 -- one weight for the whole batch: a solution.         (chapter 03_batched_bmm)
//
// (8, N, N) @ (N, N): aten::matmul folds the batch into the rows -- it views x as one
// (8N, N) matrix (aten::reshape > aten::view), calls a single aten::mm, and views the result
// back as (8, N, N) (aten::_unsafe_view). No bmm, no copies of w; the same y.
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex03_2_fold_into_mm", "Exercise 03.2: one weight for the whole batch"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t n = run.size();
    const int64_t batch = 8;
    auto x = torch::randn({batch, n, n}, run.options());
    auto w1 = torch::randn({n, n}, run.options());  // the one weight matrix
    auto b = torch::randn({batch, n, n}, run.options());
    auto w = w1;  // (N, N): broadcast over the batch by matmul itself
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
