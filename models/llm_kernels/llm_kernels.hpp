// Hand-written CUDA kernels for one-token (M = 1) decode of the Llama-style decoder in
// models/llm (llm.hpp), on raw device pointers: no torch headers here, so nvcc never compiles
// LibTorch. All tensors are bf16 and contiguous unless said otherwise; every function enqueues
// its kernel(s) on `stream` (a cudaStream_t) and returns "" or why it could not (a launch error
// or a shape or alignment it does not handle: the caller then runs the ATen equivalent).
//
//   gemv            y = W x, W [n, k] row-major (a torch Linear weight), x [k]: the weight-read
//                   kernel that decides decode's speed. fp32 accumulation, 16-byte loads, the
//                   k dimension split over the warps of one block (no separate reduce kernel).
//                   Optional prologue: x := rms_norm(x) * norm_w (each block normalises x itself,
//                   so the norm needs no kernel of its own). Optional epilogue: y += residual
//                   (the residual add), or SwiGLU (rows j and j + n of W: y[j] = silu(g) * u).
//   rope_kv_write   RoPE on q and k of the fused qkv vector, q to its buffer, k and v into the
//                   cache row at the device-side position.
//   attention       one query per head over the cache rows 0..pos (GQA: a group of query heads
//                   per kv head), split over the sequence in chunks (flash-decoding); the last
//                   block of each kv head to finish combines the chunks: one kernel.
//   embed, argmax_next  the token's embedding row; the greedy next token and position += 1.
#pragma once

#include <cstdint>
#include <string>

namespace llmk {

// Whether this build compiled the kernels (nvcc found at configure time).
bool compiled();

enum class Epilogue { Store, AddResidual, SwiGLU };

struct GemvConfig {
  int k_split = 0;       // warps of a block that share one output's k range (1, 2, 4, 8); 0: by shape
  int max_blocks = 0;    // grid cap (blocks loop over the outputs); 0: the blocks resident at once
  bool overlap = false;  // programmatic dependent launch: start streaming the weights while the
                         // previous kernel finishes (Hopper; the read of x waits for it)
};
// The k_split and grid chosen for a shape when the config says 0 (measured on the H200:
// bench/bench_llm_gemv).
GemvConfig gemv_default(int64_t n, int64_t k);

// y[n] (SwiGLU: y[n / 2], W has n rows) = epilogue(W[n, k] . prologue(x[k])).
// norm_w: nullptr or the RMSNorm weight [k] (with eps). residual: the AddResidual term [n]
// (may be y itself: the in-place residual stream).
std::string gemv(const void* W, const void* x, void* y, int64_t n, int64_t k, const void* norm_w, float eps,
                 Epilogue epi, const void* residual, void* stream, const GemvConfig& cfg = {});

// qkv [(H + 2 KV) * hd]; cos, sin_signed [capacity, hd] (sin_signed = [-sin, sin]); pos: one
// int64 on the device. Writes q [H * hd] (rotated), k_cache and v_cache [KV, capacity, hd]
// (batch 1) at row pos.
std::string rope_kv_write(const void* qkv, const void* cos, const void* sin_signed, const int64_t* pos,
                          void* q, void* k_cache, void* v_cache, int heads, int kv_heads, int head_dim,
                          int64_t capacity, void* stream);

// Workspace bytes attention() needs for this shape (zeroed once before first use).
int64_t attention_workspace_bytes(int heads, int kv_heads, int head_dim, int64_t capacity);
// out [H * hd] = softmax(q k^T * scale) v over cache rows 0..*pos, head_dim 64 only.
std::string attention(const void* q, const void* k_cache, const void* v_cache, const int64_t* pos, void* out,
                      int heads, int kv_heads, int head_dim, int64_t capacity, float scale, void* workspace,
                      void* stream);

// x [dim] = table[*token] (table [vocab, dim]).
std::string embed(const void* table, const int64_t* token, void* x, int64_t dim, void* stream);
// token = argmax(logits[vocab]) (first of equal maxima), *pos += 1.
std::string argmax_next(const void* logits, int64_t vocab, int64_t* token, int64_t* pos, void* stream);

}  // namespace llmk
