// Chapter 04 (compute-bound 4096): big work makes the GEMM the bottleneck, the CPU runs ahead,
// the kernels run near the chip's limits, and a kernel's duration is a distribution, not a
// number. Live on the CPU (the CPU edition: 1024, the arithmetic dominates each step), live on
// the GPU when there is one, and on the recorded H200 run. Relationships with stated
// tolerances, never absolute times; each check also shown failing on the wrong input.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "../chapters/04_compute_bound_4096/distribution.hpp"
#include "chapter_runner.hpp"
#include "lessons_fixtures.hpp"
#include "workbook/lessons.hpp"
#include "workbook/trace_reader.hpp"

using Catch::Matchers::ContainsSubstring;
using chapter_runner::fact;

namespace {

const char* kChapter = "04_compute_bound_4096";

ch04::CpuShares shares_of(const std::filesystem::path& p) {
  const wb::Trace t = wb::read_trace(p);
  const wb::TraceModel m(t);
  return ch04::cpu_shares(m);
}

ch04::Distribution gemms_of(const std::filesystem::path& p) {
  const wb::Trace t = wb::read_trace(p);
  const wb::TraceModel m(t);
  return ch04::gemm_durations(m);
}

wb::LessonsReport spec_on(const wb::Trace& t, int64_t n) {
  const wb::TraceModel m(t);
  wb::FactOptions o;
  o.problem = {n, 1, 2};
  return wb::check_lessons(m, *wb::find_lesson_spec(kChapter), o);
}

}  // namespace

// ---- the CPU edition, live ----------------------------------------------------------------

TEST_CASE("ch04 CPU edition: 1024 by default, and the arithmetic dominates each step", "[ch04]") {
#ifdef WORKBOOK_SANITIZED_BUILD
  SKIP("a timing verdict: under ASan, LibTorch's allocations go through ASan's allocator and "
       "the dispatcher's share of the step grows (2.5% seen); judged in the normal build");
#endif
  const auto r = chapter_runner::run(kChapter, {"--device", "cpu", "--check"}, "cpu");
  INFO(r.out << r.err);
  REQUIRE(r.lessons.is_object());
  CHECK(r.rc == 0);  // the chapter's CPU check holds (the GPU lessons are not applicable)
  CHECK(r.lessons["options"]["problem"]["n"] == 1024);  // picked for the CPU, not 4096
  const auto s = shares_of(r.trace());
  CHECK(s.steps == 3);
  CHECK(s.overhead < 0.02);  // the stated threshold (~0.1% measured on a 2-core VM)
  CHECK(s.mm > s.add);       // 2N^3 flops against 3N^2 loads and stores
}

TEST_CASE("ch04 CPU edition: a tiny problem is overhead-bound, so the check fails", "[ch04]") {
  // 16x16: the dispatcher's work is ~30% of the step (64x64: ~5-7%).
  const auto r = chapter_runner::run(kChapter, {"--device", "cpu", "--size", "16", "--check"}, "cpu16");
  INFO(r.out << r.err);
  CHECK(r.rc == 3);
  CHECK(shares_of(r.trace()).overhead >= 0.02);
  // And a real Python CPU trace at 64x64 (torch.profiler 2.11) is overhead-bound too.
  CHECK(shares_of(fixtures::data_dir() / "py_cpu_64.json").overhead >= 0.02);
}

TEST_CASE("ch04 CPU edition: --schedule 0,0,20 gives 20 GEMM samples to read as a distribution", "[ch04]") {
  const auto r = chapter_runner::run(kChapter, {"--device", "cpu", "--size", "128", "--schedule", "0,0,20"}, "cpu20");
  INFO(r.out << r.err);
  REQUIRE(r.rc == 0);
  const auto d = gemms_of(r.trace());
  INFO(ch04::render(d));
  REQUIRE(d.samples.size() == 20);
  for (int i = 0; i < 20; ++i) CHECK(d.samples[static_cast<size_t>(i)].step == i);  // one per step, in order
  CHECK(d.min <= d.median);
  CHECK(d.median <= d.max);
  CHECK(d.mean >= d.min);
  CHECK(d.mean <= d.max);
  CHECK_THAT(ch04::render(d), ContainsSubstring("20 samples: min"));
}

// ---- the distribution and its outlier rule --------------------------------------------------

TEST_CASE("ch04 distribution: one slow run moves the mean, not the median", "[ch04]") {
  // The original post's shape: a ~580 us kernel, once ~2.5 ms (an A100 under clock changes).
  std::vector<ch04::Sample> s;
  for (int i = 0; i < 19; ++i) s.push_back({i, 580.0 + i % 3});
  s.push_back({19, 2500});
  const auto d = ch04::make_distribution("gemm", s);
  CHECK(d.outliers.size() == 1);
  CHECK(d.outliers.front() == 19);
  CHECK(d.mean / d.median > 1.1);  // the mean says "slower" ...
  CHECK(d.median < 590);           // ... the typical run did not change
  CHECK_THAT(ch04::render(d), ContainsSubstring("<- outlier"));
  // Steady samples: nothing is marked, mean ~ median.
  s.back().us = 582;
  const auto steady = ch04::make_distribution("gemm", s);
  CHECK(steady.outliers.empty());
  CHECK(steady.mean / steady.median < 1.01);
  CHECK_THAT(ch04::render(steady), !ContainsSubstring("<- outlier"));
  // Nothing to measure: no crash, says so.
  CHECK_THAT(ch04::render(ch04::make_distribution("gemm", {})), ContainsSubstring("no samples"));
}

TEST_CASE("ch04 on GPU-shaped traces: the GEMM kernel is the sample, one per step", "[ch04]") {
  const wb::Trace t = wb::read_trace(fixtures::data_dir() / "h200_4096_warm.json.gz");
  const wb::TraceModel m(t);
  const auto d = ch04::gemm_durations(m);
  CHECK_THAT(d.what, ContainsSubstring("nvjet"));
  CHECK(d.samples.size() == 3);
  // The spec: compute-bound at 4096, and the same checks fail on the 64x64 run.
  const wb::LessonsReport ok = spec_on(t, 4096);
  INFO(wb::render_lessons(ok, wb::Format::Text));
  CHECK(ok.failed == 0);
  const wb::LessonsReport small = spec_on(wb::read_trace(fixtures::data_dir() / "h200_64_cold.json"), 4096);
  CHECK(small.failed >= 3);  // not compute-bound, the queue does not fill, the GEMM is not 75%
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
  const auto d = gemms_of(r.trace());
  CHECK(d.samples.size() == 3);
}

TEST_CASE("ch04 GPU: --schedule 0,0,20 records 20 GEMMs as a distribution", "[ch04][gpu]") {
  const auto r = chapter_runner::run_gpu(kChapter, {"--schedule", "0,0,20"}, "gpu20");
  INFO(r.out << r.err);
  REQUIRE(r.lessons.is_object());
  const auto d = gemms_of(r.trace());
  REQUIRE(d.samples.size() == 20);
  CHECK(d.min <= d.median);
  CHECK(d.median <= d.max);
  WARN(ch04::render(d));  // whether a slow GEMM showed is what the run found
}

// ---- the recorded H200 run ----------------------------------------------------------------

TEST_CASE("ch04 on the recorded H200 run", "[ch04][h200]") {
  const auto path = chapter_runner::recorded_trace("h200", kChapter);
  if (path.empty()) SKIP("expected_output/h200/04_compute_bound_4096 not recorded yet");
  const wb::Trace t = wb::read_trace(path);
  const wb::LessonsReport r = spec_on(t, 4096);
  INFO(wb::render_lessons(r, wb::Format::Text));
  CHECK(r.failed == 0);
  const wb::TraceModel m(t);
  const auto d = ch04::gemm_durations(m);
  REQUIRE(d.samples.size() == 3);
  // 2 * 4096^3 flop in the median GEMM: at least 40% of the H200's 989 TFLOP/s (lessons.md: ~80%).
  const double tflops = 2.0 * 4096.0 * 4096.0 * 4096.0 / (d.median * 1e-6) / 1e12;
  CHECK(tflops >= 0.4 * 989);
  CHECK(tflops <= 989 * 1.05);  // a datasheet peak is not exceeded
}
