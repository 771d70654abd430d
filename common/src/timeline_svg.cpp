// Renders a TraceModel window as a self-contained SVG (see timeline_svg.hpp for what is drawn).
//
// Layout, top to bottom:  title + subtitle, legend, time axis, step band, CPU lanes, GPU lanes,
// numbered highlight captions, a one-line hint. The plot area is drawn first into its own
// buffers (its height is only known once lanes are packed) and then placed under the legend.
// Every number goes through one formatter (to_chars, fixed) so the bytes never depend on the
// locale, and every loop walks vectors in a fixed order, so the output is deterministic.
#include "workbook/timeline_svg.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <stdexcept>
#include <string_view>

namespace wb {
namespace {

// ---------------------------------------------------------------- geometry and fonts
constexpr double kGutter = 176;        // left column: lane names
constexpr double kRightMargin = 18;
constexpr double kRowH = 17;           // one call-depth row
constexpr double kBarH = 14;
constexpr double kMinBarW = 1.5;       // a 1 µs kernel in a 400 µs window must still show
constexpr double kFont = 11;
constexpr double kCharW = kFont * 0.6; // DejaVu Sans averages a bit under 0.6 em: safe side
constexpr double kLaneGap = 12;
constexpr int kMaxGpuRows = 4;         // overlapping work on one stream: rows before we stack

constexpr const char* kFontFamily = "DejaVu Sans, Helvetica, Arial, sans-serif";
constexpr const char* kInk = "#1b1f24";
constexpr const char* kMuted = "#5f6b7a";
constexpr const char* kAccent = "#d9480f";   // highlights
constexpr const char* kFlow = "#3b5bdb";

// ---------------------------------------------------------------- categories and colours
// One colour per kind of work; the palette keeps CPU work in cool blues/violets, the launch
// path in warm oranges (the part a newcomer should follow) and GPU work in greens/pinks.
enum class Cat { Step, Annotation, CpuOp, Runtime, Driver, Kernel, Memcpy, Memset, GpuAnnotation, Other };
struct CatStyle { const char* label; const char* fill; };
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

bool is_step_name(std::string_view n) { return n.rfind("ProfilerStep#", 0) == 0; }

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

bool is_gpu_work(const Event& e) {
  return e.kind == Kind::Kernel || e.kind == Kind::Memcpy || e.kind == Kind::Memset;
}
// CPU-lane events worth a bar: the whole-capture span and instants are not work.
bool is_cpu_bar(const Event& e) {
  return !e.on_device() && e.kind != Kind::Trace && e.kind != Kind::Instant;
}

// ---------------------------------------------------------------- numbers and text
// Fixed-point, locale-free, and never "-0.0".
std::string num(double v, int decimals = 1) {
  if (!std::isfinite(v)) v = 0;
  const double scale = std::pow(10.0, decimals);
  v = std::round(v * scale) / scale;
  if (v == 0) v = 0;  // folds -0 into 0
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  std::string s(buf, r.ptr);
  // "12.0" -> "12": shorter files, same picture.
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::string fmt_duration(int64_t ns) {
  const double d = static_cast<double>(ns);
  if (ns < 1'000'000) return num(d / 1e3, 1) + " µs";
  if (ns < 1'000'000'000) return num(d / 1e6, 2) + " ms";
  return num(d / 1e9, 3) + " s";
}

// Decodes one UTF-8 code point at s[i]; returns 0xFFFD (and advances one byte) on bad input.
char32_t next_code_point(std::string_view s, size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  int len = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > s.size()) { ++i; return 0xFFFD; }
  char32_t cp = len == 1 ? b0 : b0 & (0x7F >> len);
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b >> 6) != 0x2) { ++i; return 0xFFFD; }
    cp = (cp << 6) | (b & 0x3F);
  }
  static constexpr char32_t kMinForLen[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLen[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) { ++i; return 0xFFFD; }
  i += len;
  return cp;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Text or attribute content: escapes the five XML specials (kernel names are full of < > &),
// and replaces what XML 1.0 cannot hold (control characters, broken UTF-8) with U+FFFD.
std::string xml(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    const char32_t cp = next_code_point(s, i);
    switch (cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        const bool bad = (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0xFFFE || cp == 0xFFFF;
        append_utf8(out, bad ? 0xFFFD : cp);
    }
  }
  return out;
}

std::vector<std::string_view> split_code_points(std::string_view s) {
  std::vector<std::string_view> cps;
  for (size_t i = 0; i < s.size();) {
    const size_t at = i;
    next_code_point(s, i);
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
    throw std::invalid_argument("timeline: the window is longer than a day; the trace's times look wrong, or give a smaller range");
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
                                  fmt_duration(*o.from_ns - origin) + " to " + fmt_duration(*o.to_ns - origin) + ")");
    w.start = *o.from_ns;
    w.end = *o.to_ns;
    w.what = fmt_duration(w.start - origin) + " – " + fmt_duration(w.end - origin);
    return w;
  }

  const bool want_steps = o.first_step || o.last_step;
  if (want_steps && steps.empty())
    throw std::invalid_argument("timeline: steps were asked for, but the trace has no ProfilerStep#N annotations; give a time range instead");
  if (!steps.empty()) {
    const int first = o.first_step.value_or(steps.front().number);
    const int last = o.last_step.value_or(steps.back().number);
    if (first > last)
      throw std::invalid_argument("timeline: step range " + std::to_string(first) + "-" + std::to_string(last) + " is inverted");
    bool any = false;
    int64_t s = 0, e = 0;
    for (const auto& st : steps) {
      if (st.number < first || st.number > last) continue;
      s = any ? std::min(s, st.start_ns) : st.start_ns;
      e = any ? std::max(e, st.end_ns) : st.end_ns;
      any = true;
    }
    if (!any)
      throw std::invalid_argument("timeline: the trace has ProfilerStep#" + std::to_string(steps.front().number) +
                                  " to #" + std::to_string(steps.back().number) + ", none in " +
                                  std::to_string(first) + "-" + std::to_string(last));
    // Keep the GPU work these steps queued: at large sizes it finishes long after the CPU step.
    const int64_t cpu_end = e;
    for (const auto& lane : m.gpu_lanes())
      for (EventIdx i : lane.events)
        if (auto l = m.launcher(i); l && m.at(*l).start_ns >= s && m.at(*l).start_ns <= cpu_end)
          e = std::max(e, m.at(i).end_ns());
    w.start = s;
    w.end = std::max(e, s + 1);
    w.what = first == last ? "ProfilerStep#" + std::to_string(first)
                           : "ProfilerStep#" + std::to_string(first) + " – #" + std::to_string(last);
  } else {
    bool any = false;
    for (const auto& ev : m.trace().events) {
      if (ev.kind == Kind::Trace || ev.kind == Kind::Instant) continue;
      w.start = any ? std::min(w.start, ev.start_ns) : ev.start_ns;
      w.end = any ? std::max(w.end, ev.end_ns()) : ev.end_ns();
      any = true;
    }
    if (!any) { w.start = origin; w.end = origin + 1000; }
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
struct Box { double x = 0, y = 0, w = 0, h = 0; };

class Renderer {
 public:
  Renderer(const TraceModel& m, const TimelineOptions& o)
      : m_(m), o_(o), origin_(timeline_origin_ns(m.trace())), win_(resolve_window(m, o, origin_)),
        x0_(kGutter), x1_(o.width_px - kRightMargin), boxes_(m.trace().events.size()) {
    const auto& evs = m.trace().events;
    for (EventIdx i = 0; i < evs.size(); ++i)
      if (evs[i].kind == Kind::GpuUserAnnotation) gpu_annotations_.push_back(i);
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
  void draw_bar(std::string& out, EventIdx i, double y);
  void draw_step_shading(double top, double bottom);
  void draw_flows();
  void draw_highlights(double top, double bottom);
  double draw_legend(std::string& out, double y) const;
  double lane_title(double y, const std::string& name, const std::string& sub);
  void row_label(double y, const std::string& text);

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
  // Plot buffers, stacked in this order so flows and highlights sit on top of the bars.
  std::string bg_, lanes_, flows_, marks_;
};

// A lane starts with a header line across the whole width ("CPU thread 4242 · pid 4242"), so
// the gutter stays free for the names of the rows below it.
double Renderer::lane_title(double y, const std::string& name, const std::string& sub) {
  lanes_ += "<line x1=\"10\" y1=\"" + num(y + 0.5) + "\" x2=\"" + num(x1_) + "\" y2=\"" + num(y + 0.5) +
            "\" stroke=\"#d5dae1\"/>\n";
  lanes_ += "<text x=\"10\" y=\"" + num(y + 14) + "\" font-size=\"12\" font-weight=\"bold\" fill=\"" + kInk +
            "\">" + xml(name) + "</text>\n";
  // Placed by estimated width, not with a <tspan>: renderers disagree on spaces inside tspans.
  const double sub_x = 10 + static_cast<double>(split_code_points(name).size()) * 12 * 0.64 + 10;
  if (!sub.empty())
    lanes_ += "<text x=\"" + num(sub_x) + "\" y=\"" + num(y + 14) + "\" font-size=\"10.5\" fill=\"" + kMuted +
              "\">" + xml(sub) + "</text>\n";
  return y + 20;
}

void Renderer::row_label(double y, const std::string& text) {
  lanes_ += "<text x=\"" + num(x0_ - 6) + "\" y=\"" + num(y + 11) + "\" font-size=\"9.5\" text-anchor=\"end\" fill=\"" +
            kMuted + "\">" + xml(text) + "</text>\n";
}

void Renderer::draw_bar(std::string& out, EventIdx i, double y) {
  const Event& e = m_.at(i);
  const Cat c = category_of(e);
  used_[static_cast<size_t>(c)] = true;
  const Box b = bar_box(e, y);
  boxes_[i] = b;
  ++drawn_;
  out += "<g class=\"ev\"><title>" + xml(e.name) + "\n" + xml(fmt_duration(e.dur_ns)) + " · " +
         xml(std::string(kind_name(e.kind))) + "</title><rect x=\"" + num(b.x) + "\" y=\"" + num(b.y) +
         "\" width=\"" + num(b.w) + "\" height=\"" + num(b.h) + "\" rx=\"1.5\" fill=\"" + style(c).fill + "\"/>";
  if (const std::string label = bar_label(e, b.w); !label.empty())
    out += "<text x=\"" + num(b.x + 3) + "\" y=\"" + num(b.y + 10.5) + "\" font-size=\"" + num(kFont - 0.5) +
           "\" fill=\"" + kInk + "\">" + xml(label) + "</text>";
  out += "</g>\n";
}

void Renderer::draw_axis(double y) {
  // A "nice" tick spacing (1, 2 or 5 × 10^k ns) giving at least ~90 px between labels.
  const int64_t span = win_.end - win_.start;
  const double min_step = static_cast<double>(span) * 90.0 / (x1_ - x0_);
  int64_t step = 1;
  int k = 0;
  for (;; ++k, step *= 10) {
    if (static_cast<double>(step) >= min_step) { break; }
    if (static_cast<double>(step * 2) >= min_step) { step *= 2; break; }
    if (static_cast<double>(step * 5) >= min_step) { step *= 5; break; }
  }
  // Unit from the window's size; decimals so that every tick label is exact.
  const int unit_exp = span < 2'000'000 ? 3 : span < 2'000'000'000 ? 6 : 9;
  const char* unit = unit_exp == 3 ? " µs" : unit_exp == 6 ? " ms" : " s";
  const int decimals = std::max(0, unit_exp - k);

  bg_ += "<line x1=\"" + num(x0_) + "\" y1=\"" + num(y) + "\" x2=\"" + num(x1_) + "\" y2=\"" + num(y) +
         "\" stroke=\"" + kMuted + "\" stroke-width=\"1\"/>\n";
  const int64_t rel0 = win_.start - origin_;
  int64_t t = (rel0 >= 0 ? (rel0 + step - 1) / step : rel0 / step) * step;  // first tick >= window start
  for (; origin_ + t <= win_.end; t += step) {
    const double x = x_of(origin_ + t);
    bg_ += "<line x1=\"" + num(x) + "\" y1=\"" + num(y - 4) + "\" x2=\"" + num(x) + "\" y2=\"" + num(y) +
           "\" stroke=\"" + kMuted + "\"/>";
    bg_ += "<text x=\"" + num(x) + "\" y=\"" + num(y - 7) + "\" font-size=\"10\" text-anchor=\"middle\" fill=\"" +
           kMuted + "\">" + num(static_cast<double>(t) / std::pow(10.0, unit_exp), decimals) + unit + "</text>\n";
  }
  bg_ += "<text x=\"10\" y=\"" + num(y - 7) + "\" font-size=\"10\" fill=\"" + kMuted +
         "\">time since trace start</text>\n";
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
    const std::string full = "ProfilerStep#" + std::to_string(st.number);
    std::string name = fit_label(full, w);
    if (name.empty() || name.find("…") != std::string::npos) name = fit_label("#" + std::to_string(st.number), w);
    const std::string dur = fit_label(fmt_duration(st.end_ns - st.start_ns), w);
    lanes_ += "<g class=\"step\"><title>" + xml(full) + " (CPU side): " + xml(fmt_duration(st.end_ns - st.start_ns)) +
              "</title><rect x=\"" + num(a) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" + num(h) +
              "\" fill=\"" + style(Cat::Step).fill + "\" stroke=\"#8d99ab\" stroke-width=\"0.8\"/>";
    if (!name.empty())
      lanes_ += "<text class=\"step-label\" x=\"" + num(a + w / 2) + "\" y=\"" + num(y + 12.5) +
                "\" font-size=\"11\" font-weight=\"bold\" text-anchor=\"middle\" fill=\"" + kInk + "\">" + xml(name) + "</text>";
    if (!dur.empty())
      lanes_ += "<text x=\"" + num(a + w / 2) + "\" y=\"" + num(y + 25) + "\" font-size=\"10\" text-anchor=\"middle\" fill=\"" +
                kInk + "\">" + xml(dur) + "</text>";
    lanes_ += "</g>\n";
  }
  if (!any) return y;
  lanes_ += "<text x=\"10\" y=\"" + num(y + 19) + "\" font-size=\"11\" fill=\"" + kMuted + "\">steps (CPU side)</text>\n";
  return y + h + 8;
}

// Alternate shading per step across every lane, with the step boundaries as dashed lines:
// this is what lets the eye line up CPU work, GPU work and idle time of one step.
void Renderer::draw_step_shading(double top, double bottom) {
  int n = 0;
  for (const auto& st : m_.steps()) {
    if (st.end_ns < win_.start || st.start_ns > win_.end) continue;
    const double a = x_of(std::max(st.start_ns, win_.start)), b = x_of(std::min(st.end_ns, win_.end));
    bg_ += "<rect x=\"" + num(a) + "\" y=\"" + num(top) + "\" width=\"" + num(std::max(b - a, 0.5)) + "\" height=\"" +
           num(bottom - top) + "\" fill=\"" + (n++ % 2 == 0 ? "#eef1f6" : "#f6f7fa") + "\"/>\n";
    for (double x : {a, b})
      bg_ += "<line x1=\"" + num(x) + "\" y1=\"" + num(top) + "\" x2=\"" + num(x) + "\" y2=\"" + num(bottom) +
             "\" stroke=\"#9aa5b5\" stroke-width=\"0.8\" stroke-dasharray=\"3,3\"/>\n";
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
    if (depth >= o_.max_depth) { ++hidden; continue; }
    shown.emplace_back(i, depth);
    deepest = std::max(deepest, depth);
  }
  if (shown.empty() && hidden == 0) return y;  // this thread did nothing in the window
  const int rows = deepest + 1;
  lanes_ += "<g class=\"lane cpu\" data-pid=\"" + std::to_string(lane.pid) + "\" data-tid=\"" +
            std::to_string(lane.tid) + "\">\n";
  y = lane_title(y, "CPU thread " + std::to_string(lane.tid),
                 "pid " + std::to_string(lane.pid) +
                     (hidden ? " · " + std::to_string(hidden) + " deeper calls hidden (max depth " +
                                   std::to_string(o_.max_depth) + ")"
                             : ""));
  row_label(y, "calls, nested ↓");
  for (const auto& [i, depth] : shown) draw_bar(lanes_, i, y + depth * kRowH);
  lanes_ += "</g>\n";
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
  for (EventIdx i : lane.events)
    if (is_gpu_work(m_.at(i)) && in_window(m_.at(i))) work.push_back(i);
  // GPU-side annotations are not in GpuLane::events; they sit on the same device/stream.
  const auto& evs = m_.trace().events;
  for (EventIdx i : gpu_annotations_)
    if (evs[i].pid == lane.device && evs[i].tid == lane.stream && in_window(evs[i])) notes.push_back(i);
  std::stable_sort(notes.begin(), notes.end(), [&](EventIdx a, EventIdx b) {
    return evs[a].start_ns != evs[b].start_ns ? evs[a].start_ns < evs[b].start_ns : evs[a].dur_ns > evs[b].dur_ns;
  });

  std::string device = "GPU " + std::to_string(lane.device);
  for (const auto& d : m_.trace().devices)
    if (d.id == lane.device && !d.name.empty()) device += " · " + d.name;
  lanes_ += "<g class=\"lane gpu\" data-device=\"" + std::to_string(lane.device) + "\" data-stream=\"" +
            std::to_string(lane.stream) + "\">\n";
  double row_y = lane_title(y, device, "stream " + std::to_string(lane.stream));
  if (!notes.empty()) {
    const auto rows = pack_rows(m_, notes, 3);
    const int n = *std::max_element(rows.begin(), rows.end()) + 1;
    for (size_t k = 0; k < notes.size(); ++k) draw_bar(lanes_, notes[k], row_y + rows[k] * kRowH);
    row_label(row_y, "annotations");
    row_y += n * kRowH;
  }
  const auto rows = pack_rows(m_, work, kMaxGpuRows);
  const int n = work.empty() ? 1 : *std::max_element(rows.begin(), rows.end()) + 1;
  for (size_t k = 0; k < work.size(); ++k) draw_bar(lanes_, work[k], row_y + rows[k] * kRowH);
  row_label(row_y, "kernels · copies");
  row_y += n * kRowH;

  // Idle share of each step (or of the whole window) on this stream: empty space is the lesson
  // of an overhead-bound run, so it gets a number, not just white.
  auto idle_pct = [&](int64_t a, int64_t b) {
    int64_t busy = 0, covered_to = a;  // work on one stream is sorted by start: merge as we go
    for (EventIdx i : work) {
      const int64_t s = std::max(m_.at(i).start_ns, covered_to), e = std::min(m_.at(i).end_ns(), b);
      if (e > s) { busy += e - s; covered_to = e; }
    }
    return 100.0 * (1.0 - static_cast<double>(busy) / static_cast<double>(std::max<int64_t>(b - a, 1)));
  };
  auto idle_text = [&](int64_t a, int64_t b, const std::string& suffix) {
    const double xa = x_of(std::max(a, win_.start)), xb = x_of(std::min(b, win_.end));
    const std::string text = fit_label("idle " + num(idle_pct(a, b), 0) + "%" + suffix, xb - xa);
    if (!text.empty())
      lanes_ += "<text class=\"idle\" x=\"" + num((xa + xb) / 2) + "\" y=\"" + num(row_y + 11) +
                "\" font-size=\"10\" font-style=\"italic\" text-anchor=\"middle\" fill=\"" + kMuted + "\">" +
                xml(text) + "</text>\n";
  };
  bool any_step = false;
  for (const auto& st : m_.steps())
    if (st.start_ns >= win_.start && st.end_ns <= win_.end) { idle_text(st.start_ns, st.end_ns, ""); any_step = true; }
  if (!any_step) idle_text(win_.start, win_.end, " of window");
  row_label(row_y, "GPU idle per step");
  row_y += 14;
  lanes_ += "</g>\n";
  return row_y + kLaneGap;
}

double Renderer::draw_note_lane(const std::string& text, double y) {
  lanes_ += "<text class=\"note\" x=\"" + num((x0_ + x1_) / 2) + "\" y=\"" + num(y + 13) +
            "\" font-size=\"12\" font-style=\"italic\" text-anchor=\"middle\" fill=\"" + kMuted + "\">" + xml(text) +
            "</text>\n";
  return y + 20 + kLaneGap;
}

// Launch call -> the work it queued: the horizontal distance is the launch latency.
void Renderer::draw_flows() {
  for (const auto& lane : m_.gpu_lanes())
    for (EventIdx i : lane.events) {
      const auto l = m_.launcher(i);
      if (!l || !boxes_[i] || !boxes_[*l]) continue;
      const Box& from = *boxes_[*l];
      const Box& to = *boxes_[i];
      const double x1 = from.x, y1 = from.y + from.h, x2 = to.x, y2 = to.y;
      const double mid = (y1 + y2) / 2;
      flows_ += "<path class=\"flow\" d=\"M" + num(x1) + "," + num(y1) + " C" + num(x1) + "," + num(mid) + " " + num(x2) +
                "," + num(mid) + " " + num(x2) + "," + num(y2 - 1) + "\" fill=\"none\" stroke=\"" + kFlow +
                "\" stroke-width=\"0.9\" stroke-opacity=\"0.7\" marker-end=\"url(#arrow)\"/>\n";
      any_flow_ = true;
    }
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
      marks_ += "<rect class=\"highlight\" x=\"" + num(b.x - 1.5) + "\" y=\"" + num(b.y - 1.5) + "\" width=\"" +
                num(b.w + 3) + "\" height=\"" + num(b.h + 3) + "\" fill=\"none\" stroke=\"" + kAccent +
                "\" stroke-width=\"2\" rx=\"2\"/>\n";
      // Left of the bar: launch latency usually leaves that side empty on a GPU lane.
      bx = b.x - 11 >= x0_ + 8 ? b.x - 11 : b.x + b.w + 11;
      by = b.y + b.h / 2;
    } else {
      const int64_t a = std::max(h.start_ns, win_.start), e = std::min(h.end_ns, win_.end);
      if (e < a) continue;
      const double xa = x_of(a), w = std::max(x_of(e) - xa, kMinBarW);
      marks_ += "<rect class=\"highlight\" x=\"" + num(xa) + "\" y=\"" + num(top) + "\" width=\"" + num(w) +
                "\" height=\"" + num(bottom - top) + "\" fill=\"#ffd43b\" fill-opacity=\"0.28\" stroke=\"" + kAccent +
                "\" stroke-width=\"1\" stroke-dasharray=\"4,2\"/>\n";
      bx = xa + w / 2;
      by = top - 9;
    }
    bx = std::min(bx, x1_ - 8);
    marks_ += "<g class=\"badge\"><circle cx=\"" + num(bx) + "\" cy=\"" + num(by) + "\" r=\"7.5\" fill=\"" + kAccent +
              "\"/><text x=\"" + num(bx) + "\" y=\"" + num(by + 3.8) +
              "\" font-size=\"10.5\" font-weight=\"bold\" text-anchor=\"middle\" fill=\"#ffffff\">" + std::to_string(n) +
              "</text></g>\n";
  }
}

double Renderer::draw_legend(std::string& out, double y) const {
  double x = 10;
  // `swatch(x, y)` draws the 13x12 sample; the label follows it. Items wrap as a whole.
  auto item = [&](auto swatch, const std::string& label) {
    const double w = 18 + static_cast<double>(split_code_points(label).size()) * 6.3 + 16;
    if (x > 10 && x + w > o_.width_px - kRightMargin) { x = 10; y += 18; }
    out += "<g class=\"legend-item\">" + swatch(x, y) + "<text x=\"" + num(x + 18) + "\" y=\"" + num(y + 10) +
           "\" font-size=\"10.5\" fill=\"" + kInk + "\">" + xml(label) + "</text></g>\n";
    x += w;
  };
  for (size_t c = 0; c < kCatStyles.size(); ++c) {
    if (!used_[c]) continue;
    item([&](double sx, double sy) {
           return "<rect x=\"" + num(sx) + "\" y=\"" + num(sy) + "\" width=\"13\" height=\"12\" rx=\"1.5\" fill=\"" +
                  kCatStyles[c].fill + "\"/>";
         },
         kCatStyles[c].label);
  }
  if (any_flow_)
    item([&](double sx, double sy) {
           return "<path d=\"M" + num(sx) + "," + num(sy + 6) + " L" + num(sx + 12) + "," + num(sy + 6) + "\" stroke=\"" +
                  kFlow + "\" stroke-width=\"1.2\" marker-end=\"url(#arrow)\"/>";
         },
         "launch → GPU work (latency)");
  return y + 18;
}

std::string Renderer::render() {
  // ---- plot, in its own coordinates (y = 0 at the axis' label line)
  double y = 22;
  draw_axis(y);
  y += 8;
  y = draw_step_band(y);
  const double lanes_top = y;

  for (const auto& lane : m_.cpu_lanes()) y = draw_cpu_lane(lane, y);
  const bool cpu_drawn = y > lanes_top;
  for (const auto& lane : m_.gpu_lanes()) y = draw_gpu_lane(lane, y);
  if (m_.gpu_lanes().empty()) {
    y = lane_title(y, "GPU", "none");
    y = draw_note_lane("CPU-only trace: no GPU lane (the profiler recorded no device activity)", y);
  }
  if (!cpu_drawn && drawn_ == 0)
    y = draw_note_lane("No events in this window (" + win_.what + ")", y);
  const double lanes_bottom = y - kLaneGap + 4;

  draw_step_shading(lanes_top - 4, lanes_bottom);
  if (o_.flows) draw_flows();
  draw_highlights(lanes_top - 2, lanes_bottom);

  // Captions under the plot: highlights by number, then a hint for newcomers.
  std::string tail;
  double ty = lanes_bottom + 22;
  int n = 0;
  for (const auto& h : o_.highlights) {
    ++n;
    const bool missing = h.event ? (*h.event >= boxes_.size() || !boxes_[*h.event])
                                 : std::min(h.end_ns, win_.end) < std::max(h.start_ns, win_.start);
    tail += "<g class=\"caption\"><circle cx=\"18\" cy=\"" + num(ty - 4) + "\" r=\"7.5\" fill=\"" + kAccent +
            "\"/><text x=\"18\" y=\"" + num(ty - 0.2) +
            "\" font-size=\"10.5\" font-weight=\"bold\" text-anchor=\"middle\" fill=\"#ffffff\">" + std::to_string(n) +
            "</text><text x=\"32\" y=\"" + num(ty) + "\" font-size=\"12\" fill=\"" + kInk + "\">" +
            xml(h.label + (missing ? "  (outside this picture)" : "")) + "</text></g>\n";
    ty += 20;
  }
  tail += "<text x=\"10\" y=\"" + num(ty + 2) + "\" font-size=\"10\" fill=\"" + kMuted +
          "\">Bar width = duration; rows = call depth. Very short events are drawn " + num(kMinBarW) +
          " px wide so they stay visible. Hover a bar for its full name and duration.</text>\n";
  const double plot_h = ty + 12;

  // ---- header: title, subtitle, legend (needs the categories the plot used)
  const std::string title = !o_.title.empty() ? o_.title
                            : !m_.trace().source.empty() ? std::filesystem::path(m_.trace().source).filename().string()
                                                         : std::string("trace");
  std::string head;
  head += "<text x=\"10\" y=\"24\" font-size=\"16\" font-weight=\"bold\" fill=\"" + std::string(kInk) + "\">" +
          xml(title) + "</text>\n";
  head += "<text x=\"10\" y=\"42\" font-size=\"11\" fill=\"" + std::string(kMuted) + "\">" +
          xml("window: " + win_.what + " · " + fmt_duration(win_.end - win_.start) + " shown · " +
              std::to_string(drawn_) + " events drawn") +
          "</text>\n";
  const double legend_bottom = draw_legend(head, 54);
  const double plot_top = legend_bottom + 10;
  const double height = std::ceil(plot_top + plot_h);

  std::string svg;
  svg.reserve(bg_.size() + lanes_.size() + flows_.size() + marks_.size() + head.size() + tail.size() + 1024);
  svg += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(o_.width_px) + "\" height=\"" +
         num(height, 0) + "\" viewBox=\"0 0 " + std::to_string(o_.width_px) + " " + num(height, 0) +
         "\" font-family=\"" + kFontFamily + "\">\n";
  svg += "<title>" + xml(title) + "</title>\n";
  svg += "<defs><marker id=\"arrow\" viewBox=\"0 0 6 6\" refX=\"5\" refY=\"3\" markerWidth=\"5\" markerHeight=\"5\" "
         "orient=\"auto\"><path d=\"M0,0 L6,3 L0,6 z\" fill=\"" + std::string(kFlow) + "\"/></marker></defs>\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  svg += head;
  svg += "<g transform=\"translate(0," + num(plot_top) + ")\">\n";
  svg += bg_ + lanes_ + flows_ + marks_ + tail;
  svg += "</g>\n</svg>\n";
  return svg;
}

}  // namespace

int64_t timeline_origin_ns(const Trace& trace) {
  if (trace.events.empty()) return 0;
  int64_t t = trace.events.front().start_ns;
  for (const auto& e : trace.events) t = std::min(t, e.start_ns);
  return t;
}

std::string render_timeline_svg(const TraceModel& model, const TimelineOptions& opts) {
  if (opts.width_px < 400 || opts.width_px > 20000)
    throw std::invalid_argument("timeline: width must be 400..20000 px, got " + std::to_string(opts.width_px));
  if (opts.max_depth < 1 || opts.max_depth > 32)
    throw std::invalid_argument("timeline: max depth must be 1..32, got " + std::to_string(opts.max_depth));
  return Renderer(model, opts).render();
}

void write_timeline_svg(const TraceModel& model, const TimelineOptions& opts, const std::filesystem::path& path) {
  const std::string svg = render_timeline_svg(model, opts);
  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("timeline: cannot open " + path.string() + " for writing");
  f.write(svg.data(), static_cast<std::streamsize>(svg.size()));
  if (!f.flush()) throw std::runtime_error("timeline: failed writing " + path.string());
}

}  // namespace wb
