// table: print Python's prof.key_averages().table() from a saved Kineto trace (ours or Python's,
// .json or .json.gz). Python itself cannot: its table needs the live profiler object.
//
//   table TRACE                                     sorted by cpu_time_total, every row
//   table TRACE --sort-by self_cuda_time_total --row-limit 10
//   table TRACE --group-by-input-shape              one row per (op, input shapes)
//   table TRACE --group-by-stack-n 5                one row per (op, first 5 stack frames)
//
// The text is byte for byte Python's (tests/test_table_tool.cpp checks it on Python's own
// recordings for every sort key). The Input Shapes column needs a trace recorded with
// record_shapes; the FLOPs column one recorded with with_flops; the Source Location column one
// recorded with with_stack; the memory columns (CPU Mem, Self CPU Mem, CUDA Mem, Self CUDA Mem)
// one recorded with profile_memory (Python's rules).
//
// Exit codes: 0 printed, 1 unreadable trace or one with no events, 2 bad flags (checked before
// the trace is read).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>

#include "workbook/cli.hpp"
#include "workbook/keep_until_exit.hpp"
#include "workbook/table.hpp"
#include "workbook/trace_reader.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Print key_averages().table() -- Python's profiler summary -- from a saved Kineto trace."};
  app.footer(
      "Exit codes: 0 printed, 1 unreadable trace or a trace with no events, 2 bad flags "
      "(checked before the trace is read).");
  std::string path;
  wb::TableOptions opts;
  wb::GroupOptions group;
  opts.row_limit = 100;  // Python's default
  app.add_option("trace", path, "Kineto trace (.json or .json.gz)")->required();
  std::string keys;
  for (const auto& k : wb::table_sort_keys()) keys += (keys.empty() ? "" : ", ") + k;
  app.add_option("--sort-by", opts.sort_by,
                 "column to sort by (Python's sort_by): " + keys +
                     "; \"device\" or \"xpu\" may replace \"cuda\"; \"\" keeps the first-seen order")
      ->capture_default_str();
  app.add_option("--row-limit", opts.row_limit, "rows to print; -1: all (Python's row_limit)")
      ->capture_default_str()
      ->check(wb::whole_number(-1, 1 << 30, "rows to print, -1: all"));
  app.add_option("--max-name-width", opts.max_name_width,
                 "name column width, > 3; longer names end in \"...\" (Python's max_name_column_width)")
      ->capture_default_str()
      ->check(wb::whole_number(4, 1 << 20, "characters"));
  app.add_flag("--group-by-input-shape", group.group_by_input_shape,
               "one row per (name, input shapes); needs a trace recorded with record_shapes");
  app.add_option("--group-by-stack-n", group.group_by_stack_n,
                 "one row per (name, the first N frames of its Python stack) and a Source Location column "
                 "(Python's key_averages(group_by_stack_n=N)); needs a trace recorded with with_stack")
      ->check(wb::whole_number(0, 1 << 20, "stack frames"));
  app.add_option("--max-src-width", opts.max_src_column_width,
                 "Source Location column width (Python's max_src_column_width)")
      ->capture_default_str()
      ->check(wb::whole_number(4, 1 << 20, "characters"));
  // An unknown --sort-by is refused here, before any reading.
  if (auto rc = wb::parse_flags(app, argc, argv, [&] {
        try {
          (void)wb::format_table({}, opts);
        } catch (const std::invalid_argument& e) {
          throw CLI::ValidationError("--sort-by", std::string(e.what()).substr(7));  // drops "table: "
        }
      }))
    return *rc;

  try {
    // Left to the OS when the process ends (below): freeing ~260k events of a 100 MB trace
    // one by one costs tens of ms.
    auto owned = std::make_unique<wb::Trace>(wb::read_trace_with_events(path));
    const wb::Trace& trace = *owned;
    if (group.group_by_input_shape && !trace.record_shapes)
      std::cerr << "table: note: " << path
                << " was not recorded with record_shapes, so every row's shapes are [] (Python "
                   "would print the same)\n";
    const bool stacks = std::any_of(trace.events.begin(), trace.events.end(),
                                    [](const wb::Event& e) { return !e.stack.empty(); });
    if (group.group_by_stack_n > 0 && !stacks)
      std::cerr << "table: note: " << path
                << " holds no stack per op, so no row has a source location (Python "
                << "prints the same); record with with_stack=True and "
                   "experimental_config=_ExperimentalConfig(verbose=True)\n";
    std::cout << wb::key_averages_table(trace, opts, group);
    std::cout.flush();
    wb::keep_until_exit(owned.release());
    return 0;
  } catch (const wb::TraceError& e) {
    std::cerr << "table: cannot read trace: " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "table: " << path << ": " << e.what() << "\n";
  }
  return 1;
}
