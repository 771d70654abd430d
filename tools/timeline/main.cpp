// timeline: draw a Kineto trace (ours or Python's) as an SVG picture.
//
//   timeline TRACE -o out.svg                     the first 3 ProfilerSteps (all, when there are
//                                                 no more; or the whole trace without steps);
//                                                 says which, and prints a line over all steps
//   timeline TRACE -o out.svg --steps 2-4         ProfilerStep#2 .. #4
//   timeline TRACE -o out.svg --from-us 120 --to-us 400
//                                                 a time range, in µs since the trace starts
//                                                 (the numbers on the picture's axis)
//
// Exit codes: 0 written, 1 unreadable trace or one with no events (or the SVG could not be
// written), 2 bad flags.
// Every flag is checked before the trace is read.
#include <CLI/CLI.hpp>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>

#include "workbook/cli.hpp"
#include "workbook/fs_util.hpp"
#include "workbook/trace_model.hpp"
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

// -o must name a file in a folder we can write to. Throws CLI::ValidationError.
void check_output(const std::string& out) {
  namespace fs = std::filesystem;
  const fs::path p(out);
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code ec;
  if (fs::is_directory(p, ec))
    throw CLI::ValidationError("--output", "'" + out + "' is a folder; name the .svg file to write");
  if (!fs::is_directory(dir, ec))
    throw CLI::ValidationError("--output", "folder '" + dir.string() + "' does not exist");
  // Try it (access() would say yes to root even where nothing can be created).
  std::string probe = (dir / ".timeline-probe-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) throw CLI::ValidationError("--output", "folder '" + dir.string() + "' is not writable");
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Draw a Kineto trace as an SVG timeline: CPU threads, GPU streams, steps, launches."};
  app.footer(
      "Exit codes: 0 written, 1 unreadable trace or a trace with no events (or the SVG could not be "
      "written), 2 bad flags.");
  std::string trace_path, out_path, steps, title;
  double from_us = 0, to_us = 0;
  int width = 1200, depth = 6;
  bool no_flows = false, every_bar = false;
  app.add_option("trace", trace_path, "Kineto trace (.json or .json.gz)")->required();
  app.add_option("-o,--output", out_path, "SVG file to write")->required();
  app.add_option("--steps", steps,
                 "ProfilerStep range to show: N or FIRST-LAST (default: the first 3 steps, or all when "
                 "there are no more; the whole trace when it has no steps)");
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
  app.add_flag("--every-bar", every_bar,
               "draw every event, even those narrower than a pixel (default: merge them, so a "
               "long window stays a small file)");
  wb::TimelineOptions opts;
  if (auto rc = wb::parse_flags(app, argc, argv, [&] {
        opts.title = title;
        opts.width_px = width;
        opts.max_depth = depth;
        opts.flows = !no_flows;
        opts.merge_below_px = every_bar ? -1 : 1.0;  // < 0: every bar, however crowded
        if (!steps.empty()) {
          const auto [first, last] = parse_steps(steps);
          if (first > last)
            throw CLI::ValidationError("--steps", "FIRST-LAST needs FIRST <= LAST, got '" + steps + "'");
          opts.first_step = first;
          opts.last_step = last;
        }
        if (*from && !(std::abs(from_us) < 1e12 && std::abs(to_us) < 1e12))
          throw CLI::ValidationError("--from-us/--to-us", "must be finite and below 1e12 µs");
        if (*from && !(from_us < to_us))
          throw CLI::ValidationError("--from-us/--to-us", "the window must end after it starts");
        check_output(out_path);
      }))
    return *rc;

  try {
    const wb::Trace trace = wb::read_trace_with_events(trace_path);
    const wb::TraceModel model(trace);
    if (*from) {
      const int64_t origin = wb::timeline_origin_ns(trace);
      opts.from_ns = origin + static_cast<int64_t>(from_us * 1000.0);
      opts.to_ns = origin + static_cast<int64_t>(to_us * 1000.0);
    }
    const wb::DefaultSteps d = wb::default_steps(model);
    if (!*from && steps.empty() && d.limited) {
      opts.first_step = d.first;
      opts.last_step = d.last;
    }
    const std::string svg = wb::render_timeline_svg(model, opts);
    wb::write_file_atomic(out_path, svg);  // never half a picture
    std::cout << "timeline: wrote " << out_path << " ("
              << (svg.size() < (1 << 20) ? std::to_string((svg.size() + 512) / 1024) + " KB"
                                         : std::to_string((svg.size() + (1 << 19)) >> 20) + " MB")
              << ")\n";
    if (!*from && steps.empty() && d.limited)
      std::cout << "timeline: drew ProfilerStep#" << d.first << "-#" << d.last << " of " << d.total
                << " steps (#" << d.trace_first << "-#" << d.trace_last
                << "); pick others with --steps N or --steps FIRST-LAST\n";
    std::cout << "timeline: " << wb::steps_summary(model) << "\n";
    return 0;
  } catch (const wb::TraceError& e) {
    std::cerr << "timeline: cannot read trace: " << e.what() << "\n";
  } catch (const std::exception& e) {
    const std::string what = e.what();  // the picture's own errors already say "timeline:"
    std::cerr << (what.rfind("timeline:", 0) == 0 ? "" : "timeline: ") << what << "\n";
  }
  return 1;
}
