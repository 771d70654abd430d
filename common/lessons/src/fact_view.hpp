// What every lesson fact measures on: the View of a trace (its steps, and the device work
// launched in them), with the helpers the facts share (time arithmetic, kernel classification,
// call-tree rendering), and the skeleton of a fact (ViewFact). Not part of the public API.
// The facts themselves, one family per file: facts_overhead.cpp, facts_steps.cpp,
// facts_launches.cpp, facts_kernels.cpp, facts_throughput.cpp, facts_linear_mlp.cpp (nn.Linear
// and the GeGLU MLP), facts_fusion.cpp (the fusion race), facts_memory.cpp (profile_memory),
// facts_across.cpp (across variants); lessons.cpp lists them (view_facts()).
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
#include "workbook/rules.hpp"
#include "workbook/stats.hpp"
#include "workbook/trace_model.hpp"

namespace wb::lessons_detail {

inline double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }
double r3(double x);            // rounded to 3 decimals, for tidy JSON
std::string us_str(double us);  // "12.3 us", "1.78 ms"
using wb::median;               // workbook/stats.hpp: one definition
inline double average(const std::vector<double>& v) { return wb::mean(v); }

struct Interval {
  int64_t start = 0, end = 0;
};

// Length of the union of the events' intervals, clipped to `clip`.
int64_t union_ns(const TraceModel& m, const std::vector<EventIdx>& events, Interval clip);

using KClass = KernelClass;  // workbook/rules.hpp: the one classification
using wb::classify;

// What the lessons look at: the ProfilerStep windows and the device work launched in them.
class View {
 public:
  explicit View(const TraceModel& m);

  const TraceModel& m;
  bool gpu = false;                  // the trace has kernels, memcpys or memsets
  std::vector<EventIdx> device;      // device work launched inside the steps, by start
  std::vector<EventIdx> all_device;  // all device work, by start
  // Device work launched before the window (its launch call went with the discarded warm-up
  // step) that starts inside a step: no step's work, but the GPU is busy with it.
  std::vector<EventIdx> before_window;
  // What keeps the GPU busy in the window: `device` and `before_window` (clip to the window).
  std::vector<EventIdx> busy_in_window() const;

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
  int64_t first_launch_id_ = 0;  // the lowest correlation of a launch call in the trace (0: none)
  int64_t origin_ = 0;
  std::vector<KClass> kclass_;
};

// ---- how a fact is written: a measurement (a function) and a row of view_facts().
// The measurement fills `f` (data, value, evidence, detail; the explanation when it does not
// read the verdict) and returns kMeasured, or why this trace cannot tell: the fact is then not
// applicable, keeping what was filled.
constexpr const char* kMeasured = "";
// The usual last line of a measurement: its explanation, then kMeasured.
inline std::string measured(Fact& f, std::string explanation) {
  f.explanation = std::move(explanation);
  return kMeasured;
}
using Measure = std::string (*)(const View& v, const FactOptions& o, Fact& f);

// The explanation of a fact, read from its default pattern's verdict, so that the pattern's
// numbers are written once (in its registry entry): what it means when the pattern holds, when it
// fails (and the same under the general rules, FactOptions::general, where they say it
// otherwise). None: the measurement writes its own, one that restates no threshold.
struct Reading {
  Reading() = default;
  Reading(std::string holds, std::string fails, std::string general_holds = "",
          std::string general_fails = "")
      : holds(std::move(holds)),
        fails(std::move(fails)),
        general_holds(std::move(general_holds)),
        general_fails(std::move(general_fails)) {}
  std::string holds, fails, general_holds, general_fails;
};

// One row of docs/cheatsheet.md (generated from the registry, wb::cheatsheet_markdown()): a
// pattern to look for, what it looks like in the key_averages table and in the trace, the
// chapters that teach it, and the rules (facts) that check it: the fact that holds the row first,
// then `also`.
struct CheatsheetRow {
  std::string pattern, in_table, in_trace, chapters;
  std::vector<std::string> also;
};

// One lesson fact: its entry in the registry, next to its measurement in its facts_*.cpp file
// (each file's <family>_facts(); lessons.cpp joins the families in teaching order). fn() is the
// one skeleton every fact shares: start (id, title, the default pattern), the CPU-only check,
// the measurement, then finish (judge it against the default pattern, and read the explanation
// from that verdict) or not_measurable.
struct ViewFact {
  std::string_view id;
  std::string title;
  std::string cpu_only;  // non-empty: a CPU-only trace has nothing to measure, for this reason
  Measure measure;
  Reading reading;
  int order = 0;  // teaching order: where inspect and all_facts() list it
  // The default pattern, what inspect judges the fact by: JSON {"text", "why", "all"} (the form
  // of a chapter's lessons.json, workbook/pattern_json.hpp); "text" may name {annotation},
  // {outlier_factor}, {{ for a brace. The measurement holds no threshold of its own.
  std::string_view pattern_json;
  bool chapter_only = false;  // about one chapter's workload: left out of inspect's general rules
  std::vector<CheatsheetRow> cheatsheet;
  Fact fn(const View& v, const FactOptions& o) const;
};
// A fact's default pattern, parsed from its registry entry (every fact has one).
const Pattern& default_pattern(std::string_view fact);
const std::vector<ViewFact>& view_facts();  // lessons.cpp: every family, in teaching order
// Throws std::invalid_argument naming the known ids when `id` is unknown.
Fact compute_fact(std::string_view id, const View& v, const FactOptions& o);

using wb::class_name;
using wb::is_dtod;
std::string short_name(std::string_view name);  // long template names cut to fit a line

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

bool is_one_time_event(std::string_view name);           // module loading, attribute setup, ...
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

// The steps of ViewFact::fn: start (what a fact is, its default pattern), finish (judge it
// against that pattern) or not_measurable (why not); a measurement adds its evidence.
Fact not_measurable(Fact f, std::string reason);
Fact start(std::string id, std::string title, Pattern default_pattern);
Fact finish(Fact f, const Trace& t);
void add_evidence(Fact& f, std::string line);
constexpr auto Any = Condition::Scope::Any;
constexpr auto Gpu = Condition::Scope::Gpu;
constexpr auto Hopper = Condition::Scope::Hopper;
using Op = Condition::Op;

}  // namespace wb::lessons_detail

namespace wb {
// The registry, one family per file (each file says what its family teaches); view_facts() in
// lessons.cpp joins them in teaching order. A new fact is one entry in its family's list; a new
// family is a file, its function here and in lessons.cpp's list.
using lessons_detail::ViewFact;
const std::vector<ViewFact>& overhead_facts();    // facts_overhead.cpp: where the CPU's time goes
const std::vector<ViewFact>& steps_facts();       // facts_steps.cpp: steps and windows
const std::vector<ViewFact>& launches_facts();    // facts_launches.cpp: launches, the dispatch chain
const std::vector<ViewFact>& kernels_facts();     // facts_kernels.cpp: kernels and their footprints
const std::vector<ViewFact>& throughput_facts();  // facts_throughput.cpp: achieved FLOP/s vs the peak
const std::vector<ViewFact>& linear_mlp_facts();  // facts_linear_mlp.cpp: nn.Linear, the GeGLU MLP
const std::vector<ViewFact>& fusion_facts();      // facts_fusion.cpp: does the fused kernel pay
const std::vector<ViewFact>& memory_facts();      // facts_memory.cpp: profile_memory
}  // namespace wb
