#include "llm_graph.hpp"

#include <stdexcept>

#ifdef WORKBOOK_WITH_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace llm {

std::string DecodeGraph::unavailable(torch::Device device) {
#ifdef WORKBOOK_WITH_CUDA
  if (!device.is_cuda()) return "CUDA graphs need a CUDA device (this run is on the CPU)";
  return "";
#else
  (void)device;
  return "this build's LibTorch has no CUDA: CUDA graphs need a CUDA device";
#endif
}

DecodeGraph::DecodeGraph(const Model& model, KvCache& cache, int64_t batch) {
  const std::string why = unavailable(model.options().device());
  if (!why.empty()) throw std::runtime_error(why);
#ifdef WORKBOOK_WITH_CUDA
  torch::NoGradGuard no_grad;
  const auto dev = model.options().device();
  token_ = torch::zeros({batch, 1}, torch::TensorOptions().dtype(torch::kLong).device(dev));
  pos_ = torch::zeros({1}, torch::TensorOptions().dtype(torch::kLong).device(dev));
  auto body = [&] {
    logits_ = model.decode_static(token_, pos_, cache);
    token_.copy_(logits_.argmax(-1, /*keepdim=*/true));
    pos_.add_(1);
  };
  auto graph = std::make_shared<at::cuda::CUDAGraph>();
  c10::cuda::device_synchronize();  // the weights and buffers were made on the default stream
  {
    // Capture runs on a side stream. Run the step there first, so that what happens once
    // (cuBLAS handles and workspaces, kernel choices) happens outside the capture.
    c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
    c10::cuda::CUDAStreamGuard guard(side);
    for (int i = 0; i < 3; ++i) {
      pos_.zero_();  // warm-up writes cache row 0 only; a prefill afterwards rewrites it
      body();
    }
    side.synchronize();
    pos_.zero_();
    graph->capture_begin();
    body();  // recorded, not run
    graph->capture_end();
    side.synchronize();
  }
  graph_ = graph;
#else
  (void)batch;
  (void)cache;
#endif
}

DecodeGraph::~DecodeGraph() = default;

void DecodeGraph::set_token(const torch::Tensor& token) { token_.copy_(token.view_as(token_)); }

void DecodeGraph::set(const torch::Tensor& token, int64_t pos) {
  set_token(token);
  pos_.fill_(pos);
}

void DecodeGraph::replay() {
#ifdef WORKBOOK_WITH_CUDA
  std::static_pointer_cast<at::cuda::CUDAGraph>(graph_)->replay();
#endif
}

}  // namespace llm
