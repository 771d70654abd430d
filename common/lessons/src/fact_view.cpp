#include "fact_view.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <functional>
#include <numeric>
#include <unordered_map>

namespace wb::lessons_detail {

double r3(double x) { return std::isfinite(x) ? std::round(x * 1000.0) / 1000.0 : 0.0; }

std::string us_str(double us) {
  if (std::abs(us) >= 1000.0) return fmt::format("{:.2f} ms", us / 1000.0);
  return fmt::format("{:.1f} us", us);
}

namespace {
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }
}  // namespace

int64_t union_ns(const TraceModel& m, const std::vector<EventIdx>& events, Interval clip) {
  std::vector<Interval> iv;
  for (EventIdx i : events) {
    const int64_t s = std::max(m.at(i).start_ns, clip.start);
    const int64_t e = std::min(m.at(i).end_ns(), clip.end);
    if (e > s) iv.push_back({s, e});
  }
  std::sort(iv.begin(), iv.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  int64_t total = 0, cur_s = 0, cur_e = 0;
  bool open = false;
  for (const auto& x : iv) {
    if (open && x.start <= cur_e) {
      cur_e = std::max(cur_e, x.end);
      continue;
    }
    if (open) total += cur_e - cur_s;
    cur_s = x.start;
    cur_e = x.end;
    open = true;
  }
  if (open) total += cur_e - cur_s;
  return total;
}

// ---- View -----------------------------------------------------------------------------------
View::View(const TraceModel& model) : m(model) {
  const auto& ev = m.trace().events;
  for (EventIdx i = 0; i < ev.size(); ++i)
    if (is_device_work(ev[i])) all_device.push_back(i);
  std::sort(all_device.begin(), all_device.end(),
            [&](EventIdx a, EventIdx b) { return ev[a].start_ns < ev[b].start_ns; });
  gpu = !all_device.empty();
  // Kernels are classified by name, once per distinct name: a trace repeats a few kernel names
  // thousands of times. Copies and memsets are classified by their kind.
  kclass_.assign(ev.size(), KClass::Other);
  std::unordered_map<std::string_view, KClass> by_name;
  for (EventIdx d : all_device) {
    if (ev[d].kind != Kind::Kernel) {
      kclass_[d] = classify(ev[d]);
      continue;
    }
    auto [it, fresh] = by_name.try_emplace(ev[d].name, KClass::Other);
    if (fresh) it->second = classify(ev[d]);
    kclass_[d] = it->second;
  }
  // The lowest correlation of a launch call the trace holds: device work with a lower one was
  // launched before the window opened (its launch call went with the discarded warm-up step),
  // even when it runs inside the first step.
  for (const auto& e : ev)
    if ((e.kind == Kind::Runtime || e.kind == Kind::Driver) && e.id > 0)
      first_launch_id_ = first_launch_id_ == 0 ? e.id : std::min(first_launch_id_, e.id);
  if (m.steps().empty()) {
    device = all_device;
  } else {
    for (EventIdx d : all_device) {
      if (step_number(d) >= 0)
        device.push_back(d);
      else if (!m.launcher(d) && ev[d].id > 0 && ev[d].id < first_launch_id_ && m.step_at(ev[d].start_ns))
        before_window.push_back(d);  // it started inside a step
    }
  }
  // Times read like Perfetto's and the timeline's axis: from the earliest event.
  if (!ev.empty()) {
    origin_ = ev.front().start_ns;
    for (const auto& e : ev) origin_ = std::min(origin_, e.start_ns);
  }
}

std::vector<EventIdx> View::busy_in_window() const {
  std::vector<EventIdx> out = device;
  out.insert(out.end(), before_window.begin(), before_window.end());
  return out;
}

Interval View::active_window() const {
  Interval w;
  const auto& ev = m.trace().events;
  if (!m.steps().empty()) {
    w = {m.steps().front().start_ns, m.steps().back().end_ns};
  } else if (!device.empty()) {
    w = {ev[device.front()].start_ns, ev[device.front()].end_ns()};
  }
  for (EventIdx d : device) {
    w.start = std::min(w.start, ev[d].start_ns);
    w.end = std::max(w.end, ev[d].end_ns());
  }
  return w;
}

std::vector<EventIdx> View::annotations(std::string_view name) const { return m.find_annotations(name); }

int View::step_number(EventIdx i) const {
  const Event& e = m.at(i);
  int64_t t = e.start_ns;
  // Device work runs later than the CPU asked for it: place it by its launch call.
  if (e.on_device()) {
    if (auto l = m.launcher(i))
      t = m.at(*l).start_ns;
    else if (e.id > 0 && e.id < first_launch_id_)
      return -1;  // launched before the window: it belongs to no recorded step
  }
  const StepWindow* s = m.step_at(t);
  return s ? s->number : -1;
}

std::string View::step_label(EventIdx i) const {
  const int n = step_number(i);
  return n >= 0 ? fmt::format("ProfilerStep#{}", n) : "outside the steps";
}

std::string View::at(int64_t t_ns) const { return fmt::format("at {:.1f} us", us(t_ns - origin_)); }

std::string View::device_name() const {
  const auto& devs = m.trace().devices;
  if (devs.empty()) return "";
  if (!all_device.empty())
    for (const auto& d : devs)
      if (d.id == m.at(all_device.front()).pid) return d.name;
  return devs.front().name;
}

// ---- kernels --------------------------------------------------------------------------------
std::string short_name(std::string_view name) {
  constexpr size_t kMax = 64;
  if (name.size() <= kMax) return std::string(name);
  return std::string(name.substr(0, kMax - 3)) + "...";
}

int occupancy_queries_before(const TraceModel& m, EventIdx launch) {
  auto scope = m.op_of(launch);
  if (!scope) scope = m.parent(launch);
  if (!scope) return 0;
  int n = 0;
  std::function<void(EventIdx)> walk = [&](EventIdx i) {
    for (EventIdx c : m.children(i)) {
      if (m.at(c).start_ns >= m.at(launch).start_ns) break;  // children are by start
      if (starts_with(m.at(c).name, "cudaOccupancy")) n++;
      walk(c);
    }
  };
  walk(*scope);
  return n;
}

// ---- call trees -----------------------------------------------------------------------------
namespace {
constexpr int kMaxDepth = 24;  // deeper nesting than any real dispatch chain

// CPU children, then (for a launch call) the device work it launched.
std::vector<EventIdx> tree_children(const TraceModel& m, EventIdx i) {
  std::vector<EventIdx> out = m.children(i);
  const Kind k = m.at(i).kind;
  if (k == Kind::Runtime || k == Kind::Driver)
    for (EventIdx d : m.launched(i)) out.push_back(d);
  return out;
}
}  // namespace

std::vector<LeafPath> leaf_paths(const TraceModel& m, EventIdx root) {
  constexpr size_t kMaxPaths = 200;
  std::vector<LeafPath> out;
  std::function<void(EventIdx, const std::string&, int)> walk = [&](EventIdx i, const std::string& prefix,
                                                                    int depth) {
    if (out.size() >= kMaxPaths) return;
    const std::string path = prefix.empty() ? m.at(i).name : prefix + " > " + m.at(i).name;
    const auto kids = tree_children(m, i);
    if (kids.empty() || depth >= kMaxDepth) {
      out.push_back({path, m.at(i).on_device(), i});
      return;
    }
    for (EventIdx c : kids) walk(c, path, depth + 1);
  };
  walk(root, "", 0);
  return out;
}

std::string main_path(const TraceModel& m, EventIdx root) {
  const auto paths = leaf_paths(m, root);
  if (paths.empty()) return m.at(root).name;
  // Prefer the chain to a kernel (not the memset cuBLAS issues before it), then any device work.
  for (const auto& p : paths)
    if (m.at(p.leaf).kind == Kind::Kernel) return p.text;
  for (const auto& p : paths)
    if (p.on_device) return p.text;
  // CPU only: follow the longest child at each level, the path where the time goes.
  std::string path = m.at(root).name;
  EventIdx at = root;
  for (int depth = 0; depth < kMaxDepth && !m.children(at).empty(); ++depth) {
    const auto& kids = m.children(at);
    at = *std::max_element(kids.begin(), kids.end(),
                           [&](EventIdx a, EventIdx b) { return m.at(a).dur_ns < m.at(b).dur_ns; });
    path += " > " + m.at(at).name;
  }
  return path;
}

std::string render_tree(const TraceModel& m, EventIdx root) {
  constexpr size_t kMaxChildren = 30;  // a hot loop would drown the picture
  std::string out;
  std::function<void(EventIdx, const std::string&, bool, int)> walk =
      [&](EventIdx i, const std::string& indent, bool last, int depth) {
        const Event& e = m.at(i);
        std::string label = e.on_device() ? "[GPU] " + short_name(e.name) : short_name(e.name);
        std::string extra = us_str(us(e.dur_ns));
        if (e.kernel) extra += ", grid " + dims(e.kernel->grid) + ", block " + dims(e.kernel->block);
        if (e.bytes >= 0) extra += fmt::format(", {} B", e.bytes);
        out += indent + (depth == 0 ? "" : (last ? "└─ " : "├─ ")) + label + "  (" + extra + ")\n";
        if (depth >= kMaxDepth) return;
        const auto kids = tree_children(m, i);
        const std::string next = depth == 0 ? "" : indent + (last ? "   " : "│  ");
        for (size_t k = 0; k < kids.size() && k < kMaxChildren; ++k)
          walk(kids[k], next, k + 1 == kids.size() || k + 1 == kMaxChildren, depth + 1);
        if (kids.size() > kMaxChildren)
          out += next + fmt::format("   ... {} more\n", kids.size() - kMaxChildren);
      };
  walk(root, "", true, 0);
  return out;
}

nlohmann::json footprint_json(const Event& e) {
  const KernelInfo& k = *e.kernel;
  return {{"registers_per_thread", k.registers_per_thread},
          {"shared_memory", k.shared_memory},
          {"grid", k.grid},
          {"block", k.block},
          {"blocks_per_sm", r3(k.blocks_per_sm)},
          {"warps_per_sm", r3(k.warps_per_sm)}};
}

std::string dims(const std::array<int, 3>& d) { return fmt::format("[{},{},{}]", d[0], d[1], d[2]); }

bool is_one_time_event(std::string_view name) {
  // Seen around the first GEMM of a process (lessons.md, "What the H200 shows") and Kineto's
  // own buffer management. Per-launch occupancy queries are launch_path's business: of the
  // occupancy calls only the two that size a Hopper library's first launch are listed, not
  // cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, which is what the runtime's generic
  // query (the cudaOccupancyMaxActiveBlocksPerMultiprocessor template of cuda_runtime.h) calls
  // and which a kernel may make at every launch (chapter 01's cold GEMM makes it once).
  static constexpr std::string_view kPrefixes[] = {
      // the profiler's buffers and loading the code of the first launch,
      "Activity Buffer Request", "Runtime Triggered Module Loading", "Lazy Function Loading", "cuModuleLoad",
      "cuLibraryLoad", "cudaGetDriverEntryPoint",
      // a library setting up its kernels (cuBLAS before its first GEMM),
      "cudaFuncSetAttribute", "cudaFuncGetAttributes", "cudaDeviceGetAttribute", "cudaGetDeviceProperties",
      "cudaOccupancyMaxActiveClusters", "cudaOccupancyAvailableDynamicSMemPerBlock",
      // and the caching allocator's first release.
      "cudaFree"};
  // Every prefix starts with one of these letters: most events (aten::..., [memory]) stop here.
  if (name.empty() || (name[0] != 'A' && name[0] != 'R' && name[0] != 'L' && name[0] != 'c')) return false;
  for (auto p : kPrefixes)
    if (starts_with(name, p)) return true;
  return false;
}

std::string_view compile_marker(std::string_view name) {
  static constexpr std::string_view kMarkers[] = {"TorchDynamo Cache Lookup", "Torch-Compiled Region",
                                                  "CompiledFxGraph", "Pregraph bytecode",
                                                  "AOTDispatcher Runtime Wrapper Prologue"};
  for (auto k : kMarkers)
    if (contains(name, k)) return k;
  return {};
}

Fact not_measurable(Fact f, std::string reason) {
  f.measured = false;
  f.status = Status::NotApplicable;
  f.explanation = std::move(reason);
  f.verdict = "not applicable: " + f.explanation;
  return f;
}

Fact start(std::string id, std::string title, Pattern default_pattern) {
  Fact f;
  f.id = std::move(id);
  f.title = std::move(title);
  f.pattern = std::move(default_pattern);
  return f;
}

Fact finish(Fact f, const Trace& t) {
  f.measured = true;
  const Pattern p = f.pattern;
  return apply_pattern(std::move(f), p, t);
}

Fact ViewFact::fn(const View& v, const FactOptions& o) const {
  Pattern p = default_pattern(id);
  p.text = fmt::format(fmt::runtime(p.text), fmt::arg("annotation", o.annotation),
                       fmt::arg("outlier_factor", o.outlier_factor));
  Fact f = start(std::string(id), title, std::move(p));
  if (!v.gpu && !cpu_only.empty()) return not_measurable(std::move(f), cpu_only);
  std::string why_not = measure(v, o, f);
  if (!why_not.empty()) return not_measurable(std::move(f), std::move(why_not));
  f = finish(std::move(f), v.m.trace());
  // The explanation reads the verdict: the numbers stay in the pattern.
  const Reading& r = reading;
  const bool general = o.general && !r.general_holds.empty();
  const std::string& text = f.status == Status::Pass   ? (general ? r.general_holds : r.holds)
                            : f.status == Status::Fail ? (general ? r.general_fails : r.fails)
                                                       : f.explanation;
  // A measurement that wrote an explanation while the fact has a reading says why, in this trace:
  // it follows the verdict's reading when the pattern holds.
  if (!text.empty())
    f.explanation = f.status == Status::Pass && !f.explanation.empty() && f.explanation != text
                        ? text + ": " + f.explanation
                        : text;
  return f;
}

void add_evidence(Fact& f, std::string line) {
  constexpr size_t kMaxEvidence = 12;  // enough to find the events; the JSON data has the rest
  if (f.evidence.size() < kMaxEvidence) f.evidence.push_back(std::move(line));
}

}  // namespace wb::lessons_detail
