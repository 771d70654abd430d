// Exercise 03.1 -- add a batch axis.                                   (chapter 03_batched_bmm)
//
// aten::matmul is not a kernel: it looks at the shapes of its inputs and calls the op that fits.
// For two (N, N) matrices that is aten::mm. Give x, w and b a leading batch axis of 8 --
// shapes (8, N, N), eight independent products in one call -- and find in the table and in
// the trace which op aten::matmul calls then.
//
//   build:  cmake --build build --target ex03_1_batch_axis
//   run:    build/bin/ex03_1_batch_axis        (the lesson report prints the dispatch chain)
//   check:  build/bin/exercise check ex03.1    stuck?  build/bin/exercise hint ex03.1
#include "exercise.hpp"

int main(int argc, char** argv) {
  ex::Exercise e{"ex03_1_batch_axis", "Exercise 03.1: add a batch axis"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t n = run.size();
    // TODO(ex03.1): a batch of 8: x, w and b of shape (8, N, N), and tell the report about it.
    const int64_t batch = 1;
    auto x = torch::randn({n, n}, run.options());
    auto w = torch::randn({n, n}, run.options());
    auto b = torch::randn({n, n}, run.options());
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
