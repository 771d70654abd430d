// Exercise 03.1 -- add a batch axis: a solution.                       (chapter 03_batched_bmm)
//
// With (8, N, N) inputs aten::matmul expands and reshapes both operands and calls aten::bmm,
// one batched GEMM for all eight products, then views the result back (aten::_unsafe_view).
// On a GPU that is still one kernel launch, with 8x the thread blocks (H200: grid [4,16,1]
// instead of [4,2,1] at N = 64).
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex03_1_batch_axis", "Exercise 03.1: add a batch axis"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t n = run.size();
    const int64_t batch = 8;
    auto x = torch::randn({batch, n, n}, run.options());
    auto w = torch::randn({batch, n, n}, run.options());
    auto b = torch::randn({batch, n, n}, run.options());
    torch::Tensor y;

    ex::Workload work;
    work.batch = batch;  // napkin math and throughput count every matrix of the batch
    run.profile(
        [&] {
          wb::Annotation a("matmul_add");
          y = torch::add(torch::matmul(x, w), b);
        },
        work);
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
