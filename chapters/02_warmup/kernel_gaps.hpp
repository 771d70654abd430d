// Chapter 02's own reading of a trace: the idle time between the kernels of each step, and the
// profiler's own events that can explain an unusual gap (the original post saw an
// "Activity Buffer Request" open a gap between the matmul and add kernels of one step).
// Torch-free, so the tests use it on recorded traces too.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "workbook/model.hpp"

namespace ch02 {

struct StepGap {
  int step = -1;             // N of ProfilerStep#N
  int device_events = 0;     // kernels, memcpys, memsets launched in the step
  double largest_gap_us = 0; // longest GPU idle time between two of them
  std::string before, after; // the device events on either side of that gap
  bool profiler_event_inside = false;  // a profiler "overhead" event overlaps the gap
};

struct GapReport {
  std::vector<StepGap> steps;        // steps with >= 2 device events, in order
  double median_gap_us = 0;          // median of the steps' largest gaps
  std::vector<int> outlier_steps;    // largest gap > factor x median and > median + floor
  double factor = 2.0, floor_us = 2.0;
  int buffer_requests = 0;           // "Activity Buffer Request" events anywhere in the trace
  double buffer_request_us = 0;      // their total duration
};

// Profiler bookkeeping that Kineto draws on the GPU rows (category "overhead").
inline bool is_profiler_overhead(const wb::Event& e) {
  return e.category == "overhead" || e.name == "Activity Buffer Request";
}

inline std::string short_kernel_name(const std::string& name) {
  std::string s = name.rfind("void ", 0) == 0 ? name.substr(5) : name;
  const auto cut = s.find_first_of("<(");
  if (cut != std::string::npos && cut > 0) s = s.substr(0, cut);
  return s.size() > 48 ? s.substr(0, 45) + "..." : s;
}

inline GapReport kernel_gaps(const wb::TraceModel& m, double factor = 2.0, double floor_us = 2.0) {
  GapReport r;
  r.factor = factor;
  r.floor_us = floor_us;
  std::vector<const wb::Event*> overhead;
  for (const auto& e : m.trace().events) {
    if (e.name == "Activity Buffer Request") {
      r.buffer_requests++;
      r.buffer_request_us += e.dur_ns / 1000.0;
    }
    if (is_profiler_overhead(e)) overhead.push_back(&e);
  }
  // Device work, grouped by the step whose CPU side launched it.
  std::vector<std::vector<wb::EventIdx>> by_step(m.steps().size());
  for (const auto& lane : m.gpu_lanes())
    for (wb::EventIdx d : lane.events) {
      const auto l = m.launcher(d);
      const wb::StepWindow* s = l ? m.step_at(m.at(*l).start_ns) : nullptr;
      if (s) by_step[static_cast<size_t>(s - m.steps().data())].push_back(d);
    }
  std::vector<double> gaps;
  for (size_t i = 0; i < by_step.size(); ++i) {
    auto& work = by_step[i];
    if (work.size() < 2) continue;
    std::sort(work.begin(), work.end(),
              [&](wb::EventIdx a, wb::EventIdx b) { return m.at(a).start_ns < m.at(b).start_ns; });
    StepGap g;
    g.step = m.steps()[i].number;
    g.device_events = static_cast<int>(work.size());
    int64_t busy_until = m.at(work.front()).end_ns();
    for (size_t k = 1; k < work.size(); ++k) {
      const wb::Event& next = m.at(work[k]);
      const double gap = (next.start_ns - busy_until) / 1000.0;
      if (gap > g.largest_gap_us) {
        g.largest_gap_us = gap;
        g.before = m.at(work[k - 1]).name;
        g.after = next.name;
        g.profiler_event_inside = false;
        for (const wb::Event* o : overhead)
          if (o->start_ns < next.start_ns && o->end_ns() > busy_until) g.profiler_event_inside = true;
      }
      busy_until = std::max(busy_until, next.end_ns());
    }
    gaps.push_back(g.largest_gap_us);
    r.steps.push_back(g);
  }
  if (gaps.empty()) return r;
  std::vector<double> sorted = gaps;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  r.median_gap_us = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  for (const auto& g : r.steps)
    if (g.largest_gap_us > factor * r.median_gap_us && g.largest_gap_us > r.median_gap_us + floor_us)
      r.outlier_steps.push_back(g.step);
  return r;
}

inline std::string render(const GapReport& r) {
  char line[256];
  std::string out = "GPU idle between the kernels of each step (largest gap per step):\n";
  if (r.steps.empty()) return out + "  no step launched two or more device events\n";
  for (const auto& g : r.steps) {
    const bool odd = std::find(r.outlier_steps.begin(), r.outlier_steps.end(), g.step) !=
                     r.outlier_steps.end();
    std::snprintf(line, sizeof line, "  ProfilerStep#%-3d %9.1f us  %s -> %s%s%s\n", g.step,
                  g.largest_gap_us, short_kernel_name(g.before).c_str(),
                  short_kernel_name(g.after).c_str(), odd ? "   <- unusual" : "",
                  g.profiler_event_inside ? " (a profiler event overlaps it)" : "");
    out += line;
  }
  std::snprintf(line, sizeof line,
                "  median %.1f us; unusual = more than %.0fx the median and %.0f us above it: %s\n",
                r.median_gap_us, r.factor, r.floor_us,
                r.outlier_steps.empty() ? "none" : std::to_string(r.outlier_steps.size()).c_str());
  out += line;
  if (r.buffer_requests > 0) {
    std::snprintf(line, sizeof line, "  Activity Buffer Request: %d event(s), %.1f us in total\n",
                  r.buffer_requests, r.buffer_request_us);
    out += line;
  } else {
    out += "  Activity Buffer Request: none in this trace\n";
  }
  return out;
}

}  // namespace ch02
