// Chapter 05's four ways to compute y = x @ w + b, and how each is measured outside the
// profiler (CPU time per step, CUPTI launch census).
//
//   eager  add(matmul(x, w), b)                 two ops, two kernels
//   addmm  addmm(b, x, w)                       the rewrite Inductor does, by hand
//   aoti   an AOTInductor package (.pt2)        Inductor's generated code, loaded from C++
//   graph  one step captured in a CUDA graph    what torch.compile(mode="reduce-overhead") relies on
#pragma once

#include <torch/types.h>  // tensors and their ops (torch/torch.h adds the nn/optim/data frontend)

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "workbook/cupti_census.hpp"

namespace ch05 {

const std::vector<std::string>& variant_names();  // eager, addmm, aoti, graph (teaching order)

// What the build-time export script wrote next to the package (matmul_add.json).
struct AotiPackage {
  bool available = false;
  std::string reason;               // why not, when !available
  std::filesystem::path package;    // matmul_add.pt2
  std::string device, dtype;        // what it was compiled for: "cuda"/"cpu", "bfloat16"/"float32"
  std::string torch_version;
  std::string wrapper_in_package;   // path of the generated wrapper source inside the .pt2 (a zip)
  std::filesystem::path wrapper;    // the same source, extracted next to the package
  std::string generated_call;       // the wrapper's line that does the work
  int generated_line = 0;           // its line number in the wrapper
  double build_seconds = 0;
};
// Never throws: a missing or broken manifest gives available = false and the reason.
AotiPackage read_aoti_manifest(const std::filesystem::path& manifest);

struct Inputs {
  torch::Tensor x, w, b;
};

struct Variant {
  std::string name;
  std::string what;              // one line: what a step calls
  std::string unavailable;       // non-empty: why it cannot run here (then `step` is empty)
  std::function<void()> step;    // one iteration (no annotation, no profiler)
  std::shared_ptr<void> keep;    // loader / graph / output kept alive with the variant
};

struct VariantOptions {
  AotiPackage aoti;
  size_t aoti_runners = 1;  // AOTIModelPackageLoader's num_runners
};

// Builds a variant and warms it up (the graph is captured here). Errors become `unavailable`.
Variant make_variant(const std::string& name, const Inputs& in, const VariantOptions& opts);

// Median CPU time of one step without the profiler: up to `max_steps` steps or `budget_s`
// seconds (at least 3 steps). The GPU is synchronized before and after, never in between,
// so this is the time to enqueue a step -- unless the step itself waits.
struct Timing {
  double median_us = -1;
  int steps = 0;
};
Timing time_steps(const std::function<void()>& step, bool cuda, int max_steps = 200, double budget_s = 0.5);

// Counts the CUDA API calls of `steps` steps with the CUPTI census. Throws wb::CensusError
// (unavailable, or a conflict with another CUPTI subscriber such as Kineto).
std::vector<wb::ApiCounts> census_steps(const std::function<void()>& step, int steps, bool cuda);

}  // namespace ch05
