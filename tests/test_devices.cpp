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

// The report of recording `key`, its devices as recorded (gpu == nullptr) or relabelled.
std::optional<wb::LessonsReport> judge(const std::string& key, const Gpu* gpu) {
  const fs::path dir = kH200 / key;
  const json recorded = json::parse(proc::slurp(dir / "lessons.json"), nullptr, false);
  const wb::LessonSpec* spec = wb::find_lesson_spec(key);
  const fs::path trace_path = recorded_file(dir, "trace.json");
  if (recorded.is_discarded() || !spec || trace_path.empty()) return std::nullopt;
  wb::FactOptions o = wb::lessons_from_json(recorded).options;
  auto relabel = [&](wb::Trace t) {
    if (gpu)
      for (auto& d : t.devices) {
        d.name = gpu->name;
        d.compute_major = gpu->major;
        d.compute_minor = gpu->minor;
        d.num_sms = gpu->sms;
        d.total_global_mem = gpu->mem;
      }
    return t;
  };
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

// Every condition the relabelled fact fails compares a time with the label's datasheet peak
// ("..._pct_of_peak" above 100, "..._at_peak"), and the label is a known GPU slower than the H200.
bool faster_than_the_label(const wb::Fact& f, const Gpu& g) {
  const wb::DevicePeak* label = wb::find_peak(g.name);
  const wb::DevicePeak* h200 = wb::find_peak("NVIDIA H200");
  if (!label || !h200 || label->mem_tbps >= h200->mem_tbps) return false;
  bool any = false;
  for (const auto& c : f.pattern.all) {
    const bool peak_key =
        c.key.find("pct_of_peak") != std::string::npos || c.key.find("at_peak") != std::string::npos;
    const std::string shown = c.key.substr(1) + " = ";
    if (f.verdict.find(shown) == std::string::npos) continue;  // not among the failing ones
    if (!peak_key) return false;
    any = true;
  }
  return any;
}

}  // namespace

TEST_CASE("devices: every H200 recording, relabelled as another GPU, fails no lesson on a constant",
          "[lessons][cpu]") {
  const auto keys = report_keys();
  REQUIRE(keys.size() >= 10);
  int judged = 0, na_with_reason = 0;
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
        // What passed on the H200 passes as another GPU, or is n/a with the reason. One failure
        // is right, and allowed: the H200's times under a slower GPU's name are faster than that
        // GPU's datasheet allows (a GEMM at 256% of an A100's peak), and the lessons that compare
        // a time with the device's peak say so. No H200 constant is involved.
        if (was.status == wb::Status::Pass && now.status == wb::Status::Fail)
          CHECK(faster_than_the_label(now, g));
        if (now.status == wb::Status::NotApplicable) {
          CHECK(!(now.verdict + now.explanation).empty());
          ++na_with_reason;
        }
      }
    }
  }
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
