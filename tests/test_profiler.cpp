// The profiler wrapper, live on CPU (and on GPU when one is present).
#include <torch/types.h>
// c10's logging defines a glog-style CHECK that would shadow Catch2's.
#undef CHECK
#include <catch2/catch_test_macros.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <unistd.h>

#include "workbook/trace_model.hpp"
#include "workbook/profiler.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;

namespace {
fs::path temp_dir(const std::string& name) {
  auto d = fs::temp_directory_path() / ("wb_test_profiler_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// The lesson-01 loop, with a chosen schedule and step count.
std::vector<wb::CycleResult> run_loop(const wb::Schedule& s, int steps, torch::Device dev) {
  auto opts = torch::TensorOptions().device(dev);
  auto x = torch::randn({64, 64}, opts), w = torch::randn({64, 64}, opts), b = torch::randn({64, 64}, opts);
  wb::ProfilerOptions po;
  po.schedule = s;
  po.cuda = dev.is_cuda();
  wb::Profiler prof(po);
  prof.start();
  for (int i = 0; i < steps; ++i) {
    {
      wb::Annotation a("matmul_add");
      auto y = torch::add(torch::matmul(x, w), b);
    }
    prof.step();
  }
  prof.stop();
  return std::move(prof.results());
}

std::set<std::string> step_names(const wb::Trace& t) {
  std::set<std::string> s;
  for (const auto& e : t.events)
    if (e.name.rfind("ProfilerStep#", 0) == 0 && e.kind == wb::Kind::UserAnnotation) s.insert(e.name);
  return s;
}

// matmul_add > aten::matmul nesting, checked through the model's call tree.
bool matmul_nested_in_annotation(const wb::Trace& t) {
  wb::TraceModel m(t);
  auto matmuls = m.find("aten::matmul");
  if (matmuls.empty()) return false;
  for (auto i : matmuls) {
    auto p = m.parent(i);
    if (!p || m.at(*p).name != "matmul_add") return false;
  }
  return true;
}
}  // namespace

TEST_CASE("CPU smoke: wait=1 warmup=1 active=3 records ProfilerStep#2..#4 and the nesting",
          "[profiler][ch01][cpu]") {
  auto results = run_loop(wb::Schedule{1, 1, 3, 1, 0}, 5, torch::kCPU);
  REQUIRE(results.size() == 1);
  auto& r = results[0];
  CHECK(r.first_step == 2);
  CHECK(r.last_step == 4);
  const std::set<std::string> want{"ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"};
  CHECK(step_names(r.trace()) == want);

  // The Chrome trace on disk is valid JSON and holds the same steps.
  auto dir = temp_dir("smoke");
  auto path = dir / "trace.json";
  r.save_chrome_trace(path);
  CHECK_THROWS(r.save_chrome_trace(dir / "again.json"));  // Kineto serializes once
  std::ifstream in(path);
  auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  REQUIRE(j.is_object());
  REQUIRE(j.contains("traceEvents"));
  for (const auto& p : fs::directory_iterator(dir))  // no temp file left behind
    CHECK(p.path().filename().string().find(".partial") == std::string::npos);

  auto disk = wb::read_trace(path);
  CHECK(step_names(disk) == step_names(r.trace()));
  CHECK(matmul_nested_in_annotation(disk));
  CHECK(matmul_nested_in_annotation(r.trace()));
  fs::remove_all(dir);
}

TEST_CASE("the nesting check fails when the annotation is missing", "[profiler][cpu]") {
  // Same loop without the annotation: aten::matmul's parent is the ProfilerStep, not matmul_add.
  auto x = torch::randn({8, 8});
  wb::ProfilerOptions po;
  po.schedule = wb::Schedule{0, 0, 2, 1, 0};
  wb::Profiler prof(po);
  prof.start();
  for (int i = 0; i < 2; ++i) {
    auto y = torch::matmul(x, x);
    prof.step();
  }
  prof.stop();
  REQUIRE(prof.results().size() == 1);
  CHECK_FALSE(matmul_nested_in_annotation(prof.results()[0].trace()));
}

TEST_CASE("schedule 0,0,N still prepares before enabling (no crash) and records every step",
          "[profiler][cpu]") {
  auto results = run_loop(wb::Schedule{0, 0, 3, 1, 0}, 3, torch::kCPU);
  REQUIRE(results.size() == 1);
  const std::set<std::string> want{"ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"};
  CHECK(step_names(results[0].trace()) == want);
}

TEST_CASE("repeat=2 gives two cycles; repeat=0 cycles until the steps run out", "[profiler][cpu]") {
  auto two = run_loop(wb::Schedule{1, 1, 2, 2, 0}, 8, torch::kCPU);
  REQUIRE(two.size() == 2);
  const std::set<std::string> first{"ProfilerStep#2", "ProfilerStep#3"},
      second{"ProfilerStep#6", "ProfilerStep#7"};
  CHECK(step_names(two[0].trace()) == first);
  CHECK(step_names(two[1].trace()) == second);

  auto forever = run_loop(wb::Schedule{1, 0, 2, 0, 0}, 9, torch::kCPU);
  CHECK(forever.size() == 3);  // NRS NRS NRS
  // Stopping mid-cycle still saves (Python: RECORD -> exit = stop + trace_ready). As in
  // Python, the step opened by the last step() call (#2, empty) is closed inside the window.
  auto partial = run_loop(wb::Schedule{0, 0, 5, 1, 0}, 2, torch::kCPU);
  REQUIRE(partial.size() == 1);
  CHECK(partial[0].last_step == 2);
  const std::set<std::string> want{"ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"};
  CHECK(step_names(partial[0].trace()) == want);
}

TEST_CASE("GPU: kernels are attributed and the window ends with a device synchronize",
          "[profiler][ch01][gpu]") {
  if (!wb::cuda_available()) SKIP("no CUDA device");
  auto results = run_loop(wb::Schedule{1, 1, 3, 1, 0}, 5, torch::kCUDA);
  REQUIRE(results.size() == 1);
  const auto& t = results[0].trace();
  int kernels = 0, syncs = 0;
  for (const auto& e : t.events) {
    if (e.kind == wb::Kind::Kernel) ++kernels;
    if (e.name == "cudaDeviceSynchronize") ++syncs;
  }
  CHECK(kernels == 6);  // one GEMM + one add per active step
  CHECK(syncs >= 1);    // sync-then-stop
}

TEST_CASE("a result saved after a later session still has its own events", "[profiler][cpu][gpu]") {
  // Kineto's exporter reads its session's CUPTI buffers, which the next session reuses: saving
  // cycle 1 after cycle 2 ran used to give kernels at ts 0 / dur 0 (seen on the H200). The
  // wrapper parks unsaved results to a temp file when a new session starts.
  const torch::Device dev = wb::cuda_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
  auto first = run_loop(wb::Schedule{0, 0, 2, 1, 0}, 2, dev);
  auto second = run_loop(wb::Schedule{0, 0, 3, 1, 0}, 3, dev);  // another session, then save both
  REQUIRE(first.size() == 1);
  REQUIRE(second.size() == 1);
  auto dir = temp_dir("two_sessions");
  second[0].save_chrome_trace(dir / "second.json");
  first[0].save_chrome_trace(dir / "first.json");
  for (const char* f : {"first.json", "second.json"}) {
    const wb::Trace t = wb::read_trace(dir / f);
    CAPTURE(f);
    CHECK(step_names(t).size() == (std::string(f) == "first.json" ? 2u : 3u));
    int kernels = 0, zero = 0;
    for (const auto& e : t.events)
      if (e.kind == wb::Kind::Kernel) {
        ++kernels;
        if (e.dur_ns == 0) ++zero;
      }
    if (dev.is_cuda()) CHECK(kernels > 0);
    CHECK(zero == 0);
  }
  int parked_left = 0;  // the parked temp files were moved into place, none left behind
  for (const auto& p : fs::directory_iterator(fs::temp_directory_path()))
    if (p.path().filename().string().rfind("wb-trace-" + std::to_string(::getpid()) + "-", 0) == 0)
      ++parked_left;
  CHECK(parked_left == 0);
  fs::remove_all(dir);
}

TEST_CASE("with_flops: the trace carries FLOPs and shapes, and the table shows Python's columns",
          "[profiler][tools][cpu]") {
  auto x = torch::randn({64, 32}), w = torch::randn({32, 16}), b = torch::randn({16});
  wb::ProfilerOptions po;
  po.schedule = wb::Schedule{0, 1, 2, 1, 0};
  po.cuda = false;
  po.with_flops = true;
  auto three_addmm_steps = [&](wb::Profiler& p) {
    p.start();
    for (int i = 0; i < 3; ++i) {
      torch::addmm(b, x, w);
      p.step();
    }
    p.stop();
  };
  wb::Profiler prof(po);
  three_addmm_steps(prof);
  REQUIRE(prof.results().size() == 1);
  auto& r = prof.results()[0];
  int64_t flops = 0;
  std::string shapes;
  for (const auto& e : r.trace().events)
    if (e.name == "aten::addmm") flops = e.flops, shapes = e.input_shapes;
  CHECK(flops == 2 * 64 * 32 * 16);  // torch's formula, from the in-memory events
  CHECK(shapes == "[[16], [64, 32], [32, 16], [], []]");
  CHECK(r.trace().with_flops);
  const auto dir = temp_dir("with_flops");
  r.save_chrome_trace(dir / "trace.json");
  // The saved trace says how it was recorded, and the reader computes the same FLOPs.
  const wb::Trace disk = wb::read_trace(dir / "trace.json");
  CHECK(disk.with_flops);
  CHECK(disk.record_shapes);
  int64_t disk_flops = 0;
  for (const auto& e : disk.events)
    if (e.name == "aten::addmm") disk_flops = e.flops;
  CHECK(disk_flops == flops);
  // Without the option: no FLOPs, no flag.
  wb::ProfilerOptions plain = po;
  plain.with_flops = false;
  wb::Profiler p2(plain);
  three_addmm_steps(p2);
  CHECK_FALSE(p2.results()[0].trace().with_flops);
}
