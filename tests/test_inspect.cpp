// `inspect`: the cheatsheet's rules on a real Python CPU trace and on synthetic GPU traces,
// through the library (inspect_trace) and through the command line (exit codes, messages).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "lessons_fixtures.hpp"
#include "process.hpp"
#include "workbook/lessons.hpp"
#include "workbook/trace_reader.hpp"

using Catch::Matchers::ContainsSubstring;
using wb::Status;

namespace {

wb::LessonsReport inspect(const wb::Trace& t, wb::FactOptions o = {}) {
  const wb::TraceModel m(t);
  return wb::inspect_trace(m, o);
}

const wb::Fact& find(const wb::LessonsReport& r, std::string_view id) {
  for (const auto& f : r.facts)
    if (f.id == id) return f;
  FAIL("no fact " << id);
  throw;
}

using Run = proc::Exit;

// Runs the built `inspect` binary; skips when it has not been built.
Run run_inspect(const std::vector<std::string>& args) {
  const auto bin = proc::bin("inspect");
  if (!std::filesystem::exists(bin)) SKIP("inspect binary not built: " << bin.string());
  return proc::run(bin, args);
}

}  // namespace

TEST_CASE("inspect a real Python CPU trace", "[tools][cpu]") {
  const wb::Trace t = wb::read_trace(fixtures::data_dir() / "py_cpu_64.json");
  const wb::LessonsReport r = inspect(t);
  CHECK(r.kind == "inspect");
  CHECK(r.facts.size() == wb::all_facts().size());
  CHECK(r.device == "CPU only");
  // The cold first step and its dead window show, even without a GPU.
  const wb::Fact& steps = find(r, "step_widths");
  CHECK(steps.status == Status::Pass);
  CHECK_THAT(steps.evidence.front(), ContainsSubstring("ProfilerStep#2"));
  const wb::Fact& dead = find(r, "dead_window");
  CHECK(dead.status == Status::Pass);
  CHECK(dead.data["gaps"].size() == 3);
  CHECK(dead.data["gaps"][0]["first_child"] == "aten::matmul");
  // Python's table shows aten::resolve_conj x9: the most called op.
  const wb::Fact& hot = find(r, "hot_ops");
  CHECK(hot.data["top"][0]["name"] == "aten::resolve_conj");
  CHECK(hot.data["top"][0]["calls"] == 9);
  CHECK(hot.status == Status::Fail);  // 3 per step is no hot loop
  // Everything that needs a GPU says so.
  for (const char* id : {"overhead_bound", "launch_path", "kernel_footprint", "launch_latency", "end_sync"})
    CHECK(find(r, id).status == Status::NotApplicable);
  CHECK(r.failed + r.passed + r.not_applicable == static_cast<int>(r.facts.size()));
}

TEST_CASE("inspect a synthetic GPU trace: overhead-bound, idle sync, no artefacts", "[tools][cpu]") {
  const wb::LessonsReport r =
      inspect(fixtures::make_trace({}), {"matmul_add", wb::Problem::square(64, 1, 2), 1.5});
  CHECK(find(r, "overhead_bound").status == Status::Pass);
  CHECK(find(r, "end_sync").status == Status::Pass);
  CHECK(find(r, "launch_latency").status == Status::Fail);
  CHECK(find(r, "profiler_artefacts").status == Status::Fail);
  CHECK(find(r, "throughput").measured);
  CHECK_THAT(find(r, "dispatch_chain").value, ContainsSubstring("cuLaunchKernelEx > nvjet_"));
  const std::string text = wb::render_lessons(r, wb::Format::Text);
  CHECK_THAT(text, ContainsSubstring("[ YES] Overhead-bound vs compute-bound"));
  CHECK_THAT(text, ContainsSubstring("YES = this trace shows it"));
}

TEST_CASE("inspect a compute-bound gz trace read from disk", "[tools][cpu]") {
  const wb::Trace t = wb::read_trace(fixtures::data_dir() / "h200_4096_warm.json.gz");
  const wb::LessonsReport r = inspect(t, {"matmul_add", wb::Problem::square(4096, 1, 2), 1.5});
  CHECK(find(r, "overhead_bound").status == Status::Fail);
  CHECK(find(r, "launch_latency").status == Status::Pass);
  CHECK(find(r, "copies_next_to_launch").status == Status::Pass);  // cuBLAS's memset
  CHECK(find(r, "throughput").status == Status::Pass);
}

TEST_CASE("inspect command line: formats, help, bad flags, bad traces", "[tools][cpu]") {
  const std::string trace = (fixtures::data_dir() / "py_cpu_64.json").string();
  const Run text = run_inspect({trace});
  CHECK(text.code == 0);
  CHECK_THAT(text.out, ContainsSubstring("ProfilerStep widths"));

  const Run md = run_inspect({trace, "--format", "markdown", "--annotation", "matmul_add"});
  CHECK(md.code == 0);
  CHECK_THAT(md.out, ContainsSubstring("# inspect"));

  const Run js = run_inspect({trace, "--format", "json"});
  CHECK(js.code == 0);
  CHECK(nlohmann::json::parse(js.out)["kind"] == "inspect");

  const Run ch = run_inspect({trace, "--chapter", "01_cold_64"});
  CHECK(ch.code == 0);
  CHECK_THAT(ch.out, ContainsSubstring("Lessons for 01_cold_64"));

  CHECK(run_inspect({"--help"}).code == 0);
  CHECK(run_inspect({}).code == 2);                           // TRACE missing
  CHECK(run_inspect({trace, "--format", "yaml"}).code == 2);  // bad value
  CHECK(run_inspect({trace, "--chapter", "99_nope"}).code == 2);
  CHECK(run_inspect({trace, "--no-such-flag"}).code == 2);

  const Run missing = run_inspect({"/nonexistent/trace.json"});
  CHECK(missing.code == 1);
  CHECK_THAT(missing.err, ContainsSubstring("/nonexistent/trace.json"));

  const auto bad = std::filesystem::temp_directory_path() / "wb_inspect_bad.json";
  std::ofstream(bad) << "{\"traceEvents\": [ {\"ph\": \"X\", \"ts\": ";
  const Run corrupt = run_inspect({bad.string()});
  CHECK(corrupt.code == 1);
  CHECK_THAT(corrupt.err, ContainsSubstring("cannot read trace"));
  std::filesystem::remove(bad);
}

// ---- any trace, not only the workbook's ---------------------------------------------------

TEST_CASE("inspect finds and judges the user's annotation in Python's training trace",
          "[tools][cpu][inspect]") {
  const wb::Trace t =
      wb::read_trace(std::string(WORKBOOK_ROOT) + "/tests/data/python/cpu_shapes_flops.json.gz");
  const wb::TraceModel m(t);
  CHECK(wb::user_annotations(m) == std::vector<std::string>{"train_step"});
  wb::FactOptions o;
  o.annotation = "";  // find them
  const wb::LessonsReport r = wb::inspect_trace(m, o);
  int judged = 0;
  for (const auto& f : r.facts)
    if ((f.id == "dead_window" || f.id == "dispatch_chain") &&
        f.title.find("'train_step'") != std::string::npos) {
      CHECK(f.status != wb::Status::NotApplicable);
      ++judged;
    }
  CHECK(judged == 2);
  // Its FLOPs (with_flops) give the CPU GEMMs' rate; no device, so no verdict on a peak.
  for (const auto& f : r.facts)
    if (f.id == "throughput") {
      CHECK(f.status == wb::Status::NotApplicable);
      CHECK(f.data.contains("cpu_gemm_gflops"));
    }
  // The old default looks for matmul_add, which this trace does not have: n/a, the bug report.
  wb::FactOptions fixed;
  fixed.annotation = "matmul_add";
  for (const auto& f : wb::inspect_trace(m, fixed).facts)
    if (f.id == "dispatch_chain") CHECK(f.status == wb::Status::NotApplicable);
}

TEST_CASE("inspect: throughput from the trace's FLOPs, or the flags that would give them",
          "[tools][cpu][inspect]") {
  wb::Trace t =
      wb::read_trace(std::string(WORKBOOK_ROOT) + "/expected_output/h200/05_compiled_addmm/addmm/trace.json");
  wb::FactOptions o;  // no problem size
  {
    const wb::TraceModel m(t);
    const wb::Fact f = wb::compute_fact("throughput", m, o);
    CHECK(f.status == wb::Status::NotApplicable);
    CHECK(f.verdict.find("with_flops") != std::string::npos);
  }
  // What with_flops records for this run's addmm (4096^3 x 2).
  for (auto& e : t.events)
    if (e.name == "aten::addmm") e.flops = 2LL * 4096 * 4096 * 4096;
  const wb::TraceModel m(t);
  const wb::Fact f = wb::compute_fact("throughput", m, o);
  REQUIRE(f.measured);
  CHECK(f.data["source"] == "trace FLOPs (with_flops)");
  // 137 GFLOP in ~197 us: about 700 TFLOP/s, i.e. most of the H200's dense bf16 peak.
  CHECK(f.data["gemm_tflops"].get<double>() > 400);
  CHECK(f.data["gemm_tflops"].get<double>() < 1000);
  CHECK(f.data.contains("gemm_pct_of_peak"));
}

TEST_CASE("inspect: a rule that depends on the device says so instead of a bare no",
          "[tools][cpu][inspect]") {
  // Occupancy queries before GEMM launches: every call on the A100, only the first on Hopper.
  auto launch_path = [](const std::string& file, bool inspect) {
    const wb::Trace t = wb::read_trace(std::string(WORKBOOK_ROOT) + "/tests/data/lessons/" + file);
    const wb::TraceModel m(t);
    wb::FactOptions o;
    o.annotation = "";
    const auto r =
        inspect ? wb::inspect_trace(m, o) : wb::check_lessons(m, *wb::find_lesson_spec("01_cold_64"), {});
    for (const auto& f : r.facts)
      if (f.id == "launch_path") return f;
    return wb::Fact{};
  };
  const wb::Fact h200 = launch_path("h200_64_first_call.json", true);
  const wb::Fact warm = launch_path("h200_4096_warm.json.gz", true);
  const wb::Fact a100 = launch_path("a100_64_cold.json", true);
  CHECK(a100.status == wb::Status::Pass);
  CHECK(a100.verdict.find("depends on the device") == std::string::npos);  // a yes needs no excuse
  for (const wb::Fact* f : {&h200, &warm}) {
    if (f->status != wb::Status::Fail) continue;
    CHECK(f->verdict.find("depends on the device") != std::string::npos);
    CHECK(f->verdict.find("NVIDIA H200") != std::string::npos);
  }
  CHECK((h200.status == wb::Status::Fail || warm.status == wb::Status::Fail));
  // A chapter's judgement keeps its recorded verdict: no note there.
  for (const auto& file : {"h200_64_first_call.json", "a100_64_cold.json"})
    CHECK(launch_path(file, false).verdict.find("depends on the device") == std::string::npos);
}

// ---- user-shaped traces get the general rules -----------------------------------------------
namespace {
const std::filesystem::path kPython = std::filesystem::path(WORKBOOK_ROOT) / "tests/data/python";
}  // namespace

TEST_CASE("inspect a ConvNet's training step: convolution, normalization and pooling are work, not overhead",
          "[tools][cpu][inspect]") {
  // make_user_fixtures.py: conv, batch norm, ReLU, max pool, Linear; "forward", "backward" and
  // "optimizer" annotations in each step. your_model passes its annotation the same way.
  const wb::Trace t = wb::read_trace(kPython / "cpu_convnet_stack.json.gz");
  const wb::TraceModel m(t);
  CHECK_FALSE(wb::is_chapter_trace(m));
  wb::FactOptions o;
  o.annotation = "forward";
  const wb::LessonsReport r = wb::inspect_trace(m, o);
  CHECK_THAT(r.title, ContainsSubstring("not a chapter's"));
  // The chapters' own rules are not judged on it.
  for (const auto& f : r.facts) CHECK((f.id != "pointwise_traffic" && f.id != "batch_chain"));
  const wb::Fact& shares = find(r, "cpu_shares");
  REQUIRE(shares.measured);
  INFO(shares.value);
  for (const char* cls : {"convolution", "normalization", "pooling"}) {
    INFO(cls);
    REQUIRE(shares.data.contains("classes"));
    REQUIRE(shares.data.at("classes").contains(cls));
    CHECK(shares.data.at("classes").at(cls).at("share").get<double>() > 0);
    CHECK_FALSE(shares.data.at("classes").at(cls).at("recognized_by").get<std::string>().empty());
  }
  CHECK(shares.data.at("classes").at("convolution").at("share").get<double>() > 0.1);
  CHECK(shares.data.at("overhead_share").get<double>() < 0.9);
  CHECK_THAT(shares.detail, ContainsSubstring("how each kind of work is recognized"));
}

TEST_CASE("inspect picks the main annotation of a user's trace itself, through Python frames",
          "[tools][cpu][inspect]") {
  // with_stack traces nest every op in python_function events: the annotations are still found.
  const wb::Trace mlp = wb::read_trace(kPython / "cpu_mlp_stack.json.gz");
  const wb::TraceModel mm(mlp);
  CHECK(wb::user_annotations(mm) == std::vector<std::string>{"train_step"});
  // Three annotations per step: the longest is judged, the others are named in its evidence.
  const wb::Trace conv = wb::read_trace(kPython / "cpu_convnet_stack.json.gz");
  const wb::TraceModel mc(conv);
  const auto names = wb::user_annotations(mc);
  REQUIRE(names.size() == 3);
  wb::FactOptions o;
  o.annotation = "";
  const wb::LessonsReport r = wb::inspect_trace(mc, o);
  int judged = 0;
  for (const auto& f : r.facts)
    if (f.id == "dead_window" || f.id == "dispatch_chain") {
      ++judged;
      CHECK_THAT(f.title, ContainsSubstring("'" + r.options.annotation + "'"));
      bool names_others = false;
      for (const auto& e : f.evidence)
        names_others |= e.find("the longest top-level annotation") != std::string::npos;
      CHECK(names_others);
    }
  CHECK(judged == 2);
  CHECK(std::find(names.begin(), names.end(), r.options.annotation) != names.end());
}

TEST_CASE("inspect on a chapter's trace is unchanged: every rule, the chapters' title",
          "[tools][cpu][inspect]") {
  const wb::Trace t = wb::read_trace(fixtures::data_dir() / "py_cpu_64.json");
  const wb::TraceModel m(t);
  CHECK(wb::is_chapter_trace(m));
  const wb::LessonsReport r = inspect(t);
  CHECK(r.title == "Cheatsheet patterns found in the trace");
  CHECK(r.facts.size() == wb::all_facts().size());
}

TEST_CASE("inspect on a user's trace: a ratio of a few microseconds over few samples is no finding",
          "[tools][cpu][inspect]") {
  // Three steps of a user's loop: the first step 22 us wider (cold), and inside each step the
  // annotation's first op starts 3 us, then 1 us, 1 us after it: 3x the median gap, 2 us of it.
  wb::Trace t;
  t.source = "<synthetic user loop>";
  auto add = [&](std::string name, wb::Kind kind, int64_t start_ns, int64_t dur_ns, int64_t id) {
    wb::Event e;
    e.name = std::move(name);
    e.kind = kind;
    e.category = std::string(wb::kind_name(kind));
    e.start_ns = start_ns;
    e.dur_ns = dur_ns;
    e.pid = e.tid = 7;
    e.id = id;
    t.events.push_back(e);
  };
  const int64_t widths[] = {60'000, 38'000, 38'000}, gaps[] = {3'000, 1'000, 1'000};
  int64_t at = 0, id = 1;
  for (int s = 0; s < 3; ++s) {
    add("ProfilerStep#" + std::to_string(s), wb::Kind::UserAnnotation, at, widths[s], id++);
    add("my_block", wb::Kind::UserAnnotation, at + 500, widths[s] - 1'000, id++);
    add("aten::relu", wb::Kind::CpuOp, at + 500 + gaps[s], 20'000, id++);
    at += widths[s] + 2'000;
  }
  wb::FactOptions o;
  o.annotation = "";
  const wb::LessonsReport r = inspect(t, o);
  const wb::Fact& steps = find(r, "step_widths");
  INFO(steps.value << " | " << steps.verdict);
  CHECK(steps.status == Status::Pass);  // 22 us over three steps: found
  const wb::Fact& dead = find(r, "dead_window");
  INFO(dead.value << " | " << dead.verdict);
  CHECK(dead.data["first_over_median_later"].get<double>() >= 1.5);  // the ratio alone says yes ...
  CHECK(dead.status == Status::NotApplicable);                       // ... on 2 us: no finding
  CHECK_THAT(dead.verdict, ContainsSubstring("not enough evidence"));
  // Two steps only: the same ratio is no finding either.
  t.events.resize(6);
  const wb::LessonsReport two_steps = inspect(t, o);
  const wb::Fact& two = find(two_steps, "step_widths");
  CHECK(two.data["first_over_median_rest"].get<double>() >= 1.5);
  CHECK(two.status == Status::NotApplicable);
}
