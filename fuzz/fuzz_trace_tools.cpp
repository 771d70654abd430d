// libFuzzer target: arbitrary bytes -> parse_trace -> what the three tools do with a trace:
// `table` (key_averages().table(), plain and grouped by input shape), `diff` (the trace
// against itself) and `inspect` (every rule, annotations found, text and JSON). The reader may
// refuse the input (wb::TraceError); once it has parsed, nothing downstream may crash, trip a
// sanitizer or throw. Invariants: a trace diffed against itself has no change, and every
// rendering is non-empty. The reader-only target (fuzz_trace_reader.cpp) runs more inputs a
// second; this one covers the code behind the tools. Build and run: fuzz/README.md.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "workbook/lessons.hpp"
#include "workbook/table.hpp"
#include "workbook/trace_diff.hpp"
#include "workbook/trace_model.hpp"
#include "workbook/trace_reader.hpp"
#include "fuzz_input.hpp"

namespace {

using fuzz::require;

void exercise(const wb::Trace& trace) {
  // table: Python's default sort, and the grouped variant with a row limit and a narrow name.
  wb::TableOptions t;
  t.row_limit = 100;
  const std::string table = wb::key_averages_table(trace, t);
  t.sort_by = "self_cpu_time_total";
  t.row_limit = 5;
  t.max_name_width = 8;
  (void)wb::key_averages_table(trace, t, wb::GroupOptions{true});
  const auto rows = wb::key_averages(trace);
  require(rows.empty() == table.empty());  // no rows: "" (as Python)

  const wb::TraceModel model(trace);
  // diff: the trace against itself.
  const wb::TraceDiff d = wb::diff_traces(model, model);
  require(d.changes() == 0 && d.renamed.empty());
  require(!wb::render_diff(d, wb::Format::Text, true).empty());
  require(!wb::render_diff(d, wb::Format::Json).empty());

  // inspect: the cheatsheet's rules, finding the annotations itself (as the tool does).
  wb::FactOptions o;
  o.annotation = "";
  const wb::LessonsReport r = wb::inspect_trace(model, o);
  require(!wb::render_lessons(r, wb::Format::Text).empty());
  require(!wb::render_lessons(r, wb::Format::Json).empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // An exception escaping from exercise() is a bug: libFuzzer reports it.
  if (const auto trace = fuzz::parse_input(data, size)) exercise(*trace);
  return 0;
}
