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

#include "../bench/geglu_race.hpp"  // bench_geglu's kernel clock (torch-free)
#include "chapter_runner.hpp"
#include "lessons_fixtures.hpp"
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

// Judges a variant's trace with a spec, the eager variant's trace of the same run as the reference
// (the fusion_pays lesson compares the two).
wb::LessonsReport judge_vs_eager(const wb::Trace& t, const wb::Trace& eager, const std::string& spec,
                                 const wb::Problem& p) {
  const wb::TraceModel m(t), ref(eager);
  wb::FactOptions o;
  o.annotation = "mlp_fwd";
  o.problem = p;
  o.reference = &ref;
  o.reference_label = "eager";
  const wb::LessonSpec* s = wb::find_lesson_spec(spec);
  REQUIRE(s);
  return wb::check_lessons(m, *s, o);
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
  const auto eager = part2::mlp_trace(Mlp::Eager);  // the same run's eager variant: fusion_pays
  part2::all_pass(judge_vs_eager(aoti, eager, "07_geglu_mlp/aoti", part2::kMlpGpu));
  part2::all_pass(judge_vs_eager(hand, eager, "07_geglu_mlp/handwritten", part2::kMlpGpu));
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

// The GEMMs' % of peak, with the H200 numbers on each side of the threshold (lessons.json: >= 40%
// of 989 TFLOP/s, 97.8 us for 38.7 GFLOP).
TEST_CASE("07's GEMM pattern: the H200 times pass with room, slow GEMMs fail", "[ch07][cpu]") {
  auto gemm = [](Mlp v, const char* spec, part2::MlpTimes k) {
    const auto r = judge(part2::mlp_trace(v, true, k), spec, part2::kMlpGpu, "mlp_fwd");
    INFO(wb::render_lessons(r, wb::Format::Text));
    return status(r, "gemm_tiles");
  };
  const char* aoti = "07_geglu_mlp/aoti";
  const char* hand = "07_geglu_mlp/handwritten";
  // The H200 runs' 55-60 us (gate/up) and 50-52 us (down), and 90 us, pass; a GEMM at 110 us
  // (35% of peak) fails -- one slow GEMM is enough.
  CHECK(gemm(Mlp::Aoti, aoti, {60.0, 51.6, 0}) == Status::Pass);
  CHECK(gemm(Mlp::Aoti, aoti, {90.0, 90.0, 0}) == Status::Pass);
  CHECK(gemm(Mlp::Aoti, aoti, {110.0, 51.6, 0}) == Status::Fail);
  CHECK(gemm(Mlp::Handwritten, hand, {56.4, 110.0, 0}) == Status::Fail);
}

// fusion_pays and pointwise_bytes_bound on synthetic traces whose fused kernel takes a given time,
// against the synthetic eager run (gelu 32.3 + mul 36.1 = 68.4 us, the probe's). Thresholds
// (lessons.json): hand-written >= 1.7x eager (<= 40.2 us) and < 5 intermediates' worth at 4.80 TB/s
// (< 52.4 us); AOTI >= 1.1x (<= 62.2 us); GEMMs within 5% of eager's.
TEST_CASE("07's fusion lessons: a fused kernel that does not pay fails, whatever its name", "[ch07][cpu]") {
  const wb::Trace eager = part2::mlp_trace(Mlp::Eager);
  auto judged = [&](Mlp v, const char* spec, part2::MlpTimes k) {
    const auto r = judge_vs_eager(part2::mlp_trace(v, true, k), eager, spec, part2::kMlpGpu);
    INFO(wb::render_lessons(r, wb::Format::Text));
    return std::pair{status(r, "fusion_pays"), spec == std::string("07_geglu_mlp/aoti")
                                                   ? Status::NotApplicable
                                                   : status(r, "pointwise_bytes_bound")};
  };
  const char* aoti = "07_geglu_mlp/aoti";
  const char* hand = "07_geglu_mlp/handwritten";
  // Hand-written: the recording's 34.2 us and 40 us (1.71x) pay; 41 us (1.67x: the bytes' ratio,
  // no more) does not; 52 us is still under 5 intermediates' worth, 53 us and eager's 68.4 are not.
  for (double us : {34.2, 40.0}) {
    INFO(us << " us");
    const auto [pays, bound] = judged(Mlp::Handwritten, hand, {0, 0, us});
    CHECK(pays == Status::Pass);
    CHECK(bound == Status::Pass);
  }
  CHECK(judged(Mlp::Handwritten, hand, {0, 0, 41.0}).first == Status::Fail);
  CHECK(judged(Mlp::Handwritten, hand, {0, 0, 41.0}).second == Status::Pass);
  CHECK(judged(Mlp::Handwritten, hand, {0, 0, 52.0}).second == Status::Pass);
  for (double us : {53.0, 68.4}) {
    INFO(us << " us");
    const auto [pays, bound] = judged(Mlp::Handwritten, hand, {0, 0, us});
    CHECK(pays == Status::Fail);
    CHECK(bound == Status::Fail);
  }
  // AOTI's Triton kernel: Python's 38.0 us and the recording's 55.7 us pay (1.8x, 1.23x); 63 us
  // (1.09x) and a fusion that lost time (75 us) fail -- the old ">= 40% of HBM" passed up to 78.6 us.
  for (double us : {38.0, 55.7}) CHECK(judged(Mlp::Aoti, aoti, {0, 0, us}).first == Status::Pass);
  for (double us : {63.0, 75.0}) CHECK(judged(Mlp::Aoti, aoti, {0, 0, us}).first == Status::Fail);
  // The clock check: GEMMs 2 x 60.1 + 51.6 us vs eager's 2 x 56.4 + 51.6 (1.045x) still compare;
  // at 65 us (1.10x) the two runs did not run at the same clocks, and the comparison fails.
  CHECK(judged(Mlp::Handwritten, hand, {60.1, 0, 0}).first == Status::Pass);
  CHECK(judged(Mlp::Handwritten, hand, {65.0, 0, 0}).first == Status::Fail);
  // Without the eager run to compare with, fusion_pays cannot be measured on a GPU run where it
  // applies: that is a failure that says why, not a pass.
  const auto alone = judge(part2::mlp_trace(Mlp::Handwritten), hand, part2::kMlpGpu, "mlp_fwd");
  CHECK(status(alone, "fusion_pays") == Status::Fail);
  for (const auto& f : alone.facts)
    if (f.id == "fusion_pays") CHECK_THAT(f.verdict, ContainsSubstring("eager variant's trace"));
  // Eager's own spec: the pair takes long enough for its 5 intermediates; the fused traces do not.
  CHECK(status(judge(eager, "07_geglu_mlp/eager", part2::kMlpGpu, "mlp_fwd"), "pointwise_bytes_bound") ==
        Status::Pass);
  CHECK(status(judge(part2::mlp_trace(Mlp::Handwritten), "07_geglu_mlp/eager", part2::kMlpGpu, "mlp_fwd"),
               "pointwise_bytes_bound") == Status::Fail);
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

// bench_geglu's kernel clock: each call's kernels are those launched inside its annotation; a
// prelude's kernel (the L2 flush before a call) counts nowhere, and two kernels of one call add up.
TEST_CASE("bench_geglu's kernel clock attributes kernels to the call that launched them", "[ch07][cpu]") {
  wb::Trace t;
  int64_t corr = 0;
  auto ev = [&](wb::Kind k, std::string name, double start_us, double dur_us, int64_t id = 0) {
    wb::Event e;
    e.kind = k;
    e.name = std::move(name);
    e.start_ns = static_cast<int64_t>(start_us * 1000);
    e.dur_ns = static_cast<int64_t>(dur_us * 1000);
    e.id = id;
    t.events.push_back(e);
  };
  auto launch = [&](double at, const std::string& kernel, double kernel_us, double runs_at) {
    ev(wb::Kind::Runtime, "cudaLaunchKernel", at, 1, ++corr);
    ev(wb::Kind::Kernel, kernel, runs_at, kernel_us, corr);
    wb::KernelInfo k;
    k.grid = {49152, 1, 1};
    k.block = {256, 1, 1};
    k.registers_per_thread = 16;
    t.events.back().kernel = k;
  };
  double at = 0;
  for (int i = 0; i < 3; ++i) {
    ev(wb::Kind::UserAnnotation, "prelude", at, 5);
    launch(at + 1, "flush", 60, at + 500);  // before the call: not the contender's
    ev(wb::Kind::UserAnnotation, "race|eager|L2 flushed", at + 10, 10);
    launch(at + 11, "gelu", 30 + i, at + 600);
    launch(at + 13, "mul", 36, at + 640);
    ev(wb::Kind::UserAnnotation, "race|fused|L2 flushed", at + 30, 5);
    launch(at + 31, "triton_poi_fused_gelu_mul_0", 55, at + 700);
    at += 1000;
  }
  const auto a = geglu_race::attribute(t);
  REQUIRE(a.call_us.count("eager"));
  CHECK(a.call_us.at("eager").at("L2 flushed") == std::vector<double>{66, 67, 68});
  CHECK(a.call_us.at("fused").at("L2 flushed") == std::vector<double>{55, 55, 55});
  CHECK(a.kernels.at("eager") == std::vector<std::string>{"gelu", "mul"});
  CHECK(a.kernels.count("prelude") == 0);
  CHECK(a.launch.at("fused") == "grid 49152 x block 256 (16 regs)");
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
  const wb::Trace eager = wb::read_trace(recorded("h200", "eager"));
  for (const std::string v : {"eager", "aoti", "handwritten"}) {
    const auto r =
        judge_vs_eager(wb::read_trace(recorded("h200", v)), eager, "07_geglu_mlp/" + v, part2::kMlpGpu);
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

TEST_CASE("07's H200 recording: the fusion lessons pass against eager's run, and fail where they should",
          "[ch07][h200][cpu]") {
  const wb::Trace eager = wb::read_trace(recorded("h200", "eager"));
  const wb::Trace aoti = wb::read_trace(recorded("h200", "aoti"));
  const wb::Trace hand = wb::read_trace(recorded("h200", "handwritten"));
  auto report = [&](const wb::Trace& t, const std::string& spec) {
    auto r = judge_vs_eager(t, eager, "07_geglu_mlp/" + spec, part2::kMlpGpu);
    UNSCOPED_INFO(wb::render_lessons(r, wb::Format::Text));
    return r;
  };
  // Each variant with its own spec, eager's run as the reference: every lesson holds.
  const auto e = report(eager, "eager"), a = report(aoti, "aoti"), h = report(hand, "handwritten");
  for (const auto* r : {&e, &a, &h}) CHECK(r->failed == 0);
  CHECK(status(e, "pointwise_bytes_bound") == Status::Pass);
  CHECK(status(a, "fusion_pays") == Status::Pass);
  CHECK(status(h, "fusion_pays") == Status::Pass);
  CHECK(status(h, "pointwise_bytes_bound") == Status::Pass);
  // The hand-written spec on the AOTI recording: Inductor's kernel (55.7 us) is 1.2x eager, not
  // 1.7x, and its time alone could have moved 5.3 intermediates: both fail. On eager's recording
  // (the pair against itself: 1.0x, 6.4 intermediates' worth) both fail too.
  const auto hand_on_aoti = report(aoti, "handwritten"), hand_on_eager = report(eager, "handwritten");
  for (const auto* r : {&hand_on_aoti, &hand_on_eager}) {
    CHECK(status(*r, "fusion_pays") == Status::Fail);
    CHECK(status(*r, "pointwise_bytes_bound") == Status::Fail);
  }
  const auto aoti_on_eager = report(eager, "aoti");
  CHECK(status(aoti_on_eager, "fusion_pays") == Status::Fail);                    // no speedup against itself
  CHECK(status(report(hand, "eager"), "pointwise_bytes_bound") == Status::Fail);  // too fast for 5
  // The runner's wait: the AOTI step waits, eager's does not; each spec fails on the other's trace.
  CHECK(status(a, "runner_waits") == Status::Pass);
  CHECK(status(e, "runner_waits") == Status::Pass);
  CHECK(status(aoti_on_eager, "runner_waits") == Status::Fail);
  CHECK(status(report(aoti, "eager"), "runner_waits") == Status::Fail);
  // The measured figures the chapter quotes, within the recording's rounding.
  auto data = [](const wb::LessonsReport& r, const char* id) {
    for (const auto& f : r.facts)
      if (f.id == id) return f.data;
    return nlohmann::json();
  };
  CHECK(data(h, "fusion_pays")["speedup_vs_eager"].get<double>() >= 1.7);  // the goal
  CHECK(data(a, "fusion_pays")["speedup_vs_eager"].get<double>() < 1.25);
  CHECK(data(h, "pointwise_bytes_bound")["max_intermediates_at_peak"].get<double>() < 3.5);  // README: 3.4
  CHECK(data(a, "runner_waits")["waits_per_step"].get<double>() == 2);  // a query and a synchronize
  CHECK(data(a, "runner_waits")["gpu_idle_before_first_kernel_us"].get<double>() > 10);
  // Eager's GPU idles far less before a step's first kernel than the runner's (no wait).
  CHECK(data(e, "runner_waits")["gpu_idle_before_first_kernel_us"].get<double>() <
        data(a, "runner_waits")["gpu_idle_before_first_kernel_us"].get<double>() / 2);
}

TEST_CASE("07's CPU recording: the fusion lessons are GPU-only and fail nothing", "[ch07][recorded][cpu]") {
  const wb::Trace eager = wb::read_trace(recorded("cpu", "eager"));
  for (const std::string v : {"eager", "aoti"}) {
    const auto r =
        judge_vs_eager(wb::read_trace(recorded("cpu", v)), eager, "07_geglu_mlp/" + v, part2::kMlpCpu);
    INFO(wb::render_lessons(r, wb::Format::Text));
    CHECK(r.failed == 0);
    CHECK(status(r, v == "eager" ? "pointwise_bytes_bound" : "fusion_pays") == Status::NotApplicable);
  }
}

TEST_CASE("07's CPU recording passes its lessons", "[ch07][recorded][cpu]") {
  for (const std::string v : {"eager", "aoti"}) {
    const auto r = judge(wb::read_trace(recorded("cpu", v)), "07_geglu_mlp/" + v, part2::kMlpCpu, "mlp_fwd");
    INFO(wb::render_lessons(r, wb::Format::Text));
    CHECK(r.failed == 0);
    CHECK(status(r, "work_per_step") == Status::Pass);
  }
}

// A real H200 trace of the aoti variant (its recording at 8f44bde, kept as a fixture): the last
// warm-up step's down GEMM was launched before the window opened (its launch call went with the
// discarded step: correlation 416, the trace's first launch is 424) but ran inside
// ProfilerStep#2. Kernels are placed in steps by their launch call; one with no launch call in the
// trace belongs to no step. Placed by its own start instead, the step counted 4.33 kernels and
// 3.33 GEMMs, and two lessons failed on a correct run.
TEST_CASE("a kernel launched before the window belongs to no step (real H200 trace)", "[ch07][cpu]") {
  const wb::Trace t = wb::read_trace(fixtures::data_dir() / "h200_07_aoti_warmup_kernel.json");
  const wb::TraceModel m(t);
  int unlaunched_in_first_step = 0;
  for (wb::EventIdx i = 0; i < t.events.size(); ++i) {
    const auto& e = t.events[i];
    if (e.kind == wb::Kind::Kernel && !m.launcher(i) && m.step_at(e.start_ns)) unlaunched_in_first_step++;
  }
  REQUIRE(unlaunched_in_first_step == 1);  // the case this test is about is in the fixture
  const auto r = judge(t, "07_geglu_mlp/aoti", part2::kMlpGpu, "mlp_fwd");
  CHECK(status(r, "work_per_step") == Status::Pass);
  CHECK(status(r, "gemm_tiles") == Status::Pass);
  for (const auto& f : r.facts)
    if (f.id == "work_per_step") CHECK(f.data["kernels_per_step"].get<double>() == 4.0);
}
