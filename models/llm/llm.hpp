// A Llama-style decoder in LibTorch C++, for chapters 09 and 10 (and bench/bench_llm_decode).
//
//   token embedding
//   N x [ RMSNorm -> fused QKV projection -> RoPE -> KV cache write -> causal SDPA with grouped
//         KV heads (enable_gqa) -> output projection -> residual add
//         RMSNorm -> SwiGLU MLP (chapter 07's gated MLP, silu for gelu; gate and up in one
//         fused weight) -> residual add ]
//   final RMSNorm -> LM head -> greedy argmax
//
// The weights are random (bf16 on a GPU, from a fixed seed): nothing is downloaded. A profile
// does not need real weights: the kernels, their shapes, the bytes each reads and the launches
// depend only on the shapes, never on the values. (The tokens it generates are meaningless,
// and greedy choices on near-flat logits are fragile: compare logits, not tokens.)
//
// Everything here is plain tensor ops, as a Python Llama block writes them (no fused kernels):
// the small kernels they launch are what chapter 10 counts and then removes.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace llm {

struct Config {
  std::string name;
  int64_t dim = 0, layers = 0, heads = 0, kv_heads = 0, mlp = 0, vocab = 0;
  double rope_theta = 10000.0, eps = 1e-5;
  int64_t head_dim() const { return dim / heads; }
  int64_t qkv_out() const { return (heads + 2 * kv_heads) * head_dim(); }
};

// "tiny" (CPU, CI) and "1b" (TinyLlama-1.1B's published shape). Throws std::invalid_argument
// naming the known configurations.
Config config(const std::string& name);
const std::vector<std::string>& config_names();

// Parameters of every weight (embedding, layers, final norm, LM head; untied).
int64_t parameters(const Config& c);
// The parameters one decode step reads: all but the embedding (one row of it is gathered).
int64_t parameters_read_per_token(const Config& c);
// FLOPs of one prefill of `tokens` tokens per layer (the GEMMs, 2*m*k*n, plus attention's two
// products, causal: half of 4*T*T*dim) and for the whole model (layers + the LM head on the
// last token).
double prefill_flop_per_layer(const Config& c, int64_t tokens);

struct Layer {
  torch::Tensor attn_norm, wqkv, wo, mlp_norm, w_gate_up, w_down;
};

// The KV cache. Preallocated (static): [batch, kv_heads, capacity, head_dim] per layer, written
// with index_copy_ at the token's position. Growing: starts empty and every token appends
// itself with torch::cat (a new, longer tensor and a copy of everything so far, every token).
struct KvCache {
  std::vector<torch::Tensor> k, v;
  int64_t capacity = 0;
  bool growing = false;
  static KvCache preallocated(const Config& c, int64_t batch, int64_t capacity, torch::TensorOptions o);
  static KvCache grown_by_cat(const Config& c, int64_t batch, torch::TensorOptions o);
  int64_t bytes() const;
};

// How decode attends to the cache.
enum class Attn {
  Sliced,  // eager: SDPA over cache[:, :, :pos+1] (the length is a host integer)
  Masked,  // graph-safe: SDPA over the whole cache with a mask (pos <= position), every shape static
};

class Model {
 public:
  // Random weights: normal(0, 1/sqrt(fan_in)) for the projections, normal(0, 1) for the
  // embedding, ones for the norms. `capacity`: the longest sequence (RoPE's tables).
  Model(const Config& c, torch::TensorOptions o, uint64_t seed, int64_t capacity);

  // Chapter 10's first fusion step, for every forward after the call: RMSNorm as one op
  // (at::rms_norm: one fused kernel on a GPU instead of eight), RoPE on q and k together (one
  // set of four kernels instead of two), and the residual adds in the GEMMs' epilogues
  // (in-place addmm_ on the residual stream). The same arithmetic up to rounding.
  void set_fused(bool on) { fused_ = on; }
  bool fused() const { return fused_; }

  const Config& config() const { return cfg_; }
  torch::TensorOptions options() const { return opts_; }
  int64_t capacity() const { return capacity_; }
  int64_t weight_bytes() const;  // every weight tensor's bytes

  // Prefill: tokens [B, T] at positions 0..T-1 into the cache (which must be fresh), causal
  // SDPA over the prompt. Returns the logits of the last position [B, vocab].
  torch::Tensor prefill(const torch::Tensor& tokens, KvCache& cache) const;
  // Decode one token [B, 1] at host position `pos` (eager: Sliced attention on a static cache,
  // or the growing cache's cat). Returns logits [B, vocab].
  torch::Tensor decode(const torch::Tensor& token, int64_t pos, KvCache& cache) const;
  // Decode one token [B, 1] at the position held in `pos` ([1] int64 on the device): Masked
  // attention, nothing read back to the host, every shape fixed: capturable in a CUDA graph.
  torch::Tensor decode_static(const torch::Tensor& token, const torch::Tensor& pos, KvCache& cache) const;

  // Greedy generation: prefill then `n` tokens, eager. Returns the generated tokens [B, n].
  torch::Tensor generate(const torch::Tensor& prompt, int64_t n, KvCache& cache) const;

 private:
  torch::Tensor forward(const torch::Tensor& tokens, const torch::Tensor& positions, int64_t host_len,
                        Attn attn, bool prefill, KvCache& cache) const;

  Config cfg_;
  torch::TensorOptions opts_;
  int64_t capacity_;
  bool fused_ = false;
  torch::Tensor embed_, final_norm_, lm_head_;
  std::vector<Layer> layers_;
  torch::Tensor cos_, sin_signed_;  // [capacity, head_dim]
  torch::Tensor arange_;            // [capacity] int64 on the device: positions without a copy
};

// A random prompt [batch, tokens] of token ids (CPU generator, fixed seed), on `device`.
torch::Tensor random_prompt(const Config& c, int64_t batch, int64_t tokens, uint64_t seed,
                            torch::Device device);

// Logits compared within a stated tolerance: the largest absolute difference relative to the
// largest absolute logit, and the cosine similarity of the flattened logits.
struct LogitsMatch {
  double max_abs_diff = 0, max_abs = 0, rel = 0, cosine = 0;
  double argmax_agree = 0;  // fraction of rows whose argmax is the same
};
LogitsMatch compare_logits(const torch::Tensor& a, const torch::Tensor& b);

}  // namespace llm
