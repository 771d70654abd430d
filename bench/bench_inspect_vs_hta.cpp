// The C++ half of bench_inspect_vs_hta.py: what `inspect TRACE --format json` does, timed
// stage by stage in one process, plus the kernel totals the driver checks against HTA's
// kernel breakdown (so both sides are seen to read the same trace the same way).
//
//   bench_inspect_vs_hta TRACE [--reps 3]
//
// Best of --reps (after one warm-up) for each stage and for the whole pipeline:
//   read     read_trace(TRACE)                 JSON (or .json.gz) -> events
//   model    TraceModel                        lanes, call trees, launch links, steps
//   rules    inspect_trace + render_lessons    every cheatsheet rule, rendered as JSON
//   total    the three in a row
// Prints one JSON object on stdout. Exit 0, 1 for an unreadable trace, 2 for bad arguments.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "workbook/lessons.hpp"
#include "workbook/trace_model.hpp"
#include "workbook/trace_reader.hpp"

#include "bench_util.hpp"

namespace {

// HTA's kernel types: names with "nccl" are communication, memcpy/memset events are memory,
// every other GPU kernel is computation. Here: kernel events only (memcpy/memset are their own
// kinds), which is HTA's COMPUTATION when no NCCL kernel is present.
nlohmann::json kernel_totals(const wb::Trace& t) {
  int64_t count = 0, sum_ns = 0;
  std::map<std::string, std::pair<int64_t, int64_t>> by_name;  // name -> count, ns
  for (const auto& e : t.events) {
    if (e.kind != wb::Kind::Kernel || e.name.find("nccl") != std::string::npos) continue;
    ++count;
    sum_ns += e.dur_ns;
    auto& n = by_name[e.name];
    ++n.first;
    n.second += e.dur_ns;
  }
  nlohmann::json names = nlohmann::json::object();
  for (const auto& [name, cn] : by_name) names[name] = {{"count", cn.first}, {"sum_us", cn.second / 1000.0}};
  return {{"count", count}, {"sum_us", sum_ns / 1000.0}, {"by_name", names}};
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  int reps = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[++i]));
    else if (path.empty() && a[0] != '-')
      path = a;
    else {
      path.clear();  // anything else: print the usage
      break;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "usage: %s TRACE [--reps N]\n", argv[0]);
    return 2;
  }
  try {
    const wb::FactOptions opts;  // inspect's defaults: annotation "matmul_add", no problem size
    wb::Trace trace;
    const double read_s = best_seconds(reps, [&] { trace = wb::read_trace(path); });
    const double model_s = best_seconds(reps, [&] { const wb::TraceModel m(trace); });
    const wb::TraceModel model(trace);
    std::string out;
    const double rules_s = best_seconds(
        reps, [&] { out = wb::render_lessons(wb::inspect_trace(model, opts), wb::Format::Json); });
    const double total_s = best_seconds(reps, [&] {
      const wb::Trace t = wb::read_trace(path);
      const wb::TraceModel m(t);
      out = wb::render_lessons(wb::inspect_trace(m, opts), wb::Format::Json);
    });
    const nlohmann::json j = {{"trace", path},
                              {"events", trace.events.size()},
                              {"reps", reps},
                              {"read_s", read_s},
                              {"model_s", model_s},
                              {"rules_s", rules_s},
                              {"total_s", total_s},
                              {"report_bytes", out.size()},
                              {"kernels", kernel_totals(trace)}};
    std::cout << j.dump() << "\n";
    return 0;
  } catch (const wb::TraceError& e) {
    std::fprintf(stderr, "bench_inspect_vs_hta: cannot read trace: %s\n", e.what());
    return 1;
  }
}
