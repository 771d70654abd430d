// Chapter 08: memory (profile_memory) on a training step of chapter 07's GeGLU MLP.
//   [ch08][cpu]       the CPU edition live: every lesson holds, the table has Python's memory
//                     columns, the timeline its memory lane, and the napkin's bytes are the trace's
//   [ch08][gpu]       the GPU edition live (skipped without CUDA): the fused forward has one
//                     intermediate fewer, the table CUDA Mem, the lane a reserved line
//   [ch08][recorded]  every recording of the chapter that exists (expected_output/cpu/08_memory
//                     here; expected_output/h200/08_memory once the lead records it on the H200):
//                     its lessons hold
//   [ch08]            the lessons fail on other chapters' recordings (no [memory] records: fail,
//                     never n/a), and on a run without profile_memory
#undef CHECK
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <filesystem>
#include <string>

#include "chapter_runner.hpp"
#include "workbook/lessons.hpp"
#include "workbook/memory.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;

namespace {

const char* kMemoryFacts[] = {"memory_per_step",    "activations_held", "optimizer_state", "short_lived",
                              "region_allocations", "inplace_alloc",    "memory_peak"};

wb::LessonsReport judge08(const wb::Trace& t) {
  const wb::TraceModel m(t);
  wb::FactOptions o;
  o.annotation = "forward";
  const wb::LessonSpec* s = wb::find_lesson_spec("08_memory");
  REQUIRE(s != nullptr);
  return wb::check_lessons(m, *s, o);
}

wb::Status status_of(const wb::LessonsReport& r, const std::string& id) {
  for (const auto& f : r.facts)
    if (f.id == id) return f.status;
  FAIL("no fact " << id);
  return wb::Status::NotApplicable;
}

}  // namespace

TEST_CASE("chapter 08 CPU edition, live: every memory lesson holds", "[ch08][cpu]") {
  const auto r = chapter_runner::run("08_memory", {"--device", "cpu", "--check"}, "cpu");
  INFO(r.out << r.err);
  REQUIRE(r.rc == 0);
  REQUIRE(r.lessons.is_object());
  CHECK(r.lessons["summary"]["failed"] == 0);
  for (const char* id : kMemoryFacts) {
    INFO(id);
    CHECK(chapter_runner::fact(r.lessons, id)["status"] == "pass");
  }
  // The table shows Python's memory columns; the picture its memory lane with the peak marked.
  const std::string table = proc::slurp(r.dir / "table.txt");
  CHECK_THAT(table, ContainsSubstring("Self CPU Mem"));
  const std::string svg = proc::slurp(r.dir / "timeline.svg");
  CHECK_THAT(svg, ContainsSubstring("class=\"lane memory\""));
  CHECK_THAT(svg, ContainsSubstring("class=\"mem-peak\""));
  // The napkin's bytes are the trace's: Adam's state = 2 x 3 x [1024, 256] fp32, one
  // intermediate = [512, 1024] fp32 (the recorded stdout.txt prints the napkin: see below).
  const auto& opt = chapter_runner::fact(r.lessons, "optimizer_state");
  CHECK(opt["data"]["first_kept_bytes"] == 2 * 3 * 1024 * 256 * 4);
  const auto& sl = chapter_runner::fact(r.lessons, "short_lived");
  CHECK(sl["data"]["largest_bytes"] == 512 * 1024 * 4);
}

TEST_CASE("chapter 08 on the GPU, live: every memory lesson holds, the fused forward included",
          "[ch08][gpu]") {
  const auto r = chapter_runner::run_gpu("08_memory", {"--check"}, "gpu");
  INFO(r.out << r.err);
  REQUIRE(r.rc == 0);
  REQUIRE(r.lessons.is_object());
  CHECK(r.lessons["summary"]["failed"] == 0);
  for (const char* id : kMemoryFacts) {
    INFO(id);
    CHECK(chapter_runner::fact(r.lessons, id)["status"] == "pass");
  }
  const auto& regions = chapter_runner::fact(r.lessons, "region_allocations")["data"]["regions"];
  REQUIRE(regions.contains("fused_fwd"));
  // The fused forward has one [8192, 3072] bf16 intermediate fewer than the eager one.
  CHECK(regions["eager_fwd"]["bytes"].get<int64_t>() - regions["fused_fwd"]["bytes"].get<int64_t>() ==
        8192LL * 3072 * 2);
  CHECK_THAT(proc::slurp(r.dir / "table.txt"), ContainsSubstring("Self CUDA Mem"));
  CHECK_THAT(proc::slurp(r.dir / "timeline.svg"), ContainsSubstring("class=\"mem-reserved\""));
}

TEST_CASE("chapter 08's recordings: the lessons hold on whichever exist", "[ch08][cpu][recorded]") {
  int judged = 0;
  for (const std::string platform : {"cpu", "h200"}) {
    const fs::path t = chapter_runner::recorded_trace(platform, "08_memory");
    if (t.empty()) {
      WARN("no " << platform << " recording of 08_memory yet (scripts/record.sh --platform " << platform
                 << " --only 08_memory)");
      continue;
    }
    const wb::Trace trace = wb::read_trace(t);
    CHECK(trace.profile_memory);
    const auto r = judge08(trace);
    INFO(platform << "\n" << wb::render_lessons(r, wb::Format::Text));
    CHECK(r.failed == 0);
    CHECK(r.ok());
    if (platform == "cpu") {  // the napkin the program printed names the bytes the lessons measured
      const std::string out = proc::slurp(t.parent_path() / "stdout.txt");
      CHECK_THAT(out, ContainsSubstring("exp_avg + exp_avg_sq = 2 x the weights = 6.29 MB"));
      CHECK_THAT(out, ContainsSubstring("[512, 1024]  2.10 MB"));
    }
    ++judged;
  }
  CHECK(judged >= 1);  // the CPU recording is committed
}

TEST_CASE("chapter 08's lessons fail on other chapters' recordings (no [memory] records)", "[ch08][cpu]") {
  int judged = 0;
  for (const std::string platform : {"cpu", "h200"})
    for (const std::string chapter : {"07_geglu_mlp/eager", "01_cold_64"}) {
      const fs::path t = chapter_runner::recorded_trace(platform, chapter);
      if (t.empty()) continue;
      const wb::Trace trace = wb::read_trace(t);
      REQUIRE_FALSE(trace.has_memory_records());
      const auto r = judge08(trace);
      INFO(platform << " " << chapter << "\n" << wb::render_lessons(r, wb::Format::Text));
      CHECK_FALSE(r.ok());
      for (const char* id : kMemoryFacts) {
        INFO(id);
        CHECK(status_of(r, id) == wb::Status::Fail);  // not n/a: a lesson that applies fails unmeasured
      }
      ++judged;
    }
  CHECK(judged >= 2);
}

TEST_CASE("the memory facts are not measurable without profile_memory, and inspect says so", "[ch08][cpu]") {
  const fs::path t = chapter_runner::recorded_trace("cpu", "07_geglu_mlp/eager");
  REQUIRE_FALSE(t.empty());
  const wb::Trace trace = wb::read_trace(t);
  const wb::TraceModel m(trace);
  for (const char* id : kMemoryFacts) {
    const wb::Fact f = wb::compute_fact(id, m);
    INFO(id << ": " << f.verdict);
    CHECK_FALSE(f.measured);
    CHECK_THAT(f.verdict, ContainsSubstring("profile_memory"));
  }
}

TEST_CASE("inspect reads memory from any profile_memory trace: Python's training step", "[ch08][cpu]") {
  // make_memory_fixtures.py's recording (torch.profiler, profile_memory=True): each step makes a
  // 400 MiB buffer in 'big_buffer' and frees it in 'drop_buffer'.
  const wb::Trace t = wb::read_trace(fs::path(WORKBOOK_ROOT) / "tests/data/python/cpu_memory_sched.json.gz");
  const wb::TraceModel m(t);
  wb::FactOptions o;
  o.annotation = "";
  const wb::LessonsReport r = wb::inspect_trace(m, o);
  auto fact = [&](const std::string& id) -> const wb::Fact& {
    for (const auto& f : r.facts)
      if (f.id == id) return f;
    FAIL("no fact " << id);
    throw;
  };
  const wb::Fact& peak = fact("memory_peak");
  INFO(peak.value);
  REQUIRE(peak.measured);
  CHECK(peak.data["peak_bytes"].get<int64_t>() > 400 * 1024 * 1024);
  CHECK(peak.data["region"] == "drop_buffer");  // the 400 MiB buffer and the small one, both alive
  const wb::Fact& shorts = fact("short_lived");
  CHECK(shorts.data["largest_bytes"] == 400 * 1024 * 1024);
  CHECK(shorts.data["largest_op"] == "aten::empty");
  const wb::Fact& steps = fact("memory_per_step");
  CHECK(steps.data["caching"] == false);
  CHECK(steps.data["warm_allocations_equal"] == true);
}
