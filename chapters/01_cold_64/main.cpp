// Chapter 01 — a cold 64x64 matmul + add, profiled.
//
// The smallest workload that still shows every layer: y = add(matmul(x, w), b) under a
// "matmul_add" annotation, 5 steps with schedule wait=1, warmup=1, active=3.
// Nothing runs before the profiler: the first recorded step pays every one-time cost
// (cuBLAS handle and heuristics, lazy module loading), which is the lesson's "cold" part.
// At 64x64 the GPU finishes each kernel in ~2 us while the CPU spends tens of us getting
// there: the run is overhead-bound. README.md walks through the table and the trace.
#include <torch/types.h>  // tensors and their ops (torch/torch.h adds the nn/optim/data frontend)

#include "workbook/chapter.hpp"

int main(int argc, char** argv) {
  wb::Chapter ch{"01_cold_64", "Chapter 01: a cold 64x64 matmul + add, profiled"};
  return ch.main(argc, argv, [](wb::Run& run) {
    const int64_t n = run.size();
    torch::manual_seed(0);
    auto x = torch::randn({n, n}, run.options());
    auto w = torch::randn({n, n}, run.options());
    auto b = torch::randn({n, n}, run.options());
    torch::Tensor y;

    auto cycle = run.profile([&] {
      wb::Annotation a("matmul_add");  // record_function("matmul_add")
      y = torch::add(torch::matmul(x, w), b);
    });
    return run.exit_code(run.report(cycle));
  });
}
