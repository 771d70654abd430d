// Chapter 07's three ways through the GeGLU MLP, on torch tensors.
#pragma once

#include <torch/types.h>

#include <string>

namespace wb07 {

// Why the hand-written kernel cannot run here ("" when it can): a build without CUDA, a CPU
// run, or a dtype other than bf16.
std::string handwritten_unavailable(const torch::Device& device, torch::ScalarType dtype);

// gelu_tanh(g) * u with the hand-written fused kernel, on the current CUDA stream. g and u: bf16,
// same shape, on the GPU. Throws std::runtime_error with the reason otherwise.
torch::Tensor geglu_fused(const torch::Tensor& g, const torch::Tensor& u);

}  // namespace wb07
