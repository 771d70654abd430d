// Exercise 05.2 -- one launch per step: a CUDA graph.        (chapter 05_compiled_addmm; GPU)
//
// At 64x64 the GPU finishes each kernel in a couple of microseconds while the CPU spends tens of
// microseconds launching it: every launch is overhead. A CUDA graph records a sequence of
// launches once and replays the whole sequence with a single call -- what
// torch.compile(mode="reduce-overhead") relies on. Capture the step in an at::cuda::CUDAGraph
// before profiling, and replay it in the profiled step: one launch call per step, and the
// GPU still runs the GEMM and the add.
//
//   build:  cmake --build build --target ex05_2_cuda_graph
//   run:    build/bin/ex05_2_cuda_graph        (on a GPU machine)
//   check:  build/bin/exercise check ex05.2    stuck?  build/bin/exercise hint ex05.2
#include "exercise.hpp"

#ifdef WORKBOOK_WITH_CUDA  // LibTorch with CUDA: the graph API and streams
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

int main(int argc, char** argv) {
  ex::Exercise e{"ex05_2_cuda_graph", "Exercise 05.2: one launch per step, a CUDA graph"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t n = run.size();
    auto x = torch::randn({n, n}, run.options());
    auto w = torch::randn({n, n}, run.options());
    auto b = torch::randn({n, n}, run.options());
    torch::Tensor y;

    // TODO(ex05.2): capture one step's work in a CUDA graph here (on a side stream, after a
    // few warm-up calls), then replay the graph in the profiled step instead of calling the ops.
    run.profile([&] {
      wb::Annotation a("matmul_add");
      y = torch::add(torch::matmul(x, w), b);
    });
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
