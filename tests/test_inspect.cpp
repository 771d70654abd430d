// `inspect`: the cheatsheet's rules on a real Python CPU trace and on synthetic GPU traces,
// through the library (inspect_trace) and through the command line (exit codes, messages).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

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

TEST_CASE("inspect a real Python CPU trace") {
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

TEST_CASE("inspect a synthetic GPU trace: overhead-bound, idle sync, no artefacts") {
  const wb::LessonsReport r = inspect(fixtures::make_trace({}), {"matmul_add", {64, 1, 2}, 1.5});
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

TEST_CASE("inspect a compute-bound gz trace read from disk") {
  const wb::Trace t = wb::read_trace(fixtures::data_dir() / "h200_4096_warm.json.gz");
  const wb::LessonsReport r = inspect(t, {"matmul_add", {4096, 1, 2}, 1.5});
  CHECK(find(r, "overhead_bound").status == Status::Fail);
  CHECK(find(r, "launch_latency").status == Status::Pass);
  CHECK(find(r, "copies_next_to_launch").status == Status::Pass);  // cuBLAS's memset
  CHECK(find(r, "throughput").status == Status::Pass);
}

TEST_CASE("inspect command line: formats, help, bad flags, bad traces") {
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
  CHECK(run_inspect({}).code == 2);                                  // TRACE missing
  CHECK(run_inspect({trace, "--format", "yaml"}).code == 2);         // bad value
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
