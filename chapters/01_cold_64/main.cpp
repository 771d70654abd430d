// Chapter 01 — a cold 64x64 matmul + add, profiled.
//
//   build/bin/01_cold_64                      the default run: schedule 1,1,3, nothing before it
//   build/bin/01_cold_64 --experiment cold    schedule 0,0,3: the process's first calls recorded
//
// The smallest workload that still shows every layer: y = add(matmul(x, w), b) under a
// "matmul_add" annotation. Nothing runs before the profiler, but the schedule's wait and warmup
// steps run the workload twice before the window opens: the one-time work of a first call
// (module loading, cuBLAS set-up, the first GEMM's occupancy sizing) is done by then, and what
// still widens the first recorded step is the profiler's own start-up. `--experiment cold`
// records the very first calls instead. At 64x64 the GPU finishes each kernel in ~2 us while the
// CPU spends tens of us getting there: the run is overhead-bound. README.md walks through it.
#include <torch/types.h>  // tensors and their ops (torch/torch.h adds the nn/optim/data frontend)

#include "workbook/chapter.hpp"

int main(int argc, char** argv) {
  wb::Chapter ch{"01_cold_64", "Chapter 01: a cold 64x64 matmul + add, profiled"};
  ch.experiment("cold", "0,0,3", "the process's first calls inside the window (truly cold)");
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
