#include "exercise/measure.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <vector>

#include "workbook/lessons.hpp"

namespace exercise {

namespace {
bool is_gemm_op(const std::string& name) {
  return name == "aten::mm" || name == "aten::bmm" || name == "aten::addmm";
}
}  // namespace

GemmSamples gemm_samples(const wb::TraceModel& m) {
  GemmSamples g;
  if (m.trace().has_device_activity()) {
    g.where = "GEMM kernels on the GPU";
    // The lesson facts already know which kernels are GEMMs: count them from the duration
    // distribution, take the median the throughput fact uses (N does not change it).
    const wb::Fact d = wb::compute_fact("kernel_durations", m);
    double sum = 0;
    for (const auto& k : d.data.value("kernels", nlohmann::json::array())) {
      if (k.value("class", "") != "gemm") continue;
      const int n = k.value("count", 0);
      const double mn = k.value("min_us", 0.0), mx = k.value("max_us", 0.0);
      g.min_us = g.count == 0 ? mn : std::min(g.min_us, mn);
      g.max_us = std::max(g.max_us, mx);
      sum += n * k.value("mean_us", 0.0);
      g.count += n;
    }
    if (g.count > 0) g.mean_us = sum / g.count;
    wb::FactOptions o;
    o.problem.n = 1;
    const wb::Fact t = wb::compute_fact("throughput", m, o);
    g.median_us = t.data.value("gemm_median_us", 0.0);
    return g;
  }
  g.where = "aten::mm/bmm/addmm on the CPU";
  std::vector<double> us;
  for (wb::EventIdx i = 0; i < m.trace().events.size(); ++i) {
    const wb::Event& e = m.at(i);
    if (e.kind != wb::Kind::CpuOp || !is_gemm_op(e.name)) continue;
    if (!m.steps().empty() && !m.step_at(e.start_ns)) continue;  // the recorded steps only
    const auto p = m.parent(i);
    if (p && is_gemm_op(m.at(*p).name)) continue;  // count a GEMM once, at its outermost op
    us.push_back(static_cast<double>(e.dur_ns) / 1000.0);
  }
  g.count = static_cast<int>(us.size());
  if (!us.empty()) {
    std::sort(us.begin(), us.end());
    const size_t h = us.size() / 2;
    g.median_us = us.size() % 2 ? us[h] : (us[h - 1] + us[h]) / 2;
    g.min_us = us.front();
    g.max_us = us.back();
    g.mean_us = std::accumulate(us.begin(), us.end(), 0.0) / static_cast<double>(us.size());
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
  return std::to_string(g.count) + " sample" + (g.count == 1 ? "" : "s") + " (" + g.where + "): min " + us(g.min_us) +
         ", median " + us(g.median_us) + ", mean " + us(g.mean_us) + ", max " + us(g.max_us);
}

}  // namespace exercise
