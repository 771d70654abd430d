// table, diff and inspect on one big real trace, each next to the floor: simdjson alone
// parsing the same bytes (DOM parse, the whole file). The tools read with simdjson On-Demand, so
// no tool can be faster than its parse; the gap is the tool's own work.
//
//   bench_tools TRACE.json [--reps N] [--b OTHER.json]
//
// (plain JSON: gunzip first, to time the parse alone). `diff A B` needs a second trace: OTHER.json
// (another recording), or else a modified copy of TRACE.json written next to it
// (TRACE.json.bench_b.json: every "aten::add" renamed "aten::ADD", same size, a few rows change).
//
// Make the trace with the fixture script (a real torch.profiler recording, many steps):
//   ~/.cache/libtorch-workbook/torch-2.11.0/bin/python tests/data/python/make_fixtures.py \
//       --bench-steps 250 --out /tmp/bench && gunzip -k /tmp/bench/cpu_bench_250.json.gz
// Each figure: one warm-up call, then N timed calls; best and median. As the tools do, the
// traces are freed after the clock stops (the tools leave them to the OS at exit).
// Figures and the machine they came from: docs/performance.md.
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "workbook/lessons.hpp"
#include "workbook/table.hpp"
#include "workbook/trace_diff.hpp"
#include "workbook/trace_reader.hpp"

namespace {

struct Timing {
  double best = 0, median = 0;
};

// f() returns what it built; it is destroyed after the clock stops.
template <class F>
Timing time_it(int reps, F&& f) {
  { auto warm = f(); }
  std::vector<double> s;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto kept = f();
    s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(s.begin(), s.end());
  const size_t n = s.size();
  return {s.front(), n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2};
}

struct Loaded {
  std::unique_ptr<wb::Trace> trace;
  std::unique_ptr<wb::TraceModel> model;
};

Loaded load(const std::string& path) {
  Loaded l;
  l.trace = std::make_unique<wb::Trace>(wb::read_trace(path));
  l.model = std::make_unique<wb::TraceModel>(*l.trace);
  return l;
}

// A copy of `path` with every "aten::add" spelled "aten::ADD": same bytes count, still valid.
std::string modified_copy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string from = "\"aten::add\"", to = "\"aten::ADD\"";
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  const std::string out = path + ".bench_b.json";
  std::ofstream(out, std::ios::binary) << s;
  return out;
}

double load_average() {
  double l[1] = {-1};
  return getloadavg(l, 1) == 1 ? l[0] : -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_tools TRACE.json [--reps N] [--b OTHER.json]\n");
    return 2;
  }
  const std::string path = argv[1];
  int reps = 3;
  std::string b_path;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--reps")
      reps = std::max(1, std::atoi(argv[i + 1]));
    else if (flag == "--b")
      b_path = argv[i + 1];
  }

  simdjson::padded_string bytes;
  if (simdjson::padded_string::load(path).get(bytes)) {
    std::fprintf(stderr, "bench_tools: cannot read %s\n", path.c_str());
    return 1;
  }
  if (b_path.empty()) b_path = modified_copy(path);
  std::printf("trace A: %s, %.1f MB of JSON\ntrace B: %s\n", path.c_str(),
              static_cast<double>(bytes.size()) / 1e6, b_path.c_str());
  const double load_before = load_average();
  size_t events = 0;
  simdjson::dom::parser parser;
  const Timing floor = time_it(reps, [&] {
    // Load + parse, as the tools do (they read the file too).
    auto b = std::make_unique<simdjson::padded_string>();
    if (simdjson::padded_string::load(path).get(*b)) std::abort();
    simdjson::dom::element doc;
    if (parser.parse(*b).get(doc)) std::abort();
    simdjson::dom::array evs;
    if (doc["traceEvents"].get_array().get(evs)) std::abort();
    events = evs.size();
    return b;
  });
  std::string sink;
  const Timing read = time_it(reps, [&] {
    auto t = std::make_unique<wb::Trace>(wb::read_trace(path));
    sink = t->source;
    return t;
  });
  const Timing model = time_it(reps, [&] {
    Loaded l = load(path);
    sink = l.trace->source;
    return l;
  });
  const Timing table = time_it(reps, [&] {
    auto t = std::make_unique<wb::Trace>(wb::read_trace(path));
    sink = wb::key_averages_table(*t, {"cpu_time_total", 100, 55});
    return t;
  });
  // As the diff tool does it: the two traces read at the same time, one per core.
  auto diff = [&](const std::string& other_path) {
    return time_it(reps, [&] {
      auto other = std::async(std::launch::async, [&] { return load(other_path); });
      Loaded a = load(path);
      Loaded b = other.get();
      sink = wb::render_diff(wb::diff_traces(*a.model, *b.model), wb::Format::Text);
      return std::make_pair(std::move(a), std::move(b));
    });
  };
  const Timing diff_self = diff(path);
  const Timing diff_ab = diff(b_path);
  const Timing inspect = time_it(reps, [&] {
    Loaded l = load(path);
    wb::FactOptions o;
    o.annotation = "";
    sink = wb::render_lessons(wb::inspect_trace(*l.model, o), wb::Format::Text);
    return l;
  });
  std::printf("%zu trace events; %d timed runs each (after one warm-up): best, median\n", events, reps);
  std::printf("load average (1 min): %.2f before, %.2f after\n", load_before, load_average());
  auto row = [&](const char* what, const Timing& t, double floors) {
    std::printf("%-36s %7.3f s %7.3f s", what, t.best, t.median);
    if (floors > 0)
      std::printf("  (best %.2fx %s)", t.best / (floors * floor.best),
                  floors == 1 ? "the floor" : "two floors");
    std::printf("\n");
  };
  row("simdjson parse alone (floor)", floor, 0);
  row("read_trace (the tools' reader)", read, 1);
  row("read_trace + TraceModel", model, 1);
  row("table (read + key_averages + text)", table, 1);
  row("diff A A (trace vs itself)", diff_self, 2);
  row("diff A B (two different traces)", diff_ab, 2);
  row("inspect (read + model + facts)", inspect, 1);
  return 0;
}
