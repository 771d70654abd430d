// Lesson facts about steps and windows: how wide each ProfilerStep is (a cold first step), the
// dead window before an annotation's first op, the GPU's idle time between the kernels of each
// step, the end-of-window synchronization, and the one-time work or profiler artefacts inside
// the window.
//
//   step_widths, dead_window, kernel_gaps, end_sync, profiler_artefacts
//
// Registered at the end of this file (steps_facts(), each entry with its default pattern); the
// chapters' patterns are in chapters/NN_name/lessons.json.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fact_view.hpp"
#include "workbook/lessons.hpp"

namespace wb {

using nlohmann::json;
using namespace lessons_detail;

// ---- 2. step widths ---------------------------------------------------------------------
std::string measure_step_widths(const View& v, const FactOptions&, Fact& f) {
  const TraceModel& m = v.m;
  const auto& steps = m.steps();
  if (steps.size() < 2)
    return fmt::format(
        "needs at least 2 ProfilerStep windows, the "
        "trace has {}",
        steps.size());
  json arr = json::array();
  std::vector<double> rest;
  double widest = 0;
  for (const auto& s : steps) {
    const double w = us(s.end_ns - s.start_ns);
    arr.push_back({{"step", s.number}, {"width_us", r3(w)}});
    if (&s != &steps.front()) rest.push_back(w);
    widest = std::max(widest, w);
    add_evidence(f,
                 fmt::format("ProfilerStep#{}: {} wide, starts {}", s.number, us_str(w), v.at(s.start_ns)));
  }
  const double first = us(steps.front().end_ns - steps.front().start_ns);
  const double med = median(rest);
  f.data["steps"] = arr;
  f.data["first_us"] = r3(first);
  f.data["median_rest_us"] = r3(med);
  f.data["first_over_median_rest"] = med > 0 ? json(r3(first / med)) : json(nullptr);
  f.data["first_is_widest"] = first >= widest;
  f.value = fmt::format("first active step ProfilerStep#{} {} vs median of the others {} ({:.1f}x)",
                        steps.front().number, us_str(first), us_str(med), med > 0 ? first / med : 0);
  return kMeasured;
}

// ---- 3. dead window ---------------------------------------------------------------------
std::string measure_dead_window(const View& v, const FactOptions& o, Fact& f) {
  const TraceModel& m = v.m;
  json arr = json::array();
  std::vector<double> gaps;
  for (EventIdx a : v.annotations(o.annotation)) {
    const auto& kids = m.children(a);
    if (kids.empty()) continue;
    const double gap = us(m.at(kids.front()).start_ns - m.at(a).start_ns);
    gaps.push_back(gap);
    arr.push_back(
        {{"step", v.step_number(a)}, {"gap_us", r3(gap)}, {"first_child", m.at(kids.front()).name}});
    add_evidence(f, fmt::format("{}: {} starts {}, first child {} after {}", v.step_label(a), o.annotation,
                                v.at(m.at(a).start_ns), m.at(kids.front()).name, us_str(gap)));
  }
  if (gaps.empty())
    return fmt::format(
        "no '{}' annotation with children in this "
        "trace",
        o.annotation);
  f.data["annotation"] = o.annotation;
  f.data["gaps"] = arr;
  f.data["first_gap_us"] = r3(gaps.front());
  if (gaps.size() < 2) {
    f.value = fmt::format("one '{}' only: gap {}", o.annotation, us_str(gaps.front()));
    return "needs at least 2 annotations to compare the first gap";
  }
  const double later = median(std::vector<double>(gaps.begin() + 1, gaps.end()));
  f.data["median_later_gap_us"] = r3(later);
  f.data["first_over_median_later"] = later > 0 ? json(r3(gaps.front() / later)) : json(nullptr);
  f.value = fmt::format("gap before the first op: {} in the first step, median {} later",
                        us_str(gaps.front()), us_str(later));
  return kMeasured;
}

namespace {
// Profiler bookkeeping Kineto draws on the device rows (category "overhead").
bool is_profiler_overhead(const Event& e) {
  return e.category == "overhead" || e.name == "Activity Buffer Request";
}
std::string short_kernel_name(const std::string& name) {
  std::string s = name.rfind("void ", 0) == 0 ? name.substr(5) : name;
  const auto cut = s.find_first_of("<(");
  if (cut != std::string::npos && cut > 0) s = s.substr(0, cut);
  return short_name(s);
}
// One step's largest idle gap between two pieces of its device work (in start order): the
// kernels on either side, whether a profiler event overlaps it, and how late the CPU launched
// the work after it.
json largest_gap(const TraceModel& m, const std::vector<EventIdx>& work,
                 const std::vector<const Event*>& overhead) {
  double largest = 0;
  std::string before, after;
  bool profiler_inside = false;
  json launch_late = nullptr;  // the next kernel's launch call started this long after the GPU went idle
  int64_t busy_until = m.at(work.front()).end_ns();
  for (size_t k = 1; k < work.size(); ++k) {
    const Event& next = m.at(work[k]);
    const double gap = us(next.start_ns - busy_until);
    if (gap > largest) {
      largest = gap;
      before = m.at(work[k - 1]).name;
      after = next.name;
      profiler_inside = false;
      for (const Event* o : overhead)
        if (o->start_ns < next.start_ns && o->end_ns() > busy_until) profiler_inside = true;
      const auto l = m.launcher(work[k]);
      launch_late = l ? json(r3(us(m.at(*l).start_ns - busy_until))) : json(nullptr);
    }
    busy_until = std::max(busy_until, next.end_ns());
  }
  return {{"device_events", work.size()},
          {"largest_gap_us", r3(largest)},
          {"before", before},
          {"after", after},
          {"profiler_event_inside", profiler_inside},
          {"launch_late_us", launch_late}};
}
}  // namespace

// ---- GPU idle between the kernels of each step ------------------------------------------
std::string measure_kernel_gaps(const View& v, const FactOptions&, Fact& f) {
  const TraceModel& m = v.m;
  constexpr double kFactor = 2.0, kFloorUs = 2.0;
  std::vector<const Event*> overhead;
  int requests = 0;
  double request_us = 0;
  for (const auto& e : m.trace().events) {
    if (e.name == "Activity Buffer Request") {
      requests++;
      request_us += us(e.dur_ns);
    }
    if (is_profiler_overhead(e)) overhead.push_back(&e);
  }
  // Device work grouped by the step that launched it (v.device is in start order).
  std::map<int, std::vector<EventIdx>> by_step;
  for (EventIdx d : v.device)
    if (int s = v.step_number(d); s >= 0) by_step[s].push_back(d);
  json steps = json::array();
  std::vector<double> gaps;
  std::string table;
  for (const auto& [step, work] : by_step) {
    if (work.size() < 2) continue;
    json s = largest_gap(m, work, overhead);
    s["step"] = step;
    gaps.push_back(s["largest_gap_us"].get<double>());
    steps.push_back(std::move(s));
  }
  if (gaps.empty()) return "no step launched two or more device events";
  const double med = median(gaps);
  json unusual = json::array();
  for (auto& s : steps) {
    const double g = s["largest_gap_us"].get<double>();
    const bool odd = g > kFactor * med && g > med + kFloorUs;
    s["unusual"] = odd;
    if (odd) unusual.push_back(s["step"]);
    table +=
        fmt::format("  ProfilerStep#{:<3} {:>10}  {} -> {}{}{}\n", s["step"].get<int>(), us_str(g),
                    short_kernel_name(s["before"]), short_kernel_name(s["after"]), odd ? "   <- unusual" : "",
                    s["profiler_event_inside"].get<bool>() ? " (a profiler event overlaps it)" : "");
  }
  f.detail = "GPU idle between the kernels of each step (largest gap per step):\n" + table;
  f.data["steps"] = steps;
  f.data["median_gap_us"] = r3(med);
  f.data["unusual_steps"] = unusual.size();
  f.data["unusual_step_numbers"] = unusual;
  f.data["first_step_unusual"] = !steps.empty() && steps.front()["unusual"].get<bool>();
  const double first = gaps.front();
  const double max_rest = gaps.size() > 1 ? *std::max_element(gaps.begin() + 1, gaps.end()) : 0;
  f.data["first_gap_us"] = r3(first);
  // > 0: the kernel after the first step's widest gap was launched only after the GPU had gone
  // idle, so the CPU was late (the gap is the CPU's, not a stall on the device).
  f.data["first_gap_launch_late_us"] = steps.front()["launch_late_us"];
  f.data["first_gap_profiler_event_inside"] = steps.front()["profiler_event_inside"];
  f.data["widest_is_first"] = first >= max_rest;
  f.data["first_over_max_rest"] = max_rest > 0 ? json(r3(first / max_rest)) : json(nullptr);
  f.data["activity_buffer_requests"] = requests;
  f.data["activity_buffer_request_us"] = r3(request_us);
  f.data["rule"] =
      fmt::format("unusual: > {}x the median step's largest gap and > {} us above it", kFactor, kFloorUs);
  f.value = fmt::format("median largest gap per step {}; {} unusual step{}{}", us_str(med), unusual.size(),
                        unusual.size() == 1 ? "" : "s", unusual.empty() ? "" : " (" + unusual.dump() + ")");
  return kMeasured;
}

// ---- 8. end-of-window synchronization ---------------------------------------------------
std::string measure_end_sync(const View& v, const FactOptions&, Fact& f) {
  const TraceModel& m = v.m;
  const auto syncs = m.find("cudaDeviceSynchronize");
  if (syncs.empty()) return "no cudaDeviceSynchronize in the trace";
  const EventIdx s = syncs.back();
  const Interval during{m.at(s).start_ns, m.at(s).end_ns()};
  const double sync = us(m.at(s).dur_ns);
  const double busy_in = us(union_ns(m, v.all_device, during));
  const double busy_all = us(union_ns(m, v.busy_in_window(), v.active_window()));
  f.data["sync_us"] = r3(sync);
  f.data["gpu_busy_us"] = r3(busy_all);
  f.data["busy_during_sync_us"] = r3(busy_in);
  f.data["busy_during_sync_fraction"] = sync > 0 ? json(r3(busy_in / sync)) : json(nullptr);
  f.data["sync_over_gpu_busy"] = busy_all > 0 ? json(r3(sync / busy_all)) : json(nullptr);
  f.value = fmt::format(
      "last cudaDeviceSynchronize {} (GPU busy {} of it); all GPU work in the "
      "window {}",
      us_str(sync), us_str(busy_in), us_str(busy_all));
  add_evidence(f,
               fmt::format("cudaDeviceSynchronize {} long, starts {}", us_str(sync), v.at(m.at(s).start_ns)));
  return kMeasured;
}

// ---- 10. profiler artefacts and one-time setup -------------------------------------------
namespace {
// The innermost CPU op whose span holds [start, end] (an event on another row, such as a buffer
// request on pid -1, happened while that op ran): down each CPU lane's call tree, at each level
// the last event that starts at or before `start`.
std::optional<EventIdx> innermost_op_around(const TraceModel& m, int64_t start, int64_t end) {
  std::optional<EventIdx> best;
  for (const CpuLane& lane : m.cpu_lanes()) {
    const std::vector<EventIdx>* level = &lane.roots;
    while (!level->empty()) {
      const auto it = std::upper_bound(level->begin(), level->end(), start,
                                       [&](int64_t t, EventIdx i) { return t < m.at(i).start_ns; });
      if (it == level->begin()) break;
      const EventIdx e = *std::prev(it);
      if (m.at(e).end_ns() < end) break;
      if (m.at(e).kind == Kind::CpuOp && (!best || m.at(e).dur_ns < m.at(*best).dur_ns)) best = e;
      level = &m.children(e);
    }
  }
  return best;
}

// Where each Activity Buffer Request sits: its row (Kineto draws it on pid -1, category
// "overhead", not on a GPU stream), its step, the CPU op it ran during, and whether that op
// launched its first device work only after the request ended (the request held the op up).
json buffer_requests(const View& v) {
  const TraceModel& m = v.m;
  std::set<std::pair<int64_t, int64_t>> gpu_rows;
  for (EventIdx d : v.all_device) gpu_rows.insert({m.at(d).pid, m.at(d).tid});
  constexpr size_t kPlaced = 8;  // each placement looks at the device work: the first few are enough
  json out = json::array();
  for (EventIdx i = 0; i < m.trace().events.size() && out.size() < kPlaced; ++i) {
    const Event& r = m.at(i);
    if (r.name != "Activity Buffer Request") continue;
    const StepWindow* s = m.step_at(r.start_ns);
    json j = {{"pid", r.pid},
              {"category", r.category},
              {"dur_us", r3(us(r.dur_ns))},
              {"on_gpu_stream_row", gpu_rows.count({r.pid, r.tid}) > 0},
              {"step", s ? s->number : -1}};
    const auto op = innermost_op_around(m, r.start_ns, r.end_ns());
    j["during"] = op ? m.at(*op).name : "";
    std::optional<int64_t> first_launch;
    for (EventIdx d : v.all_device)
      if (const auto l = m.launcher(d); l && op && m.op_of(d) == op)
        first_launch = std::min(first_launch.value_or(m.at(*l).start_ns), m.at(*l).start_ns);
    j["launch_after_request"] = first_launch ? json(*first_launch >= r.end_ns()) : json(nullptr);
    out.push_back(std::move(j));
  }
  return out;
}

// For each kind of one-time event, the CPU ops it ran during (the innermost around it): whose
// first call paid for it (chapter 01's cold run: the GEMM's setup under aten::mm). The first few
// of each name are placed (a long training trace can hold thousands of cudaDeviceGetAttribute).
json one_time_during(const TraceModel& m) {
  constexpr int kPerName = 4;
  std::map<std::string, std::set<std::string>> during;
  std::map<std::string, int> seen;
  for (EventIdx i = 0; i < m.trace().events.size(); ++i) {
    const Event& e = m.at(i);
    if (!is_one_time_event(e.name) || seen[e.name]++ >= kPerName) continue;
    const auto op = innermost_op_around(m, e.start_ns, e.end_ns());
    during[e.name].insert(op ? m.at(*op).name : "");
  }
  json out = json::object();
  for (const auto& [name, ops] : during) out[name] = std::vector<std::string>(ops.begin(), ops.end());
  return out;
}
}  // namespace

std::string measure_profiler_artefacts(const View& v, const FactOptions&, Fact& f) {
  const TraceModel& m = v.m;
  std::map<std::string, std::pair<int, double>> found;  // name -> count, total us
  for (EventIdx i = 0; i < m.trace().events.size(); ++i) {
    const Event& e = m.at(i);
    if (!is_one_time_event(e.name)) continue;
    auto& [n, t] = found[e.name];
    if (n == 0)
      add_evidence(f, fmt::format("{} ({}) {}, {} long", e.name, kind_name(e.kind), v.at(e.start_ns),
                                  us_str(us(e.dur_ns))));
    n++;
    t += us(e.dur_ns);
  }
  json rows = json::array();
  int count = 0;
  double total = 0;
  for (const auto& [name, nt] : found) {
    rows.push_back({{"name", name}, {"count", nt.first}, {"total_us", r3(nt.second)}});
    count += nt.first;
    total += nt.second;
  }
  f.data["events"] = rows;
  f.data["count"] = count;
  f.data["total_us"] = r3(total);
  // The profiler's own start-up (its activity buffers) vs one-time work of the libraries
  // (module loading, attribute setup, occupancy sizing): two effects with two cures.
  const int requests = found.count("Activity Buffer Request") ? found["Activity Buffer Request"].first : 0;
  f.data["activity_buffer_requests"] = requests;
  f.data["library_events"] = count - requests;
  json library = json::array();
  for (const auto& [name, nt] : found)
    if (name != "Activity Buffer Request") library.push_back(name);
  f.data["library_names"] = library;
  f.data["requests"] = buffer_requests(v);
  f.data["during"] = one_time_during(m);
  // How long after the window opened the device row starts, and how long that first piece of
  // device work waited after its own launch: a late first launch, not a queue, when the second is short.
  if (!v.device.empty() && !m.steps().empty()) {
    const Event& first = m.at(v.device.front());
    f.data["window_to_first_device_us"] = r3(us(first.start_ns - m.steps().front().start_ns));
    if (const auto l = m.launcher(v.device.front()))
      f.data["first_device_launch_wait_us"] = r3(us(first.start_ns - m.at(*l).start_ns));
  }
  f.value = count == 0 ? "no profiler or one-time setup events"
                       : fmt::format("{} one-time/profiler event{} ({} in total): {}", count,
                                     count == 1 ? "" : "s", us_str(total), join(keys(found), ", ", ""));
  return kMeasured;
}

// The registry's entries of this file's facts (fact_view.hpp: ViewFact): id, title, why a
// CPU-only trace has nothing to measure, the measurement, what the default pattern's verdict
// means, the teaching order, the default pattern, whether it is about a chapter's workload only,
// and the docs/cheatsheet.md rows that name it first.
const std::vector<ViewFact>& steps_facts() {
  static const std::vector<ViewFact> kFacts = {
      {"step_widths",
       "ProfilerStep widths (cold start)",
       "",
       measure_step_widths,
       {"the first recorded step is the widest: one-time costs when the process or the profiler is "
        "cold (profiler_artefacts lists them), else the first recorded step's widening",
        "steps take similar time: nothing one-time left in the window"},
       20,
       R"json({"text": "cold start: first active step >= 1.5 x the median of the others",
 "why": "noise between warm steps stays well under 1.5x; a cold first step is 2-3x",
 "all": [
      {"key": "/first_over_median_rest", "op": ">=", "value": 1.5}
 ]})json",
       false,
       {{"**Cold first step**",
         "first-call rows (module loading, `cudaFuncSetAttribute`, occupancy queries) with `# of Calls` 1",
         "the first `ProfilerStep` is the widest; a gap before the first op under the annotation",
         "01, 02",
         {"dead_window", "profiler_artefacts"}},
        {"**Warm steady state**",
         "no one-time rows; the same rows and call counts every step",
         "the `ProfilerStep` bars are of similar width",
         "02",
         {"profiler_artefacts"}}}},
      {"dead_window",
       "Dead window: annotation start to its first op",
       "",
       measure_dead_window,
       {"the first call starts its first op late: one-time setup (library handles, heuristics, lazy "
        "loading) when profiler_artefacts finds it in the window, else the first recorded step's "
        "widening",
        "no one-time setup visible before the first op"},
       30,
       R"json({"text": "one-time setup: first gap >= 1.5 x the median later gap",
 "why": "a cold first gap is 2-15x the later ones on the reference runs",
 "all": [
      {"key": "/first_over_median_later", "op": ">=", "value": 1.5}
 ]})json",
       false,
       {}},
      {"end_sync",
       "End-of-window synchronization",
       "CPU-only trace: no device to wait for",
       measure_end_sync,
       {"the wait is mostly idle GPU: it costs round-trip and flush time, not work",
        "the CPU waits for queued GPU work to drain: the GPU is behind"},
       90,
       R"json({"text": "idle wait: the GPU is busy < 50% of the final sync",
 "why": "at 64 the GPU has finished before the sync starts; at 4096 it is draining a queue for most of it",
 "all": [
      {"key": "/busy_during_sync_fraction", "op": "<", "value": 0.5, "scope": "gpu"}
 ]})json",
       false,
       {}},
      {"profiler_artefacts",
       "Profiler artefacts and one-time setup",
       "",
       measure_profiler_artefacts,
       {"these run once per process or are the profiler's own work: keep them out of what you "
        "measure (warm up first)",
        "the window holds only the workload"},
       110,
       R"json({"text": "one-time work in the window: module loading, attribute setup or profiler buffers appear",
 "why": "any such event is a symptom; a warm steady-state window has none",
 "all": [
      {"key": "/count", "op": ">", "value": 0}
 ]})json",
       false,
       {}},
      {"kernel_gaps",
       "GPU idle between the kernels of each step",
       "CPU-only trace: no kernels",
       measure_kernel_gaps,
       {"one step's kernels wait longer for each other: look for a profiler event (Activity Buffer "
        "Request) or one-time work in that step",
        "the GPU idles about as long in every step"},
       160,
       R"json({"text": "an unusual gap: some step's largest gap > 2x the median step's and > 2 us above it",
 "why": "the profiler's own buffer requests can open a gap between two kernels of a step",
 "all": [
      {"key": "/unusual_steps", "op": ">", "value": 0, "scope": "gpu"}
 ]})json",
       false,
       {{"**GPU idle inside a step**",
         "(not in the table)",
         "one step's gap between two kernels is much wider than in the other steps; look at the CPU row "
         "above it: a launch that came late (the first call of an op) or a profiler event (`Activity Buffer "
         "Request`, on a row of its own)",
         "02",
         {"step_cpu"}}}}};
  return kFacts;
}

}  // namespace wb
