// The profiler's summary table, as Python prints it with
//   prof.key_averages().table(sort_by=..., row_limit=...)        (torch 2.11)
// computed from a wb::Trace, so a LibTorch run and a Python run can be read side by side.
//
// Two steps, like Python:
//   key_averages(trace)   one TableRow per (name, CPU/device, user annotation), in the order
//                          Python creates them (first appearance by start time)
//   format_table(rows)     the text: sorting, row limit, columns, footers
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "workbook/trace.hpp"

namespace wb {

struct TableRow {
  std::string key;                  // event name; ProfilerStep#N is shown as ProfilerStep*
  bool on_device = false;           // kernel / memcpy / memset / GPU-side annotation
  bool is_user_annotation = false;  // record_function (CPU side) or its GPU projection
  bool is_async = false;            // first event of the group was async (Python's quirk: CPU total % = 0)
  int64_t calls = 0;
  int64_t self_cpu_ns = 0;  // CPU time minus the CPU time of direct children
  int64_t cpu_total_ns = 0;
  int64_t self_device_ns = 0;   // device work launched directly by this op (device rows: own time)
  int64_t device_total_ns = 0;  // ... plus that of all its descendants
  // The same four times as Python computes them, in float microseconds: each event's times
  // relative to the trace's start (/1000), durations as end - start, sums in Python's order.
  // The table prints these, so an average on a rounding boundary rounds as Python's does.
  double self_cpu_us = 0, cpu_total_us = 0, self_device_us = 0, device_total_us = 0;
  int64_t flops = 0;  // with_flops: sum over the calls (torch's formula)
  // profile_memory, in bytes, summed over the calls as Python does: each call's records whose
  // time lies within the call (any thread; allocations > 0, frees < 0), and "self" = that minus
  // the direct children's (negative when the call frees more than it allocates). CPU = records
  // of the CPU allocator, device = of the CUDA caching allocator.
  int64_t cpu_memory = 0, self_cpu_memory = 0, device_memory = 0, self_device_memory = 0;
  std::string input_shapes;  // group_by_input_shape: str(input_shapes) of the first call
  // group_by_stack_n: the first call's stack (with_stack), innermost first, cut to n frames.
  std::vector<std::string> stack;
};

struct GroupOptions {
  bool group_by_input_shape = false;  // rows per (name, input shapes), as Python's option
  // > 0: rows per (name, the first n frames of the op's stack), and a "Source Location" column,
  // as key_averages(group_by_stack_n=n). The stacks are Event::stack: a trace recorded with
  // with_stack and, from Python, experimental_config=_ExperimentalConfig(verbose=True) (without
  // it Python records no stack per op, and its table shows none: neither does this one).
  int group_by_stack_n = 0;
};

struct TableOptions {
  // cpu_time_total, cuda_time_total, self_cpu_time_total, self_cuda_time_total, count
  // ("device" may replace "cuda", as in Python); "" keeps key_averages order (Python's None).
  std::string sort_by = "cpu_time_total";
  int row_limit = -1;             // -1: every row (Python's default is 100)
  int max_name_width = 55;        // longer names end in "..."; <= 0: no limit
  bool with_flops = false;        // a "Total FLOPs" column (Python: the profile's with_flops)
  int max_src_column_width = 75;  // the Source Location column (Python's max_src_column_width)
  // profile_memory: the "CPU Mem" and "Self CPU Mem" columns, and "CUDA Mem", "Self CUDA Mem"
  // when use_device and some row has device self memory > 0 (Python's rules).
  bool profile_memory = false;
  bool use_device = false;  // Python's use_device ("cuda" when the profile recorded the GPU)
};

// The sort keys format_table accepts: every numeric attribute of Python's FunctionEventAvg
// (cpu_time, cuda_time, cpu_time_total, ..., count, flops, *_memory_usage); "device" and "xpu"
// may stand for "cuda".
const std::vector<std::string>& table_sort_keys();

// Groups the trace's events as Python's EventList.key_averages() does.
std::vector<TableRow> key_averages(const Trace& trace, const GroupOptions& group = {});

// The table text. Throws std::invalid_argument for an unknown sort_by (the message lists the
// accepted values). No rows: "" (as Python).
std::string format_table(const std::vector<TableRow>& rows, const TableOptions& opts = {});

// Both steps at once; the FLOPs column appears when the trace was recorded with_flops (or
// opts.with_flops), the memory columns when it was recorded with profile_memory (or
// opts.profile_memory), as in Python.
std::string key_averages_table(const Trace& trace, const TableOptions& opts = {},
                               const GroupOptions& group = {});

// The Name cell of a row: the key, cut to max_name_width with "..." as Python cuts it.
std::string table_name_cell(const std::string& key, int max_name_width);
// Python's _format_time: "12.345us", "1.234ms", "1.234s" (3 decimals, unit by magnitude).
std::string format_time_us(double us);
// Python's _format_memory: "12 B", "1.50 KB", "3.00 MB", "1.17 GB" (1024-based; negative too).
std::string format_memory(int64_t bytes);
// Python's _format_time_share: "12.34%", or "NaN" when the total is 0.
std::string format_time_share(double part_us, double total_us);
// Event names Python's table never shows (profiler bookkeeping: _filter_name in profiler.py).
bool is_filtered_name(std::string_view name);

}  // namespace wb
