// Chapter 07: a GeGLU MLP, eager (5 kernels), AOTInductor (4) and a hand-written fused kernel (4).
//   [ch07]        the lessons on H200-shaped synthetic traces, each shown passing and failing
//                 (the wrong variant's spec, other chapters' real recordings)
//   [ch07][cpu]   the chapter's CPU edition, live
//   [ch07][gpu]   the hand-written kernel against eager gelu*mul in bf16, and the chapter live
//                 on the GPU (skipped without CUDA)
//   [ch07][h200] / [ch07][recorded]  the recordings in expected_output/{h200,cpu}/07_geglu_mlp
//                 (skipped, saying so, until they are recorded)
#include <torch/cuda.h>
#include <torch/types.h>
#undef CHECK  // c10's glog-style CHECK would shadow Catch2's
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <filesystem>

#include "chapter_runner.hpp"
#include "geglu.hpp"
#if WB07_HAVE_KERNEL
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "geglu_kernel.hpp"
#endif
#include "part2_traces.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;
using part2::judge;
using part2::Mlp;
using part2::status;
using wb::Status;

namespace {

const char* kFacts[] = {"work_per_step", "view_ops", "gemm_tiles", "pointwise_traffic", "dispatch_chain"};

// The lessons of one variant's recording (expected_output/<platform>/07_geglu_mlp/<variant>/).
fs::path recorded(const std::string& platform, const std::string& variant) {
  return part2::recorded(platform, "07_geglu_mlp", variant);
}

}  // namespace

TEST_CASE("eager MLP: 5 kernels, views without device time, two GEMM tiles, 5 intermediates moved",
          "[ch07][cpu]") {
  const auto r = judge(part2::mlp_trace(Mlp::Eager), "07_geglu_mlp/eager", part2::kMlpGpu, "mlp_fwd");
  part2::all_pass(r);
  for (const char* id : kFacts) CHECK(status(r, id) == Status::Pass);
  const wb::Trace t = part2::mlp_trace(Mlp::Eager);  // the model reads the trace: keep it alive
  const wb::TraceModel m(t);
  wb::FactOptions o;
  o.problem = part2::kMlpGpu;
  const wb::Fact pw = wb::compute_fact("pointwise_traffic", m, o);
  CHECK(pw.data["mb_per_step"].get<double>() > 250);  // 5 x 50.3 MB
  CHECK(pw.data["mb_per_step"].get<double>() < 253);
  const wb::Fact tiles = wb::compute_fact("gemm_tiles", m, o);
  CHECK(tiles.data["gflop_each"].get<double>() > 38.6);  // 2*8192*768*3072
  CHECK(tiles.data["gflop_each"].get<double>() < 38.7);
}

TEST_CASE("fused MLP: the compiled and hand-written variants pass their lessons, not eager's",
          "[ch07][cpu]") {
  const auto aoti = part2::mlp_trace(Mlp::Aoti), hand = part2::mlp_trace(Mlp::Handwritten);
  part2::all_pass(judge(aoti, "07_geglu_mlp/aoti", part2::kMlpGpu, "mlp_fwd"));
  part2::all_pass(judge(hand, "07_geglu_mlp/handwritten", part2::kMlpGpu, "mlp_fwd"));
  // The wrong spec fails: 4 kernels are not 5, 3 intermediates are not 5, and back.
  const auto as_eager = judge(aoti, "07_geglu_mlp/eager", part2::kMlpGpu, "mlp_fwd");
  CHECK(status(as_eager, "work_per_step") == Status::Fail);
  CHECK(status(as_eager, "pointwise_traffic") == Status::Fail);
  const auto eager_as_aoti =
      judge(part2::mlp_trace(Mlp::Eager), "07_geglu_mlp/aoti", part2::kMlpGpu, "mlp_fwd");
  CHECK(status(eager_as_aoti, "work_per_step") == Status::Fail);
  CHECK(status(eager_as_aoti, "pointwise_traffic") == Status::Fail);
  const auto aoti_as_hand = judge(aoti, "07_geglu_mlp/handwritten", part2::kMlpGpu, "mlp_fwd");
  CHECK(status(aoti_as_hand, "work_per_step") == Status::Fail);  // Inductor's kernel is not the geglu one
}

// The % of peak conditions, with the H200 numbers on each side of the threshold. The thresholds
// (lessons.json): GEMMs >= 40% of 989 TFLOP/s (97.8 us for 38.7 GFLOP), AOTI's fused kernel
// >= 40% of 4.80 TB/s (78.6 us for 151 MB), the hand-written one >= 60% (52.4 us).
TEST_CASE("07's % of peak patterns: the H200 times pass with room, slow kernels fail", "[ch07][cpu]") {
  auto judged = [](Mlp v, const char* spec, part2::MlpTimes k) {
    const auto r = judge(part2::mlp_trace(v, true, k), spec, part2::kMlpGpu, "mlp_fwd");
    INFO(wb::render_lessons(r, wb::Format::Text));
    return std::pair{status(r, "gemm_tiles"), status(r, "pointwise_traffic")};
  };
  const char* aoti = "07_geglu_mlp/aoti";
  const char* hand = "07_geglu_mlp/handwritten";
  // AOTI's Triton kernel: the probe's torch.compile 38.0 us, bench_geglu's 47.5 us, the chapter's
  // profiled 55.6 us (H200, 2026-12-01) and 1.35x that pass; a kernel at 36% of HBM fails.
  for (double us : {38.0, 47.5, 55.6, 75.0}) {
    INFO(us << " us");
    CHECK(judged(Mlp::Aoti, aoti, {0, 0, us}).second == Status::Pass);
  }
  CHECK(judged(Mlp::Aoti, aoti, {0, 0, 84.0}).second == Status::Fail);
  // The hand-written kernel: the chapter's 36.4 us and 48 us pass; eager's pair (65.5 us, 2 kernels
  // in one) and 56 us (56% of HBM) fail.
  for (double us : {36.4, 48.0}) CHECK(judged(Mlp::Handwritten, hand, {0, 0, us}).second == Status::Pass);
  for (double us : {56.0, 65.5}) CHECK(judged(Mlp::Handwritten, hand, {0, 0, us}).second == Status::Fail);
  // GEMMs: the H200 runs' 55-60 us (gate/up) and 50-52 us (down), and 90 us, pass; a GEMM at
  // 110 us (35% of peak) fails -- one slow GEMM is enough.
  CHECK(judged(Mlp::Aoti, aoti, {60.0, 51.6, 0}).first == Status::Pass);
  CHECK(judged(Mlp::Aoti, aoti, {90.0, 90.0, 0}).first == Status::Pass);
  CHECK(judged(Mlp::Aoti, aoti, {110.0, 51.6, 0}).first == Status::Fail);
  CHECK(judged(Mlp::Handwritten, hand, {56.4, 110.0, 0}).first == Status::Fail);
}

TEST_CASE("07's lessons fail on other chapters' real recordings", "[ch07][cpu]") {
  // The H200 recording of chapter 04 (4096 matmul + add): 2 kernels, one GEMM tile, an add.
  const fs::path h200 = chapter_runner::recorded_trace("h200", "04_compute_bound_4096");
  if (!h200.empty()) {
    const auto r = judge(wb::read_trace(h200), "07_geglu_mlp/eager", part2::kMlpGpu, "matmul_add");
    part2::each_fails(r, {"work_per_step", "gemm_tiles", "pointwise_traffic", "view_ops"});
  }
  // The CPU recording of chapter 01: one mm, no gelu or mul, no views.
  const fs::path cpu = chapter_runner::recorded_trace("cpu", "01_cold_64");
  REQUIRE(!cpu.empty());
  const auto r = judge(wb::read_trace(cpu), "07_geglu_mlp/eager", part2::kMlpCpu, "matmul_add");
  part2::each_fails(r, {"work_per_step", "view_ops", "dispatch_chain"});
}

TEST_CASE("a CPU-only MLP trace: the op counts are judged, the kernel facts say they need a GPU",
          "[ch07][cpu]") {
  const auto r =
      judge(part2::mlp_trace(Mlp::Eager, /*gpu=*/false), "07_geglu_mlp/eager", part2::kMlpCpu, "mlp_fwd");
  CHECK(status(r, "work_per_step") == Status::Pass);
  CHECK(status(r, "view_ops") == Status::Pass);
  CHECK(status(r, "gemm_tiles") == Status::NotApplicable);
  CHECK(status(r, "pointwise_traffic") == Status::NotApplicable);
}

TEST_CASE("chapter 07 CPU edition, live: eager and aoti pass, handwritten says why not", "[ch07][cpu]") {
  const auto r = chapter_runner::run("07_geglu_mlp", {"--device", "cpu", "--check"}, "cpu");
  INFO(r.out << r.err);
  REQUIRE(r.rc == 0);
  const auto eager = part2::variant_lessons(r, "eager");
  REQUIRE(eager.is_object());
  CHECK(eager["summary"]["failed"] == 0);
  CHECK(chapter_runner::fact(eager, "work_per_step")["status"] == "pass");
  CHECK(chapter_runner::fact(eager, "view_ops")["status"] == "pass");
  CHECK(chapter_runner::fact(eager, "work_per_step")["data"]["ops"]["aten::mm"] == 3);
  part2::check_aoti_variant(r, "aten::gelu");
  CHECK(!fs::exists(r.dir / "handwritten"));
  const auto hand =
      chapter_runner::run("07_geglu_mlp", {"--device", "cpu", "--variant", "handwritten"}, "cpu_hand");
  CHECK(hand.rc == 2);
  CHECK_THAT(hand.err, ContainsSubstring("handwritten"));
}

TEST_CASE("the hand-written kernel matches eager gelu_tanh * mul in bf16", "[ch07][gpu]") {
  if (!torch::cuda::is_available() ||
      !wb07::handwritten_unavailable(torch::Device(torch::kCUDA), torch::kBFloat16).empty())
    SKIP("no CUDA device or no hand-written kernel in this build");
  torch::manual_seed(0);
  const auto opts = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kBFloat16);
  // The chapter's shape, an odd size (the per-element tail) and a misaligned view.
  const auto big_g = torch::randn({8192, 3072}, opts) * 3, big_u = torch::randn({8192, 3072}, opts);
  const auto odd_g = torch::randn({3, 1001}, opts) * 3, odd_u = torch::randn({3, 1001}, opts);
  const auto flat_g = torch::randn({4097}, opts), flat_u = torch::randn({4097}, opts);
  const std::vector<std::pair<torch::Tensor, torch::Tensor>> cases{
      {big_g, big_u}, {odd_g, odd_u}, {flat_g.slice(0, 1), flat_u.slice(0, 1)}};
  for (const auto& [g, u] : cases) {
    const auto want = torch::gelu(g, "tanh") * u;
    const auto got = wb07::geglu_fused(g, u);
    REQUIRE(got.sizes() == want.sizes());
    const auto diff = (got.to(torch::kFloat) - want.to(torch::kFloat)).abs();
    const auto tol = 1e-2 + 1.6e-2 * want.to(torch::kFloat).abs();  // bf16: 8 bits of mantissa
    INFO("shape " << g.sizes() << ": max |diff| " << diff.max().item<float>());
    CHECK((diff <= tol).all().item<bool>());
    CHECK(diff.eq(0).to(torch::kFloat).mean().item<float>() > 0.9);  // mostly bit-identical
  }
}

TEST_CASE("every launch configuration of the hand-written kernel computes the same bits", "[ch07][gpu]") {
#if !WB07_HAVE_KERNEL
  SKIP("no hand-written kernel in this build (no nvcc or no CUDA LibTorch)");
#else
  if (!torch::cuda::is_available()) SKIP("no CUDA device");
  torch::manual_seed(1);
  const auto opts = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kBFloat16);
  // The chapter's shape (whole tiles), and 1,000,003 elements: a last tile that is partly past
  // the end in every configuration, and 3 elements for the per-element tail.
  const std::vector<int64_t> sizes{8192 * 3072, 1000003};
  const auto stream = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getStream(opts.device());
  for (const int64_t n : sizes) {
    const auto g = torch::randn({n}, opts) * 3, u = torch::randn({n}, opts);
    const auto want = wb07::geglu_fused(g, u);  // the default configuration
    for (const auto& c : wb07::geglu_configs()) {
      auto y = torch::full_like(g, 7);
      INFO(n << " elements, " << wb07::describe(c));
      REQUIRE(wb07::geglu_tanh_bf16(g.data_ptr(), u.data_ptr(), y.data_ptr(), n, stream.native_handle(), c)
                  .empty());
      CHECK(torch::equal(y, want));
    }
  }
  wb07::GegluConfig odd;
  odd.unroll = 3;
  const auto g = torch::randn({64}, opts);
  CHECK_THAT(wb07::geglu_tanh_bf16(g.data_ptr(), g.data_ptr(), g.data_ptr(), 64, stream.native_handle(), odd),
             ContainsSubstring("unroll 3"));
#endif
}

TEST_CASE("chapter 07 on the GPU, live: every variant passes its lessons", "[ch07][gpu]") {
  const auto r = chapter_runner::run_gpu("07_geglu_mlp", {"--check"}, "gpu");
  INFO(r.out << r.err);
  CHECK(r.rc == 0);
  for (const char* v : {"eager", "aoti", "handwritten"}) {
    const auto l = part2::variant_lessons(r, v);
    // A failing variant shows its lessons (which fact, measured what), not only its count.
    INFO(v << "\n" << proc::slurp(r.dir / v / "lessons.txt"));
    REQUIRE(l.is_object());
    CHECK(l["summary"]["failed"] == 0);
  }
}

TEST_CASE("07's H200 recording: 5 -> 4 -> 4 kernels, GEMM names unchanged by the compiler",
          "[ch07][h200][cpu]") {
  std::vector<std::string> gemms[2];
  int i = 0;
  for (const std::string v : {"eager", "aoti", "handwritten"}) {
    const auto r = judge(wb::read_trace(recorded("h200", v)), "07_geglu_mlp/" + v, part2::kMlpGpu, "mlp_fwd");
    INFO(wb::render_lessons(r, wb::Format::Text));
    CHECK(r.failed == 0);
    CHECK(status(r, "work_per_step") == Status::Pass);
    CHECK(status(r, "pointwise_traffic") == Status::Pass);
    if (v != "handwritten") {
      const wb::Trace t = wb::read_trace(recorded("h200", v));
      const wb::TraceModel m(t);
      wb::FactOptions o;
      o.problem = part2::kMlpGpu;
      gemms[i++] = wb::compute_fact("gemm_tiles", m, o).data["gemm_kernels"].get<std::vector<std::string>>();
    }
  }
  CHECK(gemms[0] == gemms[1]);  // Inductor leaves the GEMMs to the same cuBLAS kernels
}

TEST_CASE("07's CPU recording passes its lessons", "[ch07][recorded][cpu]") {
  for (const std::string v : {"eager", "aoti"}) {
    const auto r = judge(wb::read_trace(recorded("cpu", v)), "07_geglu_mlp/" + v, part2::kMlpCpu, "mlp_fwd");
    INFO(wb::render_lessons(r, wb::Format::Text));
    CHECK(r.failed == 0);
    CHECK(status(r, "work_per_step") == Status::Pass);
  }
}
