// Lesson facts about kernels and their footprints: registers, shared memory, grid and block of
// a GEMM next to an elementwise kernel, and the distribution of one kernel's durations.
//
//   kernel_footprint, kernel_durations
//
// Registered at the end of this file (kernels_facts(), each entry with its default pattern); the
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

namespace wb {

using nlohmann::json;
using namespace lessons_detail;

// ---- 6. kernel footprint ----------------------------------------------------------------
std::string measure_kernel_footprint(const View& v, const FactOptions&, Fact& f) {
  const TraceModel& m = v.m;
  json kernels = json::array();
  std::set<std::string_view> seen;
  for (EventIdx d : v.device) {
    const Event& e = m.at(d);
    if (!e.kernel || !seen.insert(e.name).second) continue;
    const KClass k = v.kclass(d);
    const json fp = footprint_json(e);
    json row = fp;
    row["kernel"] = e.name;
    row["class"] = class_name(k);
    kernels.push_back(row);
    if (k == KClass::Gemm && !f.data.contains("gemm")) f.data["gemm"] = fp;
    if (k == KClass::Elementwise && !f.data.contains("elementwise")) f.data["elementwise"] = fp;
    add_evidence(f, fmt::format("{}: {} regs/thread, {} B shared, grid {}, block {}", short_name(e.name),
                                e.kernel->registers_per_thread, e.kernel->shared_memory, dims(e.kernel->grid),
                                dims(e.kernel->block)));
  }
  if (kernels.empty()) return "the trace records no kernel launch configuration";
  f.data["kernels"] = kernels;
  if (f.data.contains("gemm") && f.data.contains("elementwise")) {
    const double g = f.data["gemm"]["registers_per_thread"].get<double>();
    const double e = f.data["elementwise"]["registers_per_thread"].get<double>();
    f.data["gemm_over_elementwise_registers"] = e > 0 ? json(r3(g / e)) : json(nullptr);
  }
  f.value = fmt::format("{} kernel{} with launch config; first: {}", kernels.size(),
                        kernels.size() == 1 ? "" : "s", f.evidence.front());
  return measured(f,
                  "a GEMM holds many registers and a large shared-memory tile per block; an "
                  "elementwise kernel needs few registers and no shared memory");
}

// ---- 9. kernel duration distribution ----------------------------------------------------
std::string measure_kernel_durations(const View& v, const FactOptions& o, Fact& f) {
  const TraceModel& m = v.m;
  std::map<std::string_view, std::vector<std::pair<double, EventIdx>>> by_name;
  double total = 0, gemm = 0;
  for (EventIdx d : v.device) {
    const double t = us(m.at(d).dur_ns);
    by_name[m.at(d).name].push_back({t, d});
    total += t;
    if (v.kclass(d) == KClass::Gemm) gemm += t;
  }
  json rows = json::array();
  int outliers = 0;
  std::string table = fmt::format("{:>6} {:>10} {:>10} {:>10} {:>10}  {}\n", "count", "min", "median", "mean",
                                  "max", "kernel");
  for (const auto& [name, ds] : by_name) {
    std::vector<double> t;
    for (const auto& p : ds) t.push_back(p.first);
    const double med = median(t), mean = average(t);
    const auto [mn, mx] = std::minmax_element(t.begin(), t.end());
    json out = json::array();
    for (const auto& [dur, d] : ds)
      if (dur > o.outlier_factor * med) {
        out.push_back({{"step", v.step_number(d)}, {"dur_us", r3(dur)}});
        add_evidence(f, fmt::format("outlier: {} took {} in {} (median {})", short_name(name), us_str(dur),
                                    v.step_label(d), us_str(med)));
        outliers++;
      }
    json row = {{"kernel", name},       {"class", class_name(v.kclass(ds.front().second))},
                {"count", t.size()},    {"min_us", r3(*mn)},
                {"median_us", r3(med)}, {"mean_us", r3(mean)},
                {"max_us", r3(*mx)},    {"mean_over_median", med > 0 ? json(r3(mean / med)) : json(nullptr)},
                {"outliers", out}};
    if (v.kclass(ds.front().second) == KClass::Gemm && !f.data.contains("gemm")) f.data["gemm"] = row;
    rows.push_back(row);
    table += fmt::format("{:>6} {:>10} {:>10} {:>10} {:>10}  {}{}\n", t.size(), us_str(*mn), us_str(med),
                         us_str(mean), us_str(*mx), short_name(name),
                         out.empty() ? "" : fmt::format("  <- {} outlier(s)", out.size()));
  }
  f.detail = table;
  f.data["kernels"] = rows;
  f.data["outliers"] = outliers;
  f.data["outlier_rule"] = fmt::format("duration > {} x the median of the same kernel", o.outlier_factor);
  f.data["gemm_share"] = total > 0 ? json(r3(gemm / total)) : json(nullptr);
  f.value = fmt::format(
      "{} kernel name{}, {} outlier{} (> {}x median); GEMMs are {:.0f}% of "
      "device time",
      by_name.size(), by_name.size() == 1 ? "" : "s", outliers, outliers == 1 ? "" : "s", o.outlier_factor,
      total > 0 ? 100 * gemm / total : 0);
  return kMeasured;
}

// The registry's entries of this file's facts (fact_view.hpp: ViewFact): id, title, why a
// CPU-only trace has nothing to measure, the measurement, what the default pattern's verdict
// means, the teaching order, the default pattern, whether it is about a chapter's workload only,
// and the docs/cheatsheet.md rows that name it first.
const std::vector<ViewFact>& kernels_facts() {
  static const std::vector<ViewFact> kFacts = {
      {"kernel_footprint",
       "Kernel footprint: registers, shared memory, grid, block",
       "CPU-only trace: no kernels",
       measure_kernel_footprint,
       {},
       70,
       R"json({"text": "heavy vs light: the GEMM uses >= 2x the registers/thread of the elementwise kernel",
 "why": "tensor-core GEMMs use 150-250 registers/thread, elementwise kernels ~20-40",
 "all": [
      {"key": "/gemm_over_elementwise_registers", "op": ">=", "value": 2, "scope": "gpu"}
 ]})json",
       false,
       {{"**Heavy vs light kernel**",
         "(not in the table)",
         "a kernel's args: registers per thread, shared memory, grid, block",
         "01, 03",
         {}}}},
      {"kernel_durations",
       "Kernel duration distribution",
       "CPU-only trace: no kernels",
       measure_kernel_durations,
       {"the same kernel on the same data ran slower at times (clocks, power, other work): read the "
        "distribution, not the mean",
        "each kernel runs in a steady time"},
       100,
       R"json({"text": "same kernel varying: some run > {outlier_factor}x its median",
 "why": "MAD is 0 for a handful of identical samples, so a ratio to the median is steadier than median + k*MAD",
 "all": [
      {"key": "/outliers", "op": ">", "value": 0, "scope": "gpu"}
 ]})json",
       false,
       {{"**Variance: read the distribution**",
         "`CUDA time avg` hides the spread",
         "the same kernel with different widths across steps",
         "04",
         {}}}}};
  return kFacts;
}

}  // namespace wb
