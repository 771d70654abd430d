// Pictures drawn from the recordings: see include/workbook/pictures.hpp.
#include "workbook/pictures.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "util.hpp"
#include "workbook/across.hpp"
#include "workbook/figures.hpp"
#include "workbook/rules.hpp"
#include "workbook/stats.hpp"
#include "workbook/svg.hpp"
#include "workbook/trace_model.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;

namespace wb::figures {
using namespace detail;

namespace {
bool holds(std::string_view name, std::initializer_list<std::string_view> parts) {
  return std::any_of(parts.begin(), parts.end(),
                     [&](std::string_view p) { return name.find(p) != std::string_view::npos; });
}
}  // namespace

TokenClass token_class(const Event& e) {
  if (e.kind != Kind::Kernel) return TokenClass::Other;  // copies and memsets
  if (holds(e.name, {"nvjet_", "gemv", "gemm", "splitKreduce"})) return TokenClass::Gemv;
  if (holds(e.name, {"cudnn", "attention", "sdpa"})) return TokenClass::Attention;
  return TokenClass::Other;
}

std::string_view token_class_name(TokenClass c) {
  switch (c) {
    case TokenClass::Gemv: return "GEMV / GEMM";
    case TokenClass::Attention: return "attention";
    case TokenClass::Other: return "other kernels and copies";
    case TokenClass::Gap: return "gaps";
  }
  return "?";
}

std::string_view token_class_rule(TokenClass c) {
  switch (c) {
    case TokenClass::Gemv: return "a kernel whose name holds nvjet_, gemv, gemm or splitKreduce";
    case TokenClass::Attention: return "else a kernel whose name holds cudnn, attention or sdpa";
    case TokenClass::Other: return "every other kernel, copy and memset";
    case TokenClass::Gap: return "no device work, between the step's first start and last end";
  }
  return "?";
}

double TokenBar::sum_us() const {
  double s = 0;
  for (double v : us) s += v;
  return s;
}

TokenBar token_time(const Trace& trace, const std::string& variant) {
  const TraceModel m(trace);
  std::array<std::vector<double>, kTokenClasses> per_class;
  std::vector<double> spans;
  for (const auto& work : device_work_per_step(m)) {
    if (work.empty()) continue;
    std::array<int64_t, kTokenClasses> ns{};
    const int64_t first = m.at(work.front()).start_ns;
    int64_t covered = first;   // the work so far covers [first, covered)
    for (EventIdx d : work) {  // in start order
      const Event& e = m.at(d);
      if (e.start_ns > covered) {
        ns[static_cast<size_t>(TokenClass::Gap)] += e.start_ns - covered;
        covered = e.start_ns;
      }
      const int64_t end = e.start_ns + e.dur_ns;
      if (end > covered) {
        ns[static_cast<size_t>(token_class(e))] += end - covered;
        covered = end;
      }
    }
    for (size_t c = 0; c < kTokenClasses; ++c) per_class[c].push_back(ns[c] / 1e3);
    spans.push_back((covered - first) / 1e3);
  }
  if (spans.empty()) throw FigureError(variant + ": no profiled step has device work (a CPU-only trace?)");
  TokenBar bar;
  bar.variant = variant;
  bar.steps = static_cast<int>(spans.size());
  bar.span_us = median(spans);
  for (size_t c = 0; c < kTokenClasses; ++c) bar.us[c] = median(per_class[c]);
  return bar;
}

namespace {
constexpr const char* kFont = "DejaVu Sans, Helvetica, Arial, sans-serif";
constexpr const char* kInk = "#1b1f24";
constexpr std::array<const char*, kTokenClasses> kColor = {"#4e79a7", "#f28e2b", "#e15759", "#d9d4cf"};

std::string ms(double v, int digits = 3) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

svg::Element text(double x, double y, const std::string& s, const char* anchor = "start", int size = 12) {
  svg::Element t("text");
  t.attr("x", x).attr("y", y).attr("font-size", size).attr("text-anchor", anchor).text(s);
  return t;
}
}  // namespace

std::string token_time_svg(const std::vector<TokenBar>& bars, double bound_ms,
                           const std::vector<std::string>& caption) {
  const double left = 100, plot = 580, bar_h = 24, pitch = 36, top = 78;
  double most = bound_ms;
  for (const auto& b : bars) most = std::max(most, b.sum_us() / 1e3);
  const double step = 0.2, axis_ms = std::ceil(most / step) * step + step;  // room for the labels
  const double px = plot / axis_ms;                                         // pixels per ms
  const double axis_y = top + pitch * static_cast<double>(bars.size()) + 4;
  const double height = axis_y + 46 + 15 * static_cast<double>(caption.size());
  const double width = left + plot + 20;

  svg::Element doc("svg");
  doc.attr("xmlns", "http://www.w3.org/2000/svg")
      .attr("width", width)
      .attr("height", height)
      .attr("viewBox", "0 0 " + svg::num(width, 0) + " " + svg::num(height, 0))
      .attr("font-family", kFont)
      .attr("fill", kInk)
      .multiline();
  doc.add(svg::Element("rect").attr("width", width).attr("height", height).attr("fill", "#ffffff"));
  doc.add(text(12, 22,
               "One token's GPU time by class, per variant (ms per token, median of the profiled steps)",
               "start", 13));
  // the legend
  double lx = 12;
  for (size_t c = 0; c < kTokenClasses; ++c) {
    const std::string name(token_class_name(static_cast<TokenClass>(c)));
    doc.add(svg::Element("rect")
                .attr("x", lx)
                .attr("y", 36)
                .attr("width", 12)
                .attr("height", 12)
                .attr("fill", kColor[c]));
    doc.add(text(lx + 16, 46, name));
    lx += 16 + 7.0 * static_cast<double>(name.size()) + 18;
  }
  // the axis: a tick every 0.2 ms
  svg::Element axis("g");
  axis.attr("font-size", 11).attr("stroke", "#8c959f").multiline();
  for (double t = 0; t <= axis_ms + 1e-9; t += step) {
    const double x = left + t * px;
    axis.add(svg::Element("line")
                 .attr("x1", x)
                 .attr("x2", x)
                 .attr("y1", top - 6)
                 .attr("y2", axis_y)
                 .attr("stroke-opacity", t == 0 ? 1.0 : 0.25));
    axis.add(std::move(text(x, axis_y + 14, ms(t, 1), "middle", 11)).attr("stroke", "none"));
  }
  doc.add(std::move(axis));
  doc.add(text(left + plot / 2, axis_y + 30, "ms per token", "middle", 11));
  // the bars
  for (size_t i = 0; i < bars.size(); ++i) {
    const TokenBar& b = bars[i];
    const double y = top + pitch * static_cast<double>(i);
    doc.add(text(left - 8, y + bar_h / 2 + 4, b.variant, "end"));
    svg::Element g("g");
    g.multiline();
    double x = left;
    for (size_t c = 0; c < kTokenClasses; ++c) {
      const double w = b.us[c] / 1e3 * px;
      const std::string tip = b.variant + ": " + std::string(token_class_name(static_cast<TokenClass>(c))) +
                              " " + ms(b.us[c] / 1e3) + " ms (" + ms(100 * b.us[c] / b.sum_us(), 1) + "%)";
      g.add(svg::Element("rect")
                .attr("x", x)
                .attr("y", y)
                .attr("width", w)
                .attr("height", bar_h)
                .attr("fill", kColor[c])
                .add(svg::Element("title").text(tip)));
      x += w;
    }
    doc.add(std::move(g));
    doc.add(text(x + 6, y + bar_h / 2 + 4, ms(b.span_us / 1e3) + " ms"));
  }
  // the bound
  const double bx = left + bound_ms * px;
  doc.add(svg::Element("line")
              .attr("x1", bx)
              .attr("x2", bx)
              .attr("y1", top - 10)
              .attr("y2", axis_y)
              .attr("stroke", kInk)
              .attr("stroke-width", 1.5)
              .attr("stroke-dasharray", "5 3"));
  doc.add(text(bx + 4, top - 12, "weight-read bound " + ms(bound_ms) + " ms", "start", 11));
  for (size_t i = 0; i < caption.size(); ++i)
    doc.add(text(12, axis_y + 52 + 15 * static_cast<double>(i), caption[i], "start", 11));
  return doc.str() + "\n";
}

namespace {
// Chapter 11's variants in the chapter's order, and where the picture's numbers come from.
constexpr const char* kTokenTimeFile = "docs/img/ch11_token_time_h200.svg";
constexpr const char* kTokenTimeRecording = "h200/11_llm_decode_kernels";
const std::vector<std::string> kTokenTimeVariants = {"graph_fused", "gemv", "fused", "attention", "overlap"};
// The bound the chapter prints with its napkin math: the bytes a token reads at the copy rate
// its timed sweep measured ("A token reads 2.069 GB = 0.487 ms.").
constexpr const char* kTokenTimeBound =
    "h200/11_llm_decode_kernels/stdout.txt#re=A\\stoken\\sreads\\s[0-9.]+\\sGB\\s=\\s([0-9.]+)\\sms";

// "git 37cf416, 2026-12-04" from the platform's PROVENANCE ("" where it says nothing).
std::string provenance(const fs::path& platform_dir) {
  const fs::path p = platform_dir / "PROVENANCE";
  if (!fs::exists(p)) return "";
  std::string git, date;
  for (const auto& line : split(slurp(p), '\n')) {
    if (starts_with(line, "git: ")) git = line.substr(5, 7);
    if (starts_with(line, "date: ")) date = line.substr(6, 10);
  }
  std::string out = git.empty() ? "" : "git " + git;
  if (!date.empty()) out += (out.empty() ? "" : ", ") + date;
  return out;
}
}  // namespace

const std::vector<Picture>& pictures() {
  static const std::vector<Picture> kPictures = {
      {kTokenTimeFile, "chapters/11_llm_decode_kernels/README.md"}};
  return kPictures;
}

std::string draw_picture(const fs::path& root, const std::string& file) {
  if (file != kTokenTimeFile) throw FigureError("no picture is drawn as " + file);
  const fs::path dir = root / "expected_output" / kTokenTimeRecording;
  std::vector<TokenBar> bars;
  for (const auto& v : kTokenTimeVariants) {
    fs::path trace = dir / v / "trace.json";
    if (!fs::exists(trace)) trace += ".gz";
    if (!fs::exists(trace))
      throw FigureError("missing recording: " + fs::relative(dir / v / "trace.json", root).string());
    try {
      bars.push_back(token_time(read_trace(trace), v));
    } catch (const FigureError&) {
      throw;
    } catch (const std::exception& e) {
      throw FigureError(fs::relative(trace, root).string() + ": " + e.what());
    }
  }
  const std::string prov = provenance(dir.parent_path());
  const std::vector<std::string> caption = {
      "From the recording expected_output/" + std::string(kTokenTimeRecording) +
          (prov.empty() ? "" : " (" + prov + ")") + ", median of " + std::to_string(bars.front().steps) +
          " profiled tokens;",
      "the bound: the bytes a token reads (every weight once) at the copy rate the chapter measured."};
  return token_time_svg(bars, resolve(root, kTokenTimeBound), caption);
}

}  // namespace wb::figures
