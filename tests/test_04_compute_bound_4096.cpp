// Chapter 04 (compute-bound 4096): big work makes the GEMM the bottleneck, the CPU runs ahead,
// the kernels run near the chip's limits (and not above them), and a kernel's duration is a
// distribution, not a number (--experiment distribution). Live on the CPU (the CPU edition:
// 1024, the arithmetic is the step: cpu_shares), live on the GPU when there is one, on the
// recorded H200 run and on the H200 probe's twenty-GEMM trace (tests/data/h200_probe), and
// --compare's view of the recorded H200 and CPU runs (default and distribution): every fact gets
// its recorded verdict.
// Relationships with stated tolerances, never absolute times; each check also shown failing on
// the wrong input.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "chapter_runner.hpp"
#include "lessons_fixtures.hpp"
#include "workbook/compare.hpp"
#include "workbook/lessons.hpp"
#include "workbook/stats.hpp"
#include "workbook/trace_reader.hpp"

using Catch::Matchers::ContainsSubstring;
using chapter_runner::fact;
namespace fs = std::filesystem;

namespace {

const char* kChapter = "04_compute_bound_4096";
const std::string kDistribution = std::string(kChapter) + "/distribution";

wb::Fact fact_of(const wb::Trace& t, const char* id, wb::FactOptions o = {}) {
  const wb::TraceModel m(t);
  return wb::compute_fact(id, m, o);
}
wb::Fact fact_of(const fs::path& p, const char* id) { return fact_of(wb::read_trace(p), id); }

wb::LessonsReport spec_on(const wb::Trace& t, int64_t n, const std::string& spec = kChapter,
                          int dtype_bytes = 2) {
  const wb::TraceModel m(t);
  wb::FactOptions o;
  o.problem = wb::Problem::square(n, 1, dtype_bytes);
  return wb::check_lessons(m, *wb::find_lesson_spec(spec), o);
}

const wb::Fact& find(const wb::LessonsReport& r, std::string_view id) {
  for (const auto& f : r.facts)
    if (f.id == id) return f;
  FAIL("no fact " << id);
  throw;
}

wb::Trace probe(const char* name) {
  return wb::read_trace(fs::path(WORKBOOK_ROOT) / "tests/data/h200_probe" / name);
}

// CPU edition: the aten::mm op of every step (the CPU multiplies inside it), in time order.
struct Sample {
  int step;
  double us;
};
std::vector<Sample> cpu_gemms(const wb::Trace& t) {
  const wb::TraceModel m(t);
  std::vector<std::pair<int64_t, Sample>> found;
  for (wb::EventIdx i : m.find("aten::mm")) {
    const wb::Event& e = m.at(i);
    if (e.kind != wb::Kind::CpuOp) continue;
    const wb::StepWindow* s = m.step_at(e.start_ns);
    found.push_back({e.start_ns, {s ? s->number : -1, e.dur_ns / 1000.0}});
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Sample> out;
  for (const auto& f : found) out.push_back(f.second);
  return out;
}

}  // namespace

// ---- the CPU edition, live ----------------------------------------------------------------

TEST_CASE("ch04 CPU edition: 1024 by default, and the arithmetic dominates each step", "[ch04][cpu]") {
#ifdef WORKBOOK_SANITIZED_BUILD
  SKIP(
      "a timing verdict: under ASan, LibTorch's allocations go through ASan's allocator and "
      "the dispatcher's share of the step grows (2.5% seen); judged in the normal build");
#endif
  const auto r = chapter_runner::run(kChapter, {"--device", "cpu", "--check"}, "cpu");
  INFO(r.out << r.err);
  REQUIRE(r.lessons.is_object());
  CHECK(r.rc == 0);  // cpu_shares holds (the GPU lessons are not applicable, and n/a is not a pass)
  CHECK(r.lessons["options"]["problem"]["n"] == 1024);  // picked for the CPU, not 4096
  CHECK(r.lessons["summary"]["passed"].get<int>() >= r.lessons["summary"]["min_passes"].get<int>());
  CHECK(r.lessons["summary"]["ok"] == true);
  const auto& s = fact(r.lessons, "cpu_shares");
  CHECK(s["status"] == "pass");
  CHECK(s["data"]["steps"] == 3);
  CHECK(s["data"]["overhead_share"].get<double>() < 0.02);  // the stated threshold (~0.1% measured)
  CHECK(s["data"]["gemm_share"].get<double>() >
        s["data"]["add_share"].get<double>());  // 2N^3 flops vs 3N^2 bytes
}

TEST_CASE("ch04 CPU edition: a tiny problem is overhead-bound, so the check fails", "[ch04][cpu]") {
  // 16x16: the dispatcher's work is ~30% of the step (64x64: ~5-7%).
  const auto r = chapter_runner::run(kChapter, {"--device", "cpu", "--size", "16", "--check"}, "cpu16");
  INFO(r.out << r.err);
  CHECK(r.rc == 3);
  REQUIRE(r.lessons.is_object());
  CHECK(fact(r.lessons, "cpu_shares")["status"] == "fail");
  CHECK(fact(r.lessons, "cpu_shares")["data"]["overhead_share"].get<double>() >= 0.02);
  // And a real Python CPU trace at 64x64 (torch.profiler 2.11) is overhead-bound too.
  CHECK(fact_of(fixtures::data_dir() / "py_cpu_64.json", "cpu_shares").data["overhead_share"].get<double>() >=
        0.02);
}

TEST_CASE("ch04 --experiment distribution on the CPU: 20 GEMM samples, one per step", "[ch04][cpu]") {
  // 1024 (the size the lesson names): a ~7 ms GEMM, so the step outside aten::mm/add stays far
  // under the 2% bar on a loaded CI machine (at 256 it measured 1.95% with both cores busy).
  const auto r = chapter_runner::run(
      kChapter, {"--device", "cpu", "--experiment", "distribution", "--size", "1024", "--check"}, "cpu20");
  INFO(r.out << r.err);
#ifdef WORKBOOK_SANITIZED_BUILD
  // cpu_shares is a timing verdict: under ASan the dispatcher's share of the step grows past 2%
  // (seen in CI's sanitizer pass), so --check may say 3 there; it is judged in the normal build.
  // The twenty samples are checked in both.
  REQUIRE((r.rc == 0 || r.rc == 3));
#else
  REQUIRE(r.rc == 0);
#endif
  const fs::path dir = r.dir / "distribution";
  const auto lessons = nlohmann::json::parse(proc::slurp(dir / "lessons.json"), nullptr, false);
  REQUIRE(lessons.is_object());
  CHECK(lessons["chapter"] == kDistribution);
#ifndef WORKBOOK_SANITIZED_BUILD
  CHECK(lessons["summary"]["ok"] == true);
#endif
  CHECK(fact(lessons, "cpu_shares")["data"]["steps"] == 20);
  const auto s = cpu_gemms(wb::read_trace(dir / "trace.json"));
  REQUIRE(s.size() == 20);
  std::vector<double> us;
  for (int i = 0; i < 20; ++i) {
    CHECK(s[static_cast<size_t>(i)].step == i);  // one per step, in order
    us.push_back(s[static_cast<size_t>(i)].us);
  }
  const double med = wb::median(us), mean = wb::mean(us);
  const auto [mn, mx] = std::minmax_element(us.begin(), us.end());
  CHECK(*mn <= med);
  CHECK(med <= *mx);
  CHECK(mean >= *mn);
  CHECK(mean <= *mx);
}

// ---- the distribution and its outlier rule (kernel_durations) -------------------------------

TEST_CASE("ch04 distribution: one slow run moves the mean, not the median", "[ch04][cpu]") {
  // The original post's shape: a ~580 us kernel, once ~2.5 ms (an A100 under clock changes).
  fixtures::Scenario sc;
  sc.steps.clear();
  for (int i = 0; i < 20; ++i) sc.steps.push_back({700, 1, 580.0 + i % 3, 20});
  sc.steps.back().gemm_us = 2500;
  const wb::Fact slow = fact_of(fixtures::make_trace(sc), "kernel_durations");
  INFO(slow.detail);
  const auto& g = slow.data["gemm"];
  REQUIRE(g["count"] == 20);
  REQUIRE(g["outliers"].size() == 1);
  CHECK(g["outliers"][0]["step"] == 21);             // the last of ProfilerStep#2..#21
  CHECK(g["mean_over_median"].get<double>() > 1.1);  // the mean says "slower" ...
  CHECK(g["median_us"].get<double>() < 590);         // ... the typical run did not change
  CHECK_THAT(slow.detail, ContainsSubstring("outlier"));
  CHECK(slow.status == wb::Status::Pass);  // its default pattern: some run is an outlier
  // Steady samples: nothing is marked, mean ~ median.
  sc.steps.back().gemm_us = 582;
  const wb::Fact steady = fact_of(fixtures::make_trace(sc), "kernel_durations");
  CHECK(steady.data["gemm"]["outliers"].empty());
  CHECK(steady.data["gemm"]["mean_over_median"].get<double>() < 1.01);
  CHECK_THAT(steady.detail, !ContainsSubstring("outlier"));
  CHECK(steady.status == wb::Status::Fail);
  // Nothing to measure: no crash, says so.
  const wb::Fact none = fact_of(fixtures::data_dir() / "py_cpu_64.json", "kernel_durations");
  CHECK_FALSE(none.measured);
  CHECK_THAT(none.verdict, ContainsSubstring("no kernels"));
}

TEST_CASE("ch04 on GPU-shaped traces: the GEMM kernel is the sample, one per step", "[ch04][cpu]") {
  const wb::Trace t = wb::read_trace(fixtures::data_dir() / "h200_4096_warm.json.gz");
  const auto g = fact_of(t, "kernel_durations").data["gemm"];
  CHECK_THAT(g["kernel"].get<std::string>(), ContainsSubstring("nvjet"));
  CHECK(g["count"] == 3);
  // The spec: compute-bound at 4096, and the same checks fail on the 64x64 run.
  const wb::LessonsReport ok = spec_on(t, 4096);
  INFO(wb::render_lessons(ok, wb::Format::Text));
  CHECK(ok.failed == 0);
  const wb::LessonsReport small = spec_on(wb::read_trace(fixtures::data_dir() / "h200_64_cold.json"), 4096);
  CHECK(small.failed >= 3);  // not compute-bound, the queue does not fill, the GEMM is not 75%
}

// ---- real H200 traces: the distribution experiment, the upper bound, the CPU minimum -------

TEST_CASE("ch04 distribution: passes on the H200's twenty GEMMs, fails on the default run",
          "[ch04][h200][cpu]") {
  // The probe's `04_compute_bound_4096 --schedule 0,0,20` (what --experiment distribution runs).
  const wb::LessonsReport d20 = spec_on(probe("c04d20.json.gz"), 4096, kDistribution);
  INFO(wb::render_lessons(d20, wb::Format::Text));
  CHECK(d20.failed == 0);
  CHECK(d20.ok());
  CHECK(find(d20, "kernel_durations").data["gemm"]["count"] == 20);
  // The recorded default run has three GEMMs: not a distribution.
  const auto path = chapter_runner::recorded_trace("h200", kChapter);
  REQUIRE(!path.empty());  // expected_output/h200/04_compute_bound_4096 is recorded
  const wb::LessonsReport three = spec_on(wb::read_trace(path), 4096, kDistribution);
  INFO(wb::render_lessons(three, wb::Format::Text));
  CHECK(find(three, "kernel_durations").status == wb::Status::Fail);
  CHECK_THAT(find(three, "kernel_durations").verdict, ContainsSubstring("gemm/count = 3"));
  CHECK_FALSE(three.ok());
}

TEST_CASE("ch04 throughput: above 105% of the datasheet fails (wrong napkin math)", "[ch04][h200][cpu]") {
  // Chapter 01's recorded 64x64 trace judged as if it were 4096 (inspect --size 4096): 2*4096^3
  // flop in a ~2 us kernel is far above 989 TFLOP/s, which no H200 does.
  const auto path = chapter_runner::recorded_trace("h200", "01_cold_64");
  REQUIRE(!path.empty());
  const wb::Trace t = wb::read_trace(path);
  const wb::LessonsReport wrong = spec_on(t, 4096);
  const wb::Fact& tp = find(wrong, "throughput");
  INFO(wb::render_lessons(wrong, wb::Format::Text));
  CHECK(tp.status == wb::Status::Fail);
  CHECK(tp.data["gemm_pct_of_peak"].get<double>() > 105);
  CHECK_THAT(tp.verdict, ContainsSubstring("<= 105"));
  // Only the upper bound fails: the lower ones (>= 40%) hold for such a number. Chapter 01's own
  // throughput lesson, whose < 5% holds only at 64, fails the same way at 4096 and passes at 64.
  CHECK_THAT(tp.verdict, !ContainsSubstring(">= 40"));
  CHECK(find(spec_on(t, 4096, "01_cold_64"), "throughput").status == wb::Status::Fail);
  CHECK(find(spec_on(t, 64, "01_cold_64"), "throughput").status == wb::Status::Pass);
  // And the recorded 4096 run is inside both bounds.
  const auto p4 = chapter_runner::recorded_trace("h200", kChapter);
  REQUIRE(!p4.empty());
  CHECK(find(spec_on(wb::read_trace(p4), 4096), "throughput").status == wb::Status::Pass);
}

TEST_CASE("ch04 on a CPU trace: enough lessons pass; a spec with none for the CPU is not ok", "[ch04][cpu]") {
  const auto path = chapter_runner::recorded_trace("cpu", kChapter);
  REQUIRE(!path.empty());  // expected_output/cpu/04_compute_bound_4096 (1024, fp32)
  const wb::Trace t = wb::read_trace(path);
  const wb::LessonsReport r = spec_on(t, 1024, kChapter, 4);
  INFO(wb::render_lessons(r, wb::Format::Text));
  CHECK(r.min_passes == std::max(1, wb::find_lesson_spec(kChapter)->min_cpu_passes));
  CHECK(find(r, "cpu_shares").status == wb::Status::Pass);
  CHECK(r.passed >= r.min_passes);
  CHECK(r.ok());
  // Chapter 05's CUDA-graph lessons are all about a GPU: on this CPU trace nothing fails and
  // nothing passes, and that is not ok (a run with zero passes is never a pass; the chapter
  // harness turns it into exit code 3 under --check).
  const wb::LessonsReport none = spec_on(t, 1024, "05_compiled_addmm/graph", 4);
  INFO(wb::render_lessons(none, wb::Format::Text));
  CHECK(none.failed == 0);
  CHECK(none.passed == 0);
  CHECK_FALSE(none.ok());
  CHECK_THAT(wb::render_lessons(none, wb::Format::Text), ContainsSubstring("NOT OK"));
  CHECK(wb::to_json(none)["summary"]["ok"] == false);
}

// ---- live on the GPU ----------------------------------------------------------------------

TEST_CASE("ch04 GPU: 4096 is compute-bound, the CPU runs ahead, near the chip's limits", "[ch04][gpu]") {
  const auto r = chapter_runner::run_gpu(kChapter, {"--check"}, "gpu");
  INFO(r.out << r.err);
  REQUIRE(r.lessons.is_object());
  CHECK(r.rc == 0);
  CHECK(r.lessons["options"]["problem"]["n"] == 4096);
  const auto& ob = fact(r.lessons, "overhead_bound")["data"];
  CHECK(ob["cuda_cpu_ratio"].get<double>() >= 0.5);  // Self CUDA close to Self CPU
  CHECK(fact(r.lessons, "kernel_durations")["data"]["gemm_share"].get<double>() >= 0.75);
  const auto& lat = fact(r.lessons, "launch_latency")["data"];
  CHECK(lat["last_min_us"].get<double>() >= 3 * lat["first_min_us"].get<double>());
  const auto& tp = fact(r.lessons, "throughput")["data"];
  CHECK(tp["gemm_tflops"].get<double>() > 0);
  CHECK(tp["elementwise_tbps"].get<double>() > 0);
  CHECK(fact(r.lessons, "kernel_durations")["data"]["gemm"]["count"] == 3);
}

TEST_CASE("ch04 GPU: --experiment distribution records 20 GEMMs and its lessons hold", "[ch04][gpu]") {
  const auto r = chapter_runner::run_gpu(kChapter, {"--experiment", "distribution", "--check"}, "gpu20");
  INFO(r.out << r.err);
  const auto lessons = chapter_runner::experiment_lessons_pass(
      r, "distribution", {"kernel_durations", "launch_latency", "throughput"});
  const auto& g = fact(lessons, "kernel_durations")["data"]["gemm"];
  REQUIRE(g["count"] == 20);
  CHECK(g["min_us"].get<double>() <= g["median_us"].get<double>());
  CHECK(g["median_us"].get<double>() <= g["max_us"].get<double>());
  WARN(fact(lessons, "kernel_durations")["detail"].get<std::string>());  // whether a slow GEMM showed
}

// ---- the recorded H200 run ----------------------------------------------------------------

TEST_CASE("ch04 on the recorded H200 run", "[ch04][h200][cpu]") {
  const auto path = chapter_runner::recorded_trace("h200", kChapter);
  REQUIRE(!path.empty());  // expected_output/h200/04_compute_bound_4096 is recorded
  const wb::Trace t = wb::read_trace(path);
  const wb::LessonsReport r = spec_on(t, 4096);
  INFO(wb::render_lessons(r, wb::Format::Text));
  CHECK(r.failed == 0);
  const auto g = find(r, "kernel_durations").data["gemm"];
  REQUIRE(g["count"] == 3);
  // 2 * 4096^3 flop in the median GEMM: at least 40% of the H200's 989 TFLOP/s.
  const double tflops = 2.0 * 4096.0 * 4096.0 * 4096.0 / (g["median_us"].get<double>() * 1e-6) / 1e12;
  CHECK(tflops >= 0.4 * 989);
  CHECK(tflops <= 989 * 1.05);  // a datasheet peak is not exceeded
}

// ---- --compare, fact by fact --------------------------------------------------------------

namespace {
// A recorded run (`spec`: the chapter or one of its experiments) judged again from its own
// trace with the options it recorded: the report --compare puts next to the recorded one.
struct Rejudged {
  wb::LessonsReport mine, recorded;
};
Rejudged rejudge(const std::string& platform, const std::string& spec) {
  const auto path = chapter_runner::recorded_trace(platform, spec);
  REQUIRE(!path.empty());  // expected_output/<platform>/<spec> is recorded
  Rejudged r;
  r.recorded = wb::lessons_from_json(nlohmann::json::parse(proc::slurp(path.parent_path() / "lessons.json")));
  const wb::Trace t = wb::read_trace(path);
  const wb::TraceModel m(t);
  r.mine = wb::check_lessons(m, *wb::find_lesson_spec(spec), r.recorded.options);
  return r;
}
}  // namespace

TEST_CASE("ch04 recorded H200 and CPU runs: --compare agrees with the recording on every fact",
          "[ch04][cpu]") {
  for (const std::string platform : {"h200", "cpu"})
    for (const std::string spec : {std::string(kChapter), kDistribution}) {
      INFO(platform << " " << spec);
      const Rejudged r = rejudge(platform, spec);
      const auto rows = wb::compare_lessons(r.mine, r.recorded);
      REQUIRE(rows.size() == r.recorded.facts.size());
      for (const auto& row : rows) {
        INFO(row.fact << ": yours '" << row.learner_value << "', recorded '" << row.reference_value << "'");
        CHECK(row.agree());
      }
    }
  // The wrong recording: the H200 run next to the CPU one disagrees on the GPU lessons.
  const auto rows = wb::compare_lessons(rejudge("h200", kChapter).mine, rejudge("cpu", kChapter).recorded);
  CHECK(std::any_of(rows.begin(), rows.end(), [](const wb::LessonDiffRow& r) { return !r.agree(); }));
}
