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
};

// The census's typical step counted as a Kineto trace would record it: kineto_visible on each
// step, then the per-class median over steps (median_step).
ClassCounts census_step(const std::vector<ApiCounts>& steps);

// Per step, from one variant's trace (medians over the profiled steps, wb::median; counts
// rounded down).
struct VariantSummary {
  std::string name;
  int steps = 0;
  double step_us = -1;           // ProfilerStep width (CPU, profiled)
  double gpu_us = -1;            // device busy time: kernels + copies + memsets; -1: no GPU lane
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
std::string side_by_side(const std::vector<VariantRun>& runs, const std::vector<VariantSummary>& sums);
// Napkin math for addmm's bias copy: bytes, traffic, and the measured rate vs the peak.
std::string memcpy_napkin(const std::vector<VariantSummary>& sums, const Problem& problem,
                          const std::string& device_name);
// comparison.txt: the table, the napkin math and the rendered lessons.
std::string render_across(const std::vector<VariantRun>& runs, const LessonsReport& lessons);

}  // namespace wb
