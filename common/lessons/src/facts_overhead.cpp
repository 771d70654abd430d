// Lesson facts about overhead: where the CPU's time goes. Is the run overhead-bound (Self CUDA
// vs Self CPU), which share of a CPU step is compute (the CPU edition), what the layers around
// the ops cost per step (torch.compile's guards, a runner), which op is a hot loop, and whether
// torch.compile's rows are there at all.
//
//   overhead_bound, cpu_shares, step_cpu, hot_ops, compile_markers
//
// Registered at the end of this file (overhead_facts(), each entry with its default pattern); the
// chapters' patterns are in chapters/NN_name/lessons.json.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fact_view.hpp"
#include "workbook/lessons.hpp"
#include "workbook/rules.hpp"
#include "workbook/table.hpp"

namespace wb {

using nlohmann::json;
using namespace lessons_detail;

// ---- 1. overhead-bound vs compute-bound ------------------------------------------------
std::string measure_overhead_bound(const View& v, const FactOptions&, Fact& f) {
  const TraceModel& m = v.m;
  // The table's footers, summed the way Python sums them.
  int64_t cpu_ns = 0, cuda_ns = 0;
  for (const auto& row : key_averages(m.trace())) {
    cpu_ns += row.self_cpu_ns;
    if (row.on_device && !row.is_user_annotation) cuda_ns += row.self_device_ns;
  }
  const double cpu = us(cpu_ns), cuda = us(cuda_ns);
  f.data["self_cpu_total_us"] = r3(cpu);
  f.data["self_cuda_total_us"] = r3(cuda);
  if (!v.gpu) {
    f.value = fmt::format("Self CPU total {}, no device time", us_str(cpu));
    return "CPU-only trace: no device time to compare with";
  }
  if (cpu <= 0) return "no CPU time recorded";

  const Interval win = v.active_window();
  const double busy = us(union_ns(m, v.busy_in_window(), win));
  const double span = us(win.end - win.start);
  const double ratio = cuda / cpu;
  const double busy_frac = span > 0 ? busy / span : 0;
  f.data["cuda_cpu_ratio"] = r3(ratio);
  f.data["window_us"] = r3(span);
  f.data["gpu_busy_us"] = r3(busy);
  f.data["gpu_busy_fraction"] = r3(busy_frac);
  f.data["gpu_idle_fraction"] = r3(1 - busy_frac);
  f.value = fmt::format(
      "Self CUDA {} / Self CPU {} = {:.3f}; GPU busy {:.1f}% of the {} active "
      "window",
      us_str(cuda), us_str(cpu), ratio, 100 * busy_frac, us_str(span));
  add_evidence(f, fmt::format("active window {} .. {} (first ProfilerStep start to the last "
                              "device event it launched)",
                              v.at(win.start), v.at(win.end)));
  add_evidence(f,
               fmt::format("{} device events in the window, busy (union) {}", v.device.size(), us_str(busy)));
  // Per CUDA graph replay launched in the window: the GPU's busy share from the replay's first
  // kernel to its last. The window's figure above also counts the gaps between replays, and
  // replays launched before the window whose kernels run inside it.
  std::vector<double> per_replay, replay_us;
  for (EventIdx g : m.find("cudaGraphLaunch")) {
    if (m.at(g).start_ns < win.start || m.at(g).start_ns > win.end) continue;
    const std::vector<EventIdx> ks = m.launched(g);
    if (ks.empty()) continue;
    Interval r{m.at(ks.front()).start_ns, m.at(ks.front()).end_ns()};
    for (EventIdx k : ks)
      r.start = std::min(r.start, m.at(k).start_ns), r.end = std::max(r.end, m.at(k).end_ns());
    if (r.end <= r.start) continue;
    per_replay.push_back(static_cast<double>(union_ns(m, ks, r)) / static_cast<double>(r.end - r.start));
    replay_us.push_back(us(r.end - r.start));
  }
  if (!per_replay.empty()) {
    f.data["replays"] = static_cast<int>(per_replay.size());
    f.data["gpu_busy_per_replay"] = r3(median(per_replay));
    f.data["replay_span_us"] = r3(median(replay_us));
    add_evidence(f,
                 fmt::format("{} graph replays: median span {} first kernel to last, GPU busy {:.1f}% of it",
                             per_replay.size(), us_str(median(replay_us)), 100 * median(per_replay)));
  }
  return kMeasured;
}

// ---- any trace (inspect, general rules): where a CPU step's time goes, by kind of work -------
namespace {
// A step's CPU time split by what ran: each outermost op of a compute class (rules.hpp:
// classify_op) counts whole (its children run inside it); views, allocation and the self time of
// wrapper ops are the framework's dispatch; time in no op at all is the calling code's (Python
// or C++ between the ops, the annotations, the profiler).
struct ClassTimes {
  std::map<OpClass, double> compute;  // ns per class
  double framework = 0, outside = 0, other = 0, total = 0;
  std::map<std::string, double> other_ops;  // ops with no class and no children, by name
};

void attribute(const TraceModel& m, EventIdx i, ClassTimes& t) {
  const Event& e = m.at(i);
  const double dur = static_cast<double>(e.dur_ns);
  if (e.kind == Kind::CpuOp) {
    const OpClass c = classify_op(e.name);
    if (is_compute(c)) {
      t.compute[c] += dur;
      return;
    }
    if (m.children(i).empty()) {
      (c == OpClass::Other ? t.other_ops[e.name] : t.framework) += dur;
      if (c == OpClass::Other) t.other += dur;
      return;
    }
  }
  double children = 0;
  for (EventIdx c : m.children(i)) {
    attribute(m, c, t);
    children += static_cast<double>(m.at(c).dur_ns);
  }
  (e.kind == Kind::CpuOp ? t.framework : t.outside) += std::max(0.0, dur - children);
}

std::string share_list(const ClassTimes& t) {
  std::vector<std::pair<double, std::string>> parts;
  for (const auto& [c, ns] : t.compute) parts.push_back({ns, std::string(op_class_name(c))});
  std::sort(parts.rbegin(), parts.rend());
  std::string out;
  for (const auto& [ns, name] : parts)
    out += fmt::format("{}{} {:.1f}%", out.empty() ? "" : ", ", name, 100 * ns / t.total);
  return out.empty() ? "no compute op" : out;
}

// The ranges split: the annotation asked for (your_model's, --annotation), else the steps.
std::vector<EventIdx> ranges_of(const View& v, const FactOptions& o, std::string& what) {
  std::vector<EventIdx> ranges = o.annotation.empty() ? std::vector<EventIdx>{} : v.annotations(o.annotation);
  what = "'" + o.annotation + "'";
  if (!ranges.empty()) return ranges;
  what = "the steps";
  for (const StepWindow& w : v.m.steps()) ranges.push_back(w.event);
  return ranges;
}

std::string measure_cpu_classes(const View& v, const FactOptions& o, Fact& f) {
  const TraceModel& m = v.m;
  std::string what;
  const std::vector<EventIdx> ranges = ranges_of(v, o, what);
  // The rule as this trace reads it, set before any early return: the default pattern's text
  // names an annotation, which a trace without one does not have.
  f.pattern.text = "compute-bound on the CPU: the time outside compute ops < 2% of " + what;
  f.pattern.why =
      "on a CPU the arithmetic runs inside the compute ops; the rest is dispatch, allocation and "
      "the calling code";
  if (v.gpu)
    return "GPU trace: an op's CPU time there is dispatch and launch, not its arithmetic (overhead_bound "
           "compares the two sides)";
  ClassTimes t;
  for (EventIdx r : ranges) {
    t.total += static_cast<double>(m.at(r).dur_ns);
    attribute(m, r, t);
  }
  if (t.total <= 0) return "no ProfilerStep or annotation with a duration: nothing to split";
  f.data["range"] = what;
  json classes = json::object();
  for (const auto& [c, ns] : t.compute)
    classes[std::string(op_class_name(c))] = {{"share", r3(ns / t.total)},
                                              {"recognized_by", op_class_rule(c)}};
  const double overhead = (t.framework + t.outside) / t.total;
  f.data["steps"] = ranges.size();
  f.data["classes"] = classes;
  f.data["overhead_share"] = r3(overhead);
  f.data["framework_share"] = r3(t.framework / t.total);
  f.data["outside_ops_share"] = r3(t.outside / t.total);
  f.data["other_ops_share"] = r3(t.other / t.total);
  f.value = fmt::format(
      "compute ops {} of {}; not in a compute op {:.1f}% (dispatch, views and allocation "
      "{:.1f}%, between ops {:.1f}%); other ops {:.1f}%",
      share_list(t), what, 100 * overhead, 100 * t.framework / t.total, 100 * t.outside / t.total,
      100 * t.other / t.total);
  f.detail =
      "how each kind of work is recognized (by the aten op's name; an op counts whole, with its children):\n";
  for (const auto& [c, ns] : t.compute)
    f.detail += fmt::format("  {:<13} {}\n", op_class_name(c), op_class_rule(c));
  std::vector<std::pair<double, std::string>> others;
  for (const auto& [name, ns] : t.other_ops) others.push_back({ns, name});
  std::sort(others.rbegin(), others.rend());
  for (size_t i = 0; i < others.size() && i < 3; ++i)
    add_evidence(f, fmt::format("op with no class: {} {:.1f}% of {}", others[i].second,
                                100 * others[i].first / t.total, what));
  return kMeasured;
}
}  // namespace

// ---- CPU edition: where a step's time goes --------------------------------------------------
std::string measure_cpu_shares(const View& v, const FactOptions& o, Fact& f) {
  if (o.general) return measure_cpu_classes(v, o, f);
  const TraceModel& m = v.m;
  std::vector<double> gemm, add, rest, gemm_us;
  for (EventIdx a : v.annotations(o.annotation)) {
    const Event& ann = m.at(a);
    if (ann.dur_ns <= 0) continue;
    double t_gemm = 0, t_add = 0;
    std::vector<EventIdx> todo(m.children(a).begin(), m.children(a).end());
    while (!todo.empty()) {
      const EventIdx i = todo.back();
      todo.pop_back();
      const Event& e = m.at(i);
      if (is_gemm_op(e.name) || e.name == "aten::add") {  // their children are inside them
        (is_gemm_op(e.name) ? t_gemm : t_add) += static_cast<double>(e.dur_ns);
        continue;
      }
      for (EventIdx c : m.children(i)) todo.push_back(c);
    }
    const double step = static_cast<double>(ann.dur_ns);
    gemm.push_back(t_gemm / step);
    add.push_back(t_add / step);
    rest.push_back(std::max(0.0, 1 - (t_gemm + t_add) / step));
    gemm_us.push_back(t_gemm / 1000.0);
  }
  if (gemm.empty()) return fmt::format("no '{}' annotation in this trace", o.annotation);
  f.data["annotation"] = o.annotation;
  f.data["steps"] = gemm.size();
  f.data["gemm_share"] = r3(median(gemm));
  f.data["add_share"] = r3(median(add));
  f.data["overhead_share"] = r3(median(rest));
  f.data["gemm_median_us"] = r3(median(gemm_us));
  const Problem& p = o.problem;
  std::string rate;
  if (p.n > 0 && median(gemm_us) > 0) {
    const double gflop = 2.0 * p.batch * p.n * p.n * p.n / 1e9;
    f.data["gemm_gflop"] = r3(gflop);
    f.data["gemm_gflops"] = r3(gflop / (median(gemm_us) * 1e-6));
    rate = fmt::format("; GEMM op: 2*{}^3 = {:.3g} GFLOP in median {} = {:.3g} GFLOP/s", p.n, gflop,
                       us_str(median(gemm_us)), gflop / (median(gemm_us) * 1e-6));
  }
  f.value = fmt::format(
      "overhead {:.2f}%, GEMM op {:.1f}%, aten::add {:.1f}% of '{}' (medians over {} "
      "steps){}",
      100 * median(rest), 100 * median(gemm), 100 * median(add), o.annotation, gemm.size(), rate);
  return kMeasured;
}

// ---- CPU time per step, and where it goes ---------------------------------------------------
namespace {
struct StepCpu {
  int step = -1;
  double width_us = 0, annotation_us = 0;
  std::map<std::string, double> ops_us;  // the top-most aten ops under the annotation
};

// The first aten op on each path down from `root` (aten::matmul, not the aten::mm inside it):
// the ops the annotation's code called, with their CPU time (children included).
void top_aten_ops(const TraceModel& m, EventIdx root, std::map<std::string, double>& out_us) {
  std::vector<EventIdx> todo(m.children(root).begin(), m.children(root).end());
  while (!todo.empty()) {
    const EventIdx i = todo.back();
    todo.pop_back();
    const Event& e = m.at(i);
    if (e.kind == Kind::CpuOp && e.name.rfind("aten::", 0) == 0) {
      out_us[e.name] += us(e.dur_ns);
      continue;
    }
    for (EventIdx c : m.children(i)) todo.push_back(c);
  }
}

std::vector<StepCpu> steps_cpu(const View& v, const std::string& annotation) {
  const TraceModel& m = v.m;
  std::vector<StepCpu> out;
  for (const auto& s : m.steps()) out.push_back({s.number, us(s.end_ns - s.start_ns), 0, {}});
  if (annotation.empty()) {  // no annotation: the whole step, on the step's thread
    for (size_t k = 0; k < m.steps().size(); ++k) {
      out[k].annotation_us = out[k].width_us;
      top_aten_ops(m, m.steps()[k].event, out[k].ops_us);
    }
    return out;
  }
  for (EventIdx a : v.annotations(annotation)) {
    const int n = v.step_number(a);
    auto it = std::find_if(out.begin(), out.end(), [n](const StepCpu& s) { return s.step == n; });
    if (it == out.end()) continue;
    it->annotation_us += us(m.at(a).dur_ns);
    top_aten_ops(m, a, it->ops_us);
  }
  return out;
}

double median_width(const std::vector<StepCpu>& steps) {
  std::vector<double> w;
  for (const auto& s : steps) w.push_back(s.width_us);
  return median(w);
}

// Each op's first-step time against the median of its later steps: where a wide first step's
// extra time sits (chapter 01: in the first aten::matmul; chapter 02: in the first aten::add too).
void first_step_ops(const std::vector<StepCpu>& steps, Fact& f) {
  json over = json::object(), extra = json::object();
  std::string widest;
  double most = 0;
  for (const auto& [name, first] : steps.front().ops_us) {
    std::vector<double> rest;
    for (size_t k = 1; k < steps.size(); ++k)
      if (auto it = steps[k].ops_us.find(name); it != steps[k].ops_us.end()) rest.push_back(it->second);
    if (rest.empty() || median(rest) <= 0) continue;
    over[name] = r3(first / median(rest));
    extra[name] = r3(first - median(rest));
    if (first - median(rest) > most) {
      most = first - median(rest);
      widest = name;
    }
  }
  f.data["first_over_rest"] = over;
  f.data["first_extra_us"] = extra;
  f.data["first_extra_in"] = widest;
}

// Each top aten op's median time per step (over the steps it ran in).
json median_ops(const std::vector<StepCpu>& steps) {
  std::map<std::string, std::vector<double>> by_name;
  for (const auto& s : steps)
    for (const auto& [name, t] : s.ops_us) by_name[name].push_back(t);
  json out = json::object();
  for (const auto& [name, ts] : by_name) out[name] = r3(median(ts));
  return out;
}
}  // namespace

namespace {
// Why a step's thread spends its time outside its own aten ops, from what the trace shows:
// torch.compile's rows, autograd's backward on another thread, or neither (eager code on one
// thread: the Python or C++ between the ops, the optimizer's loop, the profiler).
std::string outside_ops_cause(const View& v, Fact& f) {
  const TraceModel& m = v.m;
  bool compiled = false;
  std::set<int64_t> step_threads, autograd_threads;
  for (const auto& st : m.steps()) step_threads.insert(m.at(st.event).tid);
  for (const Event& e : m.trace().events) {
    if (e.kind != Kind::CpuOp && e.kind != Kind::UserAnnotation && e.kind != Kind::Other) continue;
    if (!compile_marker(e.name).empty()) compiled = true;
    if (e.kind == Kind::CpuOp && e.name.rfind("autograd::engine::evaluate_function: ", 0) == 0 &&
        !step_threads.count(e.tid) && m.step_at(e.start_ns))
      autograd_threads.insert(e.tid);
  }
  f.data["compiled"] = compiled;
  f.data["autograd_threads"] = autograd_threads.size();
  std::vector<std::string> causes;
  if (!autograd_threads.empty()) {
    causes.push_back(
        "the backward runs on autograd's own thread, so the step's thread waits while its ops run there "
        "(that wait counts as time outside this thread's ops)");
    add_evidence(f, fmt::format("autograd::engine::evaluate_function events on thread {}, not the step's",
                                *autograd_threads.begin()));
  }
  if (compiled)
    causes.push_back("torch.compile's guards, cache lookup and compiled-region wrappers run around the ops");
  if (causes.empty())
    causes.push_back(
        "eager code on one thread: the code between the ops (Python or C++, an optimizer's loop, a runner) "
        "and the profiler's own bookkeeping cost more than the ops");
  return join(causes, "; ", "");
}
}  // namespace

std::string measure_step_cpu(const View& v, const FactOptions& o, Fact& f) {
  const auto steps = steps_cpu(v, o.annotation);
  if (steps.empty()) return "no ProfilerStep windows in this trace";
  const std::string label = o.annotation.empty() ? "the step" : "'" + o.annotation + "'";
  if (o.annotation.empty())
    f.pattern.text =
        "layers around the ops: >= half of the step (no annotation) is CPU time outside its aten ops";
  std::vector<double> anns, shares;
  json arr = json::array();
  for (const auto& s : steps) {
    double in_ops = 0;
    json ops = json::object();
    for (const auto& [name, t] : s.ops_us) {
      in_ops += t;
      ops[name] = r3(t);
    }
    if (s.annotation_us > 0) {
      anns.push_back(s.annotation_us);
      shares.push_back(std::clamp(1 - in_ops / s.annotation_us, 0.0, 1.0));
    }
    arr.push_back({{"step", s.step},
                   {"width_us", r3(s.width_us)},
                   {"annotation_us", r3(s.annotation_us)},
                   {"ops_us", ops}});
    add_evidence(f, fmt::format("ProfilerStep#{}: {} wide, {} {}, of it in aten ops {}", s.step,
                                us_str(s.width_us), label, us_str(s.annotation_us), us_str(in_ops)));
  }
  f.data["annotation"] = o.annotation;
  f.data["steps"] = arr;
  f.data["median_step_us"] = r3(median_width(steps));
  if (anns.empty()) return fmt::format("no '{}' annotation inside the steps", o.annotation);
  f.data["median_annotation_us"] = r3(median(anns));
  f.data["outside_ops_share"] = r3(median(shares));
  f.data["median_ops_us"] = median_ops(steps);
  if (steps.size() > 1) first_step_ops(steps, f);
  f.value =
      o.annotation.empty()
          ? fmt::format("median step {} on the CPU, {:.0f}% of it outside the aten ops of the step's thread",
                        us_str(median_width(steps)), 100 * median(shares))
          : fmt::format("median step {} on the CPU, {} {}, {:.0f}% of it outside its aten ops",
                        us_str(median_width(steps)), label, us_str(median(anns)), 100 * median(shares));
  // Read with the verdict (ViewFact::fn): why the time is outside the ops, in this trace.
  f.explanation = outside_ops_cause(v, f);
  if (o.reference) {
    const View rv(*o.reference);
    const auto ref = steps_cpu(rv, o.annotation);
    if (!ref.empty() && median_width(ref) > 0) {
      f.data["reference"] = o.reference_label;
      f.data["reference_median_step_us"] = r3(median_width(ref));
      f.data["over_reference"] = r3(median_width(steps) / median_width(ref));
      f.value += fmt::format("; {:.2f}x {}'s median step ({})", median_width(steps) / median_width(ref),
                             o.reference_label, us_str(median_width(ref)));
    }
  }
  return kMeasured;
}

// ---- table: hot loops -------------------------------------------------------------------
std::string measure_hot_ops(const View& v, const FactOptions&, Fact& f) {
  const TraceModel& m = v.m;
  std::map<std::string, int> calls;
  for (EventIdx i = 0; i < m.trace().events.size(); ++i) {
    const Event& e = m.at(i);
    if (e.kind != Kind::CpuOp && e.kind != Kind::Runtime && e.kind != Kind::Driver) continue;
    if (!m.steps().empty() && !m.step_at(e.start_ns)) continue;
    calls[e.name]++;
  }
  if (calls.empty()) return "no CPU ops in the window";
  const double steps = std::max<size_t>(1, m.steps().size());
  std::vector<std::pair<int, std::string>> ranked;
  for (const auto& [name, n] : calls) ranked.push_back({n, name});
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;  // most calls, then A-Z
  });
  json top = json::array();
  for (size_t i = 0; i < ranked.size() && i < 10; ++i) {
    top.push_back(
        {{"name", ranked[i].second}, {"calls", ranked[i].first}, {"per_step", r3(ranked[i].first / steps)}});
    if (i < 5)
      add_evidence(f, fmt::format("{}: {} calls ({:.1f} per step)", ranked[i].second, ranked[i].first,
                                  ranked[i].first / steps));
  }
  f.data["top"] = top;
  f.data["max_per_step"] = r3(ranked.front().first / steps);
  f.value = fmt::format("most called: {} x{} ({:.1f} per step)", ranked.front().second, ranked.front().first,
                        ranked.front().first / steps);
  return kMeasured;
}

// ---- torch.compile markers --------------------------------------------------------------
// Per step: how often each marker ran (a compiled call enters its region once), and which
// compiled graphs the steps called (the same "## Call CompiledFxGraph <hash> ##" every step: the
// cache served one graph).
namespace {
void compile_markers_per_step(const View& v, Fact& f) {
  const TraceModel& m = v.m;
  const auto& steps = m.steps();
  std::map<std::string, std::map<int, int>> counts;  // marker -> step -> calls
  std::set<std::string> graphs, regions;
  for (EventIdx i = 0; i < m.trace().events.size(); ++i) {
    const Event& e = m.at(i);
    const std::string_view marker = compile_marker(e.name);
    if (marker.empty() || e.kind == Kind::GpuUserAnnotation) continue;
    if (marker == "CompiledFxGraph") graphs.insert(e.name);
    if (marker == "Torch-Compiled Region") regions.insert(e.name);
    if (const StepWindow* s = m.step_at(e.start_ns)) counts[std::string(marker)][s->number]++;
  }
  json per_step = json::object(), once = json::array();
  for (const auto& [marker, by_step] : counts) {
    int calls = 0;
    bool each_once = by_step.size() == steps.size() && !steps.empty();
    for (const auto& [step, n] : by_step) {
      calls += n;
      each_once = each_once && n == 1;
    }
    per_step[marker] =
        r3(static_cast<double>(calls) / static_cast<double>(std::max<size_t>(1, steps.size())));
    if (each_once) once.push_back(marker);
  }
  f.data["steps"] = steps.size();
  f.data["per_step"] = per_step;
  f.data["once_every_step"] = once;
  f.data["graphs"] = json(std::vector<std::string>(graphs.begin(), graphs.end()));
  f.data["distinct_graphs"] = graphs.size();
  f.data["regions"] = json(std::vector<std::string>(regions.begin(), regions.end()));
  for (const auto& g : graphs) add_evidence(f, "compiled graph called: " + g);
}
}  // namespace

std::string measure_compile_markers(const View& v, const FactOptions&, Fact& f) {
  const TraceModel& m = v.m;
  std::map<std::string, int> found;
  bool cache_hit = false;
  for (EventIdx i = 0; i < m.trace().events.size(); ++i) {
    const std::string& n = m.at(i).name;
    const std::string_view marker = compile_marker(n);
    if (marker.empty()) continue;
    if (found[std::string(marker)]++ == 0) add_evidence(f, fmt::format("{} {}", n, v.at(m.at(i).start_ns)));
    cache_hit = cache_hit || marker == "CompiledFxGraph";
  }
  f.data["markers"] = found;
  f.data["compiled"] = !found.empty();
  f.data["cache_hit"] = cache_hit;
  compile_markers_per_step(v, f);
  f.value = found.empty() ? "no torch.compile markers (eager or C++ code)"
                          : "torch.compile rows: " + join(keys(found), ", ", "");
  return measured(f, found.empty() ? "the ops run eagerly"
                     : cache_hit   ? "compiled code ran from its cache (## Call CompiledFxGraph ## "
                                     "names the cached graph)"
                                   : "compiled region present");
}

// The registry's entries of this file's facts (fact_view.hpp: ViewFact): id, title, why a
// CPU-only trace has nothing to measure, the measurement, what the default pattern's verdict
// means, the teaching order, the default pattern, whether it is about a chapter's workload only,
// and the docs/cheatsheet.md rows that name it first.
const std::vector<ViewFact>& overhead_facts() {
  static const std::vector<ViewFact> kFacts = {
      {"overhead_bound",
       "Overhead-bound vs compute-bound",
       "",
       measure_overhead_bound,
       {"the CPU spends far longer issuing work than the GPU spends doing it: overhead-bound "
        "(bigger work or fewer launches help)",
        "the GPU's time is not small next to the CPU's: the device does real work (compute- or "
        "memory-bound), though CPU overhead may still show"},
       10,
       R"json({"text": "overhead-bound: Self CUDA total < 0.1 x Self CPU total",
 "why": "the cheatsheet's 'CPU total >> CUDA total'; 64x64 runs sit near 0.01",
 "all": [
      {"key": "/cuda_cpu_ratio", "op": "<", "value": 0.1, "scope": "gpu"}
 ]})json",
       false,
       {{"**Overhead-bound**",
         "Self CUDA total is a small fraction of Self CPU total",
         "the GPU row is mostly empty; short kernels far apart",
         "01, 02, 03",
         {}},
        {"**Compute-bound**",
         "Self CUDA total close to Self CPU total (below it: the final `cudaDeviceSynchronize` is CPU time); "
         "the GEMM row holds most of the CUDA time",
         "the GPU row is nearly solid from its first kernel on",
         "04",
         {"kernel_durations"}}}},
      {"hot_ops",
       "Calls per step (hot loops)",
       "",
       measure_hot_ops,
       {"a row with many calls per step is a hot loop: its per-call overhead adds up",
        "every op runs a handful of times per step"},
       130,
       R"json({"text": "hot loop: some op is called >= 10 times per step",
 "why": "the workload itself calls each op once or a few times per step",
 "all": [
      {"key": "/max_per_step", "op": ">=", "value": 10}
 ]})json",
       false,
       {}},
      {"compile_markers",
       "torch.compile markers",
       "",
       measure_compile_markers,
       {},
       140,
       R"json({"text": "compiled: TorchDynamo / Torch-Compiled Region / CompiledFxGraph rows appear",
 "why": "these rows exist only when torch.compile wrapped the code",
 "all": [
      {"key": "/compiled", "op": "==", "value": true}
 ]})json",
       false,
       {{"**torch.compile at work**",
         "`TorchDynamo Cache Lookup`, `Torch-Compiled Region`, `AOTDispatcher Runtime Wrapper Prologue`, `## "
         "Call CompiledFxGraph <hash> ##` rows, once per step each (`CompiledFunction` when training)",
         "compiled regions wrapping `aten::addmm`; the same graph hash in every step: a cache hit",
         "05",
         {}}}},
      {"step_cpu",
       "CPU time per step, and where it goes",
       "",
       measure_step_cpu,
       // The cause follows from what the trace shows (measure_step_cpu: outside_ops_cause).
       {"most of the step's CPU time is spent outside its aten ops",
        "the step's CPU time is mostly its aten ops and their launches"},
       150,
       R"json({"text": "layers around the ops: >= half of '{annotation}' is CPU time outside its aten ops",
 "why": "eager code spends its annotation in the aten ops it calls; torch.compile's cache lookup, compiled region and wrappers (or a runner) add CPU time around one op",
 "all": [
      {"key": "/outside_ops_share", "op": ">=", "value": 0.5}
 ]})json",
       false,
       {{"**Layers around the ops**",
         "the annotation's CPU total well above its aten ops' totals (torch.compile's rows, a runner's "
         "calls)",
         "bars under the annotation that are not `aten::` ops take most of its width",
         "05",
         {}}}},
      {"cpu_shares",
       "Where a CPU step's time goes",
       "",
       measure_cpu_shares,
       {"the arithmetic is the step: the run is compute-bound",
        "a visible share of the step is dispatch and allocation: the work is small for the per-call "
        "overhead",
        "the arithmetic is the step: the run is compute-bound",
        "a visible share of the step runs no compute op: dispatch, allocation and the code between "
        "the ops; bigger work per op amortizes it"},
       170,
       R"json({"text": "compute-bound on the CPU: '{annotation}' outside its GEMM and add ops < 2% of it",
 "why": "on a CPU the arithmetic runs inside the GEMM op and aten::add; the rest is dispatcher and allocation overhead",
 "all": [
      {"key": "/overhead_share", "op": "<", "value": 0.02}
 ]})json",
       false,
       {{"**CPU edition: where a step goes**",
         "the GEMM op's and `aten::add`'s CPU total next to the annotation's; on your own code, every "
         "compute op's (convolution, normalization, pooling, reduction, attention, elementwise, copies: "
         "`classify_op` in `workbook/rules.hpp` says how each is recognized)",
         "on the CPU row the GEMM op's bar fills almost all of `matmul_add`",
         "04",
         {}}}}};
  return kFacts;
}

}  // namespace wb
