// Lessons across variants: one workload computed several ways (chapter 05: eager, addmm, an
// AOTInductor package, a CUDA graph), each profiled on its own, then compared side by side.
// Each comparison is a lesson fact judged by wb::apply_pattern, so it renders, serializes
// (comparison.txt / comparison.json), fails --check and is --compare'd like every lesson.
//
//   std::vector<wb::VariantRun> runs = ...;          // one per variant: its trace, timing, census
//   wb::LessonsReport r = wb::check_across(runs, problem);
//   std::cout << wb::render_across(runs, r);          // table, napkin math, the lessons
//
// Torch-free: the inputs are traces (recorded or live), CPU times and census counts, so the
// tests feed it recorded runs as well as live ones.
#pragma once

#include <memory>
#include <optional>
#include <string>
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

// The lessons that compare variants (chapter 05's comparison.json):
//   one_op            eager keeps matmul + mm + add; addmm is one op; the AOTI wrapper calls the
//                     addmm shim; a graph replay runs no aten op
//   launches          eager 2 launches; addmm/aoti 1 + a copy; graph 1 cudaGraphLaunch
//   same_gemm         addmm/aoti: a DtoD copy, then the same GEMM tile with a beta-add epilogue
//   cpu_per_step      a graph replay >= 4x cheaper than eager (N=64); the AOTI runner > addmm
//   aoti_waits        the AOTI runner queries/waits on its previous run every step
//   census_vs_kineto  the CUPTI census counts what the trace shows
// A condition about a variant that did not run is left out; a fact with nothing to judge is
// not applicable.
LessonsReport check_across(const std::vector<VariantRun>& runs, const Problem& problem,
                           const std::string& annotation = "matmul_add");

// The side-by-side table: per step CPU and GPU time, ops, launches (trace | census).
std::string side_by_side(const std::vector<VariantRun>& runs, const std::vector<VariantSummary>& sums);
// Napkin math for addmm's bias copy: bytes, traffic, and the measured rate vs the peak.
std::string memcpy_napkin(const std::vector<VariantSummary>& sums, const Problem& problem,
                          const std::string& device_name);
// comparison.txt: the table, the napkin math and the rendered lessons.
std::string render_across(const std::vector<VariantRun>& runs, const LessonsReport& lessons);

}  // namespace wb
