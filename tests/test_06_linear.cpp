// Chapter 06: one nn.Linear(32, 64) on 1024 rows: eager (addmm, bias in the epilogue), without
// bias (mm) and compiled (AOTInductor: the view chain gone, the same GEMM kernel).
//   [ch06]        the lessons on H200-shaped synthetic traces, passing and failing, and failing on
//                 other chapters' real recordings
//   [ch06][cpu]   the chapter's CPU edition, live, every variant
//   [ch06][gpu]   the chapter live on the GPU (skipped without CUDA)
//   [ch06][h200] / [ch06][recorded]  the recordings in expected_output/{h200,cpu}/06_linear
//                 (skipped, saying so, until they are recorded)
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <filesystem>

#include "chapter_runner.hpp"
#include "part2_traces.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;
using part2::judge;
using part2::status;
using wb::Status;

namespace {

fs::path recorded(const std::string& platform, const std::string& variant) {
  return part2::recorded(platform, "06_linear", variant);
}

std::vector<std::string> gemm_kernels(const wb::Trace& t) {
  const wb::TraceModel m(t);
  return wb::compute_fact("launch_path", m).data.value("gemm_kernels", std::vector<std::string>{});
}

}  // namespace

TEST_CASE("eager Linear: view chain, one addmm, no add, the _bias_ kernel; no_bias: mm", "[ch06][cpu]") {
  const auto eager = part2::linear_trace(true), plain = part2::linear_trace(false);
  const auto r = judge(eager, "06_linear/eager", part2::kLinearGpu, "linear_fwd");
  part2::all_pass(r);
  for (const char* id : {"dispatch_chain", "work_per_step", "view_ops", "launch_path"})
    CHECK(status(r, id) == Status::Pass);
  part2::all_pass(judge(plain, "06_linear/no_bias", part2::kLinearGpu, "linear_fwd"));
  // Each trace judged as the other variant fails: addmm is not mm, _bias_ is not plain.
  const auto crossed = judge(plain, "06_linear/eager", part2::kLinearGpu, "linear_fwd");
  CHECK(status(crossed, "dispatch_chain") == Status::Fail);
  CHECK(status(crossed, "work_per_step") == Status::Fail);
  CHECK(status(crossed, "launch_path") == Status::Fail);
  const auto back = judge(eager, "06_linear/no_bias", part2::kLinearGpu, "linear_fwd");
  CHECK(status(back, "dispatch_chain") == Status::Fail);
  CHECK(status(back, "launch_path") == Status::Fail);
  // Eager is not compiled: its aten::t fails the compiled variant's lesson.
  CHECK(status(judge(eager, "06_linear/aoti", part2::kLinearGpu, "linear_fwd"), "work_per_step") ==
        Status::Fail);
}

TEST_CASE("06's lessons fail on other chapters' real recordings", "[ch06][cpu]") {
  const fs::path cpu = chapter_runner::recorded_trace("cpu", "05_compiled_addmm/eager");
  REQUIRE(!cpu.empty());
  // Chapter 05's eager matmul + add: no aten::linear, no aten::t, an aten::add.
  const auto r = judge(wb::read_trace(cpu), "06_linear/eager", part2::kLinearCpu, "matmul_add");
  part2::each_fails(r, {"dispatch_chain", "work_per_step", "view_ops"});
  const fs::path h200 = chapter_runner::recorded_trace("h200", "05_compiled_addmm/addmm");
  if (!h200.empty()) {  // addmm by hand: one addmm, but no linear/t chain and a _badd_ GEMM
    const auto a = judge(wb::read_trace(h200), "06_linear/eager", part2::kLinearGpu, "matmul_add");
    part2::each_fails(a, {"dispatch_chain", "launch_path", "view_ops"});
  }
}

// A CPU run on a machine with a GPU lists the GPU in the trace's deviceProperties, though nothing
// ran there (seen on the H200: the CPU edition failed its Hopper-only launch_path conditions). The
// Hopper conditions step aside on such a trace; on a Hopper trace with GPU work they still judge.
TEST_CASE("06 and 07: a CPU run on a Hopper machine is judged as a CPU run", "[ch06][ch07][cpu]") {
  for (bool bias : {true, false}) {
    wb::Trace t = part2::linear_trace(bias, /*gpu=*/false);
    t.devices.push_back({0, "NVIDIA H200", 9, 0, 150000000000, 132});
    const auto r = judge(t, bias ? "06_linear/eager" : "06_linear/no_bias", part2::kLinearCpu, "linear_fwd");
    INFO(wb::render_lessons(r, wb::Format::Text));
    CHECK(r.failed == 0);
    CHECK(status(r, "launch_path") == Status::NotApplicable);
  }
  wb::Trace mlp = part2::mlp_trace(part2::Mlp::Eager, /*gpu=*/false);
  mlp.devices.push_back({0, "NVIDIA H200", 9, 0, 150000000000, 132});
  const auto m = judge(mlp, "07_geglu_mlp/eager", part2::kMlpCpu, "mlp_fwd");
  INFO(wb::render_lessons(m, wb::Format::Text));
  CHECK(m.failed == 0);
  // The same spec on the GPU trace with a kernel name that is not Hopper's still fails.
  const auto wrong =
      judge(part2::linear_trace(/*bias=*/false), "06_linear/eager", part2::kLinearGpu, "linear_fwd");
  CHECK(status(wrong, "launch_path") == Status::Fail);
}

TEST_CASE("chapter 06 CPU edition, live: every variant passes its lessons", "[ch06][cpu]") {
  const auto r = chapter_runner::run("06_linear", {"--device", "cpu", "--check"}, "cpu");
  INFO(r.out << r.err);
  REQUIRE(r.rc == 0);
  const auto eager = part2::variant_lessons(r, "eager"), plain = part2::variant_lessons(r, "no_bias");
  REQUIRE(eager.is_object());
  REQUIRE(plain.is_object());
  CHECK(chapter_runner::fact(eager, "dispatch_chain")["status"] == "pass");
  CHECK(chapter_runner::fact(eager, "view_ops")["status"] == "pass");
  CHECK(chapter_runner::fact(eager, "work_per_step")["data"]["ops"]["aten::addmm"] == 1);
  CHECK(chapter_runner::fact(plain, "work_per_step")["data"]["ops"]["aten::mm"] == 1);
  part2::check_aoti_variant(r, "aten::t");
  // Flags: --no-bias runs one variant; a size the package was not compiled for is refused early.
  const auto nb = chapter_runner::run("06_linear", {"--device", "cpu", "--no-bias"}, "cpu_nb");
  CHECK(nb.rc == 0);
  CHECK(fs::exists(nb.dir / "no_bias" / "lessons.json"));
  CHECK(!fs::exists(nb.dir / "eager"));
  const auto bad =
      chapter_runner::run("06_linear", {"--device", "cpu", "--compiled", "--size", "100"}, "cpu_bad");
  CHECK(bad.rc == 2);
  CHECK_THAT(bad.err, ContainsSubstring("aoti"));
}

TEST_CASE("chapter 06 on the GPU, live: lessons pass, compiled GEMM = eager GEMM", "[ch06][gpu]") {
  const auto r = chapter_runner::run_gpu("06_linear", {"--check"}, "gpu");
  INFO(r.out << r.err);
  CHECK(r.rc == 0);
  for (const char* v : {"eager", "no_bias", "aoti"}) {
    INFO(v);
    const auto l = part2::variant_lessons(r, v);
    REQUIRE(l.is_object());
    CHECK(l["summary"]["failed"] == 0);
  }
  CHECK(gemm_kernels(wb::read_trace(r.dir / "eager" / "trace.json")) ==
        gemm_kernels(wb::read_trace(r.dir / "aoti" / "trace.json")));
}

TEST_CASE("06's H200 recording: _bias_ in the epilogue, same kernel compiled, another without bias",
          "[ch06][h200][cpu]") {
  for (const std::string v : {"eager", "no_bias", "aoti"}) {
    const auto r =
        judge(wb::read_trace(recorded("h200", v)), "06_linear/" + v, part2::kLinearGpu, "linear_fwd");
    INFO(wb::render_lessons(r, wb::Format::Text));
    CHECK(r.failed == 0);
  }
  const auto eager = gemm_kernels(wb::read_trace(recorded("h200", "eager")));
  CHECK(eager == gemm_kernels(wb::read_trace(recorded("h200", "aoti"))));
  CHECK(eager != gemm_kernels(wb::read_trace(recorded("h200", "no_bias"))));
}

TEST_CASE("06's CPU recording passes its lessons", "[ch06][recorded][cpu]") {
  for (const std::string v : {"eager", "no_bias", "aoti"}) {
    const auto r =
        judge(wb::read_trace(recorded("cpu", v)), "06_linear/" + v, part2::kLinearCpu, "linear_fwd");
    INFO(wb::render_lessons(r, wb::Format::Text));
    CHECK(r.failed == 0);
  }
}
