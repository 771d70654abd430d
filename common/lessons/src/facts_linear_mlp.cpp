// Part 2's lesson facts (chapters 06_linear and 07_geglu_mlp): what nn.Linear and a GeGLU MLP
// teach about reading a trace.
//
//   view_ops           metadata ops (t, transpose, view, ...) run on the CPU and launch nothing
//   work_per_step      which aten ops and how many kernels (by class) each step runs
//   gemm_tiles         GEMMs with the same FLOPs picking different kernels (tiles), TFLOP/s each
//   pointwise_traffic  the bytes the pointwise stage moves, in units of the [m, n] intermediate
//
// Registered at the end of this file (linear_mlp_facts()); judged by the chapter specs in the
// chapters' lessons.json. Classification comes from workbook/rules.hpp, medians from workbook/stats.hpp.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "fact_view.hpp"
#include "workbook/cupti_census.hpp"
#include "workbook/lessons.hpp"
#include "workbook/peaks.hpp"

namespace wb {

using nlohmann::json;
using namespace lessons_detail;

namespace {

// Active steps (at least 1, so a trace without ProfilerStep ranges counts as one step).
double step_count(const TraceModel& m) { return static_cast<double>(std::max<size_t>(1, m.steps().size())); }

// CPU ops inside the profiled steps (all CPU ops when the trace has no steps).
bool in_steps(const TraceModel& m, const Event& e) {
  return e.kind == Kind::CpuOp && (m.steps().empty() || m.step_at(e.start_ns) != nullptr);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The CPU's side of the same count: launch, copy and memset calls per step (the trace's runtime
// and driver rows, medians over the steps): one cudaGraphLaunch replaces a launch per kernel.
void launch_calls_per_step(const TraceModel& m, Fact& f) {
  const std::vector<ApiCounts> steps = trace_api_counts(m);
  const ClassCounts c = median_step(steps);
  f.data["kernel_launches_per_step"] = c[ApiClass::KernelLaunch];
  f.data["graph_launches_per_step"] = c[ApiClass::GraphLaunch];
  f.data["memcpy_calls_per_step"] = c[ApiClass::Memcpy];
  f.data["memset_calls_per_step"] = c[ApiClass::Memset];
  std::set<std::string> names;
  for (const auto& s : steps)
    for (const auto& [name, n] : s) names.insert(name);
  json calls = json::object();
  for (const auto& name : names) calls[name] = median_calls(steps, name);
  f.data["calls_per_step"] = calls;
}

}  // namespace

// ---- views launch nothing ----------------------------------------------------------------
std::string measure_view_ops(const View& v, const FactOptions&, Fact& f) {
  const TraceModel& m = v.m;
  std::map<std::string, int> views, device_ops;
  int64_t view_device_ns = 0;
  int view_kernels = 0;
  for (EventIdx i = 0; i < m.trace().events.size(); ++i) {
    const Event& e = m.at(i);
    if (in_steps(m, e) && is_view_op(e.name)) views[e.name]++;
  }
  for (EventIdx d : v.device) {
    const auto op = m.op_of(d);
    if (!op) continue;
    const std::string& name = m.at(*op).name;
    if (is_view_op(name)) {
      view_device_ns += m.at(d).dur_ns;
      ++view_kernels;
      add_evidence(f, fmt::format("{} launched {} in {}", name, short_name(m.at(d).name), v.step_label(d)));
    } else {
      device_ops[name]++;
    }
  }
  const double steps = step_count(m);
  int calls = 0;
  json names = json::array();
  for (const auto& [name, n] : views) {
    calls += n;
    names.push_back(name);
    add_evidence(f, fmt::format("{}: {} calls ({:.1f} per step)", name, n, n / steps));
  }
  f.data["view_ops"] = names;
  f.data["view_calls"] = calls;
  f.data["view_calls_per_step"] = r3(calls / steps);
  f.data["view_kernels"] = view_kernels;
  f.data["view_device_us"] = r3(us(view_device_ns));
  f.data["ops_with_device_work"] = keys(device_ops);
  if (v.gpu)
    f.value = fmt::format("{} view calls ({:.1f} per step: {}), {} device time; device work comes from {}",
                          calls, calls / steps, join(keys(views), ", ", "none"), us_str(us(view_device_ns)),
                          join(keys(device_ops), ", ", "no op"));
  else
    f.value = fmt::format("{} view calls ({:.1f} per step: {}); CPU-only trace", calls, calls / steps,
                          join(keys(views), ", ", "none"));
  return measured(f, view_kernels == 0 ? "the views only rewrite metadata on the CPU: the table's CUDA "
                                         "columns for them are 0 and the GPU lane has nothing under them"
                                       : "a view op launched device work: something copied (a non-contiguous "
                                         "reshape becomes a real copy)");
}

// ---- ops and kernels per step ------------------------------------------------------------
std::string measure_work_per_step(const View& v, const FactOptions&, Fact& f) {
  const TraceModel& m = v.m;
  const double steps = step_count(m);
  // Every aten op the steps ran, by calls; one the trace never ran reads as 0 in a pattern
  // ("zero_when_absent"), so "no aten::add" is a condition on a number, not on a missing key.
  std::map<std::string, int> ops;
  for (EventIdx i = 0; i < m.trace().events.size(); ++i)
    if (in_steps(m, m.at(i)) && m.at(i).name.rfind("aten::", 0) == 0) ops[m.at(i).name]++;
  json ops_per_step = json::object();
  for (const auto& [name, n] : ops) ops_per_step[name] = r3(n / steps);
  f.data["steps"] = static_cast<int>(steps);
  f.data["ops"] = ops_per_step;
  f.data["zero_when_absent"] = json::array({"/ops"});
  int gemm_ops = 0;
  for (const auto& [name, n] : ops)
    if (is_gemm_op(name)) gemm_ops += n;
  f.data["gemm_ops_per_step"] = r3(gemm_ops / steps);
  std::vector<std::pair<int, std::string>> most;
  for (const auto& [name, n] : ops) most.push_back({-n, name});
  std::sort(most.begin(), most.end());
  std::vector<std::string> top;
  for (size_t k = 0; k < most.size() && k < 4; ++k)
    top.push_back(fmt::format("{} {:.1f}", most[k].second, -most[k].first / steps));
  add_evidence(f, fmt::format("GEMM ops: {:.1f} per step; the most called: {}", gemm_ops / steps,
                              join(top, ", ", "no aten op")));
  if (!v.gpu) {
    f.value = fmt::format("{:.1f} GEMM ops per step; CPU-only trace (no kernels)", gemm_ops / steps);
    f.explanation = "the CPU lane shows which ops run; on a GPU each would launch its kernel";
    // Measured: the op counts are real. The default pattern's condition needs a GPU and is skipped.
    return kMeasured;
  }
  std::map<int, int> kernels_in_step;  // step -> kernels
  std::map<KClass, int> by_class;
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (EventIdx d : v.device) {
    const KClass k = v.kclass(d);
    by_class[k]++;
    if (m.at(d).kind != Kind::Kernel) continue;
    kernels_in_step[v.step_number(d)]++;
    if (seen.insert(m.at(d).name).second) {
      names.push_back(m.at(d).name);
      add_evidence(f, fmt::format("{} ({}) in {}", short_name(m.at(d).name), class_name(k), v.step_label(d)));
    }
  }
  int kernels = 0;
  std::set<int> distinct_counts;
  for (const auto& [step, n] : kernels_in_step) {
    kernels += n;
    distinct_counts.insert(n);
  }
  f.data["kernels_per_step"] = r3(kernels / steps);
  f.data["gemm_kernels_per_step"] = r3(by_class[KClass::Gemm] / steps);
  f.data["elementwise_kernels_per_step"] = r3(by_class[KClass::Elementwise] / steps);
  f.data["other_kernels_per_step"] = r3((by_class[KClass::Other] + by_class[KClass::Reduction]) / steps);
  f.data["memsets_per_step"] = r3(by_class[KClass::Memset] / steps);
  f.data["memcpys_per_step"] = r3(by_class[KClass::Memcpy] / steps);
  f.data["kernel_names"] = names;
  f.data["uniform_kernels"] = distinct_counts.size() <= 1;
  // The median elementwise kernel, in us: a few KB each in a decode step, timed by their launch
  // on the GPU, not by their bytes.
  std::vector<double> ew_us;
  for (EventIdx d : v.device)
    if (m.at(d).kind == Kind::Kernel && v.kclass(d) == KClass::Elementwise)
      ew_us.push_back(us(m.at(d).dur_ns));
  if (!ew_us.empty()) f.data["elementwise_median_us"] = r3(median(ew_us));
  // Kernels whose launch call is not in the trace: launched before the window opened (the
  // schedule's warmup step, a warm-up CUDA graph replay) and still running when it opened. A
  // table counts them; no step launched them, so the counts above leave them out.
  int unlaunched = 0, before_window = 0;
  std::map<std::string, int> unlaunched_by_class;  // "elementwise" -> kernels
  for (EventIdx i = 0; i < m.trace().events.size(); ++i) {
    const Event& e = m.at(i);
    if (e.kind != Kind::Kernel || m.launcher(i)) continue;
    ++unlaunched;
    if (!m.steps().empty() && e.start_ns < m.steps().front().start_ns) ++before_window;
    unlaunched_by_class[std::string(class_name(v.kclass(i)))]++;
  }
  f.data["unlaunched_kernels"] = unlaunched;
  f.data["unlaunched_before_window"] = before_window;
  f.data["unlaunched_by_class"] = unlaunched_by_class;
  launch_calls_per_step(m, f);
  f.value = fmt::format(
      "{:.1f} kernels per step: {:.1f} GEMM + {:.1f} elementwise + {:.1f} other; "
      "{:.1f} memsets; {:.1f} GEMM ops on the CPU lane",
      kernels / steps, by_class[KClass::Gemm] / steps, by_class[KClass::Elementwise] / steps,
      (by_class[KClass::Other] + by_class[KClass::Reduction]) / steps, by_class[KClass::Memset] / steps,
      gemm_ops / steps);
  return measured(f, "count first, then read the names: every kernel in a step is one trip through HBM");
}

// ---- same FLOPs, different tiles ---------------------------------------------------------
std::string measure_gemm_tiles(const View& v, const FactOptions& o, Fact& f) {
  const TraceModel& m = v.m;
  const Problem& p = o.problem;
  if (p.m <= 0 || p.k <= 0 || p.n <= 0) return "the GEMM shape (m x k @ k x n) is unknown for this run";
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> durs;
  for (EventIdx d : v.device) {
    if (v.kclass(d) != KClass::Gemm || m.at(d).kind != Kind::Kernel) continue;
    auto [it, fresh] = durs.try_emplace(m.at(d).name);
    if (fresh) order.push_back(m.at(d).name);
    it->second.push_back(us(m.at(d).dur_ns));
  }
  if (order.empty()) return "no GEMM kernel in the profiled steps";
  // Every GEMM of the workload has the same m*k*n: gate/up are (m,k)@(k,n), down is (m,n)@(n,k).
  const double flop = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.k) * static_cast<double>(p.n);
  const DevicePeak* peak = find_peak(v.device_name());
  const double peak_tf = peak ? peak_tflops(*peak, p.dtype_bytes) : 0;
  const double steps = step_count(m);
  json gemms = json::array();
  json per_step_counts = json::array();
  double min_pct = 1e9, min_tf = 1e18, max_tf = 0;
  std::vector<std::string> lines;
  for (const auto& name : order) {
    const double med = median(durs[name]);
    const double tf = med > 0 ? flop / (med * 1e-6) / 1e12 : 0;
    json g = {{"kernel", name},
              {"per_step", r3(durs[name].size() / steps)},
              {"median_us", r3(med)},
              {"tflops", r3(tf)}};
    if (peak_tf > 0) {
      g["pct_of_peak"] = r3(100 * tf / peak_tf);
      min_pct = std::min(min_pct, 100 * tf / peak_tf);
    }
    min_tf = std::min(min_tf, tf);
    max_tf = std::max(max_tf, tf);
    gemms.push_back(g);
    per_step_counts.push_back(r3(durs[name].size() / steps));
    lines.push_back(fmt::format("{} x{:.0f}/step {} = {:.0f} TFLOP/s", short_name(name),
                                durs[name].size() / steps, us_str(med), tf));
    add_evidence(
        f, fmt::format("{}: {} samples, median {}: 2*{}*{}*{} flop -> {:.1f} TFLOP/s{}", name,
                       durs[name].size(), us_str(med), p.m, p.k, p.n, tf,
                       peak_tf > 0 ? fmt::format(" ({:.0f}% of {:.0f})", 100 * tf / peak_tf, peak_tf) : ""));
  }
  f.data["gflop_each"] = r3(flop / 1e9);
  f.data["gemms"] = gemms;
  f.data["gemm_kernels"] = order;
  f.data["distinct_kernels"] = static_cast<int>(order.size());
  f.data["per_step_counts"] = per_step_counts;
  f.data["fastest_over_slowest"] = r3(min_tf > 0 ? max_tf / min_tf : 0);
  if (peak_tf > 0) f.data["min_pct_of_peak"] = r3(min_pct);
  f.value = fmt::format("{:.1f} GFLOP each: {}", flop / 1e9, join(lines, "; ", ""));
  if (peak_tf <= 0)
    return fmt::format("unknown peak for '{}' (common/core/data/device_peaks.json lists the known ones)",
                       v.device_name());
  return measured(f, order.size() > 1 ? "same FLOPs, different kernels: cuBLAS picks the tile from the shape "
                                        "(the output's N and the reduction's K), so the times differ"
                                      : "one GEMM kernel for every product in the step");
}

// ---- the pointwise stage's bytes -----------------------------------------------------------
std::string measure_pointwise_traffic(const View& v, const FactOptions& o, Fact& f) {
  const TraceModel& m = v.m;
  const Problem& p = o.problem;
  const double inter = static_cast<double>(p.m) * static_cast<double>(p.n) * p.dtype_bytes;
  if (p.m > 0 && p.n > 0) f.data["intermediate_mb"] = r3(inter / 1e6);
  if (!v.gpu)
    return fmt::format(
        "CPU-only trace: no pointwise kernels (napkin: gelu + "
        "mul move 5 x {:.1f} MB, a fused kernel 3 x)",
        inter / 1e6);
  if (p.m <= 0 || p.n <= 0) return "the intermediate's shape (m x n) is unknown";
  // Each pointwise kernel's role, from its name: how many [m, n] tensors it reads and writes.
  //   fused gelu*mul (Inductor's triton_poi_..gelu..mul.., this workbook's geglu kernel): g, u -> y: 3
  //   gelu alone: g -> h: 2      mul alone: h, u -> y: 3      anything else: unknown (not counted)
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> durs;
  for (EventIdx d : v.device) {
    if (v.kclass(d) != KClass::Elementwise) continue;
    auto [it, fresh] = durs.try_emplace(m.at(d).name);
    if (fresh) order.push_back(m.at(d).name);
    it->second.push_back(us(m.at(d).dur_ns));
  }
  if (order.empty()) return "no pointwise kernel in the profiled steps";
  const double steps = step_count(m);
  const DevicePeak* peak = find_peak(v.device_name());
  json kernels = json::array();
  double tensors = 0, time_us = 0, per_step = 0;
  int unknown = 0;
  for (const auto& name : order) {
    const std::string n = lower(name);
    const bool gelu = n.find("gelu") != std::string::npos, mul = n.find("mul") != std::string::npos;
    const bool fused = (gelu && mul) || n.find("geglu") != std::string::npos;
    const std::string role = fused ? "fused gelu*mul" : gelu ? "gelu" : mul ? "mul" : "unknown";
    const double t = fused ? 3 : gelu ? 2 : mul ? 3 : 0;
    const double count = durs[name].size() / steps, med = median(durs[name]);
    json k = {{"kernel", name}, {"role", role}, {"per_step", r3(count)}, {"median_us", r3(med)}};
    if (t > 0) {
      tensors += t * count;
      time_us += med * count;
      k["mb"] = r3(t * inter / 1e6);
      k["tbps"] = r3(med > 0 ? t * inter / (med * 1e-6) / 1e12 : 0);
    } else {
      ++unknown;
    }
    per_step += count;
    kernels.push_back(k);
    add_evidence(f, fmt::format("{} ({}): median {}{}", short_name(name), role, us_str(med),
                                t > 0 ? fmt::format(", {:.0f} x {:.1f} MB = {:.1f} MB", t, inter / 1e6,
                                                    t * inter / 1e6)
                                      : std::string(", not a gelu or mul: not counted")));
  }
  const double bytes = tensors * inter;
  f.data["kernels"] = kernels;
  f.data["pointwise_kernels_per_step"] = r3(per_step);
  f.data["unknown_kernels"] = unknown;
  f.data["traffic_in_intermediates"] = r3(tensors);
  f.data["mb_per_step"] = r3(bytes / 1e6);
  f.data["us_per_step"] = r3(time_us);
  if (time_us > 0) f.data["tbps"] = r3(bytes / (time_us * 1e-6) / 1e12);
  f.value = fmt::format("{:.1f} pointwise kernels per step move {:.0f} x {:.1f} MB = {:.1f} MB in {}",
                        per_step, tensors, inter / 1e6, bytes / 1e6, us_str(time_us));
  if (peak && time_us > 0) {
    const double tbps = bytes / (time_us * 1e-6) / 1e12;
    f.data["pct_of_hbm"] = r3(100 * tbps / peak->mem_tbps);
    f.data["ideal_us"] = r3(bytes / (peak->mem_tbps * 1e12) * 1e6);
    f.value += fmt::format(" = {:.2f} TB/s, {:.0f}% of {}'s {:.2f} TB/s (ideal {})", tbps,
                           100 * tbps / peak->mem_tbps, peak->model, peak->mem_tbps,
                           us_str(bytes / (peak->mem_tbps * 1e12) * 1e6));
  }
  f.explanation = tensors >= 5   ? "eager: gelu writes the intermediate to HBM and mul reads it back"
                  : tensors >= 3 ? "fused: g and u are read once and only y is written; the "
                                   "intermediate never reaches HBM"
                                 : "no gelu/mul stage recognised in the pointwise kernels";
  if (!peak) return fmt::format("unknown peak for '{}'", v.device_name());
  return kMeasured;
}

// The registry's entries of this file's facts (fact_view.hpp: ViewFact): id, title, why a
// CPU-only trace has nothing to measure, the measurement, what the default pattern's verdict
// means, the teaching order, the default pattern, whether it is about a chapter's workload only,
// and the docs/cheatsheet.md rows that name it first.
const std::vector<ViewFact>& linear_mlp_facts() {
  static const std::vector<ViewFact> kFacts = {
      {"view_ops",
       "Metadata ops (views) launch nothing",
       "",
       measure_view_ops,
       {},
       190,
       R"json({"text": "views (t, transpose, as_strided, view, reshape, _unsafe_view) have zero device time",
 "why": "a view rewrites shape and strides on the CPU; no kernel reads the data",
 "all": [
      {"key": "/view_device_us", "op": "==", "value": 0, "scope": "gpu"}
 ]})json",
       false,
       {{"**Views launch nothing**",
         "`aten::t`, `aten::transpose`, `aten::_unsafe_view` rows with Self CPU time and no CUDA time",
         "CPU bars with no arrow down to a kernel",
         "06, 07",
         {}}}},
      {"work_per_step",
       "Ops and kernels per step",
       "",
       measure_work_per_step,
       {},
       200,
       R"json({"text": "every step launches the same number of kernels",
 "why": "a warm, steady loop repeats the same work; an extra kernel in one step is one-time work (a cold call, a workspace memset)",
 "all": [
      {"key": "/uniform_kernels", "op": "==", "value": true, "scope": "gpu"}
 ]})json",
       false,
       {{"**Count the work per step**",
         "a kernel row's `# of Calls` over the steps is its count per step; GEMM ops vs GEMM kernels",
         "the same kernels, in the same order, under every `ProfilerStep`",
         "06, 07",
         {}}}},
      {"gemm_tiles",
       "GEMM kernels: same FLOPs, different tiles",
       "CPU-only trace: no GEMM kernels to compare",
       measure_gemm_tiles,
       {},
       210,
       R"json({"text": "each GEMM kernel reaches >= 30% of the device's peak",
 "why": "a GEMM large enough to fill the chip runs near its datasheet rate",
 "all": [
      {"key": "/min_pct_of_peak", "op": ">=", "value": 30, "scope": "gpu"}
 ]})json",
       false,
       {{"**Same FLOPs, different tiles**",
         "two GEMM kernel rows (`nvjet_...` on Hopper) for products of equal FLOPs, with different `CUDA "
         "time avg`",
         "GEMM bars of different widths in one step; the names differ in their tile",
         "07",
         {}}}},
      {"pointwise_traffic",
       "Pointwise traffic: gelu + mul vs one fused kernel",
       "",
       measure_pointwise_traffic,
       {},
       220,
       R"json({"text": "the pointwise stage runs at >= 50% of memory bandwidth",
 "why": "pointwise kernels are memory-bound: their time is their bytes over bandwidth",
 "all": [
      {"key": "/pct_of_hbm", "op": ">=", "value": 50, "scope": "gpu"}
 ]})json",
       true,
       {{"**Pointwise is memory-bound**",
         "eager: a `gelu` and a `mul` kernel row; fused: one kernel row, less CUDA time",
         "two short kernels after the GEMMs become one; time follows bytes over HBM bandwidth",
         "07",
         {}}}}};
  return kFacts;
}

}  // namespace wb
