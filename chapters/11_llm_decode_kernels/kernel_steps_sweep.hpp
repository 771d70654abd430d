// Chapter 11's harness around the lesson: its flags, the teacher-forced logits check, the timed
// sweep of every variant against the weight-read bound, and the napkin math of each report.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "decode_kernels.hpp"
#include "llm.hpp"
#include "llm_graph.hpp"
#include "workbook/chapter.hpp"

namespace wb11 {

// --config and --prompt, --compare-tokens, registered on the chapter's command line.
struct Flags {
  explicit Flags(wb::Chapter& ch);
  Flags(const Flags&) = delete;
  Flags& operator=(const Flags&) = delete;
  std::string config = "auto";
  int64_t prompt = 512, compare_tokens = 16;
};

constexpr int kTimed = 64;  // timed tokens per variant in the sweep (the bench's 64 new tokens)

// One variant's token: chapter 10's fused graph, or a kernel step (llmk::Decoder) as a graph on
// a GPU, run eagerly on ATen equivalents elsewhere. Each on its own cache, prefilled, ready.
struct Variant {
  std::string name;
  std::function<void()> token;
  std::unique_ptr<llm::KvCache> kv;
  std::unique_ptr<llm::DecodeGraph> graph;
  std::unique_ptr<llmk::Decoder> decoder;
};
std::unique_ptr<Variant> make_variant(wb::Run& run, llm::Model& model, const torch::Tensor& prompt,
                                      int64_t capacity, const std::string& name);

// Teacher-forced logits: chapter 09's eager step against the final kernel step; says how close.
void compare_to_eager(wb::Run& run, llm::Model& model, const torch::Tensor& prompt, int64_t capacity,
                      const Flags& fl);

// The device copy bandwidth (GB/s, read + write; 0 on a CPU), then kTimed tokens of each wanted
// variant, ms per token against the bound. Returns the bandwidth.
double timed_sweep(wb::Run& run, llm::Model& model, const torch::Tensor& prompt, int64_t capacity,
                   double read_gb);

// A token's GEMVs in launch order, each labelled (qkv, o, gate_up, down per layer, then
// lm_head) with the bytes it moves: weights and x read, y written.
std::vector<std::pair<std::string, double>> gemv_bytes(const llm::Config& c, int64_t dtype_bytes);

// The model, the bytes a token reads, and per kernel the bytes and the time at the copy rate.
std::string napkin(const llm::Config& c, int64_t dtype_bytes, double read_gb, double bw);

}  // namespace wb11
