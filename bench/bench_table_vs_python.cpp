// The C++ half of bench_table_vs_python.py: how long the workbook takes to print Python's
// key_averages().table() from a Kineto trace, and whether its "# of Calls" match Python's.
//
//   bench_table_vs_python TRACE [--python-table FILE] [--reps 7] [--sort-by cpu_time_total]
//
// Times, best of --reps (steady_clock, in this process, after one untimed warm-up run):
//   read_and_table  read_trace(TRACE) + key_averages + format_table: from the file to the text
//   table_only      key_averages + format_table on the events already in memory
// With --python-table, the Name / # of Calls columns of both tables are compared row by row.
// Prints one JSON object on stdout (the driver reads it). Exit 0, or 1 if the calls differ,
// 2 for bad arguments.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "workbook/compare.hpp"
#include "workbook/fs_util.hpp"
#include "workbook/table.hpp"
#include "workbook/trace_reader.hpp"

#include "bench_util.hpp"

namespace {

std::string slurp(const std::string& path) { return wb::read_file(path); }

}  // namespace

int main(int argc, char** argv) {
  std::string trace_path, python_table, sort_by = "cpu_time_total";
  int reps = 7;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--python-table" && has_value)
      python_table = argv[++i];
    else if (a == "--reps" && has_value)
      reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--sort-by" && has_value)
      sort_by = argv[++i];
    else if (trace_path.empty() && a[0] != '-')
      trace_path = a;
    else {
      std::fprintf(stderr, "usage: %s TRACE [--python-table FILE] [--reps N] [--sort-by KEY]\n", argv[0]);
      return 2;
    }
  }
  if (trace_path.empty()) {
    std::fprintf(stderr, "usage: %s TRACE [--python-table FILE] [--reps N] [--sort-by KEY]\n", argv[0]);
    return 2;
  }

  try {
    wb::TableOptions opts;
    opts.sort_by = sort_by;
    opts.row_limit = -1;  // every row, as the driver asks Python for

    std::string table;
    const double read_and_table = best_seconds(reps, [&] {
      const wb::Trace t = wb::read_trace(trace_path);
      table = wb::format_table(wb::key_averages(t), opts);
    });
    const wb::Trace trace = wb::read_trace(trace_path);
    const double table_only =
        best_seconds(reps, [&] { table = wb::format_table(wb::key_averages(trace), opts); });

    nlohmann::json j = {{"trace", trace_path},
                        {"events", trace.events.size()},
                        {"reps", reps},
                        {"read_and_table_s", read_and_table},
                        {"table_only_s", table_only},
                        {"table", table}};
    int rc = 0;
    if (!python_table.empty()) {
      const auto mine = wb::parse_table_calls(table, "C++ table");
      const auto theirs = wb::parse_table_calls(slurp(python_table), python_table);
      std::map<std::string, int64_t> py;
      for (const auto& l : theirs) py[l.name] += l.calls;  // a name may appear twice (CPU + GPU side)
      std::map<std::string, int64_t> cpp;
      for (const auto& l : mine) cpp[l.name] += l.calls;
      nlohmann::json diffs = nlohmann::json::array();
      for (const auto& [name, calls] : cpp)
        if (!py.count(name) || py[name] != calls)
          diffs.push_back({{"name", name}, {"cpp", calls}, {"python", py.count(name) ? py[name] : -1}});
      for (const auto& [name, calls] : py)
        if (!cpp.count(name)) diffs.push_back({{"name", name}, {"cpp", -1}, {"python", calls}});
      j["rows_cpp"] = mine.size();
      j["rows_python"] = theirs.size();
      j["calls_identical"] = diffs.empty() && mine.size() == theirs.size();
      j["call_differences"] = diffs;
      if (!j["calls_identical"].get<bool>()) rc = 1;
    }
    std::cout << j.dump() << "\n";
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_table_vs_python: %s\n", e.what());
    return 1;
  }
}
