// inspect: read any Kineto trace (ours or Python's, .json or .json.gz) the way the workbook
// teaches, and print what it shows, with the events, times and steps behind each finding.
//
//   inspect TRACE                               the cheatsheet's patterns
//   inspect TRACE --chapter 04_compute_bound_4096 --size 4096
//                                               a chapter's expectations instead
//   inspect TRACE --format markdown|json --annotation my_range
//
// Exit codes: 0 printed, 1 unreadable trace, 2 bad flags.
#include <CLI/CLI.hpp>

#include <iostream>
#include <map>
#include <string>

#include "workbook/lessons.hpp"
#include "workbook/trace_reader.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Apply the workbook's profiler-reading rules to a Kineto trace."};
  std::string path, format = "text", chapter, dtype = "bf16";
  wb::FactOptions opts;
  app.add_option("trace", path, "Kineto trace (.json or .json.gz)")->required();
  app.add_option("--format", format, "text, markdown or json")
      ->check(CLI::IsMember({"text", "markdown", "json"}));
  app.add_option("--annotation", opts.annotation, "record_function range to look into")
      ->capture_default_str();
  std::vector<std::string> chapters;
  for (const auto& s : wb::lesson_specs()) chapters.push_back(s.chapter);
  app.add_option("--chapter", chapter, "judge against this chapter's expectations")
      ->check(CLI::IsMember(chapters));
  app.add_option("--size", opts.problem.n, "N of the N x N problem (enables % of peak)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  app.add_option("--batch", opts.problem.batch, "batch of (B, N, N) inputs")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  app.add_option("--dtype", dtype, "element type: bf16, fp16 or fp32")
      ->check(CLI::IsMember({"bf16", "fp16", "fp32"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and the usage hint
    return 2;
  }
  opts.problem.dtype_bytes = dtype == "fp32" ? 4 : 2;

  try {
    const wb::Trace trace = wb::read_trace(path);
    const wb::TraceModel model(trace);
    const wb::LessonsReport report =
        chapter.empty() ? wb::inspect_trace(model, opts)
                        : wb::check_lessons(model, *wb::find_lesson_spec(chapter), opts);
    const std::map<std::string, wb::Format> formats = {
        {"text", wb::Format::Text}, {"markdown", wb::Format::Markdown}, {"json", wb::Format::Json}};
    std::cout << wb::render_lessons(report, formats.at(format));
    return 0;
  } catch (const wb::TraceError& e) {
    std::cerr << "inspect: cannot read trace: " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "inspect: " << e.what() << "\n";
  }
  return 1;
}
