// Chapter 05 across its variants: what each variant's trace says per step, the lessons that
// need two variants side by side (did the ops collapse? did the launches halve? is the graph
// cheaper on the CPU?), and the tables. Torch-free: it reads traces, so the tests can feed it
// recorded or synthetic ones.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "workbook/cupti_census.hpp"
#include "workbook/lessons.hpp"
#include "workbook/trace.hpp"

namespace ch05 {

// One variant's run, as the comparison sees it.
struct VariantRun {
  std::string name;                  // eager | addmm | aoti | graph
  std::string unavailable;           // non-empty: why it did not run (nothing else is set)
  std::optional<wb::Trace> trace;    // its profiled steps, read back from out/<variant>/trace.json
  double cpu_us = -1;                // median CPU time per step without the profiler (-1: not timed)
  int timed_steps = 0;
  std::vector<wb::ApiCounts> census; // CUPTI calls per step (empty: no census)
  std::string census_note;           // why there is no census, when there is none
  std::string generated_call;        // aoti: the line of the generated wrapper that does the work
};

// Per step, from one variant's trace (medians over the profiled steps).
struct Summary {
  std::string name;
  int steps = 0;
  double step_us = -1;               // ProfilerStep width (CPU, profiled)
  double gpu_us = -1;                // device busy time: kernels + copies + memsets; -1: no GPU lane
  std::vector<std::string> ops;      // aten ops under the annotation, "aten::mm x1"
  int matmul = 0, mm = 0, add = 0, addmm = 0, aten_ops = 0;  // calls per step
  int kernels = 0;                   // kernels per step
  int dtod_before_gemm_steps = 0;    // steps whose GEMM is preceded by a Memcpy DtoD
  std::string gemm;                  // the GEMM kernel's name ("" if none)
  std::vector<std::string> sequence; // the last step's device work, in order
  double memcpy_us = -1;             // the DtoD copy's duration (median), -1: none
  int64_t memcpy_bytes = -1;
  wb::ClassCounts kineto;            // runtime/driver calls per step, by class
  int event_waits = 0;               // cudaEventQuery + cudaEventSynchronize per step
};

Summary summarize(const VariantRun& r, const std::string& annotation = "matmul_add");

// The lessons that compare variants, judged like every lesson (wb::apply_pattern), so they
// render and serialize the same way. A fact whose variants did not all run is not applicable.
wb::LessonsReport check_across(const std::vector<VariantRun>& runs, const wb::Problem& problem);

// The side-by-side table: per step CPU and GPU time, ops, launches (Kineto | census).
std::string side_by_side(const std::vector<VariantRun>& runs, const std::vector<Summary>& sums);

// Napkin math for addmm's bias copy: bytes, traffic, and the measured rate vs the peak.
std::string memcpy_napkin(const std::vector<Summary>& sums, const wb::Problem& problem,
                          const std::string& device_name);

}  // namespace ch05
