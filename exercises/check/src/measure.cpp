#include "exercise/measure.hpp"

#include <algorithm>
#include <cstdio>

#include "workbook/rules.hpp"
#include "workbook/stats.hpp"

namespace exercise {

GemmSamples gemm_samples(const wb::TraceModel& m) {
  GemmSamples g;
  std::vector<std::pair<int64_t, double>> timed;  // start, us
  if (m.trace().has_device_activity()) {
    g.where = "GEMM kernels on the GPU";
    for (const auto& e : m.trace().events)
      if (wb::is_device_work(e) && wb::classify(e) == wb::KernelClass::Gemm)
        timed.push_back({e.start_ns, static_cast<double>(e.dur_ns) / 1000.0});
  } else {
    g.where = "aten::mm/bmm/addmm on the CPU";
    for (wb::EventIdx i = 0; i < m.trace().events.size(); ++i) {
      const wb::Event& e = m.at(i);
      if (e.kind != wb::Kind::CpuOp || !wb::is_gemm_op(e.name)) continue;
      if (!m.steps().empty() && !m.step_at(e.start_ns)) continue;  // the recorded steps only
      const auto p = m.parent(i);
      if (p && wb::is_gemm_op(m.at(*p).name)) continue;  // a GEMM once, at its outermost op
      timed.push_back({e.start_ns, static_cast<double>(e.dur_ns) / 1000.0});
    }
  }
  std::stable_sort(timed.begin(), timed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [start, us] : timed) g.us.push_back(us);
  g.count = static_cast<int>(g.us.size());
  if (!g.us.empty()) {
    g.median_us = wb::median(g.us);
    g.mean_us = wb::mean(g.us);
    g.min_us = *std::min_element(g.us.begin(), g.us.end());
    g.max_us = *std::max_element(g.us.begin(), g.us.end());
  }
  return g;
}

std::string describe(const GemmSamples& g) {
  if (g.count == 0) return "no GEMM samples (" + g.where + ")";
  auto us = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f us", v);
    return std::string(b);
  };
  return std::to_string(g.count) + " sample" + (g.count == 1 ? "" : "s") + " (" + g.where + "): min " +
         us(g.min_us) + ", max " + us(g.max_us);
}

}  // namespace exercise
