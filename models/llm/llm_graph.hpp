// One decode step of llm::Model captured once as a CUDA graph and replayed per token
// (chapter 10, bench/bench_llm_decode, tests).
//
//   llm::DecodeGraph g(model, kv, batch);  // capture first: warm-up runs write cache row 0..
//   model.prefill(prompt, kv);              // ... which the prefill then overwrites
//   g.set(first_token, prompt_len);         // the token and its position into static buffers
//   for (...) g.replay();                   // one cudaGraphLaunch per token
//
// Everything the step needs lives in static tensors: the token [B, 1], the position [1] (on the
// device: nothing is read back to the host), the cache, the logits. The graph computes the
// logits with Masked attention (whole cache, mask pos <= position: every shape fixed), then
// writes the greedy next token into the token buffer and advances the position: a replay is a
// whole token, and the next replay continues.
#pragma once

#include <memory>
#include <string>

#include "llm.hpp"

namespace llm {

class DecodeGraph {
 public:
  // "" when a graph can be captured on `device` in this build, else why not.
  static std::string unavailable(torch::Device device);
  // Captures model.decode_static on `cache` (preallocated, on the GPU). Throws
  // std::runtime_error with unavailable()'s reason where it cannot.
  DecodeGraph(const Model& model, KvCache& cache, int64_t batch);
  ~DecodeGraph();

  void set(const torch::Tensor& token, int64_t pos);       // copies into the static buffers
  void set_token(const torch::Tensor& token);              // the token only (teacher forcing)
  void replay();                                           // one token
  const torch::Tensor& logits() const { return logits_; }  // [B, vocab] of the last replay
  const torch::Tensor& token() const { return token_; }    // [B, 1]: the greedy next token

 private:
  std::shared_ptr<void> graph_;  // at::cuda::CUDAGraph (kept out of this header)
  torch::Tensor token_, pos_, logits_;
};

}  // namespace llm
