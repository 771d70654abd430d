// TraceModel: the derived views every lesson reads (see model.hpp).
//
// Rules, in one place:
//   * CPU lanes hold what ran on a host thread: ops, user annotations, runtime and driver
//     calls, and uncategorised events (python_function, overhead, ...), keyed by (pid, tid).
//     Kernels, memcpys, memsets, GPU-side annotations, instants, the "Trace" span and the
//     device-side categories Kineto doesn't map to a Kind (cuda_sync, ...) stay out.
//   * The call tree is time containment within a lane: sort by start (ties: longer first,
//     then file order) and keep a stack of open events. A runtime call sits under the op
//     that was running when it was made, exactly like an op under its annotation. An event
//     that starts inside another but ends after it is not its child (it is cut off, not
//     nested); it becomes a sibling.
//   * GPU lanes hold kernels, memcpys and memsets, keyed by (device, stream).
//   * Launch links use ids only, never time: device work -> the runtime/driver call with the
//     same correlation id (first one in file order if a merged trace repeats an id); runtime
//     call or device work -> the CPU op whose External id equals its linked_id. Ops and
//     user annotations can carry the same External id; the op wins, an annotation is the
//     fallback. Device work without an External id inherits its launch call's.
//   * Step windows are the CPU-side "ProfilerStep#N" user annotations; they never overlap
//     (the profiler closes step N before it opens N+1), so step_at is a binary search.
#include "workbook/trace_model.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "workbook/rules.hpp"

namespace wb {

namespace {

// Categories Kineto writes for device-side activity that trace.hpp files under Kind::Other.
bool device_side_other(const Event& e) {
  return e.category == "cuda_sync" || e.category == "cuda_event" || e.category == "xpu_sync" ||
         e.category == "mtia_ccp_events";
}

bool on_cpu_lane(const Event& e) {
  switch (e.kind) {
    case Kind::CpuOp:
    case Kind::UserAnnotation:
    case Kind::Runtime:
    case Kind::Driver: return true;
    // Not Python's own frames (with_stack): the call tree is the ops' and the annotations', as
    // Python's table builds it; the frames are the ops' stacks (table.hpp, group_by_stack_n).
    case Kind::Other: return !device_side_other(e) && e.category != "python_function";
    default: return false;
  }
}

bool is_launch_call(const Event& e) { return e.kind == Kind::Runtime || e.kind == Kind::Driver; }

// "ProfilerStep#12" -> 12; anything else (including "ProfilerStep#12x") -> nothing. wb::step_number
// also parses "ProfilerStep#-3" as -3; a step window has a number >= 0, so negatives are none.
std::optional<int> profiler_step_number(std::string_view name) {
  const int n = step_number(name);
  if (n < 0) return std::nullopt;
  return n;
}

using LaneKey = std::pair<int64_t, int64_t>;
using Lanes = std::map<LaneKey, std::vector<EventIdx>>;  // std::map keeps them ordered by key

// By start; ties: longer first (the parent), then file order.
struct ByStart {
  const std::vector<Event>& ev;
  bool operator()(EventIdx a, EventIdx b) const {
    if (ev[a].start_ns != ev[b].start_ns) return ev[a].start_ns < ev[b].start_ns;
    if (ev[a].dur_ns != ev[b].dur_ns) return ev[a].dur_ns > ev[b].dur_ns;  // parent first
    return a < b;
  }
};

std::vector<EventIdx> sorted(std::vector<EventIdx>& idx, const ByStart& by_start) {
  std::sort(idx.begin(), idx.end(), by_start);
  return std::move(idx);
}

// The CPU lanes, each with its call tree: a stack of the events still open at the current
// start time.
void build_cpu_lanes(const std::vector<Event>& ev, Lanes& cpu, const ByStart& by_start,
                     std::vector<CpuLane>& cpu_lanes, std::vector<std::optional<EventIdx>>& parent,
                     std::vector<std::vector<EventIdx>>& children) {
  for (auto& [key, idx] : cpu) {
    CpuLane lane{key.first, key.second, sorted(idx, by_start), {}};
    std::vector<EventIdx> open;
    for (EventIdx i : lane.events) {
      while (!open.empty() && ev[i].end_ns() > ev[open.back()].end_ns()) open.pop_back();
      if (open.empty()) {
        lane.roots.push_back(i);
      } else {
        parent[i] = open.back();
        children[open.back()].push_back(i);
      }
      open.push_back(i);
    }
    cpu_lanes.push_back(std::move(lane));
  }
}

// Launch links: correlation id -> runtime/driver call.
void link_launches(const std::vector<Event>& ev, const std::vector<GpuLane>& gpu_lanes,
                   const ByStart& by_start, std::vector<std::optional<EventIdx>>& launcher,
                   std::vector<std::vector<EventIdx>>& launched) {
  const size_t n = ev.size();
  std::unordered_map<int64_t, EventIdx> call_by_correlation;
  call_by_correlation.reserve(n / 4);
  for (EventIdx i = 0; i < n; ++i)
    if (is_launch_call(ev[i]) && ev[i].id != 0) call_by_correlation.emplace(ev[i].id, i);
  for (const GpuLane& lane : gpu_lanes) {
    for (EventIdx i : lane.events) {  // lane order, so each launched_ list is by start
      if (ev[i].id == 0) continue;
      auto it = call_by_correlation.find(ev[i].id);
      if (it == call_by_correlation.end()) continue;
      launcher[i] = it->second;
      launched[it->second].push_back(i);
    }
  }
  for (auto& list : launched)
    if (list.size() > 1) std::sort(list.begin(), list.end(), by_start);  // across streams
}

// External id -> CPU op (ops first, so an annotation never shadows an op).
void link_ops(const std::vector<Event>& ev, const std::vector<std::optional<EventIdx>>& launcher,
              std::vector<std::optional<EventIdx>>& op_of) {
  const size_t n = ev.size();
  std::unordered_map<int64_t, EventIdx> op_by_external_id;
  op_by_external_id.reserve(n / 2);
  for (Kind k : {Kind::CpuOp, Kind::UserAnnotation})
    for (EventIdx i = 0; i < n; ++i)
      if (ev[i].kind == k && ev[i].id != 0) op_by_external_id.emplace(ev[i].id, i);
  for (EventIdx i = 0; i < n; ++i) {
    if (!is_launch_call(ev[i]) && !is_device_work(ev[i])) continue;
    int64_t external = ev[i].linked_id;
    if (external == 0 && launcher[i]) external = ev[*launcher[i]].linked_id;
    if (external == 0) continue;
    if (auto it = op_by_external_id.find(external); it != op_by_external_id.end()) op_of[i] = it->second;
  }
}

// Steps: sorted by number, and their indices sorted by start.
void find_steps(const std::vector<Event>& ev, const std::vector<CpuLane>& cpu_lanes,
                std::vector<StepWindow>& steps, std::vector<std::size_t>& steps_by_start) {
  for (const CpuLane& lane : cpu_lanes) {
    for (EventIdx i : lane.events) {
      if (ev[i].kind != Kind::UserAnnotation) continue;
      if (auto number = profiler_step_number(ev[i].name))
        steps.push_back(StepWindow{*number, i, ev[i].start_ns, ev[i].end_ns()});
    }
  }
  std::sort(steps.begin(), steps.end(), [](const StepWindow& a, const StepWindow& b) {
    return std::tie(a.number, a.start_ns, a.event) < std::tie(b.number, b.start_ns, b.event);
  });
  steps_by_start.resize(steps.size());
  for (size_t k = 0; k < steps.size(); ++k) steps_by_start[k] = k;
  std::sort(steps_by_start.begin(), steps_by_start.end(),
            [&steps](size_t a, size_t b) { return steps[a].start_ns < steps[b].start_ns; });
}

}  // namespace

TraceModel::TraceModel(const Trace& trace) : trace_(&trace) {
  const std::vector<Event>& ev = trace.events;
  const size_t n = ev.size();
  parent_.assign(n, std::nullopt);
  children_.assign(n, {});
  launcher_.assign(n, std::nullopt);
  launched_.assign(n, {});
  op_of_.assign(n, std::nullopt);
  const ByStart by_start{ev};

  // ---- lanes ----
  Lanes cpu, gpu;
  for (EventIdx i = 0; i < n; ++i) {
    if (on_cpu_lane(ev[i]))
      cpu[{ev[i].pid, ev[i].tid}].push_back(i);
    else if (is_device_work(ev[i]))
      gpu[{ev[i].pid, ev[i].tid}].push_back(i);
  }
  build_cpu_lanes(ev, cpu, by_start, cpu_lanes_, parent_, children_);
  for (auto& [key, idx] : gpu) gpu_lanes_.push_back({key.first, key.second, sorted(idx, by_start)});

  link_launches(ev, gpu_lanes_, by_start, launcher_, launched_);
  link_ops(ev, launcher_, op_of_);
  find_steps(ev, cpu_lanes_, steps_, steps_by_start_);
  for (EventIdx i = 0; i < n; ++i)
    if (ev[i].kind == Kind::UserAnnotation) annotations_.push_back(i);
  std::stable_sort(annotations_.begin(), annotations_.end(),
                   [&ev](EventIdx a, EventIdx b) { return ev[a].start_ns < ev[b].start_ns; });
}

std::optional<EventIdx> TraceModel::parent(EventIdx i) const {
  return i < parent_.size() ? parent_[i] : std::nullopt;
}

const std::vector<EventIdx>& TraceModel::children(EventIdx i) const {
  static const std::vector<EventIdx> kNone;
  return i < children_.size() ? children_[i] : kNone;
}

std::optional<EventIdx> TraceModel::launcher(EventIdx device_event) const {
  return device_event < launcher_.size() ? launcher_[device_event] : std::nullopt;
}

std::vector<EventIdx> TraceModel::launched(EventIdx runtime_event) const {
  return runtime_event < launched_.size() ? launched_[runtime_event] : std::vector<EventIdx>{};
}

std::optional<EventIdx> TraceModel::op_of(EventIdx event) const {
  return event < op_of_.size() ? op_of_[event] : std::nullopt;
}

std::vector<EventIdx> TraceModel::find(std::string_view name) const {
  const std::vector<Event>& ev = trace_->events;
  std::vector<EventIdx> out;
  for (EventIdx i = 0; i < ev.size(); ++i)
    if (ev[i].name == name) out.push_back(i);
  std::stable_sort(out.begin(), out.end(),
                   [&ev](EventIdx a, EventIdx b) { return ev[a].start_ns < ev[b].start_ns; });
  return out;
}

std::vector<EventIdx> TraceModel::find_annotations(std::string_view name) const {
  std::vector<EventIdx> out;
  for (EventIdx i : annotations_)
    if (trace_->events[i].name == name) out.push_back(i);
  return out;
}

const StepWindow* TraceModel::step_at(int64_t t_ns) const {
  // The last window that starts at or before t; windows are disjoint, so it is the only
  // candidate. Half-open: a step's end belongs to whatever comes next.
  auto it = std::upper_bound(steps_by_start_.begin(), steps_by_start_.end(), t_ns,
                             [this](int64_t t, size_t k) { return t < steps_[k].start_ns; });
  if (it == steps_by_start_.begin()) return nullptr;
  const StepWindow& s = steps_[*std::prev(it)];
  return t_ns < s.end_ns ? &s : nullptr;
}

}  // namespace wb
