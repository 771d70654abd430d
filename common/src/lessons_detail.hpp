// Private helpers of the lesson facts: time arithmetic, the "active window" view of a trace,
// kernel classification and call-tree rendering. Not part of the public API.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "workbook/lessons.hpp"
#include "workbook/model.hpp"

namespace wb::lessons_detail {

inline double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }
double r3(double x);               // rounded to 3 decimals, for tidy JSON
std::string us_str(double us);     // "12.3 us", "1.78 ms"
double median(std::vector<double> v);   // 0 for an empty vector
double average(const std::vector<double>& v);

struct Interval {
  int64_t start = 0, end = 0;
};

// Length of the union of the events' intervals, clipped to `clip`.
int64_t union_ns(const TraceModel& m, const std::vector<EventIdx>& events, Interval clip);

enum class KClass : uint8_t { Gemm, Elementwise, Memcpy, Memset, Other };
KClass classify(const Event& e);  // by the kernel's name (cuBLAS/CUTLASS GEMMs, elementwise)

// What the lessons look at: the ProfilerStep windows and the device work launched in them.
class View {
 public:
  explicit View(const TraceModel& m);

  const TraceModel& m;
  bool gpu = false;                    // the trace has kernels, memcpys or memsets
  std::vector<EventIdx> device;        // device work launched inside the steps, by start
  std::vector<EventIdx> all_device;    // all device work, by start

  // First step start .. the later of the last step's end and the last device event's end.
  Interval active_window() const;
  // CPU-side user annotations with this name, by start.
  std::vector<EventIdx> annotations(std::string_view name) const;
  // N of the ProfilerStep#N an event belongs to (device work: through its launch); -1: none.
  int step_number(EventIdx i) const;
  std::string step_label(EventIdx i) const;  // "ProfilerStep#2" or "outside the steps"
  // A time since the trace's first event, as Perfetto and `timeline` show it: "at 812.3 us".
  std::string at(int64_t t_ns) const;
  std::string device_name() const;  // first device in deviceProperties, "" if none
  // classify(), computed once per device event (other events: Other).
  KClass kclass(EventIdx i) const { return i < kclass_.size() ? kclass_[i] : KClass::Other; }

 private:
  int64_t origin_ = 0;
  std::vector<KClass> kclass_;
};

// The lesson facts on a View built once (lessons.cpp); the public fact_*() build their own.
struct ViewFact {
  std::string_view id;
  Fact (*fn)(const View& v, const FactOptions& o);
  FactFn on_model;  // the public fact_*(TraceModel), for all_facts()
};
const std::vector<ViewFact>& view_facts();  // in teaching order, like all_facts()
// Throws std::invalid_argument naming the known ids when `id` is unknown.
Fact compute_fact(std::string_view id, const View& v, const FactOptions& o);

std::string_view class_name(KClass k);
bool is_dtod(const Event& memcpy);             // "Memcpy DtoD (Device -> Device)"
std::string short_name(std::string_view name); // long template names cut to fit a line

// Runtime calls named cudaOccupancy* that started before `launch` within the same CPU op.
int occupancy_queries_before(const TraceModel& m, EventIdx launch);

// Every root-to-leaf path under `root` ("a > b > c"), device work under its launch call.
struct LeafPath {
  std::string text;
  bool on_device = false;  // the leaf ran on the GPU
  EventIdx leaf = 0;
};
std::vector<LeafPath> leaf_paths(const TraceModel& m, EventIdx root);
// The first path that reaches a kernel (in start order), else other device work, else (CPU
// only) the path through the longest child at each level.
std::string main_path(const TraceModel& m, EventIdx root);
// An indented tree with durations, device work under its launch call.
std::string render_tree(const TraceModel& m, EventIdx root);

nlohmann::json footprint_json(const Event& kernel);
std::string dims(const std::array<int, 3>& d);  // "[4,2,1]"

bool is_one_time_event(std::string_view name);       // module loading, attribute setup, ...
std::string_view compile_marker(std::string_view name);  // "" if not a torch.compile row

template <class C>
std::string join(const C& items, std::string_view sep, std::string_view if_empty) {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out.empty() ? std::string(if_empty) : out;
}

template <class M>
std::vector<std::string> keys(const M& map) {
  std::vector<std::string> k;
  for (const auto& kv : map) k.push_back(kv.first);
  return k;
}

}  // namespace wb::lessons_detail
