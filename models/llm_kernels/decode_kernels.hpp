// The decode kernels (llm_kernels.hpp) on torch tensors, each beside its ATen equivalent, and a
// batch-1 decode step of llm::Model built from them (chapter 11, bench/bench_llm_decode).
//
// Each op runs the hand-written kernel where it can (this build compiled it, the tensors are bf16
// on a CUDA device) and otherwise its ATen equivalent: the same arithmetic, rounded the same way
// up to fp32 summation order, in several ATen kernels. kernels_unavailable() says why not.
#pragma once

#include <torch/types.h>

#include <memory>
#include <optional>
#include <string>

#include "llm.hpp"
#include "llm_kernels.hpp"

namespace llmk {

// "" when the hand-written kernels run on `device` for `dtype` in this build, else why not.
std::string kernels_unavailable(torch::Device device, torch::ScalarType dtype);

// y = epilogue(W . prologue(x)) into `y` (llm_kernels.hpp's gemv). x [k], W [n, k], y [n] or
// [n / 2] for SwiGLU. norm_w: RMSNorm's weight, or undefined. residual: AddResidual's term.
void gemv(const torch::Tensor& W, const torch::Tensor& x, torch::Tensor& y, const torch::Tensor& norm_w,
          double eps, Epilogue epi, const torch::Tensor& residual, const GemvConfig& cfg = {});
void gemv_aten(const torch::Tensor& W, const torch::Tensor& x, torch::Tensor& y, const torch::Tensor& norm_w,
               double eps, Epilogue epi, const torch::Tensor& residual);

// RoPE on q and k of qkv [(H + 2 KV) hd] at the position pos ([1] int64, on the device), q into
// q [H hd], k and v into cache row pos of k_cache, v_cache [1, KV, capacity, hd].
void rope_kv_write(const llm::Config& c, const torch::Tensor& qkv, const torch::Tensor& cos,
                   const torch::Tensor& sin_signed, const torch::Tensor& pos, torch::Tensor& q,
                   torch::Tensor& k_cache, torch::Tensor& v_cache);
void rope_kv_write_aten(const llm::Config& c, const torch::Tensor& qkv, const torch::Tensor& cos,
                        const torch::Tensor& sin_signed, const torch::Tensor& pos, torch::Tensor& q,
                        torch::Tensor& k_cache, torch::Tensor& v_cache);

// out [H hd] = attention of q [H hd] over cache rows 0..pos (masked: every shape static).
// workspace: attention_workspace() bytes, zeroed (the kernel keeps its counters at zero).
torch::Tensor attention_workspace(const llm::Config& c, int64_t capacity, torch::Device device);
void attention(const llm::Config& c, const torch::Tensor& q, const torch::Tensor& k_cache,
               const torch::Tensor& v_cache, const torch::Tensor& pos, torch::Tensor& out,
               torch::Tensor& workspace);
void attention_aten(const llm::Config& c, const torch::Tensor& q, const torch::Tensor& k_cache,
                    const torch::Tensor& v_cache, const torch::Tensor& pos, torch::Tensor& out);

// How much of the decode step runs on the hand-written kernels: each step adds to the last.
enum class Step {
  Gemv = 1,       // the five projections on the GEMV kernel (residual adds in its epilogue)
  Fused = 2,      // + RMSNorm in the GEMVs' prologue, SwiGLU in gate_up's epilogue, RoPE + KV write
  Attention = 3,  // + one-query split-K attention: the whole step on the hand-written kernels
  Overlap = 4,    // + each GEMV starts streaming its weights while the kernel before it finishes
                  //   (programmatic dependent launch): the gaps between kernels overlap
};
const char* step_name(Step s);

// One decode token of `model` at batch 1 on `cache` (preallocated, batch 1), built from the ops
// above at `step`. Static buffers: token [1, 1], pos [1] (on the device), logits [1, vocab]; a
// call of run() computes the logits, then the greedy next token into token and pos += 1, so it
// can be captured as a CUDA graph (capture()) and replayed per token.
class Decoder {
 public:
  Decoder(const llm::Model& model, llm::KvCache& cache, Step step);
  ~Decoder();
  void set(const torch::Tensor& token, int64_t pos);
  void set_token(const torch::Tensor& token);
  void run();      // eagerly: one token
  void capture();  // a CUDA graph of run() (CUDA only); then replay() is one token
  void replay();
  const torch::Tensor& logits() const { return logits_; }
  const torch::Tensor& token() const { return token_; }
  bool kernels() const { return kernels_; }  // the hand-written kernels run (else ATen equivalents)

 private:
  const llm::Model& model_;
  llm::KvCache& cache_;
  Step step_;
  bool kernels_;
  torch::Tensor token_, pos_, logits_, x_, h_, qkv_, q_, attn_, gu_, act_, ws_, arange_;
  std::shared_ptr<void> graph_;
};

}  // namespace llmk
