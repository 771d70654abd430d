#include "variants.hpp"

#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#ifdef WORKBOOK_WITH_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include "workbook/profiler.hpp"

namespace fs = std::filesystem;

namespace ch05 {

const std::vector<std::string>& variant_names() {
  static const std::vector<std::string> kNames{"eager", "addmm", "aoti", "graph"};
  return kNames;
}

AotiPackage read_aoti_manifest(const fs::path& manifest) {
  AotiPackage p;
  std::ifstream in(manifest);
  if (!in) {
    p.reason = "no AOTI package manifest at " + manifest.string() +
               " (build the target 05_compiled_addmm_aoti, which runs chapters/05_compiled_addmm/export_aoti.py)";
    return p;
  }
  try {
    const auto j = nlohmann::json::parse(in);
    p.available = j.value("available", false);
    p.reason = j.value("reason", std::string());
    p.package = j.value("package", std::string());
    p.device = j.value("device", std::string());
    p.dtype = j.value("dtype", std::string());
    p.torch_version = j.value("torch", std::string());
    p.wrapper_in_package = j.value("wrapper_in_package", std::string());
    p.wrapper = j.value("wrapper", std::string());
    p.generated_call = j.value("generated_call", std::string());
    p.generated_line = j.value("generated_line", 0);
    p.build_seconds = j.value("build_seconds", 0.0);
  } catch (const std::exception& e) {
    p.available = false;
    p.reason = manifest.string() + " is not a valid manifest: " + e.what();
    return p;
  }
  if (p.available && !fs::exists(p.package)) {
    p.available = false;
    p.reason = "the manifest names " + p.package.string() + ", which does not exist (rebuild 05_compiled_addmm_aoti)";
  }
  if (!p.available && p.reason.empty()) p.reason = "the export script reported no package";
  return p;
}

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
  wb::synchronize_device();
}

Variant make_aoti(const Inputs& in, const VariantOptions& o) {
  const AotiPackage& pkg = o.aoti;
  if (!pkg.available) return unavailable("aoti", pkg.reason);
  const std::string want_device = in.x.is_cuda() ? "cuda" : "cpu";
  if (pkg.device != want_device)
    return unavailable("aoti", "the package was compiled for " + pkg.device + " and this run is on " + want_device +
                                   " (rebuild with -DWORKBOOK_AOTI_DEVICE=" + want_device + ")");
  const torch::ScalarType want_dtype = pkg.dtype == "bfloat16" ? torch::kBFloat16
                                       : pkg.dtype == "float16" ? torch::kHalf
                                                                : torch::kFloat;
  if (in.x.scalar_type() != want_dtype)
    return unavailable("aoti", "the package was compiled for " + pkg.dtype + "; run with the matching --dtype");
  try {
    auto loader = std::make_shared<torch::inductor::AOTIModelPackageLoader>(
        pkg.package.string(), "model", /*run_single_threaded=*/false, o.aoti_runners);
    auto out = std::make_shared<std::vector<torch::Tensor>>();
    const std::vector<torch::Tensor> inputs{in.x, in.w, in.b};
    Variant v;
    v.name = "aoti";
    v.what = "AOTIModelPackageLoader::run({x, w, b}) on " + pkg.package.filename().string() + " (" +
             std::to_string(o.aoti_runners) + " runner" + (o.aoti_runners == 1 ? ")" : "s)");
    v.step = [loader, out, inputs] { *out = loader->run(inputs); };
    v.keep = std::make_shared<std::pair<decltype(loader), decltype(out)>>(loader, out);
    warm_up(v);
    return v;
  } catch (const c10::Error& e) {
    return unavailable("aoti", "loading " + pkg.package.string() + " failed: " + first_line(e.what_without_backtrace()));
  } catch (const std::exception& e) {
    return unavailable("aoti", "loading " + pkg.package.string() + " failed: " + first_line(e.what()));
  }
}

Variant make_graph(const Inputs& in) {
  if (!in.x.is_cuda()) return unavailable("graph", "not applicable on CPU: CUDA graphs need a CUDA device");
#ifdef WORKBOOK_WITH_CUDA
  struct State {
    at::cuda::CUDAGraph graph;
    torch::Tensor y;
  };
  auto st = std::make_shared<State>();
  wb::synchronize_device();  // the inputs were made on the default stream; capture uses another
  {
    // Capture must happen on a side stream. Run the step there first so that everything done
    // once (cuBLAS handle, workspace, heuristics) happens outside the capture.
    c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
    c10::cuda::CUDAStreamGuard guard(side);
    for (int i = 0; i < 3; ++i) st->y = torch::add(torch::matmul(in.x, in.w), in.b);
    side.synchronize();
    st->graph.capture_begin();
    st->y = torch::add(torch::matmul(in.x, in.w), in.b);  // recorded, not run
    st->graph.capture_end();
  }
  Variant v;
  v.name = "graph";
  v.what = "CUDAGraph::replay() of one captured add(matmul(x, w), b)";
  v.step = [st] { st->graph.replay(); };
  v.keep = st;
  warm_up(v);
  return v;
#else
  return unavailable("graph", "this build has no CUDA support in LibTorch");
#endif
}

}  // namespace

Variant make_variant(const std::string& name, const Inputs& in, const VariantOptions& opts) {
  try {
    if (name == "aoti") return make_aoti(in, opts);
    if (name == "graph") return make_graph(in);
    auto y = std::make_shared<torch::Tensor>();
    Variant v;
    v.name = name;
    v.keep = y;
    if (name == "eager") {
      v.what = "torch::add(torch::matmul(x, w), b)";
      v.step = [in, y] { *y = torch::add(torch::matmul(in.x, in.w), in.b); };
    } else if (name == "addmm") {
      v.what = "torch::addmm(b, x, w)  (= 1*b + 1*(x@w))";
      v.step = [in, y] { *y = torch::addmm(in.b, in.x, in.w); };
    } else {
      return unavailable(name, "unknown variant");
    }
    warm_up(v);
    return v;
  } catch (const c10::Error& e) {
    return unavailable(name, first_line(e.what_without_backtrace()));
  }
}

Timing time_steps(const std::function<void()>& step, bool cuda, int max_steps, double budget_s) {
  using clock = std::chrono::steady_clock;
  if (cuda) wb::synchronize_device();
  std::vector<double> us;
  const auto t0 = clock::now();
  while (static_cast<int>(us.size()) < max_steps) {
    const auto a = clock::now();
    step();
    const auto b = clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(b - a).count());
    if (us.size() >= 3 && std::chrono::duration<double>(b - t0).count() > budget_s) break;
  }
  if (cuda) wb::synchronize_device();
  std::sort(us.begin(), us.end());
  return {us[(us.size() - 1) / 2], static_cast<int>(us.size())};
}

std::vector<wb::ApiCounts> census_steps(const std::function<void()>& step, int steps, bool cuda) {
  if (cuda) wb::synchronize_device();
  wb::LaunchCensus census;  // throws CensusError: unavailable, or another subscriber (Kineto)
  census.discard();
  for (int i = 0; i < steps; ++i) {
    step();
    census.step();
  }
  auto out = census.steps();
  if (cuda) wb::synchronize_device();
  return out;
}

}  // namespace ch05
