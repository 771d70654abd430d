#pragma once
// Pictures drawn from the recordings, like the figures quoted in the pages: `figures update`
// (and `generate`) writes each one atomically, `figures check` fails while the file differs from
// what its recording draws. A picture belongs to the page that shows it and is checked where that
// page exists under the root (a scratch root without the page holds none of it).
//
// The one picture so far: one token's GPU time per variant of chapter 11, by class
// (docs/img/ch11_token_time_h200.svg, from expected_output/h200/11_llm_decode_kernels).
#include <array>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "workbook/trace.hpp"

namespace wb::figures {

// Where a token's GPU time goes, by kernel name (the rules are in token_class_rule):
//   Gemv       the matrix products: cuBLAS / cuBLASLt (nvjet_*, *gemv*, *gemm*), their split-K
//              reduce (*splitKreduce*), the workbook's llmk gemv_kernel
//   Attention  the attention itself: cuDNN's fused SDPA kernel and its lean_reduction_kernel
//              (cudnn*), llmk's attention_kernel (*attention*, *sdpa*)
//   Other      every other kernel (norm, RoPE, the cache write, the mask, elementwise, argmax,
//              embedding) and the device copies and memsets
//   Gap        no work on the device between the step's first start and its last end
enum class TokenClass { Gemv, Attention, Other, Gap };
constexpr std::size_t kTokenClasses = 4;
TokenClass token_class(const Event& device_work);  // a kernel, copy or memset
std::string_view token_class_name(TokenClass c);   // as the legend says it
std::string_view token_class_rule(TokenClass c);   // the rule, in one line

// One variant's token: per class the median over the profiled steps of the time it covers, and
// the median span (first start to last end) of a step's device work. A step's work is
// device_work_per_step's (only work launched inside the window). Walking the work in start
// order, each piece is charged the time it adds to what is already covered (work that overlaps
// the one before it is charged only past its end) and the time before it starts, if any, is a
// gap: in every step the classes add up to its span exactly; their medians add up to the median
// span within the spread of the steps.
struct TokenBar {
  std::string variant;
  std::array<double, kTokenClasses> us{};  // indexed by TokenClass
  double span_us = 0;
  int steps = 0;  // profiled steps with device work
  double sum_us() const;
};
// Throws FigureError (figures.hpp) when no profiled step of the trace has device work.
TokenBar token_time(const Trace& trace, const std::string& variant);

// The picture: one horizontal stacked bar per variant, in the order given, its ms per token at
// its end, and the bound (ms per token) as a dashed line. `caption`: lines under the bars.
std::string token_time_svg(const std::vector<TokenBar>& bars, double bound_ms,
                           const std::vector<std::string>& caption);

// The pictures of the workbook, by their path relative to the root.
struct Picture {
  std::string file;  // "docs/img/ch11_token_time_h200.svg"
  std::string page;  // the page that shows it: checked and written only where this page exists
};
const std::vector<Picture>& pictures();
// What the recording draws for `file` (one of pictures()); throws FigureError (a missing
// recording, a trace without device work).
std::string draw_picture(const std::filesystem::path& root, const std::string& file);

}  // namespace wb::figures
