// Solution to exercise 10.1 -- capture the decode step.       (chapter 10_llm_decode_graphs; GPU)
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
    run.require_cuda("capturing a CUDA graph");
#ifdef WORKBOOK_WITH_CUDA
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
    auto graph = std::make_unique<at::cuda::CUDAGraph>();
    {
      c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
      c10::cuda::CUDAStreamGuard guard(side);
      for (int i = 0; i < 3; ++i) body();  // cuBLAS setup outside the capture
      side.synchronize();
      graph->capture_begin();
      body();
      graph->capture_end();
    }
    graph->replay();
    wb::synchronize_device();
    run.profile([&] {
      wb::Annotation a("decode");
      graph->replay();
    });
    run.result("y", y);  // the harness checks y against the exercise's own numbers
#else
    throw std::runtime_error("this LibTorch was built without CUDA: no CUDA graphs");
#endif
  });
}
