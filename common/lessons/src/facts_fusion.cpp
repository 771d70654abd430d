// Chapter 07's fusion facts: does fusing gelu*mul pay, judged on measured kernel time, not on a
// kernel's name.
//
//   fusion_pays            the step's pointwise device time against the eager variant's gelu + mul
//                          from the same run (FactOptions::reference: eager's trace), with the GEMMs
//                          of both traces as the clock check
//   pointwise_bytes_bound  the most [m, n] intermediates HBM could have moved in the step's
//                          pointwise device time at the device's datasheet bandwidth: a kernel
//                          faster than 5 intermediates' worth cannot have made eager's round trip
//   runner_waits           the CPU time a step spends waiting in cudaEventQuery/cudaEventSynchronize
//                          (the AOTI runner checks on its previous run before each run) and the GPU
//                          idle before each step's first kernel
//
// None has a threshold of its own: the patterns are in chapters/07_geglu_mlp/lessons.json.
// Registered at the end of this file (fusion_facts()); chapter-only (ViewFact::chapter_only).
#include <fmt/format.h>

#include <map>

#include "fact_view.hpp"
#include "workbook/lessons.hpp"
#include "workbook/peaks.hpp"

namespace wb {

using nlohmann::json;
using namespace lessons_detail;

namespace {

// Device time per step of one class of kernel: the median over the profiled steps of the sum
// of that class's kernel durations in each step (a kernel counts in the step that launched it).
struct PerStep {
  double us = 0;                   // median of the per-step sums
  double kernels = 0;              // median kernels of the class per step
  int steps = 0;                   // steps with at least one kernel of the class
  std::vector<std::string> names;  // distinct kernel names, in first-seen order
};

PerStep per_step(const View& v, KClass cls) {
  std::map<int, double> us_of;
  std::map<int, double> n_of;
  PerStep out;
  for (EventIdx d : v.device) {
    const Event& e = v.m.at(d);
    if (e.kind != Kind::Kernel || v.kclass(d) != cls) continue;
    const int step = v.step_number(d);
    if (step < 0) continue;  // launched outside the profiled steps
    us_of[step] += us(e.dur_ns);
    n_of[step] += 1;
    if (std::find(out.names.begin(), out.names.end(), e.name) == out.names.end()) out.names.push_back(e.name);
  }
  std::vector<double> a, b;
  for (const auto& [s, t] : us_of) a.push_back(t), b.push_back(n_of[s]);
  out.steps = static_cast<int>(a.size());
  if (!a.empty()) out.us = median(a), out.kernels = median(b);
  return out;
}

std::string names_of(const PerStep& p) {
  std::vector<std::string> s;
  for (const auto& n : p.names) s.push_back(short_name(n));
  return join(s, " + ", "none");
}

}  // namespace

// ---- does the fusion pay: the fused kernel's device time against eager's pair -----------------
std::string measure_fusion_pays(const View& v, const FactOptions& o, Fact& f) {
  if (!o.reference)
    return "needs the eager variant's trace of the same run to compare with (FactOptions::reference)";
  const View ref(*o.reference);
  const PerStep mine = per_step(v, KClass::Elementwise), theirs = per_step(ref, KClass::Elementwise);
  const PerStep gemm = per_step(v, KClass::Gemm), ref_gemm = per_step(ref, KClass::Gemm);
  if (mine.steps == 0) return "no pointwise kernel in this trace's profiled steps";
  if (theirs.steps == 0) return fmt::format("no pointwise kernel in the {} trace's steps", o.reference_label);
  f.data["pointwise_us"] = r3(mine.us);
  f.data["pointwise_kernels_per_step"] = r3(mine.kernels);
  f.data["pointwise_kernels"] = mine.names;
  f.data["eager_us"] = r3(theirs.us);
  f.data["eager_kernels_per_step"] = r3(theirs.kernels);
  f.data["eager_kernels"] = theirs.names;
  f.data["speedup_vs_eager"] = r3(theirs.us / mine.us);
  f.data["saved_us"] = r3(theirs.us - mine.us);
  f.data["reference"] = o.reference_label;
  if (gemm.steps > 0 && ref_gemm.steps > 0 && ref_gemm.us > 0) {
    // The same three GEMM kernels run in both variants: their ratio says whether the two traces
    // ran at the same clocks, i.e. whether comparing their pointwise kernels is fair.
    f.data["gemm_us"] = r3(gemm.us);
    f.data["eager_gemm_us"] = r3(ref_gemm.us);
    f.data["gemm_ratio"] = r3(gemm.us / ref_gemm.us);
  }
  f.value =
      fmt::format("pointwise device time per step: {} ({:.0f} kernel{}) vs {}'s {} ({:.0f} kernels): {:.2f}x",
                  us_str(mine.us), mine.kernels, mine.kernels == 1 ? "" : "s", o.reference_label,
                  us_str(theirs.us), theirs.kernels, theirs.us / mine.us);
  add_evidence(f, fmt::format("this trace: {} = {} per step (median of {} steps)", names_of(mine),
                              us_str(mine.us), mine.steps));
  add_evidence(f, fmt::format("{}: {} = {} per step (median of {} steps)", o.reference_label,
                              names_of(theirs), us_str(theirs.us), theirs.steps));
  if (f.data.contains("gemm_ratio"))
    add_evidence(
        f, fmt::format("clock check: the GEMMs take {} per step here, {} in {} ({:.3f}x)", us_str(gemm.us),
                       o.reference_label, us_str(ref_gemm.us), gemm.us / ref_gemm.us));
  return measured(f, theirs.us > mine.us
                         ? "the kernel's own device time, beside eager's pair from the same run: "
                           "the time fusion saves is measured, not assumed from the bytes"
                         : "the fused kernel is no faster than eager's pair on the same run: "
                           "fewer bytes did not turn into less time");
}

// ---- how many intermediates could the pointwise stage have moved at HBM's peak -----------------
std::string measure_pointwise_bytes_bound(const View& v, const FactOptions& o, Fact& f) {
  const Problem& p = o.problem;
  if (p.m <= 0 || p.n <= 0) return "the intermediate's shape (m x n) is unknown";
  const double inter = static_cast<double>(p.m) * static_cast<double>(p.n) * p.dtype_bytes;
  const PerStep mine = per_step(v, KClass::Elementwise);
  if (mine.steps == 0) return "no pointwise kernel in the profiled steps";
  const DevicePeak* peak = find_peak(v.device_name());
  if (!peak)
    return fmt::format("unknown peak for '{}' (common/core/data/device_peaks.json lists the known ones)",
                       v.device_name());
  const double max_bytes = mine.us * 1e-6 * peak->mem_tbps * 1e12;
  const double n = max_bytes / inter;
  f.data["pointwise_us"] = r3(mine.us);
  f.data["pointwise_kernels_per_step"] = r3(mine.kernels);
  f.data["intermediate_mb"] = r3(inter / 1e6);
  f.data["peak_tbps"] = r3(peak->mem_tbps);
  f.data["max_mb_at_peak"] = r3(max_bytes / 1e6);
  f.data["max_intermediates_at_peak"] = r3(n);
  f.value = fmt::format(
      "{} of pointwise device time per step x {:.2f} TB/s ({}) = at most {:.1f} MB = "
      "{:.2f} x the {:.1f} MB intermediate",
      us_str(mine.us), peak->mem_tbps, peak->model, max_bytes / 1e6, n, inter / 1e6);
  add_evidence(f, fmt::format("{}: {:.0f} kernel(s) per step, {} (median of {} steps)", names_of(mine),
                              mine.kernels, us_str(mine.us), mine.steps));
  add_evidence(
      f, "napkin: eager gelu + mul move 5 intermediates (g -> h; h, u -> y), a fused kernel 3 (g, u -> y)");
  return measured(f,
                  "a bound from time alone: no kernel moves more bytes through HBM than its duration "
                  "times the memory's peak; L2 hits can only lower the bytes HBM saw, never raise them");
}

// ---- the AOTI runner's wait for its previous run, per step -----------------------------------
std::string measure_runner_waits(const View& v, const FactOptions&, Fact& f) {
  const TraceModel& m = v.m;
  const auto& steps = m.steps();
  if (steps.empty()) return "no ProfilerStep ranges in this trace";
  std::map<int, double> wait_us, waits;
  for (EventIdx i = 0; i < m.trace().events.size(); ++i) {
    const Event& e = m.at(i);
    if (e.kind != Kind::Runtime || (e.name != "cudaEventSynchronize" && e.name != "cudaEventQuery")) continue;
    if (const StepWindow* s = m.step_at(e.start_ns))
      wait_us[s->number] += us(e.dur_ns), waits[s->number] += 1;
  }
  // GPU idle before each step's first kernel: from the previous step's last device work.
  std::map<int, int64_t> first_start, last_end;
  for (EventIdx d : v.device) {
    const int n = v.step_number(d);
    if (n < 0) continue;
    const Event& e = m.at(d);
    if (!first_start.count(n) || e.start_ns < first_start[n]) first_start[n] = e.start_ns;
    last_end[n] = std::max(last_end.count(n) ? last_end[n] : e.end_ns(), e.end_ns());
  }
  std::vector<double> w, n_waits, width, share, idle;
  json per_step = json::array();
  for (size_t k = 0; k < steps.size(); ++k) {
    const StepWindow& s = steps[k];
    const double wu = wait_us.count(s.number) ? wait_us[s.number] : 0.0, sw = us(s.end_ns - s.start_ns);
    w.push_back(wu);
    n_waits.push_back(waits.count(s.number) ? waits[s.number] : 0.0);
    width.push_back(sw);
    share.push_back(sw > 0 ? 100 * wu / sw : 0);
    json row = {{"step", s.number}, {"wait_us", r3(wu)}, {"step_us", r3(sw)}};
    if (k > 0 && first_start.count(s.number) && last_end.count(steps[k - 1].number)) {
      const double gap = us(first_start[s.number] - last_end[steps[k - 1].number]);
      idle.push_back(gap);
      row["gpu_idle_before_us"] = r3(gap);
    }
    per_step.push_back(row);
    add_evidence(f,
                 fmt::format("ProfilerStep#{}: {} waiting of a {} step{}", s.number, us_str(wu), us_str(sw),
                             row.contains("gpu_idle_before_us")
                                 ? fmt::format("; GPU idle {} before its first kernel",
                                               us_str(row["gpu_idle_before_us"].get<double>()))
                                 : std::string()));
  }
  f.data["steps"] = per_step;
  f.data["waits_per_step"] = r3(median(n_waits));
  f.data["wait_us_per_step"] = r3(average(w));  // the mean, as `diff` prints it
  f.data["wait_us_median"] = r3(median(w));
  f.data["step_us"] = r3(average(width));
  f.data["wait_pct_of_step"] = r3(median(share));
  if (!idle.empty()) f.data["gpu_idle_before_first_kernel_us"] = r3(median(idle));
  f.value = fmt::format(
      "{:.0f} cudaEventQuery/cudaEventSynchronize per step, {} of CPU per step waiting "
      "(mean; {:.0f}% of the step, median)",
      median(n_waits), us_str(average(w)), median(share));
  if (!idle.empty())
    f.value += fmt::format("; GPU idle {} before each step's first kernel (median)", us_str(median(idle)));
  if (!v.gpu) return "CPU-only trace: no CUDA calls to wait in";
  return measured(f, median(n_waits) > 0
                         ? "the step waits for the previous run's GPU work before it enqueues its own: "
                           "CPU and GPU take turns, and the GPU idles while the CPU enqueues"
                         : "no waits: the CPU enqueues the next step while the GPU still runs this one");
}

// The registry's entries of this file's facts (fact_view.hpp: ViewFact): id, title, why a
// CPU-only trace has nothing to measure, the measurement, what the default pattern's verdict
// means, the teaching order, the default pattern, whether it is about a chapter's workload only,
// and the docs/cheatsheet.md rows that name it first.
const std::vector<ViewFact>& fusion_facts() {
  static const std::vector<ViewFact> kFacts = {
      {"fusion_pays",
       "Fusion pays: the fused kernel's time vs eager's gelu + mul",
       "CPU-only trace: no pointwise kernels to time",
       measure_fusion_pays,
       {},
       230,
       R"json({"text": "judged by a chapter's lessons.json (chapter 07): the fused kernel's time against eager's, no threshold here",
 "why": "the comparison needs the eager variant of the same run as the reference",
 "all": [
      {"key": "/speedup_vs_eager", "op": ">", "value": 0, "scope": "gpu"}
 ]})json",
       true,
       {{"**Does the fusion pay?**",
         "the fused kernel's `CUDA time avg` against eager's `gelu` + `mul` rows from the same run, with the "
         "GEMM rows equal in both (same clocks)",
         "one pointwise bar where eager has two, and shorter than their sum",
         "07",
         {"pointwise_bytes_bound"}}}},
      {"pointwise_bytes_bound",
       "Pointwise bytes: the most HBM could have moved in the kernels' time",
       "CPU-only trace: no pointwise kernels to time",
       measure_pointwise_bytes_bound,
       {},
       240,
       R"json({"text": "judged by a chapter's lessons.json (chapter 07): time x the datasheet's bandwidth bounds the bytes a kernel moved",
 "why": "descriptive: a chapter states how many intermediates may fit",
 "all": [
      {"key": "/max_intermediates_at_peak", "op": ">", "value": 0, "scope": "gpu"}
 ]})json",
       true,
       {}},
      {"runner_waits",
       "Waits per step: the CPU blocked on the GPU",
       "CPU-only trace: no CUDA calls to wait in",
       measure_runner_waits,
       {},
       250,
       R"json({"text": "judged by a chapter's lessons.json (chapter 07): waits per step",
 "why": "cudaEventQuery/cudaEventSynchronize inside a step block the CPU until earlier GPU work is done",
 "all": [
      {"key": "/waits_per_step", "op": ">=", "value": 0, "scope": "gpu"}
 ]})json",
       true,
       {{"**The CPU waits inside a step**",
         "`cudaEventSynchronize` / `cudaEventQuery` rows with large Self CPU, once per step (an AOTI runner "
         "checking on its previous run)",
         "a long sync bar on the CPU row of every step; the GPU idles between the steps while the CPU then "
         "enqueues",
         "07",
         {}}}}};
  return kFacts;
}

}  // namespace wb
