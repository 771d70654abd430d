// Chapter 03 (batched bmm): a batch axis turns aten::mm into aten::bmm with shape ops around
// it, more CPU work per step, and (on the GPU) one GEMM launch whose grid carries the batch.
// Live (the chapter program: it profiles the batched and the 2-D workload in one process),
// on the GPU when there is one, on real Python CPU traces and on the recorded H200 run.
// Relationships with stated tolerances, never absolute times; each check also shown failing.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "../chapters/03_batched_bmm/chain_stats.hpp"
#include "chapter_runner.hpp"
#include "lessons_fixtures.hpp"
#include "workbook/lessons.hpp"
#include "workbook/trace_reader.hpp"

using Catch::Matchers::ContainsSubstring;
using chapter_runner::fact;

namespace {

const char* kChapter = "03_batched_bmm";

ch03::ChainStats stats_of(const std::filesystem::path& p) {
  const wb::Trace t = wb::read_trace(p);
  const wb::TraceModel m(t);
  return ch03::chain_stats(m);
}

bool all_ok(const std::vector<ch03::Check>& checks) {
  for (const auto& c : checks)
    if (!c.ok) return false;
  return !checks.empty();
}

int failed(const std::vector<ch03::Check>& checks) {
  int n = 0;
  for (const auto& c : checks) n += !c.ok;
  return n;
}

}  // namespace

// ---- live, on whatever device the chapter picks -------------------------------------------

TEST_CASE("ch03: the batched chain is bmm with shape ops, the 2-D one mm, in one run", "[ch03]") {
  const auto r = chapter_runner::run(kChapter, {"--check"}, "live");
  INFO(r.out << r.err);
  REQUIRE(r.lessons.is_object());
  CHECK(r.rc == 0);  // the spec's lessons and the chapter's own checks hold
  const auto& chain = fact(r.lessons, "dispatch_chain");
  CHECK(chain["status"] == "pass");
  bool bmm_path = false;
  for (const auto& p : chain["data"]["paths"])
    bmm_path = bmm_path || p.get<std::string>().find("matmul_add > aten::matmul > aten::bmm") == 0;
  CHECK(bmm_path);
  CHECK(r.lessons["options"]["problem"]["batch"] == 8);  // napkin math counts the batch

  const auto flat = stats_of(r.dir / "trace_2d.json"), batched = stats_of(r.trace());
  CHECK(flat.gemm_op == "aten::mm");
  CHECK(batched.gemm_op == "aten::bmm");
  CHECK(flat.shape_ops_per_step == 0);
  CHECK(batched.shape_ops_per_step >= 5);  // expand x2, reshape x2, _unsafe_view (+ their views)
  CHECK(batched.ops_per_step >= 2 * flat.ops_per_step);
  CHECK(batched.shape_us > flat.shape_us);
  const auto checks = ch03::compare_checks(flat, batched, 8);
  INFO(ch03::render(checks));
  CHECK(all_ok(checks));
  // The same checks, with the two runs swapped, must fail: each check can fail.
  const auto swapped = ch03::compare_checks(batched, flat, 8);
  CHECK(failed(swapped) >= 3);
}

TEST_CASE("ch03: bad --batch is refused before any work", "[ch03]") {
  const auto r = chapter_runner::run(kChapter, {"--batch", "0"}, "badflag");
  CHECK(r.rc == 2);
  CHECK_THAT(r.err, ContainsSubstring("--batch"));
  CHECK(r.lessons.is_null());
}

// ---- real Python CPU traces (torch.profiler 2.11): the same pattern, the same checks --------

TEST_CASE("ch03 on Python's CPU traces: bmm vs mm, and the check fails on the wrong pair", "[ch03]") {
  const auto flat = stats_of(fixtures::data_dir() / "py_cpu_64.json");
  const auto batched = stats_of(fixtures::data_dir() / "py_cpu_64_bmm.json");
  CHECK(flat.steps == 3);
  CHECK(batched.steps == 3);
  CHECK(all_ok(ch03::compare_checks(flat, batched, 8)));
  // Two 2-D runs: no bmm, no extra ops, so the relationships do not hold.
  CHECK(failed(ch03::compare_checks(flat, flat, 8)) >= 2);
  // The spec: bmm passes ch03's dispatch pattern, mm fails it.
  const auto spec = [](const char* file) {
    const wb::Trace t = wb::read_trace(fixtures::data_dir() / file);
    const wb::TraceModel m(t);
    wb::FactOptions o;
    o.problem = {64, 8, 4};
    const auto rep = wb::check_lessons(m, *wb::find_lesson_spec("03_batched_bmm"), o);
    for (const auto& f : rep.facts)
      if (f.id == "dispatch_chain") return f.status;
    return wb::Status::NotApplicable;
  };
  CHECK(spec("py_cpu_64_bmm.json") == wb::Status::Pass);
  CHECK(spec("py_cpu_64.json") == wb::Status::Fail);
}

TEST_CASE("ch03 grid check: one launch per step whose grid grows with the batch", "[ch03]") {
  // Synthetic H200-shaped pair: [4,2,1] for the 2-D GEMM, [4,16,1] for the batch of 8.
  ch03::ChainStats flat, batched;
  flat.gemm_op = "aten::mm";
  batched.gemm_op = "aten::bmm";
  flat.ops_per_step = 3;
  batched.ops_per_step = 12;
  batched.shape_us = 8;
  flat.shape_us = 1;
  flat.gemm_kernels_per_step = batched.gemm_kernels_per_step = 1;
  flat.gemm_grid = {4, 2, 1};
  batched.gemm_grid = {4, 16, 1};
  CHECK(all_ok(ch03::compare_checks(flat, batched, 8)));
  // B separate launches, or a grid that did not grow: fails.
  batched.gemm_kernels_per_step = 8;
  CHECK(failed(ch03::compare_checks(flat, batched, 8)) == 1);
  batched.gemm_kernels_per_step = 1;
  batched.gemm_grid = {4, 2, 1};
  CHECK(failed(ch03::compare_checks(flat, batched, 8)) == 1);
}

TEST_CASE("ch03 on H200-shaped traces: launches and grids are read from the trace", "[ch03]") {
  // Synthetic stand-ins for the H200 probe (tests/data/lessons/make_synthetic.py).
  const auto flat = stats_of(fixtures::data_dir() / "h200_64_cold.json");
  const auto batched = stats_of(fixtures::data_dir() / "h200_64_bmm.json");
  CHECK(flat.gemm_kernels_per_step == 1);
  CHECK(batched.gemm_kernels_per_step == 1);
  CHECK(flat.gemm_grid == std::array<int, 3>{4, 2, 1});
  CHECK(batched.gemm_grid == std::array<int, 3>{4, 16, 1});
  const auto checks = ch03::compare_checks(flat, batched, 8);
  INFO(ch03::render(checks));
  CHECK(checks.size() == 4);  // the grid check applies: both traces carry launch configs
  CHECK(all_ok(checks));
  CHECK_THAT(ch03::side_by_side(flat, batched, 8), ContainsSubstring("[4,16,1]"));
}

// ---- live on the GPU ----------------------------------------------------------------------

TEST_CASE("ch03 GPU: one bmm launch carries the batch in its grid", "[ch03][gpu]") {
  const auto r = chapter_runner::run_gpu(kChapter, {"--check"}, "gpu");
  INFO(r.out << r.err);
  REQUIRE(r.lessons.is_object());
  CHECK(r.rc == 0);  // on Hopper this includes the spec's grid [4,16,1]
  const auto flat = stats_of(r.dir / "trace_2d.json"), batched = stats_of(r.trace());
  CHECK(batched.gemm_kernels_per_step == 1);
  CHECK(flat.gemm_kernels_per_step == 1);
  CHECK(2 * batched.gemm_blocks() >= 8 * flat.gemm_blocks());
  CHECK(fact(r.lessons, "overhead_bound")["status"] == "pass");  // 8 tiny GEMMs are still tiny
  const auto checks = ch03::compare_checks(flat, batched, 8);
  INFO(ch03::render(checks));
  CHECK(all_ok(checks));
}

// ---- the recorded H200 run ----------------------------------------------------------------

TEST_CASE("ch03 on the recorded H200 run", "[ch03][h200]") {
  const auto path = chapter_runner::recorded_trace("h200", kChapter);
  if (path.empty()) SKIP("expected_output/h200/03_batched_bmm not recorded yet");
  const wb::Trace t = wb::read_trace(path);
  const wb::TraceModel m(t);
  wb::FactOptions o;
  o.problem = {64, 8, 2};
  const auto rep = wb::check_lessons(m, *wb::find_lesson_spec(kChapter), o);
  INFO(wb::render_lessons(rep, wb::Format::Text));
  CHECK(rep.failed == 0);
  const auto batched = ch03::chain_stats(m);
  CHECK(batched.gemm_grid == std::array<int, 3>{4, 16, 1});
  auto flat_path = path.parent_path() / "trace_2d.json";
  if (!std::filesystem::exists(flat_path)) flat_path += ".gz";
  if (!std::filesystem::exists(flat_path)) SKIP("no trace_2d.json next to the recorded trace");
  const auto flat = stats_of(flat_path);
  CHECK(flat.gemm_grid == std::array<int, 3>{4, 2, 1});
  const auto checks = ch03::compare_checks(flat, batched, 8);
  INFO(ch03::render(checks));
  CHECK(all_ok(checks));
}
