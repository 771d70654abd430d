// Synthetic traces shaped like Part 2's workloads on the H200 (chapters 06-07), for the lesson
// tests: the names, nesting and launch APIs follow the H200 recordings
// (expected_output/h200/06_linear, 07_geglu_mlp); the times are an early probe's medians. Each builder shows
// a lesson passing; the tests also judge them with the wrong spec, and judge other chapters' real recordings,
// to show each one failing. Below them, the Catch2 helpers both chapters' tests use.
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "chapter_runner.hpp"
#include "lessons_fixtures.hpp"
#include "workbook/lessons.hpp"
#include "workbook/trace_model.hpp"

namespace part2 {

using wb::Kind;

inline const char* kGateUp = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT";
inline const char* kDown = "nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT";
inline const char* kGelu =
    "void at::native::vectorized_elementwise_kernel<8, "
    "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
    "at::native::GeluType)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::"
    "BFloat16)#1}, std::array<char*, 2ul> >(int, ...)";
inline const char* kMul =
    "void at::native::vectorized_elementwise_kernel<8, at::native::BinaryFunctor<c10::BFloat16, "
    "c10::BFloat16, "
    "c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int, ...)";
inline const char* kTriton = "triton_poi_fused__unsafe_view_gelu_mul_0";
inline const char* kHandwritten =
    "wb07::(anonymous namespace)::geglu_tanh_elementwise_kernel(uint4 const*, uint4 const*, uint4*, long)";
inline const char* kLinearBias = "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT";

enum class Mlp { Eager, Aoti, Handwritten };

// Kernel times (us) of one MLP step; 0 = the probe's median for that variant. For the tests that
// move a time across a lesson's threshold (the % of peak patterns).
struct MlpTimes {
  double gate_up = 0, down = 0, fused = 0;
};

class Steps {
 public:
  explicit Steps(bool gpu = true) : gpu_(gpu) {
    if (gpu) b_.trace.devices.push_back({0, "NVIDIA H200", 9, 0, 150000000000, 132});
    b_.trace.source = "<synthetic part 2>";
  }
  // An op owning one kernel launch; returns the op's end.
  double launch(const std::string& op, double t, const std::string& kernel, double kernel_us,
                const char* api = "cudaLaunchKernel") {
    const int64_t id = b_.cpu(Kind::CpuOp, op, t, 14);
    const bool driver = std::string(api).rfind("cuLaunch", 0) == 0;  // cuLaunchKernel(Ex): the driver API
    if (gpu_) b_.call(driver ? Kind::Driver : Kind::Runtime, api, t + 2, 6, id, kernel, kernel_us);
    return t + 15;
  }
  // LibTorch's nn::Linear: the weight's transpose (views), then matmul > mm, or addmm (no
  // aten::linear row: torch/nn/functional/linear.h makes these calls itself).
  double linear(double t, const std::string& kernel, double kernel_us, bool three_d, bool bias = false) {
    b_.cpu(Kind::CpuOp, "aten::t", t + 1, 8);
    b_.cpu(Kind::CpuOp, "aten::transpose", t + 2, 6);
    b_.cpu(Kind::CpuOp, "aten::as_strided", t + 3, 3);
    if (bias) {
      launch("aten::addmm", t + 12, kernel, kernel_us, "cuLaunchKernelEx");
      return t + 61;
    }
    b_.cpu(Kind::CpuOp, "aten::matmul", t + 10, 48);
    if (three_d) {
      b_.cpu(Kind::CpuOp, "aten::reshape", t + 11, 6);
      b_.cpu(Kind::CpuOp, "aten::view", t + 12, 4);
    }
    launch("aten::mm", t + 18, kernel, kernel_us, "cuLaunchKernelEx");
    if (three_d) b_.cpu(Kind::CpuOp, "aten::_unsafe_view", t + 40, 5);
    return t + 61;
  }
  void mlp_step(int n, Mlp v, const MlpTimes& k = {}) {
    auto or_probe = [](double us, double probe) { return us > 0 ? us : probe; };
    const double t0 = t_;
    b_.cpu(Kind::UserAnnotation, "ProfilerStep#" + std::to_string(n), t0, 390);
    b_.cpu(Kind::UserAnnotation, "mlp_fwd", t0 + 2, 380);
    double t = t0 + 5;
    if (v == Mlp::Aoti) {  // the generated wrapper: bare mm shims and one Triton launch
      if (gpu_) {          // the runner first checks on its previous run, and waits for it (as recorded)
        b_.call(Kind::Runtime, "cudaEventQuery", t, 1, 0);
        b_.call(Kind::Runtime, "cudaEventSynchronize", t + 1.5, 2, 0);
      }
      t += 4;
      for (int i = 0; i < 2; ++i)
        t = launch("aten::mm", t, kGateUp, or_probe(k.gate_up, 60.1), "cuLaunchKernelEx");
      if (gpu_) b_.call(Kind::Driver, "cuLaunchKernel", t, 6, 0, kTriton, or_probe(k.fused, 38.0));
      t = launch("aten::mm", t + 8, kDown, or_probe(k.down, 50.9), "cuLaunchKernelEx");
    } else {
      t = linear(t, kGateUp, or_probe(k.gate_up, 56.4), true);
      t = linear(t, kGateUp, or_probe(k.gate_up, 56.4), true);
      if (v == Mlp::Eager) {
        t = launch("aten::gelu", t, kGelu, 32.3);
        t = launch("aten::mul", t, kMul, 36.1);
      } else {
        b_.cpu(Kind::CpuOp, "aten::empty_like", t, 5);
        t += 6;
        if (gpu_) b_.call(Kind::Runtime, "cudaLaunchKernel", t, 6, 0, kHandwritten, or_probe(k.fused, 33.0));
        t += 8;
      }
      t = linear(t, kDown, or_probe(k.down, 51.6), true);
    }
    t_ = t0 + 400 + std::max(0.0, k.gate_up * 2 + k.down + k.fused - 200);  // keep steps apart
  }
  void linear_step(int n, bool bias) {
    const double t0 = t_;
    b_.cpu(Kind::UserAnnotation, "ProfilerStep#" + std::to_string(n), t0, 120);
    b_.cpu(Kind::UserAnnotation, "linear_fwd", t0 + 2, 110);
    linear(t0 + 5, bias ? kLinearBias : "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_TNT", 2.7, false, bias);
    t_ = t0 + 130;
  }
  wb::Trace done() {
    if (gpu_)
      b_.call(Kind::Runtime, "cudaDeviceSynchronize", t_, std::max(1.0, b_.stream_free() - t_) + 5, 0);
    return b_.trace;
  }

 private:
  fixtures::Builder b_;
  bool gpu_;
  double t_ = 100;
};

inline wb::Trace mlp_trace(Mlp v, bool gpu = true, const MlpTimes& k = {}) {
  Steps s(gpu);
  for (int n = 2; n <= 4; ++n) s.mlp_step(n, v, k);
  return s.done();
}

inline wb::Trace linear_trace(bool bias, bool gpu = true) {
  Steps s(gpu);
  for (int n = 2; n <= 4; ++n) s.linear_step(n, bias);
  return s.done();
}

// Judges a trace with a chapter spec on a given problem.
inline wb::LessonsReport judge(const wb::Trace& t, const std::string& spec, const wb::Problem& p,
                               const std::string& annotation) {
  const wb::TraceModel m(t);
  const wb::LessonSpec* s = wb::find_lesson_spec(spec);
  if (!s) throw std::runtime_error("no lesson spec " + spec);
  wb::FactOptions o;
  o.annotation = annotation;
  o.problem = p;
  return wb::check_lessons(m, *s, o);
}

inline wb::Status status(const wb::LessonsReport& r, const std::string& id) {
  for (const auto& f : r.facts)
    if (f.id == id) return f.status;
  throw std::runtime_error("no fact " + id + " in the report for " + r.chapter);
}

inline const wb::Problem kMlpGpu = wb::Problem::gemm(/*m=*/8192, /*k=*/768, /*n=*/3072, 2);
inline const wb::Problem kMlpCpu = wb::Problem::gemm(/*m=*/512, /*k=*/256, /*n=*/1024, 4);
inline const wb::Problem kLinearGpu = wb::Problem::gemm(/*m=*/1024, /*k=*/32, /*n=*/64, 2);
inline const wb::Problem kLinearCpu = wb::Problem::gemm(/*m=*/1024, /*k=*/32, /*n=*/64, 4);

// Every lesson of a report holds, and at least one was judged.
inline void all_pass(const wb::LessonsReport& r) {
  INFO(wb::render_lessons(r, wb::Format::Text));
  CHECK(r.failed == 0);
  CHECK(r.passed >= 1);
}

// Each lesson of `ids` fails in the report.
inline void each_fails(const wb::LessonsReport& r, std::initializer_list<const char*> ids) {
  for (const char* id : ids) {
    INFO(id);
    CHECK(status(r, id) == wb::Status::Fail);
  }
}

// The trace of one variant's recording (expected_output/<platform>/<chapter>/<variant>/); fails the
// test when it is not recorded.
inline std::filesystem::path recorded(const std::string& platform, const std::string& chapter,
                                      const std::string& variant) {
  const std::filesystem::path t = chapter_runner::recorded_trace(platform, chapter + "/" + variant);
  if (t.empty())
    FAIL("no recording of " << chapter << "/" << variant << " for " << platform
                            << ": a missing recording fails (scripts/record.sh on that machine writes it)");
  return t;
}

// The lessons.json a live run wrote for one variant (discarded when it is not JSON).
inline nlohmann::json variant_lessons(const chapter_runner::Result& r, const std::string& variant) {
  return nlohmann::json::parse(proc::slurp(r.dir / variant / "lessons.json"), nullptr, false);
}

// A live CPU run's aoti variant, where this build has the AOTI package: its lessons all hold and
// the compiled step runs no `op` (warns when the variant did not run).
inline void check_aoti_variant(const chapter_runner::Result& r, const std::string& op) {
  if (std::filesystem::exists(r.dir / "aoti" / "lessons.json")) {
    const auto aoti = variant_lessons(r, "aoti");
    CHECK(aoti["summary"]["failed"] == 0);
    CHECK(chapter_runner::fact(aoti, "work_per_step")["data"]["ops"].value(op, 0.0) == 0);  // absent: 0
  } else {
    WARN("the aoti variant did not run (no AOTI package in this build): " << r.out);
  }
}

}  // namespace part2
