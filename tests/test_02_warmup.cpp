// Chapter 02 (warmup): its lessons, live (the chapter program in a fresh process, so "cold" is
// really the first call of a process), on the GPU when there is one, on the recorded H200 traces
// (its own, its experiment profiler_startup's, and chapter 01's truly cold run as the negative).
// Relationships with stated tolerances, never absolute times; each check also shown failing on
// the input it must reject.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "chapter_runner.hpp"
#include "lessons_fixtures.hpp"
#include "workbook/lessons.hpp"
#include "workbook/trace_reader.hpp"

using Catch::Matchers::ContainsSubstring;
using chapter_runner::fact;
namespace fs = std::filesystem;

namespace {

const char* kChapter = "02_warmup";

double first_over_rest(const chapter_runner::Result& r) {
  return fact(r.lessons, "step_widths")["data"]["first_over_median_rest"].get<double>();
}

wb::LessonsReport spec_on(const wb::Trace& t, int64_t n = 64) {
  const wb::TraceModel m(t);
  wb::FactOptions o;
  o.problem = wb::Problem::square(n, 1, 2);
  return wb::check_lessons(m, *wb::find_lesson_spec(kChapter), o);
}

wb::LessonsReport spec_on(const wb::Trace& t, const std::string& spec, int64_t n = 64) {
  const wb::TraceModel m(t);
  wb::FactOptions o;
  o.problem = wb::Problem::square(n, 1, 2);
  return wb::check_lessons(m, *wb::find_lesson_spec(spec), o);
}

// A recorded H200 run (expected_output/h200/<chapter>/trace.json[.gz]); missing is a failure.
wb::Trace recorded(const std::string& chapter) {
  const auto path = chapter_runner::recorded_trace("h200", chapter);
  REQUIRE(!path.empty());
  return wb::read_trace(path);
}

// The GPU's idle time between each step's kernels (the lesson fact kernel_gaps).
wb::Fact gaps_of(const wb::Trace& t) {
  const wb::TraceModel m(t);
  return wb::compute_fact("kernel_gaps", m);
}

const wb::Fact& find(const wb::LessonsReport& r, std::string_view id) {
  for (const auto& f : r.facts)
    if (f.id == id) return f;
  FAIL("no fact " << id);
  throw;
}

// The synthetic H200-like 64x64 run (lessons_fixtures.hpp) with one step whose add kernel
// starts late, and (optionally) a profiler buffer request over that gap.
wb::Trace trace_with_late_add(int late_step, double late_us, bool buffer_request) {
  fixtures::Scenario s;
  s.steps = {{70, 1.5}, {70, 1.5}, {70, 1.5}, {70, 1.5}, {70, 1.5}};
  wb::Trace t = fixtures::make_trace(s);
  int adds = 0;
  for (auto& e : t.events)
    if (e.kind == wb::Kind::Kernel && e.name.find("elementwise") != std::string::npos &&
        adds++ == late_step) {
      e.start_ns += static_cast<int64_t>(late_us * 1000);
      if (buffer_request) {
        wb::Event abr;
        abr.name = "Activity Buffer Request";
        abr.kind = wb::Kind::Other;
        abr.category = "overhead";
        abr.start_ns = e.start_ns - static_cast<int64_t>(late_us * 900);
        abr.dur_ns = static_cast<int64_t>(late_us * 800);
        t.events.push_back(abr);
        break;
      }
    }
  return t;
}

}  // namespace

// ---- live, on whatever device the chapter picks (CPU here, the GPU on a GPU machine) ------

TEST_CASE("ch02: warm steps are even; a truly cold first step is not", "[ch02][cpu]") {
  // Warm: 3 untimed iterations + the schedule's wait/warmup steps. The spec's CPU check (first
  // step < 12x the median of the others; seen up to ~6x on a loaded 2-core VM) holds, so --check
  // exits 0.
  const auto warm = chapter_runner::run(kChapter, {"--check"}, "warm");
  INFO(warm.out << warm.err);
  REQUIRE(warm.lessons.is_object());
  CHECK(warm.rc == 0);
  CHECK(first_over_rest(warm) < 12);

  // Cold: nothing before the profiler and no schedule warmup, in a fresh process. The first
  // recorded step pays every one-time cost (CPU here: a few tens of times; the H200: ms of setup),
  // so the same check fails and --check exits 3. This is the check failing on the wrong input.
  const auto cold =
      chapter_runner::run(kChapter, {"--warmup-iters", "0", "--schedule", "0,0,3", "--check"}, "cold");
  INFO(cold.out << cold.err);
  REQUIRE(cold.lessons.is_object());
  CHECK(cold.rc == 3);
  CHECK(first_over_rest(cold) >= 12);
  CHECK(first_over_rest(cold) >= 2 * first_over_rest(warm));
  CHECK(fact(cold.lessons, "step_widths")["status"] == "fail");
}

TEST_CASE("ch02: bad --warmup-iters is refused before any work", "[ch02][cpu]") {
  const auto r = chapter_runner::run(kChapter, {"--warmup-iters", "-1"}, "badflag");
  CHECK(r.rc == 2);
  CHECK_THAT(r.err, ContainsSubstring("--warmup-iters"));
  CHECK(r.lessons.is_null());  // refused before profiling: nothing written
}

// ---- the spec's checks on synthetic H200-shaped traces: pass and fail ---------------------

TEST_CASE("ch02 spec: launch-to-start stays flat at 64 and fails on a filling queue", "[ch02][cpu]") {
  const wb::Trace flat = wb::read_trace(fixtures::data_dir() / "h200_64_cold.json");
  CHECK(find(spec_on(flat), "launch_latency").status == wb::Status::Pass);
  const wb::Trace queue = wb::read_trace(fixtures::data_dir() / "h200_4096_warm.json.gz");
  CHECK(find(spec_on(queue, 64), "launch_latency").status == wb::Status::Fail);
}

TEST_CASE("ch02 spec: one-time GPU work fails it; on a CPU trace it is not applicable", "[ch02][cpu]") {
  const wb::Trace first = wb::read_trace(fixtures::data_dir() / "h200_64_first_call.json");
  const wb::LessonsReport report = spec_on(first);
  const wb::Fact& art = find(report, "profiler_artefacts");
  CHECK(art.status == wb::Status::Fail);
  CHECK(art.data["activity_buffer_requests"].get<int>() >= 1);
  const wb::Trace cpu = wb::read_trace(fixtures::data_dir() / "py_cpu_64.json");
  CHECK(find(spec_on(cpu), "profiler_artefacts").status == wb::Status::NotApplicable);
}

TEST_CASE("ch02 kernel gaps: an unusual gap is flagged with the profiler event inside it", "[ch02][cpu]") {
  // Five even steps: every step's largest gap is the same, nothing is unusual.
  const wb::Fact ge = gaps_of(trace_with_late_add(-1, 0, false));
  REQUIRE(ge.measured);
  REQUIRE(ge.data["steps"].size() == 5);
  CHECK(ge.data["unusual_steps"] == 0);
  CHECK(ge.data["activity_buffer_requests"] == 0);
  CHECK(ge.status == wb::Status::Fail);  // its default pattern: "an unusual gap" is not there

  // Step #3's add starts 40 us late under a buffer request: flagged, and explained.
  const wb::Fact gl = gaps_of(trace_with_late_add(1, 40, true));
  INFO(gl.detail);
  REQUIRE(gl.data["steps"].size() == 5);
  REQUIRE(gl.data["unusual_step_numbers"].size() == 1);
  CHECK(gl.data["unusual_step_numbers"][0] == 3);
  CHECK(gl.data["steps"][1]["profiler_event_inside"] == true);
  CHECK(gl.data["steps"][0]["profiler_event_inside"] == false);
  CHECK(gl.data["activity_buffer_requests"] == 1);
  CHECK(gl.status == wb::Status::Pass);
  CHECK_THAT(gl.detail, ContainsSubstring("<- unusual"));
  CHECK_THAT(gl.detail, ContainsSubstring("a profiler event overlaps it"));

  // Below the floor (1 us late on a ~10 us gap) is noise, not a finding.
  CHECK(gaps_of(trace_with_late_add(1, 1, false)).data["unusual_steps"] == 0);

  // The H200-shaped first call (tests/data/lessons): its buffer request is counted.
  const wb::Fact gf = gaps_of(wb::read_trace(fixtures::data_dir() / "h200_64_first_call.json"));
  CHECK(gf.data["steps"].size() == 3);
  CHECK(gf.data["activity_buffer_requests"] == 1);
  CHECK(gf.data["activity_buffer_request_us"].get<double>() > 1000);

  // A CPU-only trace has no kernels to space out.
  const wb::Fact gc = gaps_of(wb::read_trace(fixtures::data_dir() / "py_cpu_64.json"));
  CHECK_FALSE(gc.measured);
  CHECK(gc.status == wb::Status::NotApplicable);
  CHECK_THAT(gc.verdict, ContainsSubstring("CPU-only"));
}

// ---- real H200 traces: the warm spec and the profiler_startup experiment -------------------

TEST_CASE("ch02 spec fails on the truly cold H200 trace; the warm recording passes it", "[ch02][h200][cpu]") {
  // Chapter 01's recorded --experiment cold on the H200 (0,0,3, nothing before it): one-time
  // library work, the profiler's buffer request, a first step hundreds of times the others.
  const wb::LessonsReport cold = spec_on(recorded("01_cold_64/cold"), kChapter);
  INFO(wb::render_lessons(cold, wb::Format::Text));
  CHECK(find(cold, "profiler_artefacts").status == wb::Status::Fail);
  CHECK(find(cold, "step_widths").status == wb::Status::Fail);
  CHECK(find(cold, "launch_path").status == wb::Status::Fail);  // the first GEMM's occupancy query
  CHECK_FALSE(cold.ok());
}

TEST_CASE("ch02 profiler_startup: passes on the H200's warm 0,0,20 window, fails on the default run",
          "[ch02][h200][cpu]") {
  const std::string spec = std::string(kChapter) + "/profiler_startup";
  // The recorded --experiment profiler_startup (02_warmup --schedule 0,0,20).
  const wb::LessonsReport startup = spec_on(recorded("02_warmup/profiler_startup"), spec);
  INFO(wb::render_lessons(startup, wb::Format::Text));
  CHECK(startup.failed == 0);
  CHECK(startup.ok());
  CHECK(find(startup, "profiler_artefacts").data["activity_buffer_requests"].get<int>() >= 1);
  CHECK(find(startup, "profiler_artefacts").data["library_events"] == 0);
  CHECK(find(startup, "kernel_gaps").data["steps"].size() == 20);

  // The default run's schedule warmup step absorbed the buffer request: no start-up to see.
  const auto path = chapter_runner::recorded_trace("h200", kChapter);
  REQUIRE(!path.empty());  // expected_output/h200/02_warmup is recorded
  const wb::LessonsReport def = spec_on(wb::read_trace(path), spec);
  INFO(wb::render_lessons(def, wb::Format::Text));
  CHECK(find(def, "profiler_artefacts").status == wb::Status::Fail);
  CHECK_FALSE(def.ok());

  // The truly cold trace has the library work too: not the profiler alone.
  CHECK(find(spec_on(recorded("01_cold_64/cold"), spec), "profiler_artefacts").status == wb::Status::Fail);
}

// ---- the experiment, live on whatever device the chapter picks ----------------------------

TEST_CASE("ch02 --experiment profiler_startup: schedule 0,0,20 into out/profiler_startup/", "[ch02][cpu]") {
  const auto r = chapter_runner::run(
      kChapter, {"--device", "cpu", "--experiment", "profiler_startup", "--check"}, "startup");
  INFO(r.out << r.err);
  CHECK(r.rc == 0);
  const fs::path dir = r.dir / "profiler_startup";
  const auto lessons = nlohmann::json::parse(proc::slurp(dir / "lessons.json"), nullptr, false);
  REQUIRE(lessons.is_object());
  CHECK(lessons["chapter"] == "02_warmup/profiler_startup");
  CHECK(lessons["summary"]["ok"] == true);
  CHECK_FALSE(fs::exists(r.dir / "lessons.json"));  // the default run's folder stays empty
  const wb::Trace t = wb::read_trace(dir / "trace.json");
  const wb::TraceModel m(t);
  REQUIRE(m.steps().size() == 20);
  CHECK(m.steps().front().number == 0);  // no wait or warmup step: 0,0,20
}

// ---- live on the GPU ----------------------------------------------------------------------

TEST_CASE("ch02 GPU: one-time work shows in a cold first call and is gone once warm", "[ch02][gpu]") {
  // On the H200 the first GEMM of a process shows this work only when it is profiled: no
  // warmup iterations and no schedule warmup (chapter 01's --experiment cold recording).
  const auto cold =
      chapter_runner::run_gpu(kChapter, {"--warmup-iters", "0", "--schedule", "0,0,3"}, "gpu_cold");
  INFO(cold.out << cold.err);
  REQUIRE(cold.lessons.is_object());
  const auto& art_cold = fact(cold.lessons, "profiler_artefacts");
  CHECK(art_cold["data"]["count"].get<int>() > 0);
  CHECK(art_cold["status"] == "fail");  // the warm-run expectation rejects it
  CHECK(fact(cold.lessons, "launch_path")["data"]["gemm_occupancy_queries"].get<int>() > 0);

  const auto warm = chapter_runner::run_gpu(kChapter, {"--check"}, "gpu_warm");
  INFO(warm.out << warm.err);
  REQUIRE(warm.lessons.is_object());
  CHECK(warm.rc == 0);
  CHECK(fact(warm.lessons, "profiler_artefacts")["data"]["count"].get<int>() == 0);
  CHECK(fact(warm.lessons, "launch_path")["status"] != "fail");  // Hopper: no occupancy query
  // How far the GPU trails the CPU: each kernel starts after its launch call, and the wait
  // does not build up across steps at 64x64 (the spec's launch_latency: growth < 2).
  const auto& lat = fact(warm.lessons, "launch_latency");
  CHECK(lat["status"] == "pass");
  CHECK(lat["data"]["first_min_us"].get<double>() > 0);
}

TEST_CASE("ch02 GPU: --experiment profiler_startup shows the profiler's own start-up", "[ch02][gpu]") {
  const auto r =
      chapter_runner::run_gpu(kChapter, {"--experiment", "profiler_startup", "--check"}, "gpu_startup");
  INFO(r.out << r.err);
  // Every lesson of 02_warmup/profiler_startup holds live.
  const auto lessons = chapter_runner::experiment_lessons_pass(
      r, "profiler_startup", {"profiler_artefacts", "step_widths", "kernel_gaps"});
  // The H200 shows one ms-long Activity Buffer Request for the first profiled call.
  CHECK(fact(lessons, "profiler_artefacts")["data"]["activity_buffer_requests"].get<int>() >= 1);
  CHECK(fact(lessons, "kernel_gaps")["data"]["steps"].size() == 20);  // every step launched its GEMM and add
}

// ---- the recorded H200 run ----------------------------------------------------------------

TEST_CASE("ch02 on the recorded H200 run", "[ch02][h200][cpu]") {
  const wb::Trace t = recorded(kChapter);
  const wb::LessonsReport r = spec_on(t);
  INFO(wb::render_lessons(r, wb::Format::Text));
  CHECK(r.failed == 0);
  CHECK(find(r, "profiler_artefacts").data["count"].get<int>() == 0);
  CHECK(find(r, "step_widths").data["first_over_median_rest"].get<double>() < 5);
  CHECK(find(r, "launch_latency").status == wb::Status::Pass);
  CHECK(gaps_of(t).data["steps"].size() == 3);  // ProfilerStep#2..#4, GEMM + add each
}
