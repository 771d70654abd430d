// Lessons across variants: one workload computed several ways (chapter 05: eager, addmm, an
// AOTInductor package, a CUDA graph), each profiled on its own, then compared side by side.
// Each comparison is a lesson fact judged by wb::apply_pattern, so it renders, serializes
// (comparison.txt / comparison.json), fails --check and is --compare'd like every lesson.
//
//   std::vector<wb::VariantRun> runs = ...;          // one per variant: its trace, timing, census
//   wb::LessonsReport r = wb::check_across(*wb::find_across_spec(chapter), runs, problem);
//   std::cout << wb::render_across(runs, r);          // table, napkin math, the lessons
//
// Torch-free: the inputs are traces (recorded or live), CPU times and census counts, so the
// tests feed it recorded runs as well as live ones.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "workbook/cupti_census.hpp"
#include "workbook/lessons.hpp"
#include "workbook/trace.hpp"

namespace wb {

// One variant's run, as the comparison sees it.
struct VariantRun {
  std::string name;                    // eager | addmm | aoti | graph | "aoti x2" (timed only)
  std::string unavailable;             // non-empty: why it did not run (nothing else is set)
  std::shared_ptr<const Trace> trace;  // its profiled steps (null: not profiled)
  double cpu_us = -1;                  // median CPU time per step without the profiler (-1: not timed)
  int timed_steps = 0;
  std::optional<ClassCounts> census;  // the census's typical step, as Kineto sees it (census_step)
  int census_steps = 0;               // how many steps the census counted
  std::string census_note;            // why there is no census, when there is none
  std::string generated_call;         // aoti: the line of the generated wrapper that does the work
  double bytes_per_step = -1;         // bytes a step must read at least (-1: not given)
  double bandwidth_gbps = -1;         // the rate they can be read at, GB/s (-1: the device's peak)
  // The kernels one lesson times (kernel_rates): per step, in launch order, a label and the
  // bytes each moves ("qkv", 10.5e6), for the kernels whose name contains the lesson's variant.
  std::vector<std::pair<std::string, double>> kernel_bytes;
};

// The census's typical step counted as a Kineto trace would record it: kineto_visible on each
// step, then the per-class median over steps (median_step).
ClassCounts census_step(const std::vector<ApiCounts>& steps);

class TraceModel;

// Each profiled step's device work (kernels, copies, memsets), in start order; index k is
// m.steps()[k]. Work belongs to the step around its launch call. Work whose launch the trace
// does not hold was launched before the window (a warm-up step's graph replay still draining
// while the CPU runs ahead) and is no profiled step's; work with no correlation at all counts
// where it started. Every per-step GPU figure across variants reads this.
std::vector<std::vector<std::size_t>> device_work_per_step(const TraceModel& m);

// Per step, from one variant's trace (medians over the profiled steps, wb::median; counts
// rounded down).
struct VariantSummary {
  std::string name;
  int steps = 0;
  double step_us = -1;           // ProfilerStep width (CPU, profiled)
  double gpu_us = -1;            // device busy time: kernels + copies + memsets; -1: no GPU lane
  double gpu_span_us = -1;       // first start to last end of the step's device work; -1: none
  std::vector<std::string> ops;  // aten ops under the annotation, "aten::mm x1"
  int matmul = 0, mm = 0, add = 0, addmm = 0, aten_ops = 0;  // calls per step
  int kernels = 0;                                           // kernels per step
  int dtod_before_gemm_steps = 0;                            // steps whose GEMM is preceded by a Memcpy DtoD
  std::string gemm;                                          // the GEMM kernel's name ("" if none)
  std::vector<std::string> sequence;                         // the last step's device work, in order
  double memcpy_us = -1;                                     // the DtoD copy's duration (median), -1: none
  int64_t memcpy_bytes = -1;
  ClassCounts kineto;   // runtime/driver calls per step, by class
  int event_waits = 0;  // cudaEventQuery + cudaEventSynchronize per step
};
VariantSummary summarize_variant(const VariantRun& r, const std::string& annotation = "matmul_add");

// The lessons that compare variants, declared in the chapter's lessons.json ("across": its
// title and lessons, each a measurement below with the pattern it must match):
//   one_op            the aten ops each variant runs under the annotation (per variant)
//   launches          Kineto's launch, graph-launch, copy and memset calls per step (per variant)
//   same_gemm         kernels per step, a DtoD copy before the GEMM, the GEMM's name (per variant)
//   cpu_per_step      unprofiled CPU time per step, and the ratios "variants" names ("A/B")
//   gpu_per_step      GPU span per profiled step, % of the read bound (bytes_per_step at
//                     bandwidth_gbps), aten ops per step, and the span ratios "variants" names
//   kernel_rates      per label of kernel_bytes, the median GB/s of the kernels whose name
//                     contains "variants"' first entry, and its % of bandwidth_gbps
//   aoti_waits        the event queries and waits per step of the variant "variants" names
//   census_vs_kineto  whether the CUPTI census counts what the trace shows (per variant)
// A condition with "when" is judged only where the fact's data has every pointer it names (the
// variant ran); a fact with nothing to judge is not applicable.
struct AcrossCondition {
  Condition condition;
  std::vector<std::string> when;  // JSON pointers the fact's data must have
  std::string value_at;           // non-empty: the condition's value is the data's at this pointer
};
struct AcrossLesson {
  std::string fact;                   // one of the measurements above
  std::vector<std::string> variants;  // the measurement's parameters (see above)
  std::string text, why;
  std::vector<AcrossCondition> all;
};
struct AcrossSpec {
  std::string chapter;  // the folder whose lessons.json declares it
  std::string title;
  std::vector<AcrossLesson> lessons;
};
// The "across" object of chapters/NN_name/lessons.json; throws std::invalid_argument naming the
// file and field on a malformed one.
AcrossSpec parse_across_spec(const nlohmann::json& j, const std::string& source, const std::string& chapter);
// The compiled-in chapters' declarations; nullptr: the chapter declares no lessons across variants.
const AcrossSpec* find_across_spec(std::string_view chapter);

LessonsReport check_across(const AcrossSpec& spec, const std::vector<VariantRun>& runs,
                           const Problem& problem, const std::string& annotation = "matmul_add");

// The side-by-side table: per step CPU and GPU time, ops, launches (trace | census).
std::string side_by_side(const std::vector<VariantRun>& runs, const std::vector<VariantSummary>& sums,
                         const std::string& annotation = "matmul_add");
// Napkin math for addmm's bias copy: bytes, traffic, and the measured rate vs the peak.
std::string memcpy_napkin(const std::vector<VariantSummary>& sums, const Problem& problem,
                          const std::string& device_name);
// comparison.txt: a header naming the problem, the table, the napkin math and the rendered
// lessons. `problem` is what the runs computed, as the header says it ("1b, batch 1, 512-token
// prompt"); "": the N x N product of lessons.options.problem ("N=4096"), or no size at all
// when its n is 0.
std::string render_across(const std::vector<VariantRun>& runs, const LessonsReport& lessons,
                          const std::string& problem = "");

}  // namespace wb
