// inspect: read any Kineto trace (ours or Python's, .json or .json.gz) the way the workbook
// teaches, and print what it shows, with the events, times and steps behind each finding.
//
//   inspect TRACE                               the cheatsheet's patterns
//   inspect TRACE --chapter 04_compute_bound_4096 --size 4096
//                                               a chapter's expectations instead
//   inspect TRACE --format markdown|json --annotation my_range
//
// Without --annotation, the annotation rules are judged for each user annotation found at the
// top of the steps (train_step, matmul_add, ...). Throughput comes from the trace's FLOPs when it
// was recorded with with_flops; otherwise it says which flags would give it.
//
// Exit codes: 0 printed, 1 unreadable trace or one with no events, 2 bad flags.
#include <CLI/CLI.hpp>

#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "workbook/cli.hpp"
#include "workbook/keep_until_exit.hpp"
#include "workbook/lessons.hpp"
#include "workbook/trace_reader.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Apply the workbook's profiler-reading rules to a Kineto trace."};
  app.footer("Exit codes: 0 printed, 1 unreadable trace or a trace with no events, 2 bad flags.");
  std::string path, format = "text", chapter, dtype = "bf16";
  wb::FactOptions opts;
  app.add_option("trace", path, "Kineto trace (.json or .json.gz)")->required();
  app.add_option("--format", format, "text, markdown or json")
      ->check(CLI::IsMember({"text", "markdown", "json"}));
  opts.annotation = "";  // find the user's annotations (top level inside the steps)
  app.add_option("--annotation", opts.annotation,
                 "record_function range to look into (default: each top-level annotation "
                 "inside the steps, found in the trace)");
  std::vector<std::string> chapters;
  for (const auto& s : wb::lesson_specs()) chapters.push_back(s.chapter);
  app.add_option("--chapter", chapter, "judge against this chapter's expectations")
      ->check(CLI::IsMember(chapters));
  app.add_option("--size", opts.problem.n, "N of the N x N problem (enables % of peak)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  app.add_option("--batch", opts.problem.batch, "batch of (B, N, N) inputs")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  app.add_option("--dtype", dtype,
                 "element type for --size's napkin math, and for the trace's FLOPs when the trace records no "
                 "input types (with record_shapes it does, and its type wins): bf16, fp16 or fp32")
      ->capture_default_str()
      ->check(CLI::IsMember({"bf16", "fp16", "fp32"}));
  if (auto rc = wb::parse_flags(app, argc, argv)) return *rc;
  opts.problem.dtype_bytes = dtype == "fp32" ? 4 : 2;

  try {
    // Left to the OS when the process ends (below): freeing ~260k events of a 100 MB trace
    // one by one costs tens of ms.
    auto trace = std::make_unique<wb::Trace>(wb::read_trace_with_events(path));
    auto model = std::make_unique<wb::TraceModel>(*trace);
    const wb::LessonsReport report = chapter.empty()
                                         ? wb::inspect_trace(*model, opts)
                                         : wb::check_lessons(*model, *wb::find_lesson_spec(chapter), opts);
    const std::map<std::string, wb::Format> formats = {
        {"text", wb::Format::Text}, {"markdown", wb::Format::Markdown}, {"json", wb::Format::Json}};
    std::cout << wb::render_lessons(report, formats.at(format));
    std::cout.flush();
    wb::keep_until_exit(trace.release(), model.release());
    return 0;
  } catch (const wb::TraceError& e) {
    std::cerr << "inspect: cannot read trace: " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "inspect: " << e.what() << "\n";
  }
  return 1;
}
