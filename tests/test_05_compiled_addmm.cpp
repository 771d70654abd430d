// Chapter 05: the lessons across variants, on H200-shaped traces built here (each shown
// passing and failing), live on the CPU (eager, addmm, the AOTI package; graph n/a), the
// chapter binary end to end, on the GPU ([gpu]: skipped without one) and on the recorded H200
// output ([ch05][h200]: skipped until expected_output/h200/05_compiled_addmm exists).
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/torch.h>
#undef CHECK  // c10's glog-style CHECK would shadow Catch2's
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <filesystem>
#include <fstream>
#include <functional>

#include "across.hpp"
#include "chapter_runner.hpp"
#include "variants.hpp"
#include "workbook/profiler.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;
using wb::Kind;
using wb::Status;

namespace {

const char* kGemmBz = "nvjet_sm90_tst_64x8_64x16_1x4_h_bz_NNT";
const char* kGemmBadd = "nvjet_sm90_tst_64x8_64x16_1x4_h_badd_NNT";
const char* kAdd = "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>>";
const char* kCopy = "Memcpy DtoD (Device -> Device)";

// A tiny H200-shaped trace builder: one host thread, one stream, work queued in issue order.
// Shapes follow the H200 probe (lessons.md): names, nesting, launch APIs; times are made up.
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

  void step(int n, const std::function<void()>& body) { span(Kind::UserAnnotation, "ProfilerStep#" + std::to_string(n), body); }
  void annotation(const std::function<void()>& body) { span(Kind::UserAnnotation, "matmul_add", body); }
  void op(const std::string& name, const std::function<void()>& body = [] {}) {
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
std::vector<wb::ApiCounts> census_of(const wb::ApiCounts& step) { return std::vector<wb::ApiCounts>(10, step); }

ch05::VariantRun variant(const std::string& name, wb::Trace t, double cpu_us, std::vector<wb::ApiCounts> census = {}) {
  ch05::VariantRun r;
  r.name = name;
  r.trace = std::move(t);
  r.cpu_us = cpu_us;
  r.timed_steps = 200;
  r.census = std::move(census);
  if (name == "aoti") r.generated_call = "AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_cuda_addmm_out(buf0, arg2_1, arg0_1, arg1_1, 1L, 1L));";
  return r;
}

// The four variants as the H200 probe showed them at 64x64 (CPU us per step: 39/24/50/8.5).
std::vector<ch05::VariantRun> h200_runs() {
  return {variant("eager", three_steps([](Tb& b) { eager(b); }), 39,
                  census_of({{"cudaLaunchKernel", 1}, {"cuLaunchKernelEx", 1}, {"cudaGetDevice", 4}})),
          variant("addmm", three_steps([](Tb& b) { addmm(b); }), 24,
                  census_of({{"cudaMemcpyAsync", 1}, {"cuLaunchKernelEx", 1}})),
          variant("aoti", three_steps([](Tb& b) { aoti(b); }), 50,
                  census_of({{"cudaEventQuery", 1}, {"cudaMemcpyAsync", 1}, {"cuLaunchKernelEx", 1}, {"cudaEventRecord", 1}})),
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

ch05::VariantRun* run_of(std::vector<ch05::VariantRun>& runs, const std::string& name) {
  for (auto& r : runs)
    if (r.name == name) return &r;
  return nullptr;
}

const wb::Problem k64{64, 1, 2};

}  // namespace

// ---- the lessons across variants, on built traces -------------------------------------------

TEST_CASE("ch05: H200-shaped variants: every cross-variant lesson holds", "[ch05][cpu]") {
  const auto rep = ch05::check_across(h200_runs(), k64);
  for (const auto& f : rep.facts) {
    INFO(f.id << ": " << f.verdict);
    CHECK(f.status == Status::Pass);
  }
  CHECK(rep.facts.size() == 6);
  CHECK(rep.failed == 0);
}

TEST_CASE("ch05: summarize reads ops, launches, the copy before the GEMM and the sequence", "[ch05][cpu]") {
  const auto runs = h200_runs();
  const auto e = ch05::summarize(runs[0]), a = ch05::summarize(runs[1]), g = ch05::summarize(runs[3]);
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

  const std::string napkin = ch05::memcpy_napkin({a}, k64, "NVIDIA H200");
  CHECK_THAT(napkin, ContainsSubstring("0.008 MB copied"));  // 64 x 64 x 2 B
  CHECK_THAT(napkin, ContainsSubstring("TB/s"));
  const std::string table = ch05::side_by_side(runs, {e, a, ch05::summarize(runs[2]), g});
  CHECK_THAT(table, ContainsSubstring("kernel launches (trace | census)"));
}

TEST_CASE("ch05: one_op fails when the 'addmm' trace still runs matmul + add", "[ch05][cpu]") {
  auto runs = h200_runs();
  run_of(runs, "addmm")->trace = three_steps([](Tb& b) { eager(b); });
  const auto& f = fact(ch05::check_across(runs, k64), "one_op");
  CHECK(f.status == Status::Fail);
  CHECK_THAT(f.verdict, ContainsSubstring("addmm/aten::addmm"));
}

TEST_CASE("ch05: one_op fails when the AOTI wrapper's call is not the addmm shim", "[ch05][cpu]") {
  auto runs = h200_runs();
  run_of(runs, "aoti")->generated_call = "triton_poi_fused_add_0.run(buf0, arg2_1)";
  CHECK(fact(ch05::check_across(runs, k64), "one_op").status == Status::Fail);
}

TEST_CASE("ch05: launches fails when the graph step still launches kernels one by one", "[ch05][cpu]") {
  auto runs = h200_runs();
  run_of(runs, "graph")->trace = three_steps([](Tb& b) { eager(b); });
  const auto& f = fact(ch05::check_across(runs, k64), "launches");
  CHECK(f.status == Status::Fail);
  CHECK_THAT(f.verdict, ContainsSubstring("graph/graph_launches"));
}

TEST_CASE("ch05: same_gemm fails without the bias copy or with a beta-zero GEMM", "[ch05][cpu]") {
  auto runs = h200_runs();
  run_of(runs, "addmm")->trace = three_steps([](Tb& b) { addmm(b, kGemmBadd, /*copy=*/false); });
  CHECK(fact(ch05::check_across(runs, k64), "same_gemm").status == Status::Fail);

  runs = h200_runs();
  run_of(runs, "addmm")->trace = three_steps([](Tb& b) { addmm(b, kGemmBz); });
  const auto& f = fact(ch05::check_across(runs, k64), "same_gemm");
  CHECK(f.status == Status::Fail);
  CHECK_THAT(f.verdict, ContainsSubstring("_badd_"));

  // A different tile shape is a different GEMM, not the same one with another epilogue.
  runs = h200_runs();
  run_of(runs, "addmm")->trace = three_steps([](Tb& b) { addmm(b, "nvjet_sm90_tst_128x64_64x8_2x1_h_badd_NNT"); });
  CHECK(fact(ch05::check_across(runs, k64), "same_gemm").status == Status::Fail);
}

TEST_CASE("ch05: cpu_per_step: a graph only 3x cheaper fails at 64, is not judged at 4096", "[ch05][cpu]") {
  auto runs = h200_runs();
  run_of(runs, "graph")->cpu_us = 13;  // 39 / 13 = 3x
  CHECK(fact(ch05::check_across(runs, k64), "cpu_per_step").status == Status::Fail);
  run_of(runs, "graph")->cpu_us = 8.5;
  run_of(runs, "aoti")->cpu_us = 20;  // cheaper than addmm: not what the runner does
  CHECK(fact(ch05::check_across(runs, k64), "cpu_per_step").status == Status::Fail);

  runs = h200_runs();
  run_of(runs, "graph")->cpu_us = 13;
  const auto& f = fact(ch05::check_across(runs, {4096, 1, 2}), "cpu_per_step");
  CHECK(f.status == Status::Pass);  // only aoti > addmm is judged at 4096
  CHECK_THAT(f.verdict, ContainsSubstring("aoti_over_addmm"));
}

TEST_CASE("ch05: aoti_waits fails when the runner never checks its previous run", "[ch05][cpu]") {
  auto runs = h200_runs();
  run_of(runs, "aoti")->trace = three_steps([](Tb& b) { aoti(b, /*waits=*/false); });
  CHECK(fact(ch05::check_across(runs, k64), "aoti_waits").status == Status::Fail);
}

TEST_CASE("ch05: census_vs_kineto fails on a miscount and is n/a without a census", "[ch05][cpu]") {
  auto runs = h200_runs();
  run_of(runs, "eager")->census = census_of({{"cudaLaunchKernel", 2}, {"cuLaunchKernelEx", 1}});
  const auto& f = fact(ch05::check_across(runs, k64), "census_vs_kineto");
  CHECK(f.status == Status::Fail);
  CHECK_THAT(f.verdict, ContainsSubstring("eager/agree"));

  runs = h200_runs();
  for (auto& r : runs) {
    r.census.clear();
    r.census_note = "launch census: CUPTI already has a subscriber";
  }
  const auto& g = fact(ch05::check_across(runs, k64), "census_vs_kineto");
  CHECK(g.status == Status::NotApplicable);
  CHECK_THAT(g.verdict, ContainsSubstring("already has a subscriber"));
}

TEST_CASE("ch05: on a CPU trace the GPU lessons are not applicable, the one-op lesson is judged", "[ch05][cpu]") {
  std::vector<ch05::VariantRun> runs{
      variant("eager", three_steps([](Tb& b) { b.op("aten::matmul", [&] { b.op("aten::mm"); }); b.op("aten::add"); }, false), 9),
      variant("addmm", three_steps([](Tb& b) { b.op("aten::addmm", [&] { b.op("aten::copy_"); }); }, false), 6)};
  ch05::VariantRun g;
  g.name = "graph";
  g.unavailable = "not applicable on CPU";
  runs.push_back(g);
  const auto rep = ch05::check_across(runs, {64, 1, 4});
  CHECK(fact(rep, "one_op").status == Status::Pass);
  for (const char* id : {"launches", "same_gemm", "cpu_per_step", "aoti_waits", "census_vs_kineto"})
    CHECK(fact(rep, id).status == Status::NotApplicable);
  CHECK_THAT(ch05::side_by_side(runs, {}), ContainsSubstring("n/a graph: not applicable on CPU"));
}

// ---- live on this machine -------------------------------------------------------------------

namespace {

// Profiles a variant's step like the chapter does and reads the trace back from disk.
ch05::VariantRun profile(const ch05::Variant& v, const fs::path& dir) {
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
  ch05::VariantRun r;
  r.name = v.name;
  r.trace = wb::read_trace(file);
  r.cpu_us = ch05::time_steps(v.step, po.cuda, 50).median_us;
  return r;
}

ch05::Inputs cpu_inputs(int64_t n = 64) {
  torch::manual_seed(0);
  return {torch::randn({n, n}), torch::randn({n, n}), torch::randn({n, n})};
}

}  // namespace

TEST_CASE("ch05: live CPU: eager keeps matmul + add, addmm is one op; the check fails on eager", "[ch05][cpu]") {
  const fs::path dir = proc::scratch("ch05_live");
  const auto in = cpu_inputs();
  const ch05::VariantOptions vo;
  auto e = profile(ch05::make_variant("eager", in, vo), dir);
  auto a = profile(ch05::make_variant("addmm", in, vo), dir);
  CHECK(fact(ch05::check_across({e, a}, {64, 1, 4}), "one_op").status == Status::Pass);
  a.trace = e.trace;  // the eager trace presented as the rewrite
  CHECK(fact(ch05::check_across({e, a}, {64, 1, 4}), "one_op").status == Status::Fail);
}

TEST_CASE("ch05: live CPU: the graph variant is not applicable without CUDA", "[ch05][cpu]") {
  if (torch::cuda::is_available()) SKIP("a CUDA device is present: see [gpu]");
  const auto v = ch05::make_variant("graph", cpu_inputs(), {});
  CHECK_THAT(v.unavailable, ContainsSubstring("not applicable on CPU"));
  CHECK_FALSE(v.step);
}

TEST_CASE("ch05: live: the AOTI package built with this build computes x @ w + b", "[ch05][cpu]") {
  ch05::VariantOptions vo;
  vo.aoti = ch05::read_aoti_manifest(WB05_AOTI_MANIFEST);
  if (!vo.aoti.available) SKIP("no AOTI package in this build: " << vo.aoti.reason);
  const bool cuda = vo.aoti.device == "cuda";
  if (cuda && !torch::cuda::is_available()) SKIP("the package was compiled for CUDA and there is no GPU here");
  auto opts = torch::TensorOptions().device(cuda ? torch::kCUDA : torch::kCPU).dtype(cuda ? torch::kBFloat16 : torch::kFloat);
  torch::manual_seed(0);
  const ch05::Inputs in{torch::randn({96, 96}, opts), torch::randn({96, 96}, opts), torch::randn({96, 96}, opts)};

  // The generated wrapper calls the device's addmm shim; the extracted source is where it says.
  CHECK_THAT(vo.aoti.generated_call, ContainsSubstring(cuda ? "aoti_torch_cuda_addmm_out" : "aoti_torch_cpu_addmm_out"));
  REQUIRE(fs::exists(vo.aoti.wrapper));
  CHECK_THAT(proc::slurp(vo.aoti.wrapper), ContainsSubstring(vo.aoti.generated_call));

  auto loader = torch::inductor::AOTIModelPackageLoader(vo.aoti.package.string());
  const auto out = loader.run({in.x, in.w, in.b});  // N = 96: the package's N is dynamic
  REQUIRE(out.size() == 1);
  const auto want = torch::addmm(in.b, in.x, in.w);
  CHECK(torch::allclose(out[0].to(torch::kFloat), want.to(torch::kFloat), 1e-2, 1e-2));

  // In the chapter's variant: no matmul/mm/add under the annotation.
  if (!cuda) {
    auto r = profile(ch05::make_variant("aoti", in, vo), proc::scratch("ch05_aoti"));
    r.generated_call = vo.aoti.generated_call;
    CHECK(fact(ch05::check_across({r}, {96, 1, 4}), "one_op").status == Status::Pass);
  }
}

TEST_CASE("ch05: a missing, corrupt or stale AOTI manifest makes the variant unavailable, with the reason", "[ch05][cpu]") {
  const fs::path dir = proc::scratch("ch05_manifest");
  auto m = ch05::read_aoti_manifest(dir / "none.json");
  CHECK_FALSE(m.available);
  CHECK_THAT(m.reason, ContainsSubstring("05_compiled_addmm_aoti"));

  std::ofstream(dir / "bad.json") << "{\"available\": tru";
  m = ch05::read_aoti_manifest(dir / "bad.json");
  CHECK_FALSE(m.available);
  CHECK_THAT(m.reason, ContainsSubstring("not a valid manifest"));

  std::ofstream(dir / "stale.json") << "{\"available\": true, \"package\": \"" << (dir / "gone.pt2").string() << "\"}";
  m = ch05::read_aoti_manifest(dir / "stale.json");
  CHECK_FALSE(m.available);
  CHECK_THAT(m.reason, ContainsSubstring("does not exist"));

  std::ofstream(dir / "failed.json") << "{\"available\": false, \"reason\": \"building the AOTI package failed: X\"}";
  ch05::VariantOptions vo;
  vo.aoti = ch05::read_aoti_manifest(dir / "failed.json");
  const auto v = ch05::make_variant("aoti", cpu_inputs(), vo);
  CHECK_THAT(v.unavailable, ContainsSubstring("building the AOTI package failed: X"));

  // A package for the other device is refused before loading.
  vo.aoti.available = true;
  vo.aoti.package = WB05_AOTI_MANIFEST;  // any existing file: never loaded
  vo.aoti.device = "cuda";
  CHECK_THAT(ch05::make_variant("aoti", cpu_inputs(), vo).unavailable, ContainsSubstring("compiled for cuda"));
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

TEST_CASE("ch05: the chapter on the CPU: every variant in its folder, lessons hold (--check)", "[ch05][cpu]") {
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

TEST_CASE("ch05: the chapter rejects an unknown --variant or --census before any work", "[ch05][cpu]") {
  for (const auto& args : {std::vector<std::string>{"--variant", "jit"}, {"--census", "sometimes"}}) {
    const auto r = chapter_runner::run("05_compiled_addmm", args, "badflag");
    CHECK(r.rc == 2);
    CHECK_THAT(r.err, ContainsSubstring(args[0]));
    CHECK_FALSE(fs::exists(r.dir / "eager"));
  }
}

TEST_CASE("ch05: GPU 64x64: the launches halve, the graph saves >= 4x CPU, the census agrees", "[ch05][gpu]") {
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
  ch05::VariantRun a;
  a.name = "addmm";
  a.trace = wb::read_trace(r.dir / "addmm" / "trace.json");
  CHECK(ch05::summarize(a).memcpy_bytes == int64_t{4096} * 4096 * 2);
}

TEST_CASE("ch05: GPU: a census after profiling reports the conflict with Kineto, not counts", "[ch05][gpu]") {
  const auto r = chapter_runner::run_gpu("05_compiled_addmm", {"--size", "64", "--variant", "eager", "--census", "after"}, "after");
  INFO(r.out << r.err);
  CHECK(r.rc == 0);
  const std::string text = proc::slurp(r.dir / "comparison.txt");
  CHECK_THAT(text, ContainsSubstring("CUPTI already has a subscriber"));
  CHECK(across_status(comparison(r), "census_vs_kineto") == "not_applicable");
}

// ---- the recorded H200 run ------------------------------------------------------------------

TEST_CASE("ch05: recorded H200 output: the cross-variant lessons hold", "[ch05][h200]") {
  const fs::path dir = chapter_runner::root() / "expected_output" / "h200" / "05_compiled_addmm";
  if (!fs::exists(dir)) SKIP("not recorded yet: " << dir.string());
  const auto j = nlohmann::json::parse(proc::slurp(dir / "comparison.json"), nullptr, false);
  REQUIRE(j.is_object());
  std::vector<ch05::VariantRun> runs;
  for (const auto& name : ch05::variant_names()) {
    const fs::path t = chapter_runner::recorded_trace("h200", "05_compiled_addmm/" + name);
    REQUIRE_FALSE(t.empty());
    ch05::VariantRun r;
    r.name = name;
    r.trace = wb::read_trace(t);
    for (const auto& f : j["facts"])
      if (f["id"] == "cpu_per_step" && f["data"].contains(name)) r.cpu_us = f["data"][name]["cpu_us"].get<double>();
    for (const auto& f : j["facts"])
      if (f["id"] == "one_op" && name == "aoti") r.generated_call = f["data"]["aoti"].value("generated_call", "");
    runs.push_back(std::move(r));
  }
  const int64_t n = j["options"]["problem"]["n"].get<int64_t>();
  const auto rep = ch05::check_across(runs, {n, 1, 2});
  for (const char* id : {"one_op", "launches", "same_gemm", "cpu_per_step", "aoti_waits"}) {
    INFO(id << ": " << fact(rep, id).verdict);
    CHECK(fact(rep, id).status == Status::Pass);
  }
  // The recorded census verdict, as the run judged it.
  CHECK(across_status(j, "census_vs_kineto") == "pass");
}
