// One workload computed several ways, each a "variant" with its own step. The chapter declares
// them (Chapter::variants adds --variant; Run::wants says which to build, Run::refuse refuses
// one asked for by name that cannot run here) and profiles each in its own loop, in sight.
// Chapter 05 also measures them without the profiler first (CensusFlags):
//
//   ch.variants({"eager", "addmm"}, "which variant to run");
//   wb::CensusFlags census(ch, manifest);        // --census, --aoti-manifest
//   ...
//   std::vector<wb::Variant> vs{wb::step_variant("eager", "add(matmul(x, w), b)", step), ...};
//   auto runs = census.measure(run, vs);         // unprofiled: CPU time per step, CUPTI census
//   for (each profiled variant) { the profiled loop; run.report(...) }
//   census.after(run, vs, runs);                 // --census after: the conflict with Kineto
//   return std::max(code, run.report_across(runs));  // the lessons across variants
//
// Everything unprofiled runs before the first profiler: Kineto keeps CUPTI's one subscriber
// slot once it has started, and a census after it can only report the conflict.
#pragma once

#include <torch/types.h>  // tensors and their ops

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "workbook/aoti.hpp"
#include "workbook/across.hpp"
#include "workbook/chapter.hpp"
#include "workbook/cupti_census.hpp"

namespace wb {

struct Variant {
  std::string name;
  std::string what;            // one line: what a step calls
  std::string unavailable;     // non-empty: why it cannot run here (then `step` is empty)
  std::function<void()> step;  // one iteration (no annotation, no profiler)
  std::shared_ptr<void> keep;  // loader / graph / output kept alive with the variant
  std::string generated_call;  // AOTI: the generated wrapper's line that does the work
  bool timed_only = false;     // timed without the profiler, never profiled or counted
  bool profiled() const { return unavailable.empty() && !timed_only; }
};

// A step as the chapter wrote it, not warmed up here (the profiler's schedule warms it up);
// a non-empty `unavailable` says why it cannot run here. `what` shows in the variant's banner.
inline Variant plain_variant(std::string name, std::function<void()> step, std::string what = "",
                             std::string unavailable = "") {
  Variant v;
  v.name = std::move(name);
  v.what = std::move(what);
  v.unavailable = std::move(unavailable);
  v.step = std::move(step);
  return v;
}

// A step as it is (eager code): warmed up (3 steps, then a device synchronize); a c10::Error
// makes it unavailable with the error's first line.
Variant step_variant(const std::string& name, const std::string& what, std::function<void()> step);

// `body` captured once into a CUDA graph (on a side stream, after 3 warm-up runs there); a step
// replays the graph. Unavailable on a CPU, or in a build without CUDA.
Variant cuda_graph_variant(const std::string& name, const std::string& what, std::function<void()> body,
                           bool cuda);

// The package (workbook/aoti.hpp: read_aoti_manifest) loaded as a wb::AotiModel with `runners`
// model instances; a step runs it on `inputs`. Unavailable (with the reason) when the package
// is missing, was compiled for another device, dtype or shape, or fails to load.
Variant aoti_variant(const std::string& name, const AotiPackage& pkg,
                     const std::vector<torch::Tensor>& inputs, size_t runners = 1);

// Median CPU time of one step without the profiler (wb::median): up to `max_steps` steps or
// `budget_s` seconds (at least 3 steps). The GPU is synchronized before and after, never in
// between, so this is the time to enqueue a step -- unless the step itself waits.
struct Timing {
  double median_us = -1;
  int steps = 0;
};
Timing time_steps(const std::function<void()>& step, bool cuda, int max_steps = 200, double budget_s = 0.5);

// Counts the CUDA API calls of `steps` steps with the CUPTI census. Throws wb::CensusError
// (unavailable, or a conflict with another CUPTI subscriber such as Kineto).
std::vector<ApiCounts> census_steps(const std::function<void()>& step, int steps, bool cuda);

// Chapter 05's flags for the unprofiled half of its protocol (the variants themselves are
// Chapter::variants').
class CensusFlags {
 public:
  // Adds --census (before|after|only|off) and --aoti-manifest (default `manifest`).
  CensusFlags(Chapter& ch, std::string manifest);

  bool profiles() const { return census != "only"; }  // --census only: no profiling
  // The manifest at --aoti-manifest (read_aoti_manifest; its build target is <chapter>_aoti).
  AotiPackage aoti_package() const { return read_aoti_manifest(aoti_manifest, chapter_ + "_aoti"); }

  // Times every available variant (one VariantRun per variant, in order; a variant asked for
  // by --variant that cannot run here is a UsageError: Run::refuse), then with --census
  // before|only counts each profiled variant's API calls.
  std::vector<VariantRun> measure(const Run& run, const std::vector<Variant>& vs) const;
  // --census after: the census once the profiler has run (it reports the conflict).
  void after(const Run& run, const std::vector<Variant>& vs, std::vector<VariantRun>& runs) const;

  std::string census = "before";
  std::filesystem::path aoti_manifest;

 private:
  std::string chapter_;
};

}  // namespace wb
