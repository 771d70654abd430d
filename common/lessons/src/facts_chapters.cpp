// Lesson facts that chapters 02-04 used to compute in their own headers: the GPU's idle time
// between the kernels of each step (02), where a CPU step's time goes (04, CPU edition), and
// what a batch axis adds to the dispatch chain compared with the 2-D run (03); and the CPU time
// per step with the share outside the aten ops (05: what torch.compile's layers cost).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lessons_detail.hpp"
#include "workbook/rules.hpp"

namespace wb {

using nlohmann::json;
using namespace lessons_detail;

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
  return measured(f, unusual.empty() ? "the GPU idles about as long in every step"
                                     : "one step's kernels wait longer for each other: look for a profiler "
                                       "event (Activity Buffer Request) or one-time work in that step");
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
  if (v.gpu)
    return "GPU trace: an op's CPU time there is dispatch and launch, not its arithmetic (overhead_bound "
           "compares the two sides)";
  ClassTimes t;
  std::string what;
  const std::vector<EventIdx> ranges = ranges_of(v, o, what);
  for (EventIdx r : ranges) {
    t.total += static_cast<double>(m.at(r).dur_ns);
    attribute(m, r, t);
  }
  if (t.total <= 0) return "no ProfilerStep or annotation with a duration: nothing to split";
  f.data["range"] = what;
  f.pattern.text = "compute-bound on the CPU: the time outside compute ops < 2% of " + what;
  f.pattern.why =
      "on a CPU the arithmetic runs inside the compute ops; the rest is dispatch, allocation and "
      "the calling code";
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
  return measured(f, overhead < 0.02
                         ? "the arithmetic is the step: the run is compute-bound"
                         : "a visible share of the step runs no compute op: dispatch, allocation and "
                           "the code between the ops; bigger work per op amortizes it");
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
  return measured(f, median(rest) < 0.02 ? "the arithmetic is the step: the run is compute-bound"
                                         : "a visible share of the step is dispatch and allocation: "
                                           "the work is small for the per-call overhead");
}

// ---- a batch axis in the dispatch chain: this run vs the 2-D reference ----------------------
namespace {
struct Chain {
  int steps = 0;
  std::string gemm_op;  // the GEMM op aten::matmul calls
  double ops = 0;       // aten ops under the annotation, per step
  double shape_us = 0;  // median time aten::matmul spends outside its GEMM op
  double gemm_kernels = 0;
  std::array<int, 3> grid{0, 0, 0};
  long long blocks() const { return 1LL * grid[0] * grid[1] * grid[2]; }
};
Chain chain_of(const View& v, const std::string& annotation) {
  const TraceModel& m = v.m;
  Chain c;
  std::vector<double> shape;
  int ops = 0, kernels = 0;
  for (EventIdx a : v.annotations(annotation)) {
    c.steps++;
    std::vector<EventIdx> todo(m.children(a).begin(), m.children(a).end());
    while (!todo.empty()) {
      const EventIdx i = todo.back();
      todo.pop_back();
      const Event& e = m.at(i);
      for (EventIdx ch : m.children(i)) todo.push_back(ch);
      if (e.kind == Kind::CpuOp) ops++;
      if (e.name != "aten::matmul") continue;
      double inner = 0;
      for (EventIdx g : m.children(i)) {
        if (!is_gemm_op(m.at(g).name)) continue;
        inner += us(m.at(g).dur_ns);
        c.gemm_op = m.at(g).name;
        std::vector<EventIdx> calls(m.children(g).begin(), m.children(g).end());
        while (!calls.empty()) {
          const EventIdx r = calls.back();
          calls.pop_back();
          for (EventIdx cc : m.children(r)) calls.push_back(cc);
          for (EventIdx d : m.launched(r)) {
            if (classify(m.at(d)) != KernelClass::Gemm) continue;
            kernels++;
            if (c.grid[0] == 0 && m.at(d).kernel) c.grid = m.at(d).kernel->grid;
          }
        }
      }
      shape.push_back(us(e.dur_ns) - inner);
    }
  }
  if (c.steps == 0) return c;
  c.ops = static_cast<double>(ops) / c.steps;
  c.shape_us = median(shape);
  c.gemm_kernels = static_cast<double>(kernels) / c.steps;
  return c;
}
json chain_json(const Chain& c) {
  return {{"gemm_op", c.gemm_op},
          {"ops_per_step", r3(c.ops)},
          {"outside_gemm_us", r3(c.shape_us)},
          {"gemm_kernels_per_step", r3(c.gemm_kernels)},
          {"gemm_grid", c.grid},
          {"gemm_blocks", c.blocks()},
          {"steps", c.steps}};
}
}  // namespace

std::string measure_batch_chain(const View& v, const FactOptions& o, Fact& f) {
  if (!o.reference) return "needs the 2-D run to compare with (FactOptions::reference)";
  const View ref(*o.reference);
  const Chain b = chain_of(v, o.annotation), flat = chain_of(ref, o.annotation);
  if (b.steps == 0 || flat.steps == 0)
    return fmt::format("no '{}' annotation in {}", o.annotation,
                       b.steps == 0 ? "this run" : o.reference_label);
  f.data["batch"] = o.problem.batch;
  f.data["batched"] = chain_json(b);
  f.data["flat"] = chain_json(flat);
  f.data["ops_ratio"] = flat.ops > 0 ? json(r3(b.ops / flat.ops)) : json(nullptr);
  f.data["outside_gemm_extra_us"] = r3(b.shape_us - flat.shape_us);
  if (b.blocks() > 0 && flat.blocks() > 0)
    f.data["blocks_ratio"] = r3(static_cast<double>(b.blocks()) / static_cast<double>(flat.blocks()));
  f.detail = fmt::format("{:<34} {:>14} {:>14}\n", "per step", o.reference_label, "batched");
  auto row = [&](const std::string& what, const std::string& a, const std::string& c) {
    f.detail += fmt::format("{:<34} {:>14} {:>14}\n", what, a, c);
  };
  row("aten::matmul calls", flat.gemm_op.empty() ? "-" : flat.gemm_op, b.gemm_op.empty() ? "-" : b.gemm_op);
  row("aten ops under the annotation", fmt::format("{:.3g}", flat.ops), fmt::format("{:.3g}", b.ops));
  row("aten::matmul outside its GEMM op", us_str(flat.shape_us), us_str(b.shape_us));
  if (b.blocks() > 0 || flat.blocks() > 0) {
    row("GEMM kernels launched", fmt::format("{:.3g}", flat.gemm_kernels),
        fmt::format("{:.3g}", b.gemm_kernels));
    row("GEMM grid", dims(flat.grid), dims(b.grid));
  }
  f.value =
      fmt::format("{}: {} with {:.3g} ops per step; {}: {} with {:.3g} ({:.2g}x)", o.reference_label,
                  flat.gemm_op.empty() ? "no GEMM op" : flat.gemm_op, flat.ops, "batched",
                  b.gemm_op.empty() ? "no GEMM op" : b.gemm_op, b.ops, flat.ops > 0 ? b.ops / flat.ops : 0);
  add_evidence(f, fmt::format("matmul spends {} outside its GEMM op batched vs {} in the 2-D run",
                              us_str(b.shape_us), us_str(flat.shape_us)));
  if (b.blocks() > 0 && flat.blocks() > 0)
    add_evidence(f, fmt::format("GEMM grid {} = {} blocks vs {} = {} blocks, {:.3g} launch(es) per step",
                                dims(b.grid), b.blocks(), dims(flat.grid), flat.blocks(), b.gemm_kernels));
  return measured(f,
                  "a batch axis makes matmul reshape/expand its operands and call bmm: more CPU ops "
                  "per step, one launch for all the matrices");
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

std::string measure_step_cpu(const View& v, const FactOptions& o, Fact& f) {
  const auto steps = steps_cpu(v, o.annotation);
  if (steps.empty()) return "no ProfilerStep windows in this trace";
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
    add_evidence(f, fmt::format("ProfilerStep#{}: {} wide, '{}' {}, of it in aten ops {}", s.step,
                                us_str(s.width_us), o.annotation, us_str(s.annotation_us), us_str(in_ops)));
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
      fmt::format("median step {} on the CPU, '{}' {}, {:.0f}% of it outside its aten ops",
                  us_str(median_width(steps)), o.annotation, us_str(median(anns)), 100 * median(shares));
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
  return measured(f, median(shares) >= 0.5
                         ? "most of the step's CPU time is spent outside its aten ops: the layers around "
                           "them (torch.compile's guards and wrappers, a runner) cost more than the ops"
                         : "the step's CPU time is mostly its aten ops and their launches");
}

}  // namespace wb
