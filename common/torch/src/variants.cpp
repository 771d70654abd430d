#include "workbook/variants.hpp"

#include <CLI/CLI.hpp>  // the chapter's flags (Chapter::app)

#include <algorithm>
#include <chrono>

#ifdef WORKBOOK_WITH_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include "workbook/profiler.hpp"
#include "workbook/stats.hpp"

namespace fs = std::filesystem;

namespace wb {

namespace {

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

Variant unavailable(const std::string& name, std::string why) {
  Variant v;
  v.name = name;
  v.unavailable = std::move(why);
  return v;
}

void warm_up(const Variant& v) {
  for (int i = 0; i < 3; ++i) v.step();  // cuBLAS handle, heuristics, lazy loading: not ours to measure here
  synchronize_device();
}

}  // namespace

Variant step_variant(const std::string& name, const std::string& what, std::function<void()> step) {
  Variant v;
  v.name = name;
  v.what = what;
  v.step = std::move(step);
  try {
    warm_up(v);
  } catch (const c10::Error& e) {
    return unavailable(name, first_line(e.what_without_backtrace()));
  }
  return v;
}

Variant cuda_graph_variant(const std::string& name, const std::string& what, std::function<void()> body,
                           bool cuda) {
  if (!cuda) return unavailable(name, "not applicable on CPU: CUDA graphs need a CUDA device");
#ifdef WORKBOOK_WITH_CUDA
  try {
    auto graph = std::make_shared<at::cuda::CUDAGraph>();
    synchronize_device();  // the inputs were made on the default stream; capture uses another
    {
      // Capture must happen on a side stream. Run the step there first so that everything done
      // once (cuBLAS handle, workspace, heuristics) happens outside the capture.
      c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
      c10::cuda::CUDAStreamGuard guard(side);
      for (int i = 0; i < 3; ++i) body();
      side.synchronize();
      graph->capture_begin();
      body();  // recorded, not run
      graph->capture_end();
    }
    Variant v;
    v.name = name;
    v.what = "CUDAGraph::replay() of " + what;
    v.step = [graph] { graph->replay(); };
    v.keep = graph;
    warm_up(v);
    return v;
  } catch (const c10::Error& e) {
    return unavailable(name, first_line(e.what_without_backtrace()));
  }
#else
  (void)what;
  (void)body;
  return unavailable(name, "this build has no CUDA support in LibTorch");
#endif
}

Variant aoti_variant(const std::string& name, const AotiPackage& pkg,
                     const std::vector<torch::Tensor>& inputs, size_t runners) {
  auto model = std::make_shared<AotiModel>(pkg, runners);
  if (!model->usable_with(inputs)) return unavailable(name, model->why_not());
  auto out = std::make_shared<std::vector<torch::Tensor>>();
  Variant v;
  v.name = name;
  v.what = "AOTIModelPackageLoader::run({x, w, b}) on " + pkg.package.filename().string() + " (" +
           std::to_string(runners) + " runner" + (runners == 1 ? ")" : "s)");
  v.step = [model, out, inputs] { *out = model->run(inputs); };
  v.keep = model;
  v.generated_call = pkg.generated_call;
  try {
    warm_up(v);
  } catch (const c10::Error& e) {
    return unavailable(
        name, "running " + pkg.package.string() + " failed: " + first_line(e.what_without_backtrace()));
  } catch (const std::exception& e) {
    return unavailable(name, "running " + pkg.package.string() + " failed: " + first_line(e.what()));
  }
  return v;
}

Timing time_steps(const std::function<void()>& step, bool cuda, int max_steps, double budget_s) {
  using clock = std::chrono::steady_clock;
  if (cuda) synchronize_device();
  std::vector<double> us;
  const auto t0 = clock::now();
  while (static_cast<int>(us.size()) < max_steps) {
    const auto a = clock::now();
    step();
    const auto b = clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(b - a).count());
    if (us.size() >= 3 && std::chrono::duration<double>(b - t0).count() > budget_s) break;
  }
  if (cuda) synchronize_device();
  return {median(us), static_cast<int>(us.size())};
}

std::vector<ApiCounts> census_steps(const std::function<void()>& step, int steps, bool cuda) {
  if (cuda) synchronize_device();
  LaunchCensus census;  // throws CensusError: unavailable, or another subscriber (Kineto)
  census.discard();
  for (int i = 0; i < steps; ++i) {
    step();
    census.step();
  }
  auto out = census.steps();
  if (cuda) synchronize_device();
  return out;
}

// ---- the flags and the unprofiled measurements ----------------------------------------------

CensusFlags::CensusFlags(Chapter& ch, std::string manifest)
    : aoti_manifest(std::move(manifest)), chapter_(ch.name()) {
  ch.app()
      .add_option("--census", census,
                  "CUPTI launch census: before the profiler (works), after it (shows the conflict "
                  "with Kineto), only (no profiling), off")
      ->check(CLI::IsMember({"before", "after", "only", "off"}))
      ->capture_default_str();
  ch.app()
      .add_option("--aoti-manifest", aoti_manifest,
                  "the AOTI package's manifest, written by export_aoti.py at build time")
      ->capture_default_str();
}

namespace {
// The census of every profiled variant; a failure (no GPU, a conflict) is noted once, never
// miscounted.
void take_census(const Run& run, const std::vector<Variant>& vs, std::vector<VariantRun>& runs,
                 const char* when) {
  for (size_t i = 0; i < vs.size(); ++i) {
    if (!vs[i].profiled()) continue;  // runs[i] is vs[i]'s row
    try {
      const auto steps = census_steps(vs[i].step, 10, run.on_cuda());
      runs[i].census = census_step(steps);
      runs[i].census_steps = static_cast<int>(steps.size());
    } catch (const CensusError& e) {
      for (auto& r : runs) r.census_note = e.what();
      run.say(std::string("Launch census (") + when + "): " + e.what() + "\n");
      return;
    }
  }
}
}  // namespace

std::vector<VariantRun> CensusFlags::measure(const Run& run, const std::vector<Variant>& vs) const {
  std::vector<VariantRun> runs;
  for (const Variant& v : vs) {
    run.refuse(v.name, v.unavailable);  // asked for by name and cannot run here: a usage error
    VariantRun r;
    r.name = v.name;
    r.unavailable = v.unavailable;
    r.generated_call = v.generated_call;
    if (v.unavailable.empty()) {
      const Timing t = time_steps(v.step, run.on_cuda());
      r.cpu_us = t.median_us;
      r.timed_steps = t.steps;
      if (!v.timed_only) run.say(v.name + ": " + v.what);
    } else {
      run.say(v.name + ": unavailable: " + v.unavailable);
    }
    runs.push_back(std::move(r));
  }
  if (census == "before" || census == "only") take_census(run, vs, runs, "before profiling");
  if (census == "off")
    for (auto& r : runs) r.census_note = "the census was turned off (--census off)";
  return runs;
}

void CensusFlags::after(const Run& run, const std::vector<Variant>& vs, std::vector<VariantRun>& runs) const {
  if (census == "after") take_census(run, vs, runs, "after profiling");
}

}  // namespace wb
