// `diff` on chapter 05's recordings (H200): eager runs aten::matmul -> aten::mm + aten::add and
// two kernels; addmm runs one aten::addmm whose GEMM kernel has another name. The diff must
// show the rewrite and flag the name change; the same trace against itself shows nothing.
// Part 2: chapter 06's compiled Linear loses the view chain and keeps its kernel; chapter 07's
// fusion swaps two elementwise kernels for one and keeps the three GEMMs. The diffs that
// `./workbook record` saved next to the recordings are what the tool prints on them today.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>

#include "process.hpp"
#include "workbook/trace_diff.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;

namespace {
const fs::path kCh05 = fs::path(WORKBOOK_ROOT) / "expected_output/h200/05_compiled_addmm";

const wb::DiffRow* find(const std::vector<wb::DiffRow>& rows, const std::string& name) {
  for (const auto& r : rows)
    if (r.name == name) return &r;
  return nullptr;
}

// `diff` of two recorded runs of one chapter: expected_output/h200/<chapter>/<a>/ and <b>/.
wb::TraceDiff recorded_diff(const std::string& chapter, const std::string& a, const std::string& b) {
  const fs::path dir = fs::path(WORKBOOK_ROOT) / "expected_output/h200" / chapter;
  const wb::Trace ta = wb::read_trace(dir / a / "trace.json"), tb = wb::read_trace(dir / b / "trace.json");
  const wb::TraceModel ma(ta), mb(tb);
  return wb::diff_traces(ma, mb);
}

void check_removed(const wb::TraceDiff& d, std::initializer_list<const char*> ops) {
  for (const char* gone : ops) {
    INFO(gone);
    REQUIRE(find(d.ops, gone));
    CHECK(find(d.ops, gone)->kind == wb::DiffKind::Removed);
  }
}
}  // namespace

TEST_CASE("diff: chapter 05 eager -> addmm shows the rewrite and the GEMM's new name", "[tools][cpu][diff]") {
  const wb::Trace eager = wb::read_trace(kCh05 / "eager/trace.json");
  const wb::Trace addmm = wb::read_trace(kCh05 / "addmm/trace.json");
  const wb::TraceModel me(eager), ma(addmm);
  const wb::TraceDiff d = wb::diff_traces(me, ma);
  for (const char* gone : {"aten::matmul", "aten::mm", "aten::add"}) {
    INFO(gone);
    REQUIRE(find(d.ops, gone));
    CHECK(find(d.ops, gone)->kind == wb::DiffKind::Removed);
    CHECK(find(d.ops, gone)->a_per_step == 1.0);
  }
  REQUIRE(find(d.ops, "aten::addmm"));
  CHECK(find(d.ops, "aten::addmm")->kind == wb::DiffKind::Added);
  CHECK(find(d.ops, "aten::addmm")->b_per_step == 1.0);
  // The GEMM kernel: one of each side, same class, different names -> flagged.
  REQUIRE(d.renamed.size() == 1);
  CHECK(d.renamed[0].kernel_class == "gemm");
  CHECK(d.renamed[0].a_name != d.renamed[0].b_name);
  CHECK_THAT(d.renamed[0].a_name, ContainsSubstring("nvjet"));
  // The add kernel goes, the bias copy comes; launches: cudaLaunchKernel out, cudaMemcpyAsync in.
  CHECK(find(d.launches, "cudaMemcpyAsync")->kind == wb::DiffKind::Added);
  CHECK(find(d.kernels, "Memcpy DtoD (Device -> Device)")->kernel_class == "memcpy");
  CHECK(d.a.steps.size() == 3);
  CHECK(d.a.gpu_us_per_step > 0);
  const std::string text = wb::render_diff(d, wb::Format::Text);
  CHECK_THAT(text, ContainsSubstring("kernel names that changed"));
  CHECK_THAT(text, ContainsSubstring("same name = same GPU work"));
}

TEST_CASE("diff: chapter 06 eager -> aoti: the view chain goes, the GEMM kernel keeps its name",
          "[tools][cpu][diff][ch06]") {
  const wb::TraceDiff d = recorded_diff("06_linear", "eager", "aoti");
  check_removed(d, {"aten::t", "aten::transpose", "aten::as_strided", "aten::addmm"});
  CHECK(d.renamed.empty());  // same name = same GPU work: the compiler kept eager's GEMM
  for (const auto& k : d.kernels) CHECK(k.kind == wb::DiffKind::Same);
  // Without the bias the GEMM is another kernel: the name changes.
  const wb::TraceDiff nb = recorded_diff("06_linear", "eager", "no_bias");
  REQUIRE(nb.renamed.size() == 1);
  CHECK_THAT(nb.renamed[0].a_name, ContainsSubstring("_bias_"));
  CHECK_THAT(nb.renamed[0].b_name, !ContainsSubstring("_bias_"));
}

TEST_CASE("diff: chapter 07 eager -> aoti: gelu and mul become one Triton kernel, the GEMMs stay",
          "[tools][cpu][diff][ch07]") {
  const wb::TraceDiff d = recorded_diff("07_geglu_mlp", "eager", "aoti");
  check_removed(d, {"aten::gelu", "aten::mul", "aten::mm"});
  int elementwise_removed = 0, triton_added = 0, gemm_changed = 0;
  for (const auto& k : d.kernels) {
    if (k.kernel_class == "elementwise" && k.kind == wb::DiffKind::Removed) ++elementwise_removed;
    if (k.kind == wb::DiffKind::Added && k.name.find("triton_poi_fused") != std::string::npos) ++triton_added;
    if (k.kernel_class == "gemm" && k.kind != wb::DiffKind::Same) ++gemm_changed;
  }
  CHECK(elementwise_removed == 2);
  CHECK(triton_added == 1);
  CHECK(gemm_changed == 0);  // the three GEMM kernels keep their names
}

TEST_CASE("diff: the diffs saved with the recordings are what diff prints on them", "[tools][cpu][diff]") {
  if (!fs::exists(proc::bin("diff"))) SKIP("diff not built");
  const fs::path rec = fs::path(WORKBOOK_ROOT) / "expected_output";
  int seen = 0;
  for (const auto& entry : fs::recursive_directory_iterator(rec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("diff_", 0) != 0 || entry.path().extension() != ".txt") continue;
    // diff_<a>_<b>.txt next to the variants' folders <a>/ and <b>/.
    const std::string pair = name.substr(5, name.size() - 9);
    const fs::path dir = entry.path().parent_path();
    std::string a, b;
    for (const auto& v : fs::directory_iterator(dir))
      if (v.is_directory() && pair.rfind(v.path().filename().string() + "_", 0) == 0 &&
          fs::is_directory(dir / pair.substr(v.path().filename().string().size() + 1)))
        a = v.path().filename().string(), b = pair.substr(a.size() + 1);
    INFO(entry.path());
    REQUIRE(!a.empty());
    auto trace_of = [&](const std::string& v) {
      const fs::path t = dir / v / "trace.json";
      return fs::exists(t) ? t : fs::path(t.string() + ".gz");
    };
    const auto r = proc::run(proc::bin("diff"), {trace_of(a).string(), trace_of(b).string()}, 120);
    CHECK(r.code == 3);  // they differ
    // The saved file names the traces by the learner's out/ paths; compare from the first table on.
    const std::string saved = proc::slurp(entry.path());
    auto body = [](const std::string& text) { return text.substr(text.find("per step (mean)")); };
    CHECK(body(r.out) == body(saved));
    ++seen;
  }
  CHECK(seen >= 4);  // 05 eager/addmm; 06 eager/no_bias and eager/aoti; 07 eager/aoti (h200)
}

TEST_CASE("diff: a trace against itself has no change (the check can pass and fail)", "[tools][cpu][diff]") {
  const wb::Trace eager = wb::read_trace(kCh05 / "eager/trace.json");
  const wb::TraceModel m(eager);
  const wb::TraceDiff same = wb::diff_traces(m, m);
  CHECK(same.changes() == 0);
  CHECK(same.renamed.empty());
  CHECK_THAT(wb::render_diff(same, wb::Format::Text), ContainsSubstring("the same names"));
}

TEST_CASE("diff: the command line, its exit codes and bad input", "[tools][cpu][diff]") {
  if (!fs::exists(proc::bin("diff"))) SKIP("diff not built");
  const std::string a = (kCh05 / "eager/trace.json").string(), b = (kCh05 / "addmm/trace.json").string();
  const auto changed = proc::run(proc::bin("diff"), {a, b}, 60);
  CHECK(changed.code == 3);
  CHECK_THAT(changed.out, ContainsSubstring("aten::addmm"));
  CHECK(proc::run(proc::bin("diff"), {a, a}, 60).code == 0);
  const auto json = proc::run(proc::bin("diff"), {a, b, "--format", "json"}, 60);
  CHECK(json.code == 3);
  CHECK_THAT(json.out, ContainsSubstring("\"renamed_kernels\""));
  // Bad input names the file and exits 1; bad flags exit 2.
  const fs::path dir = proc::scratch("diff_bad");
  { std::ofstream(dir / "cut.json") << "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1"; }
  const auto bad = proc::run(proc::bin("diff"), {a, (dir / "cut.json").string()}, 60);
  CHECK(bad.code == 1);
  CHECK_THAT(bad.err, ContainsSubstring("cut.json"));
  CHECK(proc::run(proc::bin("diff"), {a}, 60).code == 2);
  CHECK(proc::run(proc::bin("diff"), {a, b, "--format", "yaml"}, 60).code == 2);
  fs::remove_all(dir);
}

// ---- a bigger batch keeps every name and count and doubles the time ---------------
TEST_CASE("diff: batch 32 vs 64 of an MLP shows the largest time changes by default", "[tools][cpu][diff]") {
  // tests/data/python/cpu_mlp_b{32,64}.json.gz (make_user_fixtures.py): the same training step,
  // twice the rows. Names and counts are the same; the GEMMs' time is what changed.
  const fs::path data = fs::path(WORKBOOK_ROOT) / "tests/data/python";
  const wb::Trace a = wb::read_trace(data / "cpu_mlp_b32.json.gz"),
                  b = wb::read_trace(data / "cpu_mlp_b64.json.gz");
  const wb::TraceModel ma(a), mb(b);
  const wb::TraceDiff d = wb::diff_traces(ma, mb);
  REQUIRE_FALSE(d.op_time_changes.empty());
  CHECK(d.op_time_changes.size() <= 5);
  // Largest first, every one on both sides, and the top one is a GEMM op that got slower.
  for (size_t i = 1; i < d.op_time_changes.size(); ++i)
    CHECK(std::fabs(d.op_time_changes[i - 1].b_us_per_step - d.op_time_changes[i - 1].a_us_per_step) >=
          std::fabs(d.op_time_changes[i].b_us_per_step - d.op_time_changes[i].a_us_per_step));
  for (const auto& r : d.op_time_changes) CHECK((r.a_per_step > 0 && r.b_per_step > 0));
  const wb::DiffRow* gemm = nullptr;
  for (const auto& r : d.op_time_changes)
    if (!gemm && (r.name == "aten::addmm" || r.name == "aten::mm")) gemm = &r;
  REQUIRE(gemm);
  CHECK(gemm->b_us_per_step > gemm->a_us_per_step);
  // The default text shows them (before, only --all did, and it ended "0 changes").
  const std::string text = wb::render_diff(d, wb::Format::Text);
  CHECK_THAT(text, ContainsSubstring("largest time changes per step"));
  CHECK_THAT(text, ContainsSubstring(d.op_time_changes.front().name));
  CHECK_THAT(text, ContainsSubstring("in names or counts"));
  CHECK_THAT(wb::render_diff(d, wb::Format::Json), ContainsSubstring("\"time_changes\""));
  // A trace against itself: no time changes either.
  const wb::TraceDiff same = wb::diff_traces(ma, ma);
  CHECK(same.op_time_changes.empty());
  CHECK(wb::render_diff(same, wb::Format::Text).find("largest time changes") == std::string::npos);
}

TEST_CASE("diff: the same pair recorded on the H200 lists the GEMM kernels' time changes",
          "[tools][cpu][diff]") {
  // scripts/gpu/python_fixtures.sh user: the MLP at batch 32 and 64 on the H200. The kernels keep their
  // names where cuBLAS keeps its choice, and their time per step is what moved.
  const fs::path data = fs::path(WORKBOOK_ROOT) / "tests/data/python";
  const wb::Trace a = wb::read_trace(data / "cuda_mlp_b32.json.gz"),
                  b = wb::read_trace(data / "cuda_mlp_b64.json.gz");
  const wb::TraceModel ma(a), mb(b);
  const wb::TraceDiff d = wb::diff_traces(ma, mb);
  REQUIRE_FALSE(d.kernel_time_changes.empty());
  int gemm = 0;
  for (const auto& r : d.kernel_time_changes) {
    CHECK((r.a_per_step > 0 && r.b_per_step > 0));
    gemm += r.kernel_class == "gemm";
  }
  CHECK(gemm > 0);
  CHECK_THAT(wb::render_diff(d, wb::Format::Text), ContainsSubstring("  kernel  "));
}
