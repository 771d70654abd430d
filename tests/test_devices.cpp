// Lessons on other GPUs than the H200: every H200 recording judged again with its device
// properties rewritten as an A100, an L4, an RTX 4090 and a GPU nobody knows. The workload, the
// kernels and the times stay the H200's; only what the trace says the device is changes. So a
// lesson that passed on the H200 and fails relabelled fails because of a constant tied to the
// H200 (a tile shape, a launch path, a peak): none may. A lesson that needs a known device comes
// out n/a, and says why.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "process.hpp"
#include "workbook/lessons.hpp"
#include "workbook/peaks.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kH200 = fs::path(WORKBOOK_ROOT) / "expected_output" / "h200";

fs::path recorded_file(const fs::path& dir, const std::string& name) {
  for (const std::string& n : {name, name + ".gz"})
    if (fs::exists(dir / n)) return dir / n;
  return {};
}

// Every folder under h200/ with a lessons.json, as its spec key ("01_cold_64", "01_cold_64/cold").
std::vector<std::string> report_keys() {
  std::vector<std::string> keys;
  for (const auto& e : fs::recursive_directory_iterator(kH200))
    if (e.is_regular_file() && e.path().filename() == "lessons.json")
      keys.push_back(e.path().parent_path().lexically_relative(kH200).generic_string());
  std::sort(keys.begin(), keys.end());
  return keys;
}

struct Gpu {
  const char* label;
  const char* name;
  int major, minor, sms;
  int64_t mem;
};
const std::vector<Gpu> kOthers = {
    {"A100", "NVIDIA A100-SXM4-80GB", 8, 0, 108, 85899345920LL},
    {"L4", "NVIDIA L4", 8, 9, 58, 24152899584LL},
    {"RTX 4090", "NVIDIA GeForce RTX 4090", 8, 9, 128, 25386352640LL},
    {"unknown", "Acme Accelerator X1", 12, 0, 96, 34359738368LL},
};

// Trace `t` with its devices' properties rewritten as GPU `g`'s (the events stay as recorded).
wb::Trace relabelled(wb::Trace t, const Gpu& g) {
  for (auto& d : t.devices) {
    d.name = g.name;
    d.compute_major = g.major;
    d.compute_minor = g.minor;
    d.num_sms = g.sms;
    d.total_global_mem = g.mem;
  }
  return t;
}

// The report of recording `key`, its devices as recorded (gpu == nullptr) or relabelled.
std::optional<wb::LessonsReport> judge(const std::string& key, const Gpu* gpu) {
  const fs::path dir = kH200 / key;
  const json recorded = json::parse(proc::slurp(dir / "lessons.json"), nullptr, false);
  const wb::LessonSpec* spec = wb::find_lesson_spec(key);
  const fs::path trace_path = recorded_file(dir, "trace.json");
  if (recorded.is_discarded() || !spec || trace_path.empty()) return std::nullopt;
  wb::FactOptions o = wb::lessons_from_json(recorded).options;
  auto relabel = [&](wb::Trace t) { return gpu ? relabelled(std::move(t), *gpu) : t; };
  const wb::Trace trace = relabel(wb::read_trace(trace_path));
  const wb::TraceModel model(trace);
  std::optional<wb::Trace> ref_trace;
  std::optional<wb::TraceModel> ref_model;
  if (!o.reference_file.empty()) {
    const fs::path ref = recorded_file(dir, o.reference_file);
    if (ref.empty()) return std::nullopt;
    ref_trace = relabel(wb::read_trace(ref));
    ref_model.emplace(*ref_trace);
    o.reference = &*ref_model;
  }
  return wb::check_lessons(model, *spec, o);
}

// The conditions of `f` its verdict names as failing ("key = value, expected ..." or "no key
// entry has ..."): each must be an expectation keyed to the label's device (Condition::device),
// never an H200 constant and never a relation. Returns how many it found; -1 if one is not keyed.
int failing_keyed_to(const wb::Fact& f, const Gpu& g) {
  int n = 0;
  for (const auto& c : f.pattern.all) {
    const std::string key = c.key.substr(1);
    if (f.verdict.find(key + " = ") == std::string::npos &&
        f.verdict.find("no " + key + " entry") == std::string::npos &&
        f.verdict.find(key + " has ") == std::string::npos)
      continue;
    // A condition of this key that held is named too when another of the same key failed:
    // count the keyed ones, and a failing unkeyed one only if no keyed one of its key exists.
    if (!c.device.empty() && std::string(g.name).find(c.device) != std::string::npos) {
      ++n;
    } else if (c.device.empty() && c.scope != wb::Condition::Scope::Hopper) {
      bool keyed_sibling = false;
      for (const auto& o : f.pattern.all)
        keyed_sibling = keyed_sibling || (o.key == c.key && !o.device.empty());
      if (!keyed_sibling) return -1;
    }
  }
  return n;
}

// Chapter 01's recording made to look like the original post's A100 run: the GEMM kernel is
// cuBLAS's Ampere one (ampere_bf16_s16816gemm...), launched by cudaLaunchKernel after a
// cudaOccupancyMaxActiveBlocksPerMultiprocessor query in aten::mm; the device is an A100.
wb::Trace a100_like_the_post(wb::Trace t) {
  t = relabelled(std::move(t), kOthers.front());
  std::vector<wb::Event> queries;
  for (auto& e : t.events) {
    if (e.kind == wb::Kind::Kernel && e.name.find("nvjet") != std::string::npos)
      e.name = "ampere_bf16_s16816gemm_bf16_64x64_sliced1x2_ldg8_f2f_stages_64x5_tn";
    if (e.name == "cuLaunchKernelEx") {
      e.name = "cudaLaunchKernel";
      wb::Event q = e;  // the query, just before the launch, in the same op
      q.name = "cudaOccupancyMaxActiveBlocksPerMultiprocessor";
      q.id = 0;
      q.dur_ns = 200;
      q.start_ns = e.start_ns - 300;
      queries.push_back(q);
    }
  }
  t.events.insert(t.events.end(), queries.begin(), queries.end());
  std::stable_sort(t.events.begin(), t.events.end(),
                   [](const wb::Event& a, const wb::Event& b) { return a.start_ns < b.start_ns; });
  return t;
}

}  // namespace

TEST_CASE("devices: every H200 recording, relabelled as another GPU, fails no lesson on a constant",
          "[lessons][cpu]") {
  const auto keys = report_keys();
  REQUIRE(keys.size() >= 10);
  int judged = 0, na_with_reason = 0;
  std::map<std::string, int> keyed_failures;
  for (const auto& key : keys) {
    const auto h200 = judge(key, nullptr);
    INFO(key);
    REQUIRE(h200);
    for (const Gpu& g : kOthers) {
      const auto other = judge(key, &g);
      REQUIRE(other);
      REQUIRE(other->facts.size() == h200->facts.size());
      for (size_t i = 0; i < other->facts.size(); ++i) {
        const wb::Fact& was = h200->facts[i];
        const wb::Fact& now = other->facts[i];
        INFO(g.label << ": " << now.id << " -- H200 " << wb::status_name(was.status) << ", relabelled "
                     << wb::status_name(now.status) << ": " << now.verdict << " / " << now.explanation);
        ++judged;
        // What passed on the H200 passes as another GPU, or is n/a with the reason. Only an
        // expectation keyed to the label's own device may fail: the A100's (the post's figures)
        // on the H200's kernels. The H200's times under a slower GPU's name would be faster than
        // its datasheet allows; the lessons on a percentage of the peak are keyed to the H200
        // (and the A100), so elsewhere they judge relations only and say so: no test-side excuse.
        if (was.status == wb::Status::Pass && now.status == wb::Status::Fail) {
          const int keyed = failing_keyed_to(now, g);
          CHECK(keyed > 0);
          if (keyed > 0) ++keyed_failures[g.label];
        }
        if (now.status == wb::Status::NotApplicable) {
          CHECK(!(now.verdict + now.explanation).empty());
          ++na_with_reason;
        }
      }
    }
  }
  // The A100's own expectations fail on the H200's kernels (launch path: cuLaunchKernelEx, no
  // occupancy query, nvjet; ch04's GEMM at over 100% of the A100's peak); no other label has any.
  CHECK(keyed_failures["A100"] >= 2);
  CHECK(keyed_failures.size() == 1);
  CHECK(judged > 100);
  CHECK(na_with_reason > 0);
}

TEST_CASE("devices: a lesson with Hopper expectations says it judged relations only on another GPU",
          "[lessons][cpu]") {
  // Chapter 01's kernel footprint: relations (registers, shared memory) everywhere, the H200's
  // tile at 64 (grid [4,2,1], block [384,1,1]) on Hopper only.
  const auto h200 = judge("01_cold_64", nullptr);
  REQUIRE(h200);
  auto fact = [](const wb::LessonsReport& r, const std::string& id) {
    for (const auto& f : r.facts)
      if (f.id == id) return f;
    FAIL("no lesson " << id);
    return wb::Fact{};
  };
  const wb::Fact there = fact(*h200, "kernel_footprint");
  CHECK(there.status == wb::Status::Pass);
  CHECK(there.verdict.find("relations only") == std::string::npos);
  CHECK(there.verdict.find("gemm/grid") != std::string::npos);  // judged on the H200
  for (const Gpu& g : kOthers) {
    INFO(g.label);
    const auto other = judge("01_cold_64", &g);
    REQUIRE(other);
    const wb::Fact f = fact(*other, "kernel_footprint");
    CHECK(f.status == wb::Status::Pass);
    CHECK(f.verdict.find(std::string("relations only on ") + g.name) != std::string::npos);
    CHECK(f.verdict.find("gemm/grid, gemm/block describe Hopper GPUs") != std::string::npos);
  }
}

namespace {
wb::Fact fact_of(const wb::LessonsReport& r, const std::string& id) {
  for (const auto& f : r.facts)
    if (f.id == id) return f;
  FAIL("no lesson " << id);
  return wb::Fact{};
}
}  // namespace

TEST_CASE(
    "devices: the A100's expectations (the post's figures) hold on an A100 run like the post's, "
    "and fail on the H200's recording relabelled as an A100",
    "[lessons][cpu]") {
  const fs::path dir = kH200 / "01_cold_64";
  const wb::LessonSpec* spec = wb::find_lesson_spec("01_cold_64");
  REQUIRE(spec);
  const wb::FactOptions o = wb::lessons_from_json(json::parse(proc::slurp(dir / "lessons.json"))).options;
  const wb::Trace h200 = wb::read_trace(recorded_file(dir, "trace.json"));

  // Like the post: judged device-specific, and the verdict names the A100's expectations.
  const wb::Trace like_post = a100_like_the_post(h200);
  const wb::TraceModel post_model(like_post);
  const wb::Fact ok = fact_of(wb::check_lessons(post_model, *spec, o), "launch_path");
  INFO(ok.verdict);
  CHECK(ok.status == wb::Status::Pass);
  CHECK_THAT(ok.verdict, Catch::Matchers::ContainsSubstring("gemm_occupancy_queries = "));
  CHECK_THAT(ok.verdict, Catch::Matchers::ContainsSubstring("ampere_bf16_s16816gemm"));
  CHECK_THAT(ok.verdict, Catch::Matchers::ContainsSubstring("device-specific: the A100 expectations judged"));
  CHECK(ok.verdict.find("relations only") == std::string::npos);

  // The H200's recording under an A100's name: the same A100 expectations fail.
  const auto h200_as_a100 = judge("01_cold_64", &kOthers.front());
  REQUIRE(h200_as_a100);
  const wb::Fact bad = fact_of(*h200_as_a100, "launch_path");
  INFO(bad.verdict);
  CHECK(bad.status == wb::Status::Fail);
  CHECK_THAT(bad.verdict, Catch::Matchers::ContainsSubstring("cudaLaunchKernel"));
  CHECK_THAT(bad.verdict, Catch::Matchers::ContainsSubstring("expected >= 1"));

  // On the H200 itself the A100's expectations are skipped, its verdict as recorded.
  const wb::TraceModel h200_model(h200);
  const wb::Fact there = fact_of(wb::check_lessons(h200_model, *spec, o), "launch_path");
  CHECK(there.status == wb::Status::Pass);
  CHECK(there.verdict.find("A100") == std::string::npos);
}

TEST_CASE(
    "devices: a lesson on a percentage of the peak is relations only off its keyed devices, "
    "n/a with the reason where no peak is known",
    "[lessons][cpu]") {
  // Chapter 04's throughput: the H200's thresholds (and the A100's) are keyed to those devices.
  for (const Gpu& g : kOthers) {
    INFO(g.label);
    const auto r = judge("04_compute_bound_4096", &g);
    REQUIRE(r);
    const wb::Fact f = fact_of(*r, "throughput");
    INFO(f.verdict);
    if (std::string(g.label) == "A100") {
      // The H200's 4096 GEMM under the A100's name runs faster than an A100 can: the A100's
      // own ceiling (<= 105% of its peak) fails, named as the A100's.
      CHECK(f.status == wb::Status::Fail);
      CHECK_THAT(f.verdict, Catch::Matchers::ContainsSubstring("gemm_pct_of_peak = "));
    } else if (wb::find_peak(g.name) == nullptr) {  // the RTX 4090 and the unknown GPU
      CHECK(f.status == wb::Status::NotApplicable);
      CHECK_THAT(f.verdict, Catch::Matchers::ContainsSubstring("no peak known"));
    } else {  // a known peak, no expectation for it: not judged, and says whose they are
      CHECK(f.status == wb::Status::NotApplicable);
      CHECK_THAT(f.verdict, Catch::Matchers::ContainsSubstring("is an expectation for the H200 only"));
    }
  }
  // The parser takes a device key and refuses an empty one.
  const std::string spec =
      R"({"specs": [{"chapter": "x", "title": "t", "problem": {"n": 64, "batch": 1, "dtype_bytes": 2},
    "lessons": [{"fact": "throughput", "text": "t", "all": [{"key": "/gemm_pct_of_peak", "op": "<", "value": 5, "device": "sm_90"}]}]}]})";
  const auto specs = wb::parse_lesson_specs(spec, "test");
  REQUIRE(specs.size() == 1);
  CHECK(specs[0].expect[0].pattern.all[0].device == "sm_90");
  std::string empty = spec;
  empty.replace(empty.find("sm_90"), 5, "");
  CHECK_THROWS(wb::parse_lesson_specs(empty, "test"));
}

TEST_CASE(
    "devices: chapter 05's copy on the post's A100 (32 MB in ~33 us) holds the A100's expectation, "
    "the H200's copy under an A100's name does not",
    "[lessons][cpu]") {
  const std::string key = "05_compiled_addmm/addmm";
  const fs::path dir = kH200 / key;
  const wb::LessonSpec* spec = wb::find_lesson_spec(key);
  REQUIRE(spec);
  const wb::FactOptions o = wb::lessons_from_json(json::parse(proc::slurp(dir / "lessons.json"))).options;
  const Gpu& a100 = kOthers.front();
  wb::Trace t = relabelled(wb::read_trace(recorded_file(dir, "trace.json")), a100);
  // The post's figure: the bias copy (32 MiB of bf16 at 4096) took ~33 us on its A100.
  int copies = 0;
  for (auto& e : t.events)
    if (e.kind == wb::Kind::Memcpy && e.bytes > 0) {
      e.dur_ns = 33'000;
      ++copies;
    }
  REQUIRE(copies >= 1);
  const wb::TraceModel like_post(t);
  const wb::Fact ok = fact_of(wb::check_lessons(like_post, *spec, o), "throughput");
  INFO(ok.verdict);
  CHECK(ok.status == wb::Status::Pass);
  CHECK_THAT(ok.verdict, Catch::Matchers::ContainsSubstring("device-specific: the A100 expectations judged"));
  // 2 x 33.5 MB / 33 us = 2.03 TB/s: about all of the A100 80GB SXM's 2.039 TB/s.
  CHECK(ok.data.value("memcpy_pct_of_peak", 0.0) > 95);
  CHECK(ok.data.value("memcpy_pct_of_peak", 0.0) < 105);

  // A copy at half the post's rate fails the A100's floor (>= 60% of its peak).
  for (auto& e : t.events)
    if (e.kind == wb::Kind::Memcpy && e.bytes > 0) e.dur_ns = 66'000;
  const wb::TraceModel slow(t);
  CHECK(fact_of(wb::check_lessons(slow, *spec, o), "throughput").status == wb::Status::Fail);

  // The H200's own copy (~4.2 TB/s) under an A100's name: faster than an A100 can copy.
  const auto h200_as_a100 = judge(key, &a100);
  REQUIRE(h200_as_a100);
  const wb::Fact bad = fact_of(*h200_as_a100, "throughput");
  INFO(bad.verdict);
  CHECK(bad.status == wb::Status::Fail);
  CHECK_THAT(bad.verdict, Catch::Matchers::ContainsSubstring("memcpy_pct_of_peak = "));
}
