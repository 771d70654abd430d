// timeline: draw a Kineto trace (ours or Python's) as an SVG picture.
//
//   timeline TRACE -o out.svg                     all ProfilerSteps (or the whole trace)
//   timeline TRACE -o out.svg --steps 2-4         ProfilerStep#2 .. #4
//   timeline TRACE -o out.svg --from-us 120 --to-us 400
//                                                 a time range, in µs since the trace starts
//                                                 (the numbers on the picture's axis)
#include <CLI/CLI.hpp>

#include <cmath>
#include <exception>
#include <iostream>
#include <string>

#include "workbook/model.hpp"
#include "workbook/timeline_svg.hpp"
#include "workbook/trace_reader.hpp"

namespace {

// "3" or "2-4" -> first, last. Throws CLI::ValidationError with the offending text.
std::pair<int, int> parse_steps(const std::string& s) {
  try {
    size_t used = 0;
    const int first = std::stoi(s, &used);
    if (used == s.size()) return {first, first};
    if (s[used] != '-') throw std::invalid_argument(s);
    size_t used2 = 0;
    const std::string rest = s.substr(used + 1);
    const int last = std::stoi(rest, &used2);
    if (used2 != rest.size()) throw std::invalid_argument(s);
    return {first, last};
  } catch (const std::logic_error&) {
    throw CLI::ValidationError("--steps", "expected N or FIRST-LAST (e.g. 2-4), got '" + s + "'");
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Draw a Kineto trace as an SVG timeline: CPU threads, GPU streams, steps, launches."};
  std::string trace_path, out_path, steps, title;
  double from_us = 0, to_us = 0;
  int width = 1200, depth = 6;
  bool no_flows = false;
  app.add_option("trace", trace_path, "Kineto trace (.json or .json.gz)")->required();
  app.add_option("-o,--output", out_path, "SVG file to write")->required();
  app.add_option("--steps", steps, "ProfilerStep range to show: N or FIRST-LAST (default: all steps)");
  auto* from = app.add_option("--from-us", from_us, "window start, µs since trace start (the axis numbers)");
  auto* to = app.add_option("--to-us", to_us, "window end, µs since trace start");
  from->needs(to);
  to->needs(from);
  from->excludes("--steps");
  to->excludes("--steps");
  app.add_option("--title", title, "title (default: the trace's file name)");
  app.add_option("--width", width, "picture width in px")->check(CLI::Range(400, 20000));
  app.add_option("--depth", depth, "CPU call-depth rows to draw")->check(CLI::Range(1, 32));
  app.add_flag("--no-flows", no_flows, "leave out the launch -> kernel lines");
  CLI11_PARSE(app, argc, argv);

  try {
    const wb::Trace trace = wb::read_trace(trace_path);
    const wb::TraceModel model(trace);
    wb::TimelineOptions opts;
    opts.title = title;
    opts.width_px = width;
    opts.max_depth = depth;
    opts.flows = !no_flows;
    if (!steps.empty()) {
      const auto [first, last] = parse_steps(steps);
      opts.first_step = first;
      opts.last_step = last;
    }
    if (*from) {
      if (!(std::abs(from_us) < 1e12 && std::abs(to_us) < 1e12))
        throw std::invalid_argument("timeline: --from-us/--to-us must be finite and below 1e12 µs");
      const int64_t origin = wb::timeline_origin_ns(trace);
      opts.from_ns = origin + static_cast<int64_t>(from_us * 1000.0);
      opts.to_ns = origin + static_cast<int64_t>(to_us * 1000.0);
    }
    wb::write_timeline_svg(model, opts, out_path);
    std::cout << "timeline: wrote " << out_path << "\n";
    return 0;
  } catch (const CLI::Error& e) {
    return app.exit(e);
  } catch (const wb::TraceError& e) {
    std::cerr << "timeline: cannot read trace: " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
  }
  return 1;
}
