// Chapter 09's harness around the lesson: its flags, the napkin math printed with each report,
// and the unprofiled, timed generation printed before the profiled phases.
#pragma once

#include <cstdint>
#include <string>

#include "llm.hpp"
#include "workbook/chapter.hpp"

namespace wb09 {

struct Flags {
  std::string config = "auto";
  int64_t prompt = 512, new_tokens = 64;
};

// Registers --config, --prompt and --new-tokens on the chapter's command line, into `fl`.
void add_flags(wb::Chapter& ch, Flags& fl);

// The model's size, a prefill's FLOPs and a decode step's weight bytes, from the shapes.
std::string napkin(const llm::Config& c, int64_t batch, int64_t prompt, int dtype_bytes);

// The whole generation (prefill, then fl.new_tokens - 1 decoded tokens) after a warm-up, timed
// without the profiler; says the prefill's time and TFLOP/s and the decode's ms per token.
void time_generation(wb::Run& run, const llm::Model& model, const llm::Config& cfg,
                     const torch::Tensor& prompt, int64_t batch, int64_t capacity, const Flags& fl);

}  // namespace wb09
