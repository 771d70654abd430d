// Chapter 04's own reading of a trace: the GEMM's duration in every step as a distribution
// (the mean hides a slow step; the median and the bars do not), and, for the CPU edition, how
// much of a step the multiply itself takes. Torch-free, so the tests use it on recorded traces.
#pragma once

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "workbook/model.hpp"

namespace ch04 {

struct Sample {
  int step = -1;  // N of ProfilerStep#N, -1: outside the steps
  double us = 0;
};

struct Distribution {
  std::string what;              // "nvjet_sm90_... (kernel)" or "aten::mm (CPU op)"
  std::vector<Sample> samples;   // in time order
  double min = 0, median = 0, mean = 0, max = 0;
  double factor = 1.5;           // outlier: slower than factor x the median
  std::vector<size_t> outliers;  // indices into samples
};

inline Distribution make_distribution(std::string what, std::vector<Sample> samples,
                                      double factor = 1.5) {
  Distribution d;
  d.what = std::move(what);
  d.samples = std::move(samples);
  d.factor = factor;
  if (d.samples.empty()) return d;
  std::vector<double> v;
  for (const auto& s : d.samples) v.push_back(s.us);
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  d.min = v.front();
  d.max = v.back();
  d.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  d.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(n);
  for (size_t i = 0; i < d.samples.size(); ++i)
    if (d.samples[i].us > factor * d.median) d.outliers.push_back(i);
  return d;
}

// One sample per GEMM: on a GPU trace the kernel with the most device time (at 4096 that is
// the GEMM), on a CPU-only trace the aten::mm op (the CPU does the multiply inside it).
inline Distribution gemm_durations(const wb::TraceModel& m, double factor = 1.5) {
  const auto step_of = [&](int64_t t) {
    const wb::StepWindow* s = m.step_at(t);
    return s ? s->number : -1;
  };
  std::map<std::string, double> total;
  for (const auto& e : m.trace().events)
    if (e.kind == wb::Kind::Kernel) total[e.name] += e.dur_ns;
  std::vector<std::pair<int64_t, Sample>> found;  // start, sample
  if (!total.empty()) {
    const auto top = std::max_element(total.begin(), total.end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
    for (const auto& lane : m.gpu_lanes())
      for (wb::EventIdx d : lane.events) {
        const wb::Event& e = m.at(d);
        if (e.name != top->first) continue;
        const auto l = m.launcher(d);
        found.push_back({e.start_ns, {l ? step_of(m.at(*l).start_ns) : -1, e.dur_ns / 1000.0}});
      }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Sample> s;
    for (const auto& f : found) s.push_back(f.second);
    return make_distribution(top->first + " (GPU kernel)", s, factor);
  }
  for (wb::EventIdx i : m.find("aten::mm"))
    if (m.at(i).kind == wb::Kind::CpuOp)
      found.push_back({m.at(i).start_ns, {step_of(m.at(i).start_ns), m.at(i).dur_ns / 1000.0}});
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Sample> s;
  for (const auto& f : found) s.push_back(f.second);
  return make_distribution("aten::mm (CPU op)", s, factor);
}

inline std::string fmt_us(double us) {
  char b[32];
  if (us >= 1000) std::snprintf(b, sizeof b, "%.2f ms", us / 1000);
  else std::snprintf(b, sizeof b, "%.1f us", us);
  return b;
}

// A bar per sample, outliers marked, then min / median / mean / max.
inline std::string render(const Distribution& d) {
  std::string out = "Duration of every GEMM, " + d.what + ":\n";
  if (d.samples.empty()) return out + "  no samples\n";
  constexpr int kWidth = 40;
  char line[256];
  for (size_t i = 0; i < d.samples.size(); ++i) {
    const auto& s = d.samples[i];
    const int len = d.max > 0 ? std::max(1, static_cast<int>(kWidth * s.us / d.max + 0.5)) : 1;
    const bool odd = std::find(d.outliers.begin(), d.outliers.end(), i) != d.outliers.end();
    std::snprintf(line, sizeof line, "  %-16s %10s  %s%s\n",
                  s.step >= 0 ? ("ProfilerStep#" + std::to_string(s.step)).c_str() : "-",
                  fmt_us(s.us).c_str(), std::string(static_cast<size_t>(len), '#').c_str(),
                  odd ? "  <- outlier" : "");
    out += line;
  }
  std::snprintf(line, sizeof line,
                "  %zu samples: min %s, median %s, mean %s, max %s (mean/median %.2f)\n"
                "  outlier = slower than %.1fx the median: %zu\n",
                d.samples.size(), fmt_us(d.min).c_str(), fmt_us(d.median).c_str(),
                fmt_us(d.mean).c_str(), fmt_us(d.max).c_str(), d.median > 0 ? d.mean / d.median : 0,
                d.factor, d.outliers.size());
  out += line;
  return out;
}

// CPU edition: where each "matmul_add" goes (medians over the steps). On a CPU the arithmetic
// runs inside aten::mm and aten::add; the rest of the step (dispatcher, shape checks, output
// allocation) is overhead. Compute-bound here means that rest is a sliver of the step.
struct CpuShares {
  int steps = 0;
  double mm = 0, add = 0, overhead = 0;  // fractions of the matmul_add duration
};

inline CpuShares cpu_shares(const wb::TraceModel& m, const std::string& annotation = "matmul_add") {
  std::vector<double> mm, add, rest;
  for (wb::EventIdx a : m.find(annotation)) {
    if (m.at(a).kind != wb::Kind::UserAnnotation || m.at(a).dur_ns <= 0) continue;
    double t_mm = 0, t_add = 0;
    std::vector<wb::EventIdx> todo(m.children(a).begin(), m.children(a).end());
    while (!todo.empty()) {
      const wb::EventIdx i = todo.back();
      todo.pop_back();
      const wb::Event& e = m.at(i);
      if (e.name == "aten::mm" || e.name == "aten::add") {  // their children are inside them
        (e.name == "aten::mm" ? t_mm : t_add) += static_cast<double>(e.dur_ns);
        continue;
      }
      for (wb::EventIdx c : m.children(i)) todo.push_back(c);
    }
    const double step = static_cast<double>(m.at(a).dur_ns);
    mm.push_back(t_mm / step);
    add.push_back(t_add / step);
    rest.push_back(std::max(0.0, 1 - (t_mm + t_add) / step));
  }
  CpuShares s;
  s.steps = static_cast<int>(mm.size());
  if (s.steps == 0) return s;
  auto med = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  s.mm = med(mm);
  s.add = med(add);
  s.overhead = med(rest);
  return s;
}

}  // namespace ch04
