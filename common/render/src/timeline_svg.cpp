// Renders a TraceModel window as a self-contained SVG (see timeline_svg.hpp for what is drawn).
//
// Layout, top to bottom:  title + subtitle, legend, time axis, step band, CPU lanes, GPU lanes,
// numbered highlight captions, a one-line hint. The plot area is drawn first into its own
// buffers (its height is only known once lanes are packed) and then placed under the legend.
// Every element is built with svg::Element (escaping in one place, no tag strings here), every
// number goes through one formatter (svg::num: to_chars, fixed) so the bytes never depend on
// the locale, and every loop walks vectors in a fixed order, so the output is deterministic.
#include "workbook/timeline_svg.hpp"

#include "workbook/memory.hpp"
#include "workbook/rules.hpp"
#include "workbook/stats.hpp"
#include "workbook/svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string_view>

namespace wb {
namespace {

using svg::Element;
using svg::num;

// ---------------------------------------------------------------- geometry and fonts
constexpr double kGutter = 176;  // left column: lane names
constexpr double kRightMargin = 18;
constexpr double kRowH = 17;  // one call-depth row
constexpr double kBarH = 14;
constexpr double kMinBarW = 1.5;  // a 1 µs kernel in a 400 µs window must still show
constexpr double kFont = 11;
constexpr double kCharW = kFont * 0.6;  // DejaVu Sans averages a bit under 0.6 em: safe side
constexpr double kLaneGap = 12;
constexpr int kMaxGpuRows = 4;
// A window with more events than this merges the bars narrower than a pixel (merge_below_px 0).
constexpr size_t kAutoMergeEvents = 2000;
// Names longer than this are written once under the picture, not in every tooltip.
constexpr size_t kLongName = 80;  // overlapping work on one stream: rows before we stack

constexpr const char* kFontFamily = "DejaVu Sans, Helvetica, Arial, sans-serif";
constexpr const char* kInk = "#1b1f24";
constexpr const char* kMuted = "#5f6b7a";
constexpr const char* kAccent = "#d9480f";  // highlights
constexpr const char* kFlow = "#3b5bdb";

// Centred italic text in the muted ink: the per-step idle share and the notes between lanes.
Element muted_note(const char* cls, double x, double y, const char* font_size, const std::string& text) {
  return Element("text")
      .attr("class", cls)
      .attr("x", x)
      .attr("y", y)
      .attr("font-size", font_size)
      .attr("font-style", "italic")
      .attr("text-anchor", "middle")
      .attr("fill", kMuted)
      .text(text);
}

// ---------------------------------------------------------------- categories and colours
// One colour per kind of work; the palette keeps CPU work in cool blues/violets, the launch
// path in warm oranges (the part a newcomer should follow) and GPU work in greens/pinks.
enum class Cat { Step, Annotation, CpuOp, Runtime, Driver, Kernel, Memcpy, Memset, GpuAnnotation, Other };
struct CatStyle {
  const char* label;
  const char* fill;
};
constexpr std::array<CatStyle, 10> kCatStyles{{
    {"ProfilerStep", "#cfd6e1"},
    {"user annotation", "#c9b8ea"},
    {"CPU op (aten::...)", "#8ec5f0"},
    {"CUDA runtime call", "#f8c46f"},
    {"CUDA driver call", "#f5a07a"},
    {"kernel", "#77c48a"},
    {"memcpy", "#f29cb8"},
    {"memset", "#d8a6e3"},
    {"GPU-side annotation", "#e0d8f2"},
    {"other", "#c9c9c9"},
}};
const CatStyle& style(Cat c) { return kCatStyles[static_cast<size_t>(c)]; }

Cat category_of(const Event& e) {
  switch (e.kind) {
    case Kind::CpuOp: return Cat::CpuOp;
    case Kind::UserAnnotation: return is_step_name(e.name) ? Cat::Step : Cat::Annotation;
    case Kind::GpuUserAnnotation: return Cat::GpuAnnotation;
    case Kind::Runtime: return Cat::Runtime;
    case Kind::Driver: return Cat::Driver;
    case Kind::Kernel: return Cat::Kernel;
    case Kind::Memcpy: return Cat::Memcpy;
    case Kind::Memset: return Cat::Memset;
    default: return Cat::Other;
  }
}

// CPU-lane events worth a bar: the whole-capture span and instants are not work.
bool is_cpu_bar(const Event& e) { return !e.on_device() && e.kind != Kind::Trace && e.kind != Kind::Instant; }

// ---------------------------------------------------------------- numbers and text
std::string fmt_duration(int64_t ns) {
  const double d = static_cast<double>(ns);
  if (ns < 1'000'000) return num(d / 1e3, 1) + " µs";
  if (ns < 1'000'000'000) return num(d / 1e6, 2) + " ms";
  return num(d / 1e9, 3) + " s";
}

// The code points of `s` (a broken byte is one), so widths count characters, not bytes.
std::vector<std::string_view> split_code_points(std::string_view s) {
  std::vector<std::string_view> cps;
  for (size_t i = 0; i < s.size();) {
    const size_t at = i;
    svg::next_code_point(s, i);
    cps.push_back(s.substr(at, i - at));
  }
  return cps;
}

// The label that fits in `width_px`: the whole name, or a prefix ending in "…", or nothing
// when not even three characters would fit (the tooltip still has it).
std::string fit_label(std::string_view name, double width_px) {
  const auto cps = split_code_points(name);
  const auto room = static_cast<size_t>(std::max(0.0, (width_px - 6) / kCharW));
  if (cps.size() <= room) return std::string(name);
  if (room < 4) return {};
  std::string out;
  for (size_t k = 0; k + 1 < room; ++k) out += cps[k];
  return out + "…";
}

// What a bar says. Kernel names are demangled C++ signatures
// ("void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<...>>(...)");
// the function's own name is what a reader recognises, so bars show that and keep the rest
// for the tooltip. Where even that does not fit, the namespace goes next ("aten::matmul" ->
// "matmul"): "matm…" says more than "aten…".
std::string bar_label(const Event& e, double width_px) {
  std::string_view n = e.name;
  if (e.kind == Kind::Kernel) {
    if (n.rfind("void ", 0) == 0) n.remove_prefix(5);
    // a kernel in an unnamed namespace: its name starts with a parenthesis that is not its arguments
    if (n.rfind("(anonymous namespace)::", 0) == 0) n.remove_prefix(23);
    n = n.substr(0, std::min(n.find('<'), n.find('(')));
    if (n.empty()) n = e.name;
  }
  if (const size_t fits = static_cast<size_t>(std::max(0.0, (width_px - 6) / kCharW));
      split_code_points(n).size() <= fits)
    return std::string(n);
  if (const auto colon = n.rfind("::"); colon != std::string_view::npos && colon + 2 < n.size())
    n.remove_prefix(colon + 2);
  return fit_label(n, width_px);
}

// ---------------------------------------------------------------- window
struct Window {
  int64_t start = 0, end = 1;
  std::string what;  // "ProfilerStep#2 – #4", "12.0 – 80.0 µs", "whole trace"
};

// Beyond a day the picture means nothing, and corrupt times must not overflow the arithmetic.
void check_span(int64_t start, int64_t end) {
  if (static_cast<double>(end) - static_cast<double>(start) > 8.64e13)
    throw std::invalid_argument(
        "timeline: the window is longer than a day; the trace's times look wrong, or give a smaller range");
}

Window resolve_window(const TraceModel& m, const TimelineOptions& o, int64_t origin) {
  const auto& steps = m.steps();
  Window w;
  if (o.from_ns.has_value() != o.to_ns.has_value())
    throw std::invalid_argument("timeline: give both ends of the time range (from and to), or neither");
  if (o.from_ns) {
    check_span(*o.from_ns, *o.to_ns);
    if (*o.to_ns <= *o.from_ns)
      throw std::invalid_argument("timeline: empty time range: it must end after it starts (from " +
                                  fmt_duration(*o.from_ns - origin) + " to " +
                                  fmt_duration(*o.to_ns - origin) + ")");
    w.start = *o.from_ns;
    w.end = *o.to_ns;
    w.what = fmt_duration(w.start - origin) + " – " + fmt_duration(w.end - origin);
    return w;
  }

  const bool want_steps = o.first_step || o.last_step;
  if (want_steps && steps.empty())
    throw std::invalid_argument(
        "timeline: steps were asked for, but the trace has no ProfilerStep#N annotations; give a time range "
        "instead");
  if (!steps.empty()) {
    const int first = o.first_step.value_or(steps.front().number);
    const int last = o.last_step.value_or(steps.back().number);
    if (first > last)
      throw std::invalid_argument("timeline: step range " + std::to_string(first) + "-" +
                                  std::to_string(last) + " is inverted");
    bool any = false;
    int64_t s = 0, e = 0;
    for (const auto& st : steps) {
      if (st.number < first || st.number > last) continue;
      s = any ? std::min(s, st.start_ns) : st.start_ns;
      e = any ? std::max(e, st.end_ns) : st.end_ns;
      any = true;
    }
    if (!any)
      throw std::invalid_argument("timeline: the trace has ProfilerStep#" +
                                  std::to_string(steps.front().number) + " to #" +
                                  std::to_string(steps.back().number) + ", none in " + std::to_string(first) +
                                  "-" + std::to_string(last));
    // Keep the GPU work these steps queued: at large sizes it finishes long after the CPU step.
    const int64_t cpu_end = e;
    for (const auto& lane : m.gpu_lanes())
      for (EventIdx i : lane.events)
        if (auto l = m.launcher(i); l && m.at(*l).start_ns >= s && m.at(*l).start_ns <= cpu_end)
          e = std::max(e, m.at(i).end_ns());
    w.start = s;
    w.end = std::max(e, s + 1);
    const std::string first_name = std::string(kStepPrefix) + std::to_string(first);
    w.what = first == last ? first_name : first_name + " – #" + std::to_string(last);
  } else {
    bool any = false;
    for (const auto& ev : m.trace().events) {
      if (ev.kind == Kind::Trace || ev.kind == Kind::Instant) continue;
      w.start = any ? std::min(w.start, ev.start_ns) : ev.start_ns;
      w.end = any ? std::max(w.end, ev.end_ns()) : ev.end_ns();
      any = true;
    }
    if (!any) {
      w.start = origin;
      w.end = origin + 1000;
    }
    w.end = std::max(w.end, w.start + 1);
    w.what = "whole trace";
  }
  check_span(w.start, w.end);
  // A little air on both sides so the first and last bars do not touch the frame.
  const int64_t pad = std::max<int64_t>(1, (w.end - w.start) / 50);
  w.start -= pad;
  w.end += pad;
  return w;
}

// ---------------------------------------------------------------- the renderer
struct Box {
  double x = 0, y = 0, w = 0, h = 0;
};

class Renderer {
 public:
  Renderer(const TraceModel& m, const TimelineOptions& o)
      : m_(m),
        o_(o),
        origin_(timeline_origin_ns(m.trace())),
        win_(resolve_window(m, o, origin_)),
        x0_(kGutter),
        x1_(o.width_px - kRightMargin),
        boxes_(m.trace().events.size()) {
    const auto& evs = m.trace().events;
    merged_event_.assign(evs.size(), false);
    size_t in_win = 0;
    for (EventIdx i = 0; i < evs.size(); ++i) {
      if (evs[i].kind == Kind::GpuUserAnnotation) gpu_annotations_.push_back(i);
      if (evs[i].kind != Kind::Instant && in_window(evs[i])) ++in_win;
    }
    // 0 (default): a crowded window merges the bars narrower than a pixel, which no eye can tell
    // apart anyway; that keeps any picture well under a megabyte.
    if (!o.from_ns && !m.steps().empty()) launch_from_ = win_.start;
    merge_px_ = o.merge_below_px > 0 ? o.merge_below_px
                                     : (o.merge_below_px == 0 && in_win > kAutoMergeEvents ? 1.0 : 0.0);
  }

  std::string render();

 private:
  double x_of(int64_t t) const {
    const double f = static_cast<double>(t - win_.start) / static_cast<double>(win_.end - win_.start);
    return x0_ + f * (x1_ - x0_);
  }
  bool in_window(const Event& e) const { return e.end_ns() >= win_.start && e.start_ns <= win_.end; }
  // The bar of [start, end) clipped to the window, at least kMinBarW wide.
  Box bar_box(const Event& e, double y) const {
    const double a = x_of(std::max(e.start_ns, win_.start));
    const double b = x_of(std::min(e.end_ns(), win_.end));
    double w = std::max(b - a, kMinBarW);
    const double x = std::min(a, x1_ - w);
    return {x, y, w, kBarH};
  }

  void draw_axis(double y);
  double draw_step_band(double y);
  double draw_cpu_lane(const CpuLane& lane, double y);
  double draw_gpu_lane(const GpuLane& lane, double y);
  double draw_note_lane(const std::string& text, double y);
  double draw_memory_lane(double y);
  void draw_memory_peak(Element& g, const MemorySeries& s, const MemoryPoint& peak, double px, double py,
                        double y, size_t points);
  void draw_bar(Element& lane, EventIdx i, double y);
  void draw_step_shading(double top, double bottom);
  void draw_flows();
  void draw_highlights(double top, double bottom);
  double draw_legend(Element& out, double y) const;
  double draw_plot();
  double draw_captions(Element& tail, double lanes_bottom);
  std::string title_text() const;
  double draw_header(Element& head, const std::string& title);
  std::string assemble(Element& head, Element& tail, const std::string& title, double plot_top,
                       double height);
  double lane_title(Element& out, double y, const std::string& name, const std::string& sub);
  void row_label(Element& lane, double y, const std::string& text);

  const TraceModel& m_;
  const TimelineOptions& o_;
  int64_t origin_;
  Window win_;
  double x0_, x1_;
  std::vector<std::optional<Box>> boxes_;  // where each drawn event ended up
  std::vector<EventIdx> gpu_annotations_;  // GPU-side annotations, file order
  std::array<bool, kCatStyles.size()> used_{};
  bool any_flow_ = false;
  int64_t drawn_ = 0;
  int64_t merged_ = 0;              // bars folded into a merged bar (merge_below_px)
  double merge_px_ = 0;             // the threshold in use (merge_below_px, or the automatic one)
  std::vector<bool> merged_event_;  // drawn inside a merged run: no arrow of its own
  int64_t launched_before_ = 0;
  int64_t launch_from_ = INT64_MIN;  // device work launched before this is not the window's  // device work
                                     // left out: launched before the window's first step
  // Long names (demangled kernels) are written once, in the list under the plot; a tooltip
  // names the short form and the number in that list.
  std::vector<std::string> long_names_;
  std::map<std::string, size_t, std::less<>> long_name_index_;
  std::string tooltip_name(const Event& e);
  // A run of too-narrow bars on one row, drawn as one bar when the run ends.
  struct Run {
    double x0 = 0, x1 = 0, y = 0;
    int64_t count = 0;
  };
  std::map<int64_t, Run> runs_;  // by row (y in 1/100 px)
  void flush_run(Run& r, Element& out);

 public:
  int64_t merged() const { return merged_; }

 private:
  // Plot layers, stacked in this order so flows and highlights sit on top of the bars.
  Element bg_ = Element::fragment(), lanes_ = Element::fragment(), flows_ = Element::fragment(),
          marks_ = Element::fragment();
};

// A lane starts with a header line across the whole width ("CPU thread 4242 · pid 4242"), so
// the gutter stays free for the names of the rows below it.
double Renderer::lane_title(Element& out, double y, const std::string& name, const std::string& sub) {
  out.add(Element("line")
              .attr("x1", "10")
              .attr("y1", y + 0.5)
              .attr("x2", x1_)
              .attr("y2", y + 0.5)
              .attr("stroke", "#d5dae1"));
  out.add(Element("text")
              .attr("x", "10")
              .attr("y", y + 14)
              .attr("font-size", "12")
              .attr("font-weight", "bold")
              .attr("fill", kInk)
              .text(name));
  // Placed by estimated width, not with a <tspan>: renderers disagree on spaces inside tspans.
  const double sub_x = 10 + static_cast<double>(split_code_points(name).size()) * 12 * 0.64 + 10;
  if (!sub.empty())
    out.add(Element("text")
                .attr("x", sub_x)
                .attr("y", y + 14)
                .attr("font-size", "10.5")
                .attr("fill", kMuted)
                .text(sub));
  return y + 20;
}

void Renderer::row_label(Element& lane, double y, const std::string& text) {
  lane.add(Element("text")
               .attr("x", x0_ - 6)
               .attr("y", y + 11)
               .attr("font-size", "9.5")
               .attr("text-anchor", "end")
               .attr("fill", kMuted)
               .text(text));
}

void Renderer::flush_run(Run& r, Element& out) {
  if (r.count == 0) return;
  out.add(
      Element("g")
          .attr("class", "merged")
          .add(Element("title").text(std::to_string(r.count) + " events merged (each narrower than " +
                                     num(merge_px_) + " px here: zoom in with --steps or --from-us/--to-us)"))
          .add(Element("rect")
                   .attr("x", r.x0)
                   .attr("y", r.y)
                   .attr("width", std::max(r.x1 - r.x0, kMinBarW))
                   .attr("height", kBarH)
                   .attr("fill", "#9aa5b1")));
  merged_ += r.count;
  r.count = 0;
}

// The name a tooltip shows: a short name in full; a long one (a demangled kernel signature,
// hundreds of characters) as its function's name and its number in the list of full names under
// the plot, where it is written once however many bars it has.
std::string Renderer::tooltip_name(const Event& e) {
  if (e.name.size() <= kLongName) return e.name;
  auto it = long_name_index_.find(e.name);
  if (it == long_name_index_.end()) {
    long_names_.push_back(e.name);
    it = long_name_index_.emplace(e.name, long_names_.size()).first;
  }
  return bar_label(e, 1e9) + " [name " + std::to_string(it->second) + " under the picture]";
}

// One event's bar in `lane`, with its tooltip and (when it fits) its label. Bars narrower than
// merge_below_px join the run on their row instead.
void Renderer::draw_bar(Element& lane, EventIdx i, double y) {
  const Event& e = m_.at(i);
  const Cat c = category_of(e);
  used_[static_cast<size_t>(c)] = true;
  const Box b = bar_box(e, y);
  boxes_[i] = b;
  ++drawn_;
  if (merge_px_ > 0) {
    const double raw = x_of(std::min(e.end_ns(), win_.end)) - x_of(std::max(e.start_ns, win_.start));
    Run& r = runs_[static_cast<int64_t>(std::llround(y * 100))];
    if (raw < merge_px_) {
      merged_event_[i] = true;
      if (r.count > 0 && b.x <= r.x1 + 1.0) {
        r.x1 = std::max(r.x1, b.x + b.w);
        ++r.count;
      } else {
        flush_run(r, lane);
        r = Run{b.x, b.x + b.w, y, 1};
      }
      return;
    }
    flush_run(r, lane);  // a wide bar ends the run on its row
  }
  Element g("g");
  g.attr("class", "ev");
  g.add(Element("title").text(tooltip_name(e) + "\n" + fmt_duration(e.dur_ns) + " · " +
                              std::string(kind_name(e.kind))));
  g.add(Element("rect")
            .attr("x", b.x)
            .attr("y", b.y)
            .attr("width", b.w)
            .attr("height", b.h)
            .attr("rx", "1.5")
            .attr("fill", style(c).fill));
  if (const std::string label = bar_label(e, b.w); !label.empty())
    g.add(Element("text")
              .attr("x", b.x + 3)
              .attr("y", b.y + 10.5)
              .attr("font-size", kFont - 0.5)
              .attr("fill", kInk)
              .text(label));
  lane.add(std::move(g));
}

void Renderer::draw_axis(double y) {
  // A "nice" tick spacing (1, 2 or 5 × 10^k ns) giving at least ~90 px between labels.
  const int64_t span = win_.end - win_.start;
  const double min_step = static_cast<double>(span) * 90.0 / (x1_ - x0_);
  int64_t step = 1;
  int k = 0;
  for (;; ++k, step *= 10) {
    if (static_cast<double>(step) >= min_step) {
      break;
    }
    if (static_cast<double>(step * 2) >= min_step) {
      step *= 2;
      break;
    }
    if (static_cast<double>(step * 5) >= min_step) {
      step *= 5;
      break;
    }
  }
  // Unit from the window's size; decimals so that every tick label is exact.
  const int unit_exp = span < 2'000'000 ? 3 : span < 2'000'000'000 ? 6 : 9;
  const char* unit = unit_exp == 3 ? " µs" : unit_exp == 6 ? " ms" : " s";
  const int decimals = std::max(0, unit_exp - k);

  bg_.add(Element("line")
              .attr("x1", x0_)
              .attr("y1", y)
              .attr("x2", x1_)
              .attr("y2", y)
              .attr("stroke", kMuted)
              .attr("stroke-width", "1"));
  const int64_t rel0 = win_.start - origin_;
  int64_t t = (rel0 >= 0 ? (rel0 + step - 1) / step : rel0 / step) * step;  // first tick >= window start
  for (; origin_ + t <= win_.end; t += step) {
    const double x = x_of(origin_ + t);
    bg_.add(Element::fragment()  // the tick and its label on one line
                .add(Element("line")
                         .attr("x1", x)
                         .attr("y1", y - 4)
                         .attr("x2", x)
                         .attr("y2", y)
                         .attr("stroke", kMuted))
                .add(Element("text")
                         .attr("x", x)
                         .attr("y", y - 7)
                         .attr("font-size", "10")
                         .attr("text-anchor", "middle")
                         .attr("fill", kMuted)
                         .text(num(static_cast<double>(t) / std::pow(10.0, unit_exp), decimals) + unit)));
  }
  bg_.add(Element("text")
              .attr("x", "10")
              .attr("y", y - 7)
              .attr("font-size", "10")
              .attr("fill", kMuted)
              .text("time since trace start"));
}

// The labelled step boxes above the lanes. Returns the band's bottom.
double Renderer::draw_step_band(double y) {
  constexpr double h = 30;
  bool any = false;
  for (const auto& st : m_.steps()) {
    if (st.end_ns < win_.start || st.start_ns > win_.end) continue;
    any = true;
    const double a = x_of(std::max(st.start_ns, win_.start)), b = x_of(std::min(st.end_ns, win_.end));
    const double w = std::max(b - a, kMinBarW);
    const std::string full = std::string(kStepPrefix) + std::to_string(st.number);
    std::string name = fit_label(full, w);
    if (name.empty() || name.find("…") != std::string::npos)
      name = fit_label("#" + std::to_string(st.number), w);
    const std::string dur = fit_label(fmt_duration(st.end_ns - st.start_ns), w);
    Element g("g");
    g.attr("class", "step");
    g.add(Element("title").text(full + " (CPU side): " + fmt_duration(st.end_ns - st.start_ns)));
    g.add(Element("rect")
              .attr("x", a)
              .attr("y", y)
              .attr("width", w)
              .attr("height", h)
              .attr("fill", style(Cat::Step).fill)
              .attr("stroke", "#8d99ab")
              .attr("stroke-width", "0.8"));
    if (!name.empty())
      g.add(Element("text")
                .attr("class", "step-label")
                .attr("x", a + w / 2)
                .attr("y", y + 12.5)
                .attr("font-size", "11")
                .attr("font-weight", "bold")
                .attr("text-anchor", "middle")
                .attr("fill", kInk)
                .text(name));
    if (!dur.empty())
      g.add(Element("text")
                .attr("x", a + w / 2)
                .attr("y", y + 25)
                .attr("font-size", "10")
                .attr("text-anchor", "middle")
                .attr("fill", kInk)
                .text(dur));
    lanes_.add(std::move(g));
  }
  if (!any) return y;
  lanes_.add(Element("text")
                 .attr("x", "10")
                 .attr("y", y + 19)
                 .attr("font-size", "11")
                 .attr("fill", kMuted)
                 .text("steps (CPU side)"));
  return y + h + 8;
}

// Alternate shading per step across every lane, with the step boundaries as dashed lines:
// this is what lets the eye line up CPU work, GPU work and idle time of one step.
void Renderer::draw_step_shading(double top, double bottom) {
  int n = 0;
  for (const auto& st : m_.steps()) {
    if (st.end_ns < win_.start || st.start_ns > win_.end) continue;
    const double a = x_of(std::max(st.start_ns, win_.start)), b = x_of(std::min(st.end_ns, win_.end));
    bg_.add(Element("rect")
                .attr("x", a)
                .attr("y", top)
                .attr("width", std::max(b - a, 0.5))
                .attr("height", bottom - top)
                .attr("fill", n++ % 2 == 0 ? "#eef1f6" : "#f6f7fa"));
    for (double x : {a, b})
      bg_.add(Element("line")
                  .attr("x1", x)
                  .attr("y1", top)
                  .attr("x2", x)
                  .attr("y2", bottom)
                  .attr("stroke", "#9aa5b5")
                  .attr("stroke-width", "0.8")
                  .attr("stroke-dasharray", "3,3"));
  }
}

double Renderer::draw_cpu_lane(const CpuLane& lane, double y) {
  // Depth = number of ancestors; rows beyond max_depth are counted, not drawn.
  std::vector<std::pair<EventIdx, int>> shown;
  int deepest = -1, hidden = 0;
  for (EventIdx i : lane.events) {
    const Event& e = m_.at(i);
    if (!is_cpu_bar(e) || !in_window(e)) continue;
    int depth = 0;
    for (auto p = m_.parent(i); p; p = m_.parent(*p)) ++depth;
    if (depth >= o_.max_depth) {
      ++hidden;
      continue;
    }
    shown.emplace_back(i, depth);
    deepest = std::max(deepest, depth);
  }
  if (shown.empty() && hidden == 0) return y;  // this thread did nothing in the window
  const int rows = deepest + 1;
  Element g("g");
  g.attr("class", "lane cpu").attr("data-pid", lane.pid).attr("data-tid", lane.tid).multiline();
  y = lane_title(g, y, "CPU thread " + std::to_string(lane.tid),
                 "pid " + std::to_string(lane.pid) +
                     (hidden ? " · " + std::to_string(hidden) + " deeper calls hidden (max depth " +
                                   std::to_string(o_.max_depth) + ")"
                             : ""));
  row_label(g, y, "calls, nested ↓");
  for (const auto& [i, depth] : shown) draw_bar(g, i, y + depth * kRowH);
  lanes_.add(std::move(g));
  return y + std::max(rows, 1) * kRowH + kLaneGap;
}

// Greedy interval packing: each event goes to the first row whose last event has ended.
std::vector<int> pack_rows(const TraceModel& m, const std::vector<EventIdx>& evs, int max_rows) {
  std::vector<int64_t> row_end;
  std::vector<int> row_of;
  for (EventIdx i : evs) {
    const Event& e = m.at(i);
    int r = 0;
    while (r < static_cast<int>(row_end.size()) && row_end[r] > e.start_ns) ++r;
    if (r == max_rows) r = max_rows - 1;  // more overlap than rows: stack on the last one
    if (r == static_cast<int>(row_end.size())) row_end.push_back(e.end_ns());
    row_end[r] = std::max(row_end[r], e.end_ns());
    row_of.push_back(r);
  }
  return row_of;
}

double Renderer::draw_gpu_lane(const GpuLane& lane, double y) {
  std::vector<EventIdx> work, notes;
  for (EventIdx i : lane.events) {
    if (!is_device_work(m_.at(i)) || !in_window(m_.at(i))) continue;
    // The profiled window only: work launched before it (a warm-up step's, still running or
    // replayed on the GPU) is the previous window's, not this one's.
    if (const auto l = m_.launcher(i); l && !m_.steps().empty() && m_.at(*l).start_ns < launch_from_) {
      ++launched_before_;
      continue;
    }
    work.push_back(i);
  }
  // GPU-side annotations are not in GpuLane::events; they sit on the same device/stream.
  const auto& evs = m_.trace().events;
  for (EventIdx i : gpu_annotations_)
    if (evs[i].pid == lane.device && evs[i].tid == lane.stream && in_window(evs[i])) notes.push_back(i);
  std::stable_sort(notes.begin(), notes.end(), [&](EventIdx a, EventIdx b) {
    return evs[a].start_ns != evs[b].start_ns ? evs[a].start_ns < evs[b].start_ns
                                              : evs[a].dur_ns > evs[b].dur_ns;
  });

  std::string device = "GPU " + std::to_string(lane.device);
  for (const auto& d : m_.trace().devices)
    if (d.id == lane.device && !d.name.empty()) device += " · " + d.name;
  Element g("g");
  g.attr("class", "lane gpu").attr("data-device", lane.device).attr("data-stream", lane.stream).multiline();
  double row_y = lane_title(g, y, device, "stream " + std::to_string(lane.stream));
  if (!notes.empty()) {
    const auto rows = pack_rows(m_, notes, 3);
    const int n = *std::max_element(rows.begin(), rows.end()) + 1;
    for (size_t k = 0; k < notes.size(); ++k) draw_bar(g, notes[k], row_y + rows[k] * kRowH);
    row_label(g, row_y, "annotations");
    row_y += n * kRowH;
  }
  const auto rows = pack_rows(m_, work, kMaxGpuRows);
  const int n = work.empty() ? 1 : *std::max_element(rows.begin(), rows.end()) + 1;
  for (size_t k = 0; k < work.size(); ++k) draw_bar(g, work[k], row_y + rows[k] * kRowH);
  row_label(g, row_y, "kernels · copies");
  row_y += n * kRowH;

  // Idle share of each step (or of the whole window) on this stream: empty space is the lesson
  // of an overhead-bound run, so it gets a number, not just white.
  auto idle_pct = [&](int64_t a, int64_t b) {
    int64_t busy = 0, covered_to = a;  // work on one stream is sorted by start: merge as we go
    for (EventIdx i : work) {
      const int64_t s = std::max(m_.at(i).start_ns, covered_to), e = std::min(m_.at(i).end_ns(), b);
      if (e > s) {
        busy += e - s;
        covered_to = e;
      }
    }
    return 100.0 * (1.0 - static_cast<double>(busy) / static_cast<double>(std::max<int64_t>(b - a, 1)));
  };
  auto idle_text = [&](int64_t a, int64_t b, const std::string& suffix) {
    const double xa = x_of(std::max(a, win_.start)), xb = x_of(std::min(b, win_.end));
    const std::string text = fit_label("idle " + num(idle_pct(a, b), 0) + "%" + suffix, xb - xa);
    if (!text.empty()) g.add(muted_note("idle", (xa + xb) / 2, row_y + 11, "10", text));
  };
  bool any_step = false;
  for (const auto& st : m_.steps())
    if (st.start_ns >= win_.start && st.end_ns <= win_.end) {
      idle_text(st.start_ns, st.end_ns, "");
      any_step = true;
    }
  if (!any_step) idle_text(win_.start, win_.end, " of window");
  row_label(g, row_y, "GPU idle per step");
  row_y += 14;
  lanes_.add(std::move(g));
  return row_y + kLaneGap;
}

// profile_memory: the allocator's "Total Allocated" over time (and "Total Reserved" dashed, for a
// caching allocator), as a step line under the steps, the peak in the window marked. One lane,
// for the allocator main_memory_series picks (the GPU's, else the CPU's).
std::string fmt_bytes(int64_t b) {
  char buf[48];
  const double v = static_cast<double>(b);
  if (std::abs(v) >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2f GB", v / 1e9);
  else if (std::abs(v) >= 1e6)
    std::snprintf(buf, sizeof buf, "%.1f MB", v / 1e6);
  else if (std::abs(v) >= 1e3)
    std::snprintf(buf, sizeof buf, "%.1f kB", v / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  return buf;
}

double Renderer::draw_memory_lane(double y) {
  const auto all = memory_series(m_.trace());
  const MemorySeries* s = main_memory_series(all);
  if (!s) return y;
  // The points in the window, with the level just before it as the line's start.
  std::vector<const MemoryPoint*> pts;
  for (const auto& p : s->points)
    if (p.t_ns >= win_.start && p.t_ns <= win_.end) pts.push_back(&p);
  if (pts.empty()) return y;
  int64_t top = 1;
  const MemoryPoint* peak = pts.front();
  for (const MemoryPoint* p : pts) {
    top = std::max({top, p->allocated, s->has_reserved ? p->reserved : 0});
    if (p->allocated > peak->allocated) peak = p;
  }
  constexpr double h = 56;
  Element g("g");
  g.attr("class", "lane memory").multiline();
  y = lane_title(g, y, "memory · " + s->label(),
                 std::string("allocated") +
                     (s->has_reserved ? " (solid), reserved by the caching allocator (dashed)" : "") +
                     "; profile_memory's [memory] records");
  const double base = y + h;
  auto y_of = [&](int64_t b) { return base - static_cast<double>(b) / static_cast<double>(top) * (h - 6); };
  // A step line from the plot's left edge: `before` until the first record, then each record's level.
  auto step_path = [&](int64_t before, auto value) {
    // Vertices only where the drawn line turns (thousands of records share a pixel).
    std::string d = "M" + num(x0_) + " " + num(y_of(before)), last_y = num(y_of(before));
    int64_t level = before;
    for (size_t k = 0; k < pts.size(); ++k) {
      level = value(*pts[k]);
      const std::string x = num(x_of(pts[k]->t_ns)), y = num(y_of(level));
      if (y == last_y) continue;
      d += " L" + x + " " + last_y + " L" + x + " " + y;
      last_y = y;
    }
    return d + " L" + num(x1_) + " " + last_y;
  };
  g.add(Element("line")
            .attr("x1", x0_)
            .attr("y1", base + 0.5)
            .attr("x2", x1_)
            .attr("y2", base + 0.5)
            .attr("stroke", "#c3cad4"));
  if (s->has_reserved)
    g.add(Element("path")
              .attr("class", "mem-reserved")
              .attr("d", step_path(pts.front()->reserved, [](const MemoryPoint& p) { return p.reserved; }))
              .attr("fill", "none")
              .attr("stroke", "#7048e8")
              .attr("stroke-width", "1.2")
              .attr("stroke-dasharray", "4,3"));
  g.add(Element("path")
            .attr("class", "mem-allocated")
            .attr("d", step_path(s->allocated_before(pts.front()->t_ns),
                                 [](const MemoryPoint& p) { return p.allocated; }))
            .attr("fill", "none")
            .attr("stroke", "#0b7285")
            .attr("stroke-width", "1.6"));
  draw_memory_peak(g, *s, *peak, x_of(peak->t_ns), y_of(peak->allocated), y, pts.size());
  row_label(g, y + 2, fmt_bytes(top));
  row_label(g, base - 11, "0");
  lanes_.add(std::move(g));
  return base + kLaneGap;
}

// The peak's dot and label (on the side with room), and the lane's hover title.
void Renderer::draw_memory_peak(Element& g, const MemorySeries& s, const MemoryPoint& peak, double px,
                                double py, double y, size_t points) {
  const std::string label = "peak " + fmt_bytes(peak.allocated);
  g.add(Element("circle")
            .attr("class", "mem-peak")
            .attr("cx", px)
            .attr("cy", py)
            .attr("r", "3.5")
            .attr("fill", kAccent));
  const bool right = px < (x0_ + x1_) / 2;
  g.add(Element("text")
            .attr("x", right ? px + 6 : px - 6)
            .attr("y", std::max(py + 4, y + 10))
            .attr("font-size", "10.5")
            .attr("font-weight", "bold")
            .attr("text-anchor", right ? "start" : "end")
            .attr("fill", kAccent)
            .text(label));
  g.add(Element("title").text(s.label() + " memory: peak " + fmt_bytes(peak.allocated) + " allocated at " +
                              fmt_duration(peak.t_ns - origin_) + "; " + std::to_string(points) +
                              " allocations and frees in this window"));
}

double Renderer::draw_note_lane(const std::string& text, double y) {
  lanes_.add(muted_note("note", (x0_ + x1_) / 2, y + 13, "12", text));
  return y + 20 + kLaneGap;
}

// Launch call -> the work it queued: the horizontal distance is the launch latency.
void Renderer::draw_flows() {
  // A CUDA graph launch queues every kernel of the graph: one arrow, to its first (the others
  // follow on the stream), not thousands.
  std::vector<bool> graph_drawn(boxes_.size(), false);
  for (const auto& lane : m_.gpu_lanes())
    for (EventIdx i : lane.events) {
      const auto l = m_.launcher(i);
      if (!l || !boxes_[i] || !boxes_[*l]) continue;
      if (merged_event_[i]) continue;  // work inside a merged run: one grey bar, no arrow per event
      if (m_.at(*l).name.find("GraphLaunch") != std::string::npos) {
        if (graph_drawn[*l]) continue;
        graph_drawn[*l] = true;
      }
      const Box& from = *boxes_[*l];
      const Box& to = *boxes_[i];
      const double x1 = from.x, y1 = from.y + from.h, x2 = to.x, y2 = to.y;
      const double mid = (y1 + y2) / 2;
      flows_.add(Element("path")
                     .attr("class", "flow")
                     .attr("d", "M" + num(x1) + "," + num(y1) + " C" + num(x1) + "," + num(mid) + " " +
                                    num(x2) + "," + num(mid) + " " + num(x2) + "," + num(y2 - 1))
                     .attr("fill", "none")
                     .attr("stroke", kFlow)
                     .attr("stroke-width", "0.9")
                     .attr("stroke-opacity", "0.7")
                     .attr("marker-end", "url(#arrow)"));
      any_flow_ = true;
    }
}

// A numbered circle: the highlight badges in the plot and the captions under it.
Element badge(double cx, double cy, double text_y, int n) {
  return Element::fragment()
      .add(Element("circle").attr("cx", cx).attr("cy", cy).attr("r", "7.5").attr("fill", kAccent))
      .add(Element("text")
               .attr("x", cx)
               .attr("y", text_y)
               .attr("font-size", "10.5")
               .attr("font-weight", "bold")
               .attr("text-anchor", "middle")
               .attr("fill", "#ffffff")
               .text(std::to_string(n)));
}

// Numbered badges in the plot; the captions are listed under it (they would collide inside).
void Renderer::draw_highlights(double top, double bottom) {
  int n = 0;
  for (const auto& h : o_.highlights) {
    ++n;
    double bx, by;
    if (h.event) {
      if (*h.event >= boxes_.size() || !boxes_[*h.event]) continue;  // not in this picture: caption says so
      const Box& b = *boxes_[*h.event];
      marks_.add(Element("rect")
                     .attr("class", "highlight")
                     .attr("x", b.x - 1.5)
                     .attr("y", b.y - 1.5)
                     .attr("width", b.w + 3)
                     .attr("height", b.h + 3)
                     .attr("fill", "none")
                     .attr("stroke", kAccent)
                     .attr("stroke-width", "2")
                     .attr("rx", "2"));
      // Left of the bar: launch latency usually leaves that side empty on a GPU lane.
      bx = b.x - 11 >= x0_ + 8 ? b.x - 11 : b.x + b.w + 11;
      by = b.y + b.h / 2;
    } else {
      const int64_t a = std::max(h.start_ns, win_.start), e = std::min(h.end_ns, win_.end);
      if (e < a) continue;
      const double xa = x_of(a), w = std::max(x_of(e) - xa, kMinBarW);
      marks_.add(Element("rect")
                     .attr("class", "highlight")
                     .attr("x", xa)
                     .attr("y", top)
                     .attr("width", w)
                     .attr("height", bottom - top)
                     .attr("fill", "#ffd43b")
                     .attr("fill-opacity", "0.28")
                     .attr("stroke", kAccent)
                     .attr("stroke-width", "1")
                     .attr("stroke-dasharray", "4,2"));
      bx = xa + w / 2;
      by = top - 9;
    }
    bx = std::min(bx, x1_ - 8);
    marks_.add(Element("g").attr("class", "badge").add_children_of(badge(bx, by, by + 3.8, n)));
  }
}

double Renderer::draw_legend(Element& out, double y) const {
  double x = 10;
  // `swatch` is the 13x12 sample at (x, y); the label follows it. Items wrap as a whole.
  auto item = [&](auto swatch, const std::string& label) {
    const double w = 18 + static_cast<double>(split_code_points(label).size()) * 6.3 + 16;
    if (x > 10 && x + w > o_.width_px - kRightMargin) {
      x = 10;
      y += 18;
    }
    out.add(Element("g")
                .attr("class", "legend-item")
                .add(swatch(x, y))
                .add(Element("text")
                         .attr("x", x + 18)
                         .attr("y", y + 10)
                         .attr("font-size", "10.5")
                         .attr("fill", kInk)
                         .text(label)));
    x += w;
  };
  for (size_t c = 0; c < kCatStyles.size(); ++c) {
    if (!used_[c]) continue;
    item(
        [&](double sx, double sy) {
          return Element("rect")
              .attr("x", sx)
              .attr("y", sy)
              .attr("width", "13")
              .attr("height", "12")
              .attr("rx", "1.5")
              .attr("fill", kCatStyles[c].fill);
        },
        kCatStyles[c].label);
  }
  if (any_flow_)
    item(
        [&](double sx, double sy) {
          return Element("path")
              .attr("d", "M" + num(sx) + "," + num(sy + 6) + " L" + num(sx + 12) + "," + num(sy + 6))
              .attr("stroke", kFlow)
              .attr("stroke-width", "1.2")
              .attr("marker-end", "url(#arrow)");
        },
        "launch → GPU work (latency)");
  return y + 18;
}

// The lanes, step shading, flows and highlights, in the plot's own coordinates (y = 0 at the
// axis' label line); returns the lanes' bottom.
double Renderer::draw_plot() {
  double y = 22;
  draw_axis(y);
  y += 8;
  y = draw_step_band(y);
  y = draw_memory_lane(y);
  const double lanes_top = y;

  for (const auto& lane : m_.cpu_lanes()) y = draw_cpu_lane(lane, y);
  const bool cpu_drawn = y > lanes_top;
  for (const auto& lane : m_.gpu_lanes()) y = draw_gpu_lane(lane, y);
  if (m_.gpu_lanes().empty()) {
    y = lane_title(lanes_, y, "GPU", "none");
    y = draw_note_lane("CPU-only trace: no GPU lane (the profiler recorded no device activity)", y);
  }
  if (!cpu_drawn && drawn_ == 0) y = draw_note_lane("No events in this window (" + win_.what + ")", y);
  const double lanes_bottom = y - kLaneGap + 4;

  draw_step_shading(lanes_top - 4, lanes_bottom);
  if (o_.flows) draw_flows();
  draw_highlights(lanes_top - 2, lanes_bottom);
  return lanes_bottom;
}

// Captions under the plot: highlights by number, then a hint for newcomers; returns the plot's height.
double Renderer::draw_captions(Element& tail, double lanes_bottom) {
  double ty = lanes_bottom + 22;
  int n = 0;
  for (const auto& h : o_.highlights) {
    ++n;
    const bool missing = h.event ? (*h.event >= boxes_.size() || !boxes_[*h.event])
                                 : std::min(h.end_ns, win_.end) < std::max(h.start_ns, win_.start);
    tail.add(Element("g")
                 .attr("class", "caption")
                 .add_children_of(badge(18, ty - 4, ty - 0.2, n))
                 .add(Element("text")
                          .attr("x", "32")
                          .attr("y", ty)
                          .attr("font-size", "12")
                          .attr("fill", kInk)
                          .text(h.label + (missing ? "  (outside this picture)" : ""))));
    ty += 20;
  }
  tail.add(
      Element("text")
          .attr("x", "10")
          .attr("y", ty + 2)
          .attr("font-size", "10")
          .attr("fill", kMuted)
          .text("Bar width = duration; rows = call depth. Very short events are drawn " + num(kMinBarW) +
                " px wide so they stay visible. Hover a bar for its name and duration." +
                (merged_ > 0 || !runs_.empty() ? " Grey bars: runs of events narrower than " +
                                                     num(merge_px_) + " px, merged (hover for the count)."
                                               : "") +
                (launched_before_ > 0 ? " " + std::to_string(launched_before_) +
                                            " GPU events launched before the window are left out."
                                      : "")));
  ty += 12;
  if (!long_names_.empty()) {  // each long name once, wrapped to the picture's width
    ty += 14;
    tail.add(Element("text")
                 .attr("x", "10")
                 .attr("y", ty)
                 .attr("font-size", "10")
                 .attr("fill", kInk)
                 .text("Full names (a tooltip gives the number):"));
    const size_t per_line = static_cast<size_t>(std::max(40.0, (o_.width_px - 30) / 5.2));
    for (size_t k = 0; k < long_names_.size(); ++k) {
      const std::string& name = long_names_[k];
      for (size_t at = 0; at < name.size(); at += per_line) {
        ty += 11;
        tail.add(Element("text")
                     .attr("class", "fullname")
                     .attr("x", at == 0 ? "10" : "34")
                     .attr("y", ty)
                     .attr("font-size", "9")
                     .attr("fill", kMuted)
                     .text((at == 0 ? "[" + std::to_string(k + 1) + "] " : std::string()) +
                           name.substr(at, per_line)));
      }
    }
  }
  return ty + 12;
}

std::string Renderer::title_text() const {
  return !o_.title.empty()            ? o_.title
         : !m_.trace().source.empty() ? std::filesystem::path(m_.trace().source).filename().string()
                                      : std::string("trace");
}

// The header: title, subtitle, legend (needs the categories the plot used); returns the legend's bottom.
double Renderer::draw_header(Element& head, const std::string& title) {
  head.add(Element("text")
               .attr("x", "10")
               .attr("y", "24")
               .attr("font-size", "16")
               .attr("font-weight", "bold")
               .attr("fill", kInk)
               .text(title));
  head.add(Element("text")
               .attr("x", "10")
               .attr("y", "42")
               .attr("font-size", "11")
               .attr("fill", kMuted)
               .text("window: " + win_.what + " · " + fmt_duration(win_.end - win_.start) + " shown · " +
                     std::to_string(drawn_) + " events drawn"));
  return draw_legend(head, 54);
}

// The document: header, then the plot's layers moved below it.
std::string Renderer::assemble(Element& head, Element& tail, const std::string& title, double plot_top,
                               double height) {
  Element doc("svg");
  doc.attr("xmlns", "http://www.w3.org/2000/svg")
      .attr("width", o_.width_px)
      .attr("height", num(height, 0))
      .attr("viewBox", "0 0 " + std::to_string(o_.width_px) + " " + num(height, 0))
      .attr("font-family", kFontFamily)
      .multiline();
  doc.add(Element("title").text(title));
  doc.add(Element("defs").add(Element("marker")
                                  .attr("id", "arrow")
                                  .attr("viewBox", "0 0 6 6")
                                  .attr("refX", "5")
                                  .attr("refY", "3")
                                  .attr("markerWidth", "5")
                                  .attr("markerHeight", "5")
                                  .attr("orient", "auto")
                                  .add(Element("path").attr("d", "M0,0 L6,3 L0,6 z").attr("fill", kFlow))));
  doc.add(Element("rect").attr("width", "100%").attr("height", "100%").attr("fill", "#ffffff"));
  doc.add_children_of(std::move(head));
  Element plot("g");
  plot.attr("transform", "translate(0," + num(plot_top) + ")").multiline();
  for (Element* layer : {&bg_, &lanes_, &flows_, &marks_, &tail}) plot.add_children_of(std::move(*layer));
  doc.add(std::move(plot));

  std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  doc.append_to(svg);
  svg += '\n';
  return svg;
}

std::string Renderer::render() {
  const double lanes_bottom = draw_plot();
  Element tail = Element::fragment();
  const double plot_h = draw_captions(tail, lanes_bottom);
  const std::string title = title_text();
  Element head = Element::fragment();
  const double legend_bottom = draw_header(head, title);
  const double plot_top = legend_bottom + 10;
  const double height = std::ceil(plot_top + plot_h);

  // Runs still open at the end of their row close here, after the last lane.
  for (auto& [row, run] : runs_) flush_run(run, lanes_);
  return assemble(head, tail, title, plot_top, height);
}

}  // namespace

DefaultSteps default_steps(const TraceModel& model, int count) {
  DefaultSteps d;
  const auto& steps = model.steps();
  d.total = static_cast<int>(steps.size());
  if (steps.empty()) return d;
  d.trace_first = steps.front().number;
  d.trace_last = steps.back().number;
  d.first = d.trace_first;
  const size_t n = std::min<size_t>(steps.size(), static_cast<size_t>(std::max(count, 1)));
  d.last = steps[n - 1].number;
  d.limited = n < steps.size();
  return d;
}

std::string steps_summary(const TraceModel& model) {
  const auto& steps = model.steps();
  if (steps.empty()) return "no ProfilerSteps in this trace";
  std::vector<double> cpu, gpu(steps.size(), 0.0);
  for (const auto& s : steps) cpu.push_back(static_cast<double>(s.end_ns - s.start_ns) / 1e3);
  const Trace& t = model.trace();
  bool any_gpu = false;
  for (EventIdx i = 0; i < t.events.size(); ++i) {
    const Event& e = t.events[i];
    if (!is_device_work(e)) continue;
    const auto l = model.launcher(i);
    const StepWindow* w = l ? model.step_at(model.at(*l).start_ns) : nullptr;
    if (!w) continue;
    gpu[static_cast<size_t>(w - steps.data())] += static_cast<double>(e.dur_ns) / 1e3;
    any_gpu = true;
  }
  auto stats = [](const std::vector<double>& v) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return fmt_duration(static_cast<int64_t>(median(v) * 1e3)) + " (min " +
           fmt_duration(static_cast<int64_t>(*lo * 1e3)) + ", max " +
           fmt_duration(static_cast<int64_t>(*hi * 1e3)) + ")";
  };
  std::string out = std::to_string(steps.size()) + " steps (#" + std::to_string(steps.front().number) + "-#" +
                    std::to_string(steps.back().number) + "): CPU step width median " + stats(cpu);
  out += any_gpu ? "; GPU work per step median " + stats(gpu) : "; no GPU work";
  return out;
}

int64_t timeline_origin_ns(const Trace& trace) {
  if (trace.events.empty()) return 0;
  int64_t t = trace.events.front().start_ns;
  for (const auto& e : trace.events) t = std::min(t, e.start_ns);
  return t;
}

std::string render_timeline_svg(const TraceModel& model, const TimelineOptions& opts) {
  if (opts.width_px < 400 || opts.width_px > 20000)
    throw std::invalid_argument("timeline: width must be 400..20000 px, got " +
                                std::to_string(opts.width_px));
  if (opts.max_depth < 1 || opts.max_depth > 32)
    throw std::invalid_argument("timeline: max depth must be 1..32, got " + std::to_string(opts.max_depth));
  return Renderer(model, opts).render();
}

void write_timeline_svg(const TraceModel& model, const TimelineOptions& opts,
                        const std::filesystem::path& path) {
  const std::string svg = render_timeline_svg(model, opts);
  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("timeline: cannot open " + path.string() + " for writing");
  f.write(svg.data(), static_cast<std::streamsize>(svg.size()));
  if (!f.flush()) throw std::runtime_error("timeline: failed writing " + path.string());
}

}  // namespace wb
