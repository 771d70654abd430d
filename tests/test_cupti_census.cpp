// The CUPTI launch census: naming and classes (everywhere), counting a Kineto trace the same
// way (H200-shaped fixtures), and the census itself ([gpu]: skipped without a CUDA device).
//
// One CUPTI subscriber per process, and ctest runs every TEST_CASE in a process of its own
// (catch_discover_tests), so each GPU case below starts with CUPTI free. Run the executable
// directly and a GPU case skips what an earlier case in the same process made impossible.
#include <torch/types.h>
#include <torch/cuda.h>
#undef CHECK  // c10's glog-style CHECK would shadow Catch2's
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "workbook/cupti_census.hpp"
#include "workbook/profiler.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;
using wb::ApiClass;

namespace {

wb::Trace fixture(const std::string& name) {
  return wb::read_trace(fs::path(WORKBOOK_ROOT) / "tests" / "data" / "lessons" / name);
}

// The lesson-01 step on the GPU.
struct Eager64 {
  torch::Tensor x, w, b, y;
  Eager64() {
    auto o = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kBFloat16);
    x = torch::randn({64, 64}, o), w = torch::randn({64, 64}, o), b = torch::randn({64, 64}, o);
    for (int i = 0; i < 3; ++i) step();  // warm: no one-time calls in the counted steps
    torch::cuda::synchronize();
  }
  void step() { y = torch::add(torch::matmul(x, w), b); }
};

bool have_cuda() { return wb::LaunchCensus::unavailable_reason().empty(); }

// A census, or SKIP when an earlier case of this same process left Kineto holding CUPTI. Run
// the cases one per process (ctest does) to run them all.
std::unique_ptr<wb::LaunchCensus> census_or_skip() {
  try {
    return std::make_unique<wb::LaunchCensus>();
  } catch (const wb::CensusError& e) {
    if (e.code != wb::CensusError::Code::Conflict) throw;
    SKIP("CUPTI is taken in this process (an earlier case profiled): " << e.what());
  }
  return nullptr;
}

// A new census is refused with `code`, its message containing `says` (the test fails with
// `if_subscribed` when it is not refused); returns the message.
std::string census_refused(wb::CensusError::Code code, const std::string& says,
                           const std::string& if_subscribed) {
  try {
    wb::LaunchCensus census;
    FAIL(if_subscribed);
  } catch (const wb::CensusError& e) {
    CHECK(e.code == code);
    CHECK_THAT(e.what(), ContainsSubstring(says));
    return e.what();
  }
  return {};  // unreachable: FAIL throws
}

// Profiles three eager steps with CUDA activities; returns the last cycle's trace.
wb::Trace profile_three(Eager64& e) {
  wb::ProfilerOptions po;
  po.schedule = wb::Schedule{0, 1, 2, 1, 0};
  wb::Profiler prof(po);
  prof.start();
  for (int i = 0; i < 3; ++i) {
    e.step();
    prof.step();
  }
  prof.stop();
  REQUIRE_FALSE(prof.results().empty());
  return prof.results().back().trace();
}

}  // namespace

TEST_CASE("census: api_base_name drops CUPTI's version suffix and CUDA 13's internal prefix",
          "[cupti][cpu]") {
  CHECK(wb::api_base_name("cudaLaunchKernel_v7000") == "cudaLaunchKernel");
  CHECK(wb::api_base_name("cudaLaunchKernel_ptsz_v7000") == "cudaLaunchKernel_ptsz");
  CHECK(wb::api_base_name("__cudaLaunchKernel_v13000") == "cudaLaunchKernel");
  CHECK(wb::api_base_name("cuLaunchKernelEx") == "cuLaunchKernelEx");
  // Not a version suffix: kept.
  CHECK(wb::api_base_name("cuMemcpyDtoH_v2x") == "cuMemcpyDtoH_v2x");
  CHECK(wb::api_base_name("") == "");
}

TEST_CASE("census: classify_api sorts API calls into the census classes", "[cupti][cpu]") {
  CHECK(wb::classify_api("cudaLaunchKernel") == ApiClass::KernelLaunch);
  CHECK(wb::classify_api("cudaLaunchKernelExC_v11060") == ApiClass::KernelLaunch);
  CHECK(wb::classify_api("cuLaunchKernelEx") == ApiClass::KernelLaunch);
  CHECK(wb::classify_api("cuLaunchKernel_ptsz") == ApiClass::KernelLaunch);
  CHECK(wb::classify_api("cudaGraphLaunch") == ApiClass::GraphLaunch);
  CHECK(wb::classify_api("cudaMemcpyAsync") == ApiClass::Memcpy);
  CHECK(wb::classify_api("cudaMemsetAsync") == ApiClass::Memset);
  CHECK(wb::classify_api("cudaOccupancyMaxActiveClusters") == ApiClass::Occupancy);
  CHECK(wb::classify_api("cudaDeviceSynchronize") == ApiClass::Sync);
  CHECK(wb::classify_api("cudaEventSynchronize") == ApiClass::Sync);
  // Look-alikes that are not what their prefix suggests.
  CHECK(wb::classify_api("cudaLaunchHostFunc") == ApiClass::Other);  // runs a host function, no kernel
  CHECK(wb::classify_api("cudaEventQuery") == ApiClass::Other);      // polls, never waits
  CHECK(wb::classify_api("cudaStreamIsCapturing") == ApiClass::Other);
  CHECK(wb::api_class_name(ApiClass::KernelLaunch) == "kernel launches");
}

TEST_CASE("census: kineto_visible keeps runtime calls and driver launches, as Kineto's trace does",
          "[cupti][cpu]") {
  const wb::ApiCounts census{{"cudaLaunchKernel", 1},
                             {"cuLaunchKernelEx", 1},
                             {"cuMemcpyAsync", 4},
                             {"cuCtxGetCurrent", 9},
                             {"cudaMemsetAsync", 1}};
  const wb::ApiCounts seen = wb::kineto_visible(census);
  CHECK(seen == wb::ApiCounts{{"cudaLaunchKernel", 1}, {"cuLaunchKernelEx", 1}, {"cudaMemsetAsync", 1}});
  const wb::ClassCounts c = wb::by_class(census);
  CHECK(c[ApiClass::KernelLaunch] == 2);
  CHECK(c[ApiClass::Memcpy] == 4);  // the raw census still has the driver copy
  CHECK(c[ApiClass::Other] == 9);
}

TEST_CASE("census: trace_api_counts: launches per ProfilerStep of H200-shaped traces", "[cupti][cpu]") {
  const wb::Trace eager = fixture("h200_64_cold.json");
  const wb::TraceModel me(eager);
  const auto steps = wb::trace_api_counts(me);
  REQUIRE(steps.size() == 3);
  for (const auto& s : steps) {
    CHECK(s.at("cudaLaunchKernel") == 1);          // the add
    CHECK(s.at("cuLaunchKernelEx") == 1);          // the GEMM (cuBLAS uses the driver API)
    CHECK(s.count("cudaDeviceSynchronize") == 0);  // the end-of-window sync is outside the steps
  }
  const wb::ClassCounts e = wb::median_step(steps);
  CHECK(e[ApiClass::KernelLaunch] == 2);
  CHECK(e[ApiClass::Memcpy] == 0);

  const wb::Trace addmm = fixture("h200_4096_addmm.json");
  const wb::TraceModel ma(addmm);
  const wb::ClassCounts a = wb::median_step(wb::trace_api_counts(ma));
  CHECK(a[ApiClass::KernelLaunch] == 1);
  CHECK(a[ApiClass::Memcpy] == 1);
  CHECK(a[ApiClass::Memset] == 1);
  CHECK(wb::median_calls(wb::trace_api_counts(ma), "cudaMemcpyAsync") == 1);

  // The check can fail: addmm's counts are not eager's.
  CHECK_FALSE(a == e);
  CHECK(a[ApiClass::KernelLaunch] != 2);
}

TEST_CASE("census: median_step takes the typical step, not an outlier", "[cupti][cpu]") {
  const std::vector<wb::ApiCounts> steps{{{"cudaLaunchKernel", 1}, {"cudaOccupancyMaxActiveClusters", 25}},
                                         {{"cudaLaunchKernel", 1}},
                                         {{"cudaLaunchKernel", 1}}};
  const wb::ClassCounts m = wb::median_step(steps);
  CHECK(m[ApiClass::KernelLaunch] == 1);
  CHECK(m[ApiClass::Occupancy] == 0);  // the cold first step's 25 queries are not typical
  CHECK(wb::median_step({})[ApiClass::KernelLaunch] == 0);
}

TEST_CASE("census: without a CUDA device the census says so instead of counting", "[cupti][cpu]") {
  const std::string why = wb::LaunchCensus::unavailable_reason();
  if (why.empty()) SKIP("a CUDA device is present: see the [gpu] cases");
  CHECK_THAT(why, ContainsSubstring("no CUDA device") || ContainsSubstring("no CUPTI"));
  census_refused(wb::CensusError::Code::Unavailable, "unavailable",
                 "the census subscribed without a CUDA device");
}

// ---- GPU (run each case in a process of its own: ctest does) -------------------------------

TEST_CASE("census: eager 64x64 makes 2 kernel launches per step", "[cupti][gpu]") {
  if (!have_cuda()) SKIP("no CUDA device: " << wb::LaunchCensus::unavailable_reason());
  Eager64 e;
  auto census = census_or_skip();
  census->discard();
  for (int i = 0; i < 10; ++i) {
    e.step();
    census->step();
  }
  const auto steps = census->steps();
  REQUIRE(steps.size() == 10);
  for (const auto& s : steps) {
    std::string calls;
    for (const auto& [name, n] : s) calls += name + "=" + std::to_string(n) + " ";
    INFO("a step's calls: " << calls);
    const wb::ClassCounts c = wb::by_class(wb::kineto_visible(s));
    CHECK(c[ApiClass::KernelLaunch] == 2);
    CHECK(c[ApiClass::GraphLaunch] == 0);
    CHECK(c[ApiClass::Memcpy] == 0);
  }
}

TEST_CASE("census: a second subscriber is refused with a clear message", "[cupti][gpu]") {
  if (!have_cuda()) SKIP("no CUDA device: " << wb::LaunchCensus::unavailable_reason());
  {
    auto first = census_or_skip();
    const std::string why =
        census_refused(wb::CensusError::Code::Conflict, "one per process", "CUPTI accepted two subscribers");
    WARN("the refusal reads: " << why);  // CUPTI may also name the holder
  }
  wb::LaunchCensus again;  // the first unsubscribed: CUPTI is free again
  SUCCEED();
}

TEST_CASE("census: alive while Kineto starts, it costs the trace its GPU lane", "[cupti][gpu]") {
  if (!have_cuda()) SKIP("no CUDA device: " << wb::LaunchCensus::unavailable_reason());
  Eager64 e;
  auto census = census_or_skip();  // taken before the profiler's first start in this process
  // Kineto (torch 2.11) subscribes to CUPTI when it first starts; refused, it records the CPU
  // only, for the rest of the process. This is why the chapter destroys its census first.
  CHECK_FALSE(profile_three(e).has_device_activity());
}

TEST_CASE("census: after Kineto profiled in this process, a conflict, not wrong counts", "[cupti][gpu]") {
  if (!have_cuda()) SKIP("no CUDA device: " << wb::LaunchCensus::unavailable_reason());
  Eager64 e;
  if (!profile_three(e).has_device_activity())
    SKIP("Kineto records no GPU in this process (an earlier case held CUPTI when it started)");
  const char* teardown = std::getenv("TEARDOWN_CUPTI");
  try {
    wb::LaunchCensus census;
    // Only with TEARDOWN_CUPTI=1 does Kineto let go of CUPTI after a trace.
    WARN("the census could subscribe after profiling (TEARDOWN_CUPTI=" << (teardown ? teardown : "unset")
                                                                       << ")");
    CHECK((teardown && std::string(teardown) == "1"));
    census.discard();
    e.step();
    census.step();
    CHECK(wb::by_class(wb::kineto_visible(census.steps().at(0)))[ApiClass::KernelLaunch] == 2);
  } catch (const wb::CensusError& err) {
    WARN("after profiling: " << err.what());
    CHECK(err.code == wb::CensusError::Code::Conflict);
    CHECK_THAT(err.what(), ContainsSubstring("Kineto"));
  }
}
