// Chapter 03 (batched bmm): a batch axis turns aten::mm into aten::bmm with shape ops around
// it, more CPU work per step, and (on the GPU) one GEMM launch whose grid carries the batch.
// Live (the chapter program: it profiles the batched and the 2-D workload in one process and
// saves the 2-D one as trace_2d.json, the lessons' reference), on the GPU when there is one, on
// real Python CPU traces and on the recorded H200 run. The comparison is the lesson fact
// batch_chain; each of its conditions is also shown failing. --compare's view of the recorded
// H200 and CPU runs: every fact gets its recorded verdict (and the wrong recording disagrees).
// Relationships with stated tolerances, never absolute times.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <array>
#include <filesystem>
#include <string>

#include "chapter_runner.hpp"
#include "lessons_fixtures.hpp"
#include "workbook/compare.hpp"
#include "workbook/lessons.hpp"
#include "workbook/trace_reader.hpp"

using Catch::Matchers::ContainsSubstring;
using chapter_runner::fact;
namespace fs = std::filesystem;

namespace {

const char* kChapter = "03_batched_bmm";

// The spec's pattern for one lesson.
const wb::Pattern& spec_pattern(const std::string& id) {
  for (const auto& e : wb::find_lesson_spec(kChapter)->expect)
    if (e.fact == id) return e.pattern;
  FAIL("no lesson " << id << " in " << kChapter);
  throw;
}

// A batched run and its 2-D reference, as the chapter reports them.
struct Pair {
  wb::Trace batched, flat;
};
Pair read_pair(const fs::path& batched, const fs::path& flat) {
  return {wb::read_trace(batched), wb::read_trace(flat)};
}

// batch_chain on `p`, judged by the chapter's pattern.
wb::Fact chain(const Pair& p, int64_t batch = 8, int dtype_bytes = 2) {
  const wb::TraceModel mb(p.batched), mf(p.flat);
  wb::FactOptions o;
  o.problem = wb::Problem::square(64, batch, dtype_bytes);
  o.reference = &mf;
  o.reference_label = "2-D";
  return wb::apply_pattern(wb::compute_fact("batch_chain", mb, o), spec_pattern("batch_chain"), p.batched,
                           o.problem);
}

// How many of the pattern's conditions fail on `f` (each judged on its own; out-of-scope ones
// do not count): the old chapter checks, one by one.
int failing(const wb::Fact& f, const wb::Trace& t) {
  int n = 0;
  for (const auto& c : f.pattern.all) {
    wb::Pattern one{f.pattern.text, f.pattern.why, {c}};
    n += wb::apply_pattern(f, one, t).status == wb::Status::Fail;
  }
  return n;
}

// View ops (expand, reshape, _unsafe_view, ...) per step, as the lesson fact view_ops counts them.
double views_per_step(const wb::Trace& t) {
  const wb::TraceModel m(t);
  return wb::compute_fact("view_ops", m).data["view_calls_per_step"].get<double>();
}

// A synthetic H200-shaped step: matmul_add > aten::matmul > [shape ops] > the GEMM op >
// `launches` cuLaunchKernelEx calls, each launching an nvjet GEMM with `grid`.
wb::Trace synthetic(const std::string& gemm_op, int shape_ops, int launches, std::array<int, 3> grid) {
  using wb::Kind;
  fixtures::Builder b;
  wb::DeviceProperties d;
  d.name = "NVIDIA H200";
  d.compute_major = 9;
  b.trace.devices.push_back(d);
  double t = 100;
  for (int s = 0; s < 3; ++s) {
    const double gemm_len = 10.0 * launches + 4, matmul_len = 3.0 * shape_ops + gemm_len + 2;
    b.cpu(Kind::UserAnnotation, "ProfilerStep#" + std::to_string(2 + s), t, matmul_len + 30);
    b.cpu(Kind::UserAnnotation, "matmul_add", t + 2, matmul_len + 20);
    double c = t + 4;
    b.cpu(Kind::CpuOp, "aten::matmul", c, matmul_len);
    c += 1;
    for (int k = 0; k < shape_ops; ++k, c += 3)
      b.cpu(Kind::CpuOp, k % 2 ? "aten::reshape" : "aten::expand", c, 2);
    const int64_t op = b.cpu(Kind::CpuOp, gemm_op, c, gemm_len);
    for (int l = 0; l < launches; ++l)
      b.call(Kind::Driver, "cuLaunchKernelEx", c + 2 + 10.0 * l, 6, op,
             "nvjet_sm90_tst_64x8_64x16_1x4_h_bz_NNT", 2, Kind::Kernel, 10, true, grid);
    t += matmul_len + 40;
  }
  return b.trace;
}

}  // namespace

// ---- live, on whatever device the chapter picks -------------------------------------------

TEST_CASE("ch03: the batched chain is bmm with shape ops, the 2-D one mm, in one run", "[ch03][cpu]") {
  const auto r = chapter_runner::run(kChapter, {"--check"}, "live");
  INFO(r.out << r.err);
  REQUIRE(r.lessons.is_object());
  CHECK(r.rc == 0);  // every lesson holds, batch_chain (vs the 2-D run) included
  const auto& dc = fact(r.lessons, "dispatch_chain");
  CHECK(dc["status"] == "pass");
  bool bmm_path = false;
  for (const auto& p : dc["data"]["paths"])
    bmm_path = bmm_path || p.get<std::string>().find("matmul_add > aten::matmul > aten::bmm") == 0;
  CHECK(bmm_path);
  CHECK(r.lessons["options"]["problem"]["batch"] == 8);  // napkin math counts the batch
  CHECK(r.lessons["options"]["reference_file"] == "trace_2d.json");

  const auto& bc = fact(r.lessons, "batch_chain");
  CHECK(bc["status"] == "pass");
  const auto& d = bc["data"];
  CHECK(d["flat"]["gemm_op"] == "aten::mm");
  CHECK(d["batched"]["gemm_op"] == "aten::bmm");
  CHECK(d["ops_ratio"].get<double>() >= 2);
  CHECK(d["outside_gemm_extra_us"].get<double>() > 0);

  // The shape ops: none in the 2-D chain, expand x2, reshape x2, _unsafe_view (+ their views)
  // in the batched one.
  const Pair p = read_pair(r.trace(), r.dir / "trace_2d.json");
  CHECK(views_per_step(p.flat) == 0);
  CHECK(views_per_step(p.batched) >= 5);

  // Recomputed from the two saved traces: the same verdict; with the two runs swapped, the
  // comparison fails on the GEMM ops, the op ratio and the time outside the GEMM op.
  const int bytes = r.lessons["options"]["problem"]["dtype_bytes"].get<int>();
  const wb::Fact again = chain(p, 8, bytes);
  CHECK(again.status == wb::Status::Pass);
  CHECK(again.verdict == bc["verdict"].get<std::string>());
  const wb::Fact swapped = chain({p.flat, p.batched}, 8, bytes);
  INFO(swapped.verdict);
  CHECK(swapped.status == wb::Status::Fail);
  CHECK(failing(swapped, p.flat) >= 3);
}

TEST_CASE("ch03: bad --batch is refused before any work", "[ch03][cpu]") {
  const auto r = chapter_runner::run(kChapter, {"--batch", "0"}, "badflag");
  CHECK(r.rc == 2);
  CHECK_THAT(r.err, ContainsSubstring("--batch"));
  CHECK(r.lessons.is_null());
}

// ---- real Python CPU traces (torch.profiler 2.11): the same pattern, the same checks --------

TEST_CASE("ch03 on Python's CPU traces: bmm vs mm, and the check fails on the wrong pair", "[ch03][cpu]") {
  const Pair p =
      read_pair(fixtures::data_dir() / "py_cpu_64_bmm.json", fixtures::data_dir() / "py_cpu_64.json");
  const wb::Fact ok = chain(p, 8, 4);
  INFO(ok.verdict);
  CHECK(ok.status == wb::Status::Pass);
  CHECK(ok.data["batched"]["steps"] == 3);
  CHECK(ok.data["flat"]["steps"] == 3);
  // Two 2-D runs: no bmm, no extra ops, so the relationships do not hold.
  const wb::Fact same = chain({p.flat, p.flat}, 8, 4);
  CHECK(same.status == wb::Status::Fail);
  CHECK(failing(same, p.flat) >= 2);
  // Without the 2-D run there is nothing to compare: not measured, and in chapter 03's spec
  // (where it applies on every platform) a failure, not a quiet n/a.
  const wb::TraceModel mb(p.batched);
  wb::FactOptions o;
  o.problem = wb::Problem::square(64, 8, 4);
  const wb::LessonsReport alone = wb::check_lessons(mb, *wb::find_lesson_spec(kChapter), o);
  for (const auto& f : alone.facts)
    if (f.id == "batch_chain") {
      CHECK(f.status == wb::Status::Fail);
      CHECK_THAT(f.verdict, ContainsSubstring("could not be measured"));
    }
  CHECK_FALSE(alone.ok());
  // The spec: bmm passes ch03's dispatch pattern, mm fails it.
  const auto spec = [](const char* file) {
    const wb::Trace t = wb::read_trace(fixtures::data_dir() / file);
    const wb::TraceModel m(t);
    wb::FactOptions fo;
    fo.problem = wb::Problem::square(64, 8, 4);
    const auto rep = wb::check_lessons(m, *wb::find_lesson_spec("03_batched_bmm"), fo);
    for (const auto& f : rep.facts)
      if (f.id == "dispatch_chain") return f.status;
    return wb::Status::NotApplicable;
  };
  CHECK(spec("py_cpu_64_bmm.json") == wb::Status::Pass);
  CHECK(spec("py_cpu_64.json") == wb::Status::Fail);
}

TEST_CASE("ch03 grid check: one launch per step whose grid grows with the batch", "[ch03][cpu]") {
  // Synthetic H200-shaped pair: [4,2,1] for the 2-D GEMM, [4,16,1] for the batch of 8.
  const wb::Trace flat = synthetic("aten::mm", 0, 1, {4, 2, 1});
  const Pair good{synthetic("aten::bmm", 5, 1, {4, 16, 1}), flat};
  const wb::Fact ok = chain(good);
  INFO(ok.verdict);
  CHECK(ok.status == wb::Status::Pass);
  CHECK(ok.data["blocks_ratio"] == 8);
  CHECK(failing(ok, good.batched) == 0);
  // B separate launches, or a grid that did not grow: exactly one condition fails.
  const Pair many{synthetic("aten::bmm", 5, 8, {4, 16, 1}), flat};
  const wb::Fact f1 = chain(many);
  INFO(f1.verdict);
  CHECK(f1.data["batched"]["gemm_kernels_per_step"] == 8);
  CHECK(failing(f1, many.batched) == 1);
  CHECK_THAT(f1.verdict, ContainsSubstring("gemm_kernels_per_step"));
  const Pair small{synthetic("aten::bmm", 5, 1, {4, 2, 1}), flat};
  const wb::Fact f2 = chain(small);
  INFO(f2.verdict);
  CHECK(failing(f2, small.batched) == 1);
  CHECK_THAT(f2.verdict, ContainsSubstring("blocks_ratio"));
}

TEST_CASE("ch03 on H200-shaped traces: launches and grids are read from the trace", "[ch03][cpu]") {
  // Synthetic stand-ins for the H200 probe (tests/data/lessons/make_synthetic.py).
  const Pair p =
      read_pair(fixtures::data_dir() / "h200_64_bmm.json", fixtures::data_dir() / "h200_64_cold.json");
  const wb::Fact f = chain(p);
  INFO(f.verdict << "\n" << f.detail);
  CHECK(f.data["flat"]["gemm_kernels_per_step"] == 1);
  CHECK(f.data["batched"]["gemm_kernels_per_step"] == 1);
  CHECK(f.data["flat"]["gemm_grid"] == nlohmann::json::array({4, 2, 1}));
  CHECK(f.data["batched"]["gemm_grid"] == nlohmann::json::array({4, 16, 1}));
  CHECK(f.status == wb::Status::Pass);  // the GPU conditions apply: both traces carry launch configs
  CHECK_THAT(f.detail, ContainsSubstring("[4,16,1]"));
}

// ---- live on the GPU ----------------------------------------------------------------------

TEST_CASE("ch03 GPU: one bmm launch carries the batch in its grid", "[ch03][gpu]") {
  const auto r = chapter_runner::run_gpu(kChapter, {"--check"}, "gpu");
  INFO(r.out << r.err);
  REQUIRE(r.lessons.is_object());
  CHECK(r.rc == 0);  // on Hopper this includes the spec's grid [4,16,1]
  const auto& d = fact(r.lessons, "batch_chain")["data"];
  CHECK(fact(r.lessons, "batch_chain")["status"] == "pass");
  CHECK(d["batched"]["gemm_kernels_per_step"] == 1);
  CHECK(d["flat"]["gemm_kernels_per_step"] == 1);
  CHECK(2 * d["batched"]["gemm_blocks"].get<long long>() >= 8 * d["flat"]["gemm_blocks"].get<long long>());
  CHECK(fact(r.lessons, "overhead_bound")["status"] == "pass");  // 8 tiny GEMMs are still tiny
}

// ---- the recorded H200 run ----------------------------------------------------------------

TEST_CASE("ch03 on the recorded H200 run", "[ch03][h200][cpu]") {
  const auto path = chapter_runner::recorded_trace("h200", kChapter);
  REQUIRE(!path.empty());  // expected_output/h200/03_batched_bmm is recorded
  fs::path flat_path = path.parent_path() / "trace_2d.json";
  if (!fs::exists(flat_path)) flat_path += ".gz";
  REQUIRE(fs::exists(flat_path));  // the 2-D run is recorded next to it
  const Pair p = read_pair(path, flat_path);
  const wb::TraceModel m(p.batched), mf(p.flat);
  wb::FactOptions o;
  o.problem = wb::Problem::square(64, 8, 2);
  o.reference = &mf;
  const auto rep = wb::check_lessons(m, *wb::find_lesson_spec(kChapter), o);
  INFO(wb::render_lessons(rep, wb::Format::Text));
  CHECK(rep.failed == 0);
  CHECK(rep.ok());
  const wb::Fact f = chain(p);
  CHECK(f.data["batched"]["gemm_grid"] == nlohmann::json::array({4, 16, 1}));
  CHECK(f.data["flat"]["gemm_grid"] == nlohmann::json::array({4, 2, 1}));
  CHECK(f.status == wb::Status::Pass);
}

// ---- --compare, fact by fact --------------------------------------------------------------

namespace {
// A recorded run judged again from its own trace, with the options it recorded and its 2-D run
// as the reference: the report --compare puts next to the recorded lessons.json.
wb::LessonsReport rejudged(const std::string& platform, const wb::LessonsReport& recorded) {
  const auto path = chapter_runner::recorded_trace(platform, kChapter);
  REQUIRE(!path.empty());  // expected_output/<platform>/03_batched_bmm is recorded
  fs::path flat_path = path.parent_path() / recorded.options.reference_file;
  if (!fs::exists(flat_path)) flat_path += ".gz";
  REQUIRE(fs::exists(flat_path));  // the 2-D run is recorded next to it
  const Pair p = read_pair(path, flat_path);
  const wb::TraceModel m(p.batched), mf(p.flat);
  wb::FactOptions o = recorded.options;
  o.reference = &mf;
  wb::LessonsReport r = wb::check_lessons(m, *wb::find_lesson_spec(kChapter), o);
  r.options.reference = nullptr;  // mf ends here
  return r;
}
wb::LessonsReport recorded_lessons(const std::string& platform) {
  const auto path = chapter_runner::recorded_trace(platform, kChapter);
  REQUIRE(!path.empty());
  return wb::lessons_from_json(nlohmann::json::parse(proc::slurp(path.parent_path() / "lessons.json")));
}
}  // namespace

TEST_CASE("ch03 recorded H200 and CPU runs: --compare agrees with the recording on every fact",
          "[ch03][cpu]") {
  for (const std::string platform : {"h200", "cpu"}) {
    INFO(platform);
    const wb::LessonsReport want = recorded_lessons(platform);
    REQUIRE(want.options.reference_file == "trace_2d.json");
    const wb::LessonsReport mine = rejudged(platform, want);
    const auto rows = wb::compare_lessons(mine, want);
    REQUIRE(rows.size() == want.facts.size());
    for (const auto& row : rows) {
      INFO(platform << " " << row.fact << ": yours '" << row.learner_value << "', recorded '"
                    << row.reference_value << "'");
      CHECK(row.agree());
    }
  }
  // The wrong recording: the H200 run next to the CPU one disagrees on the GPU lessons.
  const auto rows = wb::compare_lessons(rejudged("h200", recorded_lessons("h200")), recorded_lessons("cpu"));
  CHECK(std::any_of(rows.begin(), rows.end(), [](const wb::LessonDiffRow& r) { return !r.agree(); }));
}
