// Chapter 05: the lessons across variants (workbook/across.hpp), on H200-shaped traces built
// here (each shown passing and failing), on the recorded H200 and CPU runs (recomputed: every
// verdict is the recorded one; each lesson fails on a swapped recording), live on the CPU
// (eager, addmm, the AOTI package; graph n/a), the chapter binary end to end, and on the GPU
// ([gpu]: skipped without one).
//   ctest --test-dir build -R test_05_compiled_addmm       build/tests/test_05_compiled_addmm "[gpu]"
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/types.h>
#include <torch/cuda.h>
#undef CHECK  // c10's glog-style CHECK would shadow Catch2's
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <filesystem>
#include <fstream>
#include <functional>

#include "chapter_runner.hpp"
#include "workbook/across.hpp"
#include "workbook/compare.hpp"
#include "workbook/profiler.hpp"
#include "workbook/trace_reader.hpp"
#include "workbook/variants.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;
using wb::Kind;
using wb::Status;

namespace {

// Chapter 05's lessons across variants, as its lessons.json declares them ("across").
wb::LessonsReport across05(const std::vector<wb::VariantRun>& runs, const wb::Problem& problem) {
  const wb::AcrossSpec* spec = wb::find_across_spec("05_compiled_addmm");
  REQUIRE(spec != nullptr);
  return wb::check_across(*spec, runs, problem);
}

const char* kGemmBz = "nvjet_sm90_tst_64x8_64x16_1x4_h_bz_NNT";
const char* kGemmBadd = "nvjet_sm90_tst_64x8_64x16_1x4_h_badd_NNT";
const char* kAdd =
    "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>>";
const char* kCopy = "Memcpy DtoD (Device -> Device)";

// A tiny H200-shaped trace builder: one host thread, one stream, work queued in issue order.
// Shapes follow the H200 recordings (expected_output/h200/05_compiled_addmm): names, nesting,
// launch APIs; times are made up.
class Tb {
 public:
  struct Work {
    Kind kind;
    std::string name;
    int64_t dur_ns;
  };

  explicit Tb(bool gpu = true) {
    if (gpu) t_.devices.push_back({0, "NVIDIA H200", 9, 0, 150000000000, 132});
  }

  void step(int n, const std::function<void()>& body) {
    span(Kind::UserAnnotation, "ProfilerStep#" + std::to_string(n), body);
  }
  void annotation(const std::function<void()>& body) { span(Kind::UserAnnotation, "matmul_add", body); }
  void op(
      const std::string& name, const std::function<void()>& body = [] {}) {
    span(Kind::CpuOp, name, body);
  }
  // A runtime/driver call; every piece of `work` it launches shares its correlation id.
  void call(const std::string& name, std::vector<Work> work = {}, Kind kind = Kind::Runtime) {
    const int64_t corr = ++corr_;
    add(kind, name, now_, 5000, 4242, 4242, corr, ops_.empty() ? 0 : ops_.back());
    for (const Work& w : work) {
      const int64_t start = std::max(now_ + 8000, stream_free_);
      wb::Event& e = add(w.kind, w.name, start, w.dur_ns, 0, 7, corr, ops_.empty() ? 0 : ops_.back());
      if (w.kind == Kind::Memcpy) e.bytes = 64 * 64 * 2;
      stream_free_ = start + w.dur_ns;
    }
    now_ += 5000;
  }
  wb::Trace done() { return t_; }

 private:
  wb::Event& add(Kind k, const std::string& name, int64_t start, int64_t dur, int64_t pid, int64_t tid,
                 int64_t id, int64_t linked) {
    wb::Event e;
    e.kind = k;
    e.name = name;
    e.category = std::string(wb::kind_name(k));
    e.start_ns = start;
    e.dur_ns = dur;
    e.pid = pid;
    e.tid = tid;
    e.id = id;
    e.linked_id = linked;
    t_.events.push_back(e);
    return t_.events.back();
  }
  void span(Kind k, const std::string& name, const std::function<void()>& body) {
    const int64_t start = now_, ext = ++ext_;
    now_ += 1000;
    if (k == Kind::CpuOp) ops_.push_back(ext);
    body();
    if (k == Kind::CpuOp) ops_.pop_back();
    now_ += 1000;
    add(k, name, start, now_ - start, 4242, 4242, ext, 0);
  }

  wb::Trace t_;
  int64_t now_ = 1'000'000, stream_free_ = 0, corr_ = 0, ext_ = 0;
  std::vector<int64_t> ops_;
};

// Three profiled steps (#2..#4) of one variant's step body.
wb::Trace three_steps(const std::function<void(Tb&)>& body, bool gpu = true) {
  Tb b(gpu);
  for (int n = 2; n <= 4; ++n) b.step(n, [&] { b.annotation([&] { body(b); }); });
  return b.done();
}

void eager(Tb& b, const char* gemm = kGemmBz) {
  b.op("aten::matmul", [&] {
    b.op("aten::mm", [&] { b.call("cuLaunchKernelEx", {{Kind::Kernel, gemm, 1900}}, Kind::Driver); });
  });
  b.op("aten::add", [&] { b.call("cudaLaunchKernel", {{Kind::Kernel, kAdd, 900}}); });
}
void addmm(Tb& b, const char* gemm = kGemmBadd, bool copy = true) {
  b.op("aten::addmm", [&] {
    b.op("aten::squeeze", [&] { b.op("aten::as_strided"); });
    if (copy) b.call("cudaMemcpyAsync", {{Kind::Memcpy, kCopy, 800}});
    b.call("cuLaunchKernelEx", {{Kind::Kernel, gemm, 1900}}, Kind::Driver);
  });
}
void aoti(Tb& b, bool waits = true) {
  b.op("aten::empty_strided");
  if (waits) b.call("cudaEventQuery");
  b.op("aten::squeeze", [&] { b.op("aten::as_strided"); });
  b.call("cudaMemcpyAsync", {{Kind::Memcpy, kCopy, 800}});
  b.call("cuLaunchKernelEx", {{Kind::Kernel, kGemmBadd, 1900}}, Kind::Driver);
  b.call("cudaEventRecord");
}
void graph(Tb& b) {
  b.call("cudaStreamIsCapturing");
  b.call("cudaGraphLaunch", {{Kind::Kernel, kGemmBz, 1800}, {Kind::Kernel, kAdd, 1100}});
}

// What the CUPTI census would count for that step body.
std::vector<wb::ApiCounts> census_of(const wb::ApiCounts& step) {
  return std::vector<wb::ApiCounts>(10, step);
}

std::shared_ptr<const wb::Trace> shared(wb::Trace t) {
  return std::make_shared<const wb::Trace>(std::move(t));
}

void set_census(wb::VariantRun& r, const std::vector<wb::ApiCounts>& steps) {
  r.census = wb::census_step(steps);
  r.census_steps = static_cast<int>(steps.size());
}

wb::VariantRun variant(const std::string& name, wb::Trace t, double cpu_us,
                       std::vector<wb::ApiCounts> census = {}) {
  wb::VariantRun r;
  r.name = name;
  r.trace = shared(std::move(t));
  r.cpu_us = cpu_us;
  r.timed_steps = 200;
  if (!census.empty()) set_census(r, census);
  if (name == "aoti")
    r.generated_call =
        "AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_cuda_addmm_out(buf0, arg2_1, arg0_1, arg1_1, 1L, 1L));";
  return r;
}

// The four variants as the H200 probe showed them at 64x64 (CPU us per step: 39/24/50/8.5).
std::vector<wb::VariantRun> h200_runs() {
  return {variant("eager", three_steps([](Tb& b) { eager(b); }), 39,
                  census_of({{"cudaLaunchKernel", 1}, {"cuLaunchKernelEx", 1}, {"cudaGetDevice", 4}})),
          variant("addmm", three_steps([](Tb& b) { addmm(b); }), 24,
                  census_of({{"cudaMemcpyAsync", 1}, {"cuLaunchKernelEx", 1}})),
          variant("aoti", three_steps([](Tb& b) { aoti(b); }), 50,
                  census_of({{"cudaEventQuery", 1},
                             {"cudaMemcpyAsync", 1},
                             {"cuLaunchKernelEx", 1},
                             {"cudaEventRecord", 1}})),
          variant("graph", three_steps([](Tb& b) { graph(b); }), 8.5,
                  census_of({{"cudaStreamIsCapturing", 1}, {"cudaGraphLaunch", 1}, {"cuGraphLaunch", 1}}))};
}

// By value: callers pass temporary reports.
wb::Fact fact(const wb::LessonsReport& r, const std::string& id) {
  for (const auto& f : r.facts)
    if (f.id == id) return f;
  FAIL("no fact " << id);
  throw;
}

wb::VariantRun* run_of(std::vector<wb::VariantRun>& runs, const std::string& name) {
  for (auto& r : runs)
    if (r.name == name) return &r;
  return nullptr;
}

const wb::Problem k64 = wb::Problem::square(64, 1, 2);

// The H200 runs with `variant`'s trace replaced by eager's: lesson `id` fails, its verdict naming `says`.
void fails_with_eager_trace(const std::string& variant, const std::string& id, const std::string& says) {
  auto runs = h200_runs();
  run_of(runs, variant)->trace = shared(three_steps([](Tb& b) { eager(b); }));
  const auto& f = fact(across05(runs, k64), id);
  CHECK(f.status == Status::Fail);
  CHECK_THAT(f.verdict, ContainsSubstring(says));
}

}  // namespace

// ---- the lessons across variants, on built traces -------------------------------------------

TEST_CASE("ch05: H200-shaped variants: every cross-variant lesson holds", "[ch05][cpu]") {
  const auto rep = across05(h200_runs(), k64);
  for (const auto& f : rep.facts) {
    INFO(f.id << ": " << f.verdict);
    CHECK(f.status == Status::Pass);
  }
  CHECK(rep.facts.size() == 6);
  CHECK(rep.failed == 0);
}

TEST_CASE("ch05: summarize reads ops, launches, the copy before the GEMM and the sequence", "[ch05][cpu]") {
  const auto runs = h200_runs();
  const auto e = wb::summarize_variant(runs[0]), a = wb::summarize_variant(runs[1]),
             g = wb::summarize_variant(runs[3]);
  CHECK(e.steps == 3);
  CHECK((e.matmul == 1 && e.mm == 1 && e.add == 1 && e.addmm == 0));
  CHECK(e.kernels == 2);
  CHECK(e.kineto[wb::ApiClass::KernelLaunch] == 2);
  CHECK(e.dtod_before_gemm_steps == 0);
  CHECK(a.addmm == 1);
  CHECK(a.dtod_before_gemm_steps == 3);
  CHECK(a.sequence == std::vector<std::string>{kCopy, kGemmBadd});
  CHECK(a.memcpy_us == 0.8);
  CHECK(g.aten_ops == 0);
  CHECK(g.kernels == 2);  // both kernels come from the one cudaGraphLaunch
  CHECK(g.kineto[wb::ApiClass::GraphLaunch] == 1);
  CHECK(g.kineto[wb::ApiClass::KernelLaunch] == 0);

  const std::string napkin = wb::memcpy_napkin({a}, k64, "NVIDIA H200");
  CHECK_THAT(napkin, ContainsSubstring("0.008 MB copied"));  // 64 x 64 x 2 B
  CHECK_THAT(napkin, ContainsSubstring("TB/s"));
  const std::string table = wb::side_by_side(runs, {e, a, wb::summarize_variant(runs[2]), g});
  CHECK_THAT(table, ContainsSubstring("kernel launches (trace | census)"));
}

TEST_CASE("ch05: one_op fails when the 'addmm' trace still runs matmul + add", "[ch05][cpu]") {
  fails_with_eager_trace("addmm", "one_op", "addmm/aten::addmm");
}

TEST_CASE("ch05: one_op fails when the AOTI wrapper's call is not the addmm shim", "[ch05][cpu]") {
  auto runs = h200_runs();
  run_of(runs, "aoti")->generated_call = "triton_poi_fused_add_0.run(buf0, arg2_1)";
  CHECK(fact(across05(runs, k64), "one_op").status == Status::Fail);
}

TEST_CASE("ch05: launches fails when the graph step still launches kernels one by one", "[ch05][cpu]") {
  fails_with_eager_trace("graph", "launches", "graph/graph_launches");
}

TEST_CASE("ch05: same_gemm fails without the bias copy or with a beta-zero GEMM", "[ch05][cpu]") {
  auto runs = h200_runs();
  run_of(runs, "addmm")->trace = shared(three_steps([](Tb& b) { addmm(b, kGemmBadd, /*copy=*/false); }));
  CHECK(fact(across05(runs, k64), "same_gemm").status == Status::Fail);

  runs = h200_runs();
  run_of(runs, "addmm")->trace = shared(three_steps([](Tb& b) { addmm(b, kGemmBz); }));
  const auto& f = fact(across05(runs, k64), "same_gemm");
  CHECK(f.status == Status::Fail);
  CHECK_THAT(f.verdict, ContainsSubstring("_badd_"));

  // A different tile shape is a different GEMM, not the same one with another epilogue.
  runs = h200_runs();
  run_of(runs, "addmm")->trace =
      shared(three_steps([](Tb& b) { addmm(b, "nvjet_sm90_tst_128x64_64x8_2x1_h_badd_NNT"); }));
  CHECK(fact(across05(runs, k64), "same_gemm").status == Status::Fail);
}

TEST_CASE("ch05: cpu_per_step: a graph only 3x cheaper fails, at 64 and at the recorded 4096",
          "[ch05][cpu]") {
  auto runs = h200_runs();
  run_of(runs, "graph")->cpu_us = 13;  // 39 / 13 = 3x
  CHECK(fact(across05(runs, k64), "cpu_per_step").status == Status::Fail);
  run_of(runs, "graph")->cpu_us = 8.5;
  run_of(runs, "aoti")->cpu_us = 20;  // cheaper than addmm: not what the runner does
  CHECK(fact(across05(runs, k64), "cpu_per_step").status == Status::Fail);

  runs = h200_runs();
  run_of(runs, "graph")->cpu_us = 13;
  const auto& f = fact(across05(runs, wb::Problem::square(4096, 1, 2)), "cpu_per_step");
  CHECK(f.status == Status::Fail);  // judged where it is recorded, at 4096 too
  CHECK_THAT(f.verdict, ContainsSubstring("eager_over_graph"));
  run_of(runs, "graph")->cpu_us = 8.5;
  CHECK(fact(across05(runs, wb::Problem::square(4096, 1, 2)), "cpu_per_step").status == Status::Pass);
}

TEST_CASE("ch05: aoti_waits fails when the runner never checks its previous run", "[ch05][cpu]") {
  auto runs = h200_runs();
  run_of(runs, "aoti")->trace = shared(three_steps([](Tb& b) { aoti(b, /*waits=*/false); }));
  CHECK(fact(across05(runs, k64), "aoti_waits").status == Status::Fail);
}

TEST_CASE("ch05: census_vs_kineto fails on a miscount and is n/a without a census", "[ch05][cpu]") {
  auto runs = h200_runs();
  set_census(*run_of(runs, "eager"), census_of({{"cudaLaunchKernel", 2}, {"cuLaunchKernelEx", 1}}));
  const auto& f = fact(across05(runs, k64), "census_vs_kineto");
  CHECK(f.status == Status::Fail);
  CHECK_THAT(f.verdict, ContainsSubstring("eager/agree"));

  runs = h200_runs();
  for (auto& r : runs) {
    r.census.reset();
    r.census_note = "launch census: CUPTI already has a subscriber";
  }
  const auto& g = fact(across05(runs, k64), "census_vs_kineto");
  CHECK(g.status == Status::NotApplicable);
  CHECK_THAT(g.verdict, ContainsSubstring("already has a subscriber"));
}

TEST_CASE("ch05: on a CPU trace the GPU lessons are not applicable, the one-op lesson is judged",
          "[ch05][cpu]") {
  std::vector<wb::VariantRun> runs{
      variant("eager",
              three_steps(
                  [](Tb& b) {
                    b.op("aten::matmul", [&] { b.op("aten::mm"); });
                    b.op("aten::add");
                  },
                  false),
              9),
      variant("addmm", three_steps([](Tb& b) { b.op("aten::addmm", [&] { b.op("aten::copy_"); }); }, false),
              6)};
  wb::VariantRun g;
  g.name = "graph";
  g.unavailable = "not applicable on CPU";
  runs.push_back(g);
  const auto rep = across05(runs, wb::Problem::square(64, 1, 4));
  CHECK(fact(rep, "one_op").status == Status::Pass);
  for (const char* id : {"launches", "same_gemm", "cpu_per_step", "aoti_waits", "census_vs_kineto"})
    CHECK(fact(rep, id).status == Status::NotApplicable);
  CHECK_THAT(wb::side_by_side(runs, {}), ContainsSubstring("n/a graph: not applicable on CPU"));
}

// ---- live on this machine -------------------------------------------------------------------

namespace {

// Profiles a variant's step like the chapter does and reads the trace back from disk.
wb::VariantRun profile(const wb::Variant& v, const fs::path& dir) {
  REQUIRE(v.unavailable.empty());
  wb::ProfilerOptions po;
  po.schedule = wb::Schedule{1, 1, 3, 1, 0};
  po.cuda = torch::cuda::is_available();
  if (!po.cuda) ::setenv("KINETO_LOG_LEVEL", "5", 0);  // as the harness: no "no GPU" noise
  wb::Profiler prof(po);
  prof.start();
  for (int i = 0; i < 5; ++i) {
    {
      wb::Annotation a("matmul_add");
      v.step();
    }
    prof.step();
  }
  prof.stop();
  REQUIRE_FALSE(prof.results().empty());
  const fs::path file = dir / (v.name + ".json");
  prof.results().back().save_chrome_trace(file);
  wb::VariantRun r;
  r.name = v.name;
  r.trace = shared(wb::read_trace(file));
  r.cpu_us = wb::time_steps(v.step, po.cuda, 50).median_us;
  r.generated_call = v.generated_call;
  return r;
}

std::vector<torch::Tensor> cpu_inputs(int64_t n = 64) {
  torch::manual_seed(0);
  return {torch::randn({n, n}), torch::randn({n, n}), torch::randn({n, n})};
}

}  // namespace

TEST_CASE("ch05: live CPU: eager keeps matmul + add, addmm is one op; the check fails on eager",
          "[ch05][cpu]") {
  const fs::path dir = proc::scratch("ch05_live");
  const auto in = cpu_inputs();
  auto y = std::make_shared<torch::Tensor>();
  auto e = profile(wb::step_variant("eager", "add(matmul)",
                                    [in, y] { *y = torch::add(torch::matmul(in[0], in[1]), in[2]); }),
                   dir);
  auto a =
      profile(wb::step_variant("addmm", "addmm", [in, y] { *y = torch::addmm(in[2], in[0], in[1]); }), dir);
  CHECK(fact(across05({e, a}, wb::Problem::square(64, 1, 4)), "one_op").status == Status::Pass);
  a.trace = e.trace;  // the eager trace presented as the rewrite
  CHECK(fact(across05({e, a}, wb::Problem::square(64, 1, 4)), "one_op").status == Status::Fail);
}

TEST_CASE("ch05: live: a step that throws is unavailable, with the error", "[ch05][cpu]") {
  const auto in = cpu_inputs();
  const auto v = wb::step_variant("bad", "a shape mismatch", [in] {
    (void)torch::matmul(in[0], torch::randn({3, 5}));
  });
  CHECK_FALSE(v.unavailable.empty());
  CHECK_FALSE(v.profiled());
}

TEST_CASE("ch05: live CPU: the graph variant is not applicable without CUDA", "[ch05][cpu]") {
  const auto v = wb::cuda_graph_variant(
      "graph", "a step", [] {}, /*cuda=*/false);
  CHECK_THAT(v.unavailable, ContainsSubstring("not applicable on CPU"));
  CHECK_FALSE(v.step);
}

TEST_CASE("ch05: live: the AOTI package built with this build computes x @ w + b", "[ch05][cpu]") {
  const wb::AotiPackage pkg = wb::read_aoti_manifest(WB05_AOTI_MANIFEST);
  if (!pkg.available) SKIP("no AOTI package in this build: " << pkg.reason);
  const bool cuda = pkg.device == "cuda";
  if (cuda && !torch::cuda::is_available())
    SKIP("the package was compiled for CUDA and there is no GPU here");
  auto opts = torch::TensorOptions()
                  .device(cuda ? torch::kCUDA : torch::kCPU)
                  .dtype(cuda ? torch::kBFloat16 : torch::kFloat);
  torch::manual_seed(0);
  const std::vector<torch::Tensor> in{torch::randn({96, 96}, opts), torch::randn({96, 96}, opts),
                                      torch::randn({96, 96}, opts)};

  // The generated wrapper calls the device's addmm shim; the extracted source is where it says.
  CHECK_THAT(pkg.generated_call,
             ContainsSubstring(cuda ? "aoti_torch_cuda_addmm_out" : "aoti_torch_cpu_addmm_out"));
  REQUIRE(fs::exists(pkg.wrapper));
  CHECK_THAT(proc::slurp(pkg.wrapper), ContainsSubstring(pkg.generated_call));
  CHECK_THAT(pkg.describe(), ContainsSubstring(pkg.generated_call));

  auto loader = torch::inductor::AOTIModelPackageLoader(pkg.package.string());
  const auto out = loader.run(in);  // N = 96: the package's N is dynamic
  REQUIRE(out.size() == 1);
  const auto want = torch::addmm(in[2], in[0], in[1]);
  CHECK(torch::allclose(out[0].to(torch::kFloat), want.to(torch::kFloat), 1e-2, 1e-2));

  // In the chapter's variant: no matmul/mm/add under the annotation.
  if (!cuda) {
    const auto v = wb::aoti_variant("aoti", pkg, in);
    CHECK(v.generated_call == pkg.generated_call);
    const auto r = profile(v, proc::scratch("ch05_aoti"));
    CHECK(fact(across05({r}, wb::Problem::square(96, 1, 4)), "one_op").status == Status::Pass);
  }
}

TEST_CASE("ch05: a missing, corrupt or stale AOTI manifest makes the variant unavailable, with the reason",
          "[ch05][cpu]") {
  const fs::path dir = proc::scratch("ch05_manifest");
  auto m = wb::read_aoti_manifest(dir / "none.json");
  CHECK_FALSE(m.available);
  CHECK_THAT(m.reason, ContainsSubstring("no AOTI package manifest"));

  std::ofstream(dir / "bad.json") << "{\"available\": tru";
  m = wb::read_aoti_manifest(dir / "bad.json");
  CHECK_FALSE(m.available);
  CHECK_THAT(m.reason, ContainsSubstring("not a valid manifest"));

  std::ofstream(dir / "stale.json") << "{\"available\": true, \"package\": \"" << (dir / "gone.pt2").string()
                                    << "\"}";
  m = wb::read_aoti_manifest(dir / "stale.json");
  CHECK_FALSE(m.available);
  CHECK_THAT(m.reason, ContainsSubstring("does not exist"));

  std::ofstream(dir / "failed.json")
      << "{\"available\": false, \"reason\": \"building the AOTI package failed: X\"}";
  wb::AotiPackage pkg = wb::read_aoti_manifest(dir / "failed.json");
  const auto v = wb::aoti_variant("aoti", pkg, cpu_inputs());
  CHECK_THAT(v.unavailable, ContainsSubstring("building the AOTI package failed: X"));

  // A package for the other device is refused before loading.
  pkg.available = true;
  pkg.package = WB05_AOTI_MANIFEST;  // any existing file: never loaded
  pkg.device = "cuda";
  CHECK_THAT(wb::aoti_variant("aoti", pkg, cpu_inputs()).unavailable, ContainsSubstring("compiled for cuda"));
}

// ---- the chapter binary ---------------------------------------------------------------------

namespace {
nlohmann::json comparison(const chapter_runner::Result& r) {
  return nlohmann::json::parse(proc::slurp(r.dir / "comparison.json"), nullptr, false);
}
std::string across_status(const nlohmann::json& j, const std::string& id) {
  for (const auto& f : j["facts"])
    if (f["id"] == id) return f["status"].get<std::string>();
  return "missing";
}
}  // namespace

TEST_CASE("ch05: the chapter on the CPU: every variant in its folder, lessons hold (--check)",
          "[ch05][cpu]") {
  if (torch::cuda::is_available()) SKIP("a CUDA device is present: see [gpu]");
  const auto r = chapter_runner::run("05_compiled_addmm", {"--size", "64", "--check"}, "cpu");
  INFO(r.out << r.err);
  REQUIRE(r.rc == 0);
  for (const char* v : {"eager", "addmm"}) {
    CHECK(fs::exists(r.dir / v / "trace.json"));
    CHECK(fs::exists(r.dir / v / "lessons.json"));
  }
  CHECK_FALSE(fs::exists(r.dir / "graph"));  // not applicable on CPU: nothing profiled
  const auto j = comparison(r);
  REQUIRE(j.is_object());
  CHECK(across_status(j, "one_op") == "pass");
  CHECK(across_status(j, "launches") == "not_applicable");
  CHECK_THAT(proc::slurp(r.dir / "comparison.txt"), ContainsSubstring("no CUDA device"));
}

TEST_CASE("ch05: --compare with one --variant compares that variant, not the lessons across all",
          "[ch05][cpu]") {
  if (torch::cuda::is_available()) SKIP("a CUDA device is present: see [gpu]");
  // The CPU recording's comparison.json judges eager and addmm side by side; addmm alone leaves
  // its one_op lesson n/a, which --compare used to report as a difference (exit 3).
  const auto r =
      chapter_runner::run("05_compiled_addmm",
                          {"--size", "64", "--check", "--compare", "--platform", "cpu", "--variant", "addmm",
                           "--expected", (chapter_runner::root() / "expected_output").string()},
                          "compare_one");
  INFO(r.out << r.err);
  CHECK(r.rc == 0);
  CHECK_THAT(r.out, ContainsSubstring("Lessons across variants not compared with the recording"));
  CHECK_THAT(r.out, ContainsSubstring("table: "));  // the variant's own folder was compared
  CHECK_FALSE(fs::exists(r.dir / "eager"));
}

TEST_CASE("ch05: the chapter rejects an unknown --variant or --census before any work", "[ch05][cpu]") {
  for (const auto& args : {std::vector<std::string>{"--variant", "jit"}, {"--census", "sometimes"}}) {
    const auto r = chapter_runner::run("05_compiled_addmm", args, "badflag");
    CHECK(r.rc == 2);
    CHECK_THAT(r.err, ContainsSubstring(args[0]));
    CHECK_FALSE(fs::exists(r.dir / "eager"));
  }
}

TEST_CASE("ch05: GPU 64x64: the launches halve, the graph saves >= 4x CPU, the census agrees",
          "[ch05][gpu]") {
  const auto r = chapter_runner::run_gpu("05_compiled_addmm", {"--size", "64", "--check"}, "gpu64");
  INFO(r.out << r.err << proc::slurp(r.dir / "comparison.txt"));
  CHECK(r.rc == 0);
  const auto j = comparison(r);
  REQUIRE(j.is_object());
  for (const char* id : {"one_op", "launches", "same_gemm", "cpu_per_step", "aoti_waits", "census_vs_kineto"})
    CHECK(across_status(j, id) == "pass");
}

TEST_CASE("ch05: GPU 4096: the bias copy (32 MB) precedes the beta-add GEMM", "[ch05][gpu]") {
  const auto r = chapter_runner::run_gpu("05_compiled_addmm", {"--size", "4096", "--check"}, "gpu4096");
  INFO(r.out << r.err << proc::slurp(r.dir / "comparison.txt"));
  CHECK(r.rc == 0);
  const auto j = comparison(r);
  REQUIRE(j.is_object());
  for (const char* id : {"one_op", "launches", "same_gemm", "aoti_waits", "census_vs_kineto"})
    CHECK(across_status(j, id) == "pass");
  wb::VariantRun a;
  a.name = "addmm";
  a.trace = shared(wb::read_trace(r.dir / "addmm" / "trace.json"));
  CHECK(wb::summarize_variant(a).memcpy_bytes == int64_t{4096} * 4096 * 2);
}

TEST_CASE("ch05: GPU: a census after profiling reports the conflict with Kineto, not counts", "[ch05][gpu]") {
  const auto r = chapter_runner::run_gpu(
      "05_compiled_addmm", {"--size", "64", "--variant", "eager", "--census", "after"}, "after");
  INFO(r.out << r.err);
  CHECK(r.rc == 0);
  const std::string text = proc::slurp(r.dir / "comparison.txt");
  CHECK_THAT(text, ContainsSubstring("CUPTI already has a subscriber"));
  CHECK(across_status(comparison(r), "census_vs_kineto") == "not_applicable");
}

// ---- the recorded runs ----------------------------------------------------------------------
// The lessons across variants recomputed from what `./workbook record` kept: each variant's
// trace, and from comparison.json the inputs that are not in a trace (CPU time per step, the
// AOTI wrapper's call, the census's typical step). Every verdict must be the recorded one.

namespace {

const fs::path kRecorded = chapter_runner::root() / "expected_output";

wb::ClassCounts class_counts(const nlohmann::json& j) {
  wb::ClassCounts c;
  c[wb::ApiClass::KernelLaunch] = j.at("kernel_launches").get<int64_t>();
  c[wb::ApiClass::GraphLaunch] = j.at("graph_launches").get<int64_t>();
  c[wb::ApiClass::Memcpy] = j.at("memcpy").get<int64_t>();
  c[wb::ApiClass::Memset] = j.at("memset").get<int64_t>();
  c[wb::ApiClass::Occupancy] = j.at("occupancy").get<int64_t>();
  c[wb::ApiClass::Sync] = j.at("sync").get<int64_t>();
  return c;
}

const nlohmann::json& recorded_fact(const nlohmann::json& j, const std::string& id) {
  for (const auto& f : j.at("facts"))
    if (f.at("id") == id) return f;
  FAIL("comparison.json has no fact " << id);
  throw;
}

struct Recorded {
  nlohmann::json comparison;
  std::vector<wb::VariantRun> runs;
  wb::Problem problem;
};

// The runs as the recorded chapter saw them; variants without a folder (graph on a CPU) are
// unavailable, as they were.
Recorded recorded_runs(const std::string& platform) {
  const fs::path dir = kRecorded / platform / "05_compiled_addmm";
  Recorded rec;
  rec.comparison = nlohmann::json::parse(proc::slurp(dir / "comparison.json"), nullptr, false);
  REQUIRE(rec.comparison.is_object());
  const auto& j = rec.comparison;
  const auto& cpu = recorded_fact(j, "cpu_per_step")["data"];
  const auto& census = recorded_fact(j, "census_vs_kineto");
  for (const std::string name : {"eager", "addmm", "aoti", "graph", "aoti x2"}) {
    wb::VariantRun r;
    r.name = name;
    const fs::path t = chapter_runner::recorded_trace(platform, "05_compiled_addmm/" + name);
    if (!t.empty()) r.trace = shared(wb::read_trace(t));
    if (cpu.contains(name)) {
      r.cpu_us = cpu[name]["cpu_us"].get<double>();
      r.timed_steps = cpu[name]["timed_steps"].get<int>();
    }
    if (!r.trace && r.cpu_us < 0) r.unavailable = "not recorded on " + platform;
    if (name == "aoti")
      r.generated_call = recorded_fact(j, "one_op")["data"]["aoti"].value("generated_call", "");
    if (census["data"].contains(name)) {
      r.census = class_counts(census["data"][name]["census"]);
      r.census_steps = census["data"][name]["census_steps"].get<int>();
    } else {
      r.census_note = census.value("explanation", "");
    }
    if (!r.unavailable.empty() || r.trace || r.cpu_us > 0) rec.runs.push_back(std::move(r));
  }
  const auto& pj = j.at("options").at("problem");
  rec.problem = wb::Problem::square(pj.at("n").get<int64_t>(), pj.at("batch").get<int64_t>(),
                                    pj.at("dtype_bytes").get<int>());
  return rec;
}

wb::VariantRun& named(std::vector<wb::VariantRun>& runs, const std::string& name) {
  auto* r = run_of(runs, name);
  REQUIRE(r != nullptr);
  return *r;
}

}  // namespace

TEST_CASE("ch05: recorded H200 and CPU runs: every lesson across variants gets its recorded verdict",
          "[ch05][cpu]") {
  for (const std::string platform : {"h200", "cpu"}) {
    INFO(platform);
    REQUIRE(fs::exists(kRecorded / platform / "05_compiled_addmm" / "comparison.json"));  // missing fails
    const Recorded rec = recorded_runs(platform);
    const wb::LessonsReport mine = across05(rec.runs, rec.problem);
    const auto& want = rec.comparison.at("facts");
    REQUIRE(mine.facts.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      INFO(platform << " " << mine.facts[i].id << ": " << mine.facts[i].verdict);
      CHECK(mine.facts[i].id == want[i]["id"].get<std::string>());
      CHECK(wb::status_name(mine.facts[i].status) == want[i]["status"].get<std::string>());
      CHECK(mine.facts[i].verdict == want[i]["verdict"].get<std::string>());
      CHECK(mine.facts[i].data == want[i]["data"]);
    }
    // And --compare's view of it: the same verdict on every fact.
    const auto ref = wb::lessons_from_json(rec.comparison);
    for (const auto& row : wb::compare_lessons(mine, ref)) {
      INFO(platform << " " << row.fact);
      CHECK(row.agree());
    }
  }
}

TEST_CASE("ch05: recorded runs: each variant's own lessons get their recorded verdicts", "[ch05][cpu]") {
  for (const std::string platform : {"h200", "cpu"})
    for (const std::string name : {"eager", "addmm", "aoti", "graph"}) {
      const fs::path dir = kRecorded / platform / "05_compiled_addmm" / name;
      if (!fs::exists(dir / "lessons.json")) continue;
      const auto want = wb::lessons_from_json(nlohmann::json::parse(proc::slurp(dir / "lessons.json")));
      const wb::Trace t =
          wb::read_trace(chapter_runner::recorded_trace(platform, "05_compiled_addmm/" + name));
      const wb::TraceModel m(t);
      const wb::LessonSpec* spec = wb::find_lesson_spec("05_compiled_addmm/" + name);
      REQUIRE(spec != nullptr);
      const auto mine = wb::check_lessons(m, *spec, want.options);
      REQUIRE(mine.facts.size() == want.facts.size());
      for (size_t i = 0; i < want.facts.size(); ++i) {
        INFO(platform << "/" << name << " " << want.facts[i].id << ": " << mine.facts[i].verdict);
        CHECK(mine.facts[i].status == want.facts[i].status);
      }
    }
}

// The wrong real trace: each lesson across variants fails when a recorded variant is replaced
// by another recorded one.
TEST_CASE("ch05: recorded H200 runs: each lesson across variants fails on a swapped recording",
          "[ch05][cpu]") {
  REQUIRE(fs::exists(kRecorded / "h200" / "05_compiled_addmm" / "comparison.json"));  // missing fails
  const Recorded rec = recorded_runs("h200");
  auto with = [&](const std::function<void(std::vector<wb::VariantRun>&)>& change, const std::string& id) {
    auto runs = rec.runs;
    change(runs);
    return fact(across05(runs, rec.problem), id);
  };
  auto trace_as = [](const char* from, const char* to) {
    return [=](std::vector<wb::VariantRun>& runs) { named(runs, to).trace = named(runs, from).trace; };
  };
  for (const char* id : {"one_op", "launches", "same_gemm", "cpu_per_step", "aoti_waits", "census_vs_kineto"})
    CHECK(with([](auto&) {}, id).status == Status::Pass);

  // eager's recording presented as addmm's: matmul + add are back, two kernels, no bias copy,
  // and the trace no longer agrees with addmm's census.
  CHECK_THAT(with(trace_as("eager", "addmm"), "one_op").verdict, ContainsSubstring("addmm/aten::addmm = 0"));
  CHECK(with(trace_as("eager", "addmm"), "one_op").status == Status::Fail);
  CHECK(with(trace_as("eager", "addmm"), "launches").status == Status::Fail);
  CHECK(with(trace_as("eager", "addmm"), "same_gemm").status == Status::Fail);
  CHECK(with(trace_as("eager", "addmm"), "census_vs_kineto").status == Status::Fail);
  // eager's recording presented as the graph's: kernels launched one by one.
  CHECK_THAT(with(trace_as("eager", "graph"), "launches").verdict, ContainsSubstring("graph/graph_launches"));
  // addmm's recording presented as aoti's: the runner's event query is gone.
  CHECK(with(trace_as("addmm", "aoti"), "aoti_waits").status == Status::Fail);
  // addmm's recorded CPU time given to aoti and the other way round: the runner looks cheaper.
  CHECK(with([](auto& runs) { std::swap(named(runs, "aoti").cpu_us, named(runs, "addmm").cpu_us); },
             "cpu_per_step")
            .status == Status::Fail);
  // Chapter 01's recording (64x64, eager) as every variant's: none of the rewrites is there.
  const fs::path ch01 = chapter_runner::recorded_trace("h200", "01_cold_64");
  if (!ch01.empty()) {
    const auto t = shared(wb::read_trace(ch01));
    const auto f = with(
        [&](auto& runs) {
          named(runs, "addmm").trace = t;
          named(runs, "aoti").trace = t;
        },
        "same_gemm");
    CHECK(f.status == Status::Fail);
  }
}
