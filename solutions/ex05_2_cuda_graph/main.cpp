// Exercise 05.2 -- one launch per step, a CUDA graph: a solution.  (chapter 05_compiled_addmm; GPU)
//
// Capture must happen on a side stream (not the legacy default stream), and everything done
// only once -- cuBLAS handle, workspace, heuristics -- must happen before it, hence the warm-up
// calls on that stream. During capture the ops run nothing: they record their kernels into the
// graph, with the tensors' memory baked in (x, w, b and y must stay alive and in place).
// Each profiled step is then one cudaGraphLaunch on the CPU lane; the GEMM and the add kernels
// still appear on the GPU lane, linked to that one call.
#include "exercise.hpp"

#include <memory>
#include <stdexcept>

#ifdef WORKBOOK_WITH_CUDA  // LibTorch with CUDA: the graph API and streams
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

int main(int argc, char** argv) {
  ex::Exercise e{"ex05_2_cuda_graph", "Exercise 05.2: one launch per step, a CUDA graph"};

  return e.main(argc, argv, [](ex::Run& run) {
    run.require_cuda("capturing a CUDA graph");
#ifdef WORKBOOK_WITH_CUDA
    const int64_t n = run.size();
    auto x = torch::randn({n, n}, run.options());
    auto w = torch::randn({n, n}, run.options());
    auto b = torch::randn({n, n}, run.options());
    torch::Tensor y;

    auto graph = std::make_unique<at::cuda::CUDAGraph>();
    {
      c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
      c10::cuda::CUDAStreamGuard guard(side);  // the ops below go to `side`
      for (int i = 0; i < 3; ++i)
        y = torch::add(torch::matmul(x, w), b);  // one-time setup, outside the capture
      side.synchronize();
      graph->capture_begin();
      y = torch::add(torch::matmul(x, w), b);  // recorded into the graph, not run
      graph->capture_end();
    }
    graph->replay();  // once unprofiled, like any warm-up
    wb::synchronize_device();

    run.profile([&] {
      wb::Annotation a("matmul_add");
      graph->replay();  // the whole step: one launch call
    });
    run.result("y", y);  // the harness checks y against the exercise's own numbers
#else
    throw std::runtime_error("this LibTorch was built without CUDA: no CUDA graphs");
#endif
  });
}
