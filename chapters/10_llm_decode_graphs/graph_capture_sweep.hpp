// Chapter 10's harness around the lesson: its flags, the check that the graph computes what
// eager computes (teacher-forced logits), the unprofiled batch sweep, the napkin math printed
// with each report, and the graphs' capture.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "llm.hpp"
#include "llm_graph.hpp"
#include "workbook/chapter.hpp"

namespace wb10 {

// --config, --prompt, --compare-tokens and --batches, registered on the chapter's command line
// by the constructor (CLI11 writes into the members: neither copied nor moved).
struct Flags {
  explicit Flags(wb::Chapter& ch);
  Flags(const Flags&) = delete;
  Flags& operator=(const Flags&) = delete;
  std::string config = "auto";
  int64_t prompt = 512, compare_tokens = 16;
  std::string batches = "1,8,64";
};

constexpr int kTimed = 32;  // timed steps per batch size in the sweep

// --batches' list ("1,8,64"); throws wb::UsageError on anything but batch sizes in 1..1024.
std::vector<int64_t> parse_batches(const std::string& s);

// Device copy bandwidth (read + write bytes / time) of a 1 GiB copy: the bound's denominator.
double copy_bandwidth_gbps(torch::Device d);

// The logits of the same token sequence (teacher forcing), fl.compare_tokens of them after the
// prompt: chapter 09's eager step against the CUDA graph's replays (where no_graph is empty) or
// else the graph's step run eagerly. Says how close they are.
void compare_to_eager(wb::Run& run, const llm::Model& model, const llm::Config& cfg,
                      const torch::Tensor& prompt, int64_t batch, int64_t capacity, const Flags& fl,
                      const std::string& no_graph);

// Timed, unprofiled: first the device's copy bandwidth (on a GPU; 0 elsewhere), returned; then
// kTimed steps of eager, graph and graph_fused per batch size (on a GPU, each of `batches`;
// elsewhere `batch`, eager only), against the weight-read bound at that bandwidth.
double batch_sweep(wb::Run& run, llm::Model& model, const llm::Config& cfg, const Flags& fl,
                   const std::vector<int64_t>& batches, int64_t batch, int64_t capacity, double read_gb,
                   const std::string& no_graph);

// The model's name, parameters and the weight bytes a decode step reads.
std::string model_summary(const llm::Config& cfg, double read_gb);

// The report's napkin math: a step's weight bytes and, where measured (bw > 0), its time bound.
std::string napkin(const llm::Config& cfg, int64_t batch, double read_gb, double bw);

// The decode step captured as a CUDA graph on `kv` (fused: with Model::set_fused's ops), then
// the prompt prefilled and the graph set to continue from its last token.
std::unique_ptr<llm::DecodeGraph> capture(llm::Model& model, llm::KvCache& kv, const torch::Tensor& prompt,
                                          int64_t batch, int64_t prompt_len, bool fused);

// The graph and graph_fused variants, each captured on its own cache where the run wants it and
// a CUDA graph can run (no_graph empty); where it cannot, says that they are not run. Built in
// place (the graphs hold their caches by reference): neither copied nor moved.
struct Graphs {
  Graphs(wb::Run& run, llm::Model& model, const llm::Config& cfg, const torch::Tensor& prompt, int64_t batch,
         int64_t capacity, int64_t prompt_len, const std::string& no_graph);
  Graphs(const Graphs&) = delete;
  Graphs& operator=(const Graphs&) = delete;
  llm::KvCache kv_g, kv_f;
  std::unique_ptr<llm::DecodeGraph> graph, graph_fused;
};

}  // namespace wb10
