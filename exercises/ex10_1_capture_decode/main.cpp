// Exercise 10.1 -- capture the decode step.                   (chapter 10_llm_decode_graphs; GPU)
//
// A decode step of an LLM at batch 1 is a long run of small kernels on a [1, dim] row; this
// step stands in for one: a norm, a projection, a gate and a residual, a dozen launches for a
// few microseconds of GPU work each. Capture the step once in an at::cuda::CUDAGraph before
// profiling and replay it in the profiled step: one launch call per step, with every kernel
// still on the GPU lane.
//
//   build:  cmake --build build --target ex10_1_capture_decode
//   run:    build/bin/ex10_1_capture_decode        (on a GPU machine)
//   check:  build/bin/exercise check ex10.1    stuck?  build/bin/exercise hint ex10.1
#include <ATen/ops/linear.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/silu.h>

#include "exercise.hpp"

#ifdef WORKBOOK_WITH_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

int main(int argc, char** argv) {
  ex::Exercise e{"ex10_1_capture_decode", "Exercise 10.1: capture the decode step"};

  return e.main(argc, argv, [](ex::Run& run) {
    const int64_t dim = 2048;
    auto x = torch::randn({1, dim}, run.options());
    auto w = torch::randn({2 * dim, dim}, run.options()).mul_(0.02);
    auto down = torch::randn({dim, dim}, run.options()).mul_(0.02);
    torch::Tensor y;
    auto body = [&] {
      const auto h = x * torch::rsqrt(x.pow(2).mean(-1, true) + 1e-5);
      const auto gu = at::linear(h, w);
      y = x + at::linear(at::silu(gu.narrow(-1, 0, dim)) * gu.narrow(-1, dim, dim), down);
    };
    // TODO(ex10.1): capture body() once in a CUDA graph here, and replay it in the step.
    run.profile([&] {
      wb::Annotation a("decode");
      body();
    });
    run.result("y", y);  // the harness checks y against the exercise's own numbers
  });
}
