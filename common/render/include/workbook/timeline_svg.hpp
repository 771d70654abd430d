// A static picture of a trace: the part of Perfetto a newcomer needs, as one SVG file.
//
// Every chapter writes one next to its trace, for the window that shows its lesson, because
// a picture in the README is read by people who will never open Perfetto. What it draws:
//   * a time axis (µs/ms), measured from the start of the trace like Perfetto's ruler;
//   * ProfilerStep windows, shaded and labelled with their width;
//   * one lane per CPU thread, nested bars one row per call depth
//     (ProfilerStep#N > matmul_add > aten::matmul > aten::mm > cuLaunchKernelEx);
//   * one lane per GPU stream: GPU-side annotations, kernels / memcpy / memset, and the
//     share of each step the stream sat idle;
//   * thin flow lines from each launch call to the work it queued;
//   * optional highlights (an event, or a time range such as a gap) with a caption.
// Names that do not fit are shortened; the tooltip (<title>) has the name, and a long one (a
// demangled kernel signature) is written in full once, in a numbered list under the picture.
// A window of steps shows the work launched in those steps (not a warm-up's, still on the GPU);
// a CUDA graph launch gets one arrow, to its first kernel.
// The output is deterministic: the same trace and options give the same bytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "workbook/trace_model.hpp"

namespace wb {

// Something to call out in the picture, with a short caption.
struct Highlight {
  std::string label;
  std::optional<EventIdx> event;  // set: outline this event's bar
  int64_t start_ns = 0;           // else: shade this time range across all lanes (a gap, a window)
  int64_t end_ns = 0;

  static Highlight of_event(EventIdx e, std::string label) {
    Highlight h;
    h.label = std::move(label);
    h.event = e;
    return h;
  }
  static Highlight of_range(int64_t start_ns, int64_t end_ns, std::string label) {
    Highlight h;
    h.label = std::move(label);
    h.start_ns = start_ns;
    h.end_ns = end_ns;
    return h;
  }
};

struct TimelineOptions {
  // The window, in the clock of Event::start_ns. The first that is set wins:
  //   from_ns/to_ns (both)  ->  exactly that range;
  //   first_step/last_step  ->  ProfilerStep#first .. #last (either may be left out);
  //   nothing               ->  all ProfilerSteps, or the whole trace when it has none.
  // A step window is stretched to the end of the GPU work launched inside it, because at
  // large sizes the GPU runs hundreds of µs behind the CPU.
  std::optional<int64_t> from_ns, to_ns;
  std::optional<int> first_step, last_step;

  std::string title;    // empty: the trace's source name
  int width_px = 1200;  // whole picture, 400..20000
  int max_depth = 6;    // CPU call-depth rows drawn per thread (1..32)
  bool flows = true;    // launch -> kernel lines
  // > 0: bars narrower than this (px) that touch on the same row are drawn as one grey bar
  // ("N events merged" in its tooltip), so a long window stays a small file. 0 (default): every
  // bar, unless the window holds more than 2,000 events; then the bars narrower than 1 px merge
  // (no eye tells them apart; a recorded picture stays under 1 MB). < 0: every bar, always.
  double merge_below_px = 0;
  std::vector<Highlight> highlights;
};

// The SVG document. Throws std::invalid_argument on options that make no sense (an empty or
// inverted range, steps the trace does not have, a width out of range); an empty window or a
// CPU-only trace is not an error: the picture says so.
std::string render_timeline_svg(const TraceModel& model, const TimelineOptions& opts);

// Renders and writes to `path` (parent directories must exist). Throws std::runtime_error
// naming the path when the file cannot be written.
void write_timeline_svg(const TraceModel& model, const TimelineOptions& opts,
                        const std::filesystem::path& path);

// For big traces: the steps a picture shows by default (the first `count` steps; all when the
// trace has no more), and one line over ALL steps: their number, CPU step width and GPU work
// per step (median, min, max).
struct DefaultSteps {
  bool limited = false;       // true: fewer steps than the trace has
  int first = -1, last = -1;  // ProfilerStep numbers; -1: the trace has no steps
  int total = 0, trace_first = -1, trace_last = -1;
};
DefaultSteps default_steps(const TraceModel& model, int count = 3);
std::string steps_summary(const TraceModel& model);

// The instant the time axis calls 0: the earliest event start in the trace (Perfetto's origin).
// Tools that take times "from trace start" add this to get Event::start_ns values.
int64_t timeline_origin_ns(const Trace& trace);

}  // namespace wb
