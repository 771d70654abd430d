// The SVG timeline, checked by structure, never by bytes: the document parses as XML, it has a
// lane per CPU thread and per GPU stream, step labels, escaped names, tiny kernels that stay
// visible, flow lines from launches, and it is deterministic. Every check is also shown failing
// on a wrong input (malformed XML, a trace without steps, a CPU-only trace).
//
// GPU traces are synthetic, shaped like the H200 probe (cpp_64_cold: steps ~221/77/61 µs,
// nvjet GEMM 1.9 µs, add kernel 0.9 µs, launch-to-start 10-20 µs), so no GPU is needed.
// The hidden case "[.docs]" writes the README pictures (see docs/img/README.md).
// The element builder the timeline is drawn with (workbook/svg.hpp) is checked by bytes:
// escaping in text and attributes, nesting and line layout, attribute order, numbers.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "workbook/memory.hpp"
#include "workbook/svg.hpp"
#include "workbook/trace_model.hpp"
#include "workbook/timeline_svg.hpp"
#include "workbook/trace.hpp"
#include "workbook/trace_reader.hpp"

namespace {

// ------------------------------------------------------------------ a tiny XML checker
// Enough of XML 1.0 for our output: prolog, elements, attributes, text, the five entities and
// numeric references. Anything else (a stray '<' or '&', a mismatched tag) is an error.
struct Element {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::string text;  // direct text content, entities decoded
  std::string cls() const {
    auto it = attrs.find("class");
    return it == attrs.end() ? "" : it->second;
  }
};
struct Doc {
  std::vector<Element> elements;  // document order
  std::string error;              // empty: well formed
  bool ok() const { return error.empty(); }
  std::vector<const Element*> by_class(const std::string& c) const {
    std::vector<const Element*> r;
    for (const auto& e : elements)
      if (e.cls() == c) r.push_back(&e);
    return r;
  }
  std::vector<const Element*> by_name(const std::string& n) const {
    std::vector<const Element*> r;
    for (const auto& e : elements)
      if (e.name == n) r.push_back(&e);
    return r;
  }
};

bool decode_entities(const std::string& in, std::string& out) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '<') return false;
    if (in[i] != '&') {
      out += in[i];
      continue;
    }
    const size_t semi = in.find(';', i);
    if (semi == std::string::npos) return false;
    const std::string ent = in.substr(i + 1, semi - i - 1);
    static const std::map<std::string, char> kNamed{
        {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
    if (auto it = kNamed.find(ent); it != kNamed.end())
      out += it->second;
    else if (ent.size() > 1 && ent[0] == '#' && ent.find_first_not_of("0123456789", 1) == std::string::npos)
      out += '?';
    else
      return false;
    i = semi;
  }
  return true;
}

Doc parse_xml(const std::string& s) {
  Doc d;
  std::vector<size_t> open;  // indices into d.elements
  bool root_seen = false;
  size_t i = 0;
  auto fail = [&](const std::string& why) {
    d.error = why + " at byte " + std::to_string(i);
    return d;
  };
  if (s.rfind("<?xml", 0) == 0) i = s.find("?>") + 2;
  while (i < s.size()) {
    if (s[i] != '<') {
      const size_t lt = s.find('<', i);
      const std::string raw = s.substr(i, lt == std::string::npos ? std::string::npos : lt - i);
      std::string text;
      if (!decode_entities(raw, text)) return fail("bad text/entity");
      if (open.empty()) {
        if (raw.find_first_not_of(" \n\t\r") != std::string::npos) return fail("text outside the root");
      } else {
        d.elements[open.back()].text += text;
      }
      if (lt == std::string::npos) break;
      i = lt;
      continue;
    }
    if (s.compare(i, 2, "</") == 0) {
      const size_t gt = s.find('>', i);
      if (gt == std::string::npos) return fail("unterminated end tag");
      const std::string name = s.substr(i + 2, gt - i - 2);
      if (open.empty() || d.elements[open.back()].name != name) return fail("mismatched </" + name + ">");
      open.pop_back();
      i = gt + 1;
      continue;
    }
    // start tag
    ++i;
    size_t j = i;
    while (j < s.size() &&
           (isalnum(static_cast<unsigned char>(s[j])) || s[j] == '-' || s[j] == ':' || s[j] == '_'))
      ++j;
    if (j == i) return fail("bad tag name");
    if (open.empty() && root_seen) return fail("second root element");
    root_seen = true;
    Element el;
    el.name = s.substr(i, j - i);
    i = j;
    bool self_closing = false;
    for (;;) {
      while (i < s.size() && isspace(static_cast<unsigned char>(s[i]))) ++i;
      if (i >= s.size()) return fail("unterminated start tag");
      if (s[i] == '>') {
        ++i;
        break;
      }
      if (s.compare(i, 2, "/>") == 0) {
        i += 2;
        self_closing = true;
        break;
      }
      const size_t eq = s.find('=', i);
      if (eq == std::string::npos || s[eq + 1] != '"') return fail("attribute without a quoted value");
      const std::string key = s.substr(i, eq - i);
      if (key.empty() || key.find_first_of(" <>\"&") != std::string::npos) return fail("bad attribute name");
      const size_t end = s.find('"', eq + 2);
      if (end == std::string::npos) return fail("unterminated attribute");
      std::string val;
      if (!decode_entities(s.substr(eq + 2, end - eq - 2), val)) return fail("bad attribute value");
      if (el.attrs.count(key)) return fail("duplicate attribute " + key);
      el.attrs[key] = val;
      i = end + 1;
    }
    d.elements.push_back(el);
    if (!self_closing) open.push_back(d.elements.size() - 1);
  }
  if (!open.empty()) {
    i = s.size();
    return fail("unclosed <" + d.elements[open.back()].name + ">");
  }
  if (!root_seen) return fail("no root element");
  return d;
}

// ------------------------------------------------------------------ synthetic traces
constexpr int64_t us(double v) { return static_cast<int64_t>(v * 1000.0); }

using wb::Kind;

const std::string kGemm = "nvjet_sm90_tst_64x8_64x16_1x4_h_bz_NNT";
const std::string kAdd =
    "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, "
    "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)";

struct Builder {
  wb::Trace t;
  int64_t next_ext = 1, next_corr = 100;
  static constexpr int64_t kBase = us(1000);  // the clock does not start at 0 in real traces

  Builder() = default;
  explicit Builder(std::string source) { t.source = std::move(source); }

  // An event of kind `k` (its category the kind's name) at `start` µs for `dur` µs.
  static wb::Event event(wb::Kind k, const std::string& name, double start, double dur, int64_t pid,
                         int64_t tid) {
    wb::Event e;
    e.category = std::string(wb::kind_name(k));
    e.kind = k;
    e.name = name;
    e.start_ns = kBase + us(start);
    e.dur_ns = us(dur);
    e.pid = pid;
    e.tid = tid;
    return e;
  }

  int64_t cpu(wb::Kind k, const std::string& name, double start, double dur, int64_t tid = 4242) {
    wb::Event e = event(k, name, start, dur, 4242, tid);
    e.id = next_ext++;
    t.events.push_back(e);
    return e.id;
  }
  // A launch call inside op `ext` and the device work it queued `offset` µs later.
  void launch(wb::Kind call, const std::string& call_name, int64_t ext, double start, double dur,
              wb::Kind work, const std::string& work_name, double offset, double work_dur, int64_t stream = 7,
              int64_t tid = 4242) {
    const int64_t corr = next_corr++;
    wb::Event c = event(call, call_name, start, dur, 4242, tid);
    c.id = corr;
    c.linked_id = ext;
    t.events.push_back(c);
    wb::Event k = event(work, work_name, start + offset, work_dur, 0, stream);
    k.id = corr;
    k.linked_id = ext;
    t.events.push_back(k);
  }
  // Category "gpu_user_annotation", on device 0.
  void gpu_annotation(const std::string& name, double start, double dur, int64_t stream = 7) {
    t.events.push_back(event(wb::Kind::GpuUserAnnotation, name, start, dur, 0, stream));
  }
};

// One eager step of y = add(matmul(x, w), b) at 64x64 on the H200.
// `dead` is the gap between matmul_add and aten::matmul (21 µs cold, ~1-2 µs later).
void eager_step(Builder& b, int n, double t0, double width, double dead, double gemm_lat, double add_lat) {
  b.cpu(Kind::UserAnnotation, "ProfilerStep#" + std::to_string(n), t0, width);
  b.cpu(Kind::UserAnnotation, "matmul_add", t0 + 1.5, width - 7);
  const double mm0 = t0 + 1.5 + dead;
  const double mm_w = (width - 7 - dead) * 0.62;
  b.cpu(Kind::CpuOp, "aten::matmul", mm0, mm_w);
  const int64_t mm = b.cpu(Kind::CpuOp, "aten::mm", mm0 + 0.8, mm_w - 1.4);
  const double l1 = mm0 + mm_w - 9;
  b.launch(Kind::Driver, "cuLaunchKernelEx", mm, l1, 6.5, Kind::Kernel, kGemm, gemm_lat, 1.9);
  const double add0 = mm0 + mm_w + 1.2;
  const int64_t add = b.cpu(Kind::CpuOp, "aten::add", add0, (width - 7 - dead) * 0.3);
  b.launch(Kind::Runtime, "cudaLaunchKernel", add, add0 + 3, 4.5, Kind::Kernel, kAdd, add_lat, 0.9);
  // GPU-side matmul_add: from the first kernel of the step to the end of the last one.
  b.gpu_annotation("matmul_add", l1 + gemm_lat, (add0 + 3 + add_lat + 0.9) - (l1 + gemm_lat));
}

// Three active steps like the H200 cold 64x64 probe, plus the profiler's end-of-window sync.
wb::Trace h200_cold_64() {
  Builder b("synthetic_h200_cold_64.json");
  b.t.devices.push_back({0, "NVIDIA H200", 9, 0, int64_t{150} << 30, 132});
  // The whole-capture span Kineto writes (category "Trace"); never drawn as a bar.
  b.t.events.push_back(Builder::event(wb::Kind::Trace, "PyTorch Profiler (0)", -40, 480, -1, -1));
  eager_step(b, 2, 0, 220.7, 21.0, 19.7, 14.2);
  eager_step(b, 3, 222.0, 77.4, 1.7, 10.5, 9.4);
  eager_step(b, 4, 300.5, 61.3, 1.1, 10.1, 9.9);
  b.cpu(wb::Kind::Runtime, "cudaDeviceSynchronize", 363.0, 23.8);
  return b.t;
}

// Two CPU threads and two streams (e.g. a data-loader thread and a side stream).
wb::Trace two_threads_two_streams() {
  Builder b("two_by_two");
  b.cpu(Kind::UserAnnotation, "ProfilerStep#0", 0, 100);
  const int64_t mm = b.cpu(Kind::CpuOp, "aten::mm", 10, 30);
  b.launch(Kind::Runtime, "cudaLaunchKernel", mm, 20, 5, Kind::Kernel, kGemm, 12, 4, 7);
  const int64_t cp = b.cpu(Kind::CpuOp, "aten::copy_", 30, 40, 777);
  b.launch(Kind::Runtime, "cudaMemcpyAsync", cp, 40, 6, Kind::Memcpy, "Memcpy HtoD (Pinned -> Device)", 10,
           20, 13, 777);
  return b.t;
}

// What a plain CPU profile looks like: steps, ops, no device at all.
wb::Trace cpu_only() {
  Builder b("cpu_only");
  for (int n = 2; n <= 4; ++n) {
    const double t0 = (n - 2) * 100.0;
    b.cpu(Kind::UserAnnotation, "ProfilerStep#" + std::to_string(n), t0, 90);
    b.cpu(Kind::UserAnnotation, "matmul_add", t0 + 5, 70);
    b.cpu(Kind::CpuOp, "aten::matmul", t0 + 10, 40);
    b.cpu(Kind::CpuOp, "aten::mm", t0 + 11, 38);
    b.cpu(Kind::CpuOp, "aten::add", t0 + 55, 15);
  }
  return b.t;
}

wb::Trace without_steps() {
  Builder b("no_steps");
  b.cpu(Kind::UserAnnotation, "matmul_add", 0, 70);
  b.cpu(Kind::CpuOp, "aten::mm", 5, 40);
  return b.t;
}

std::string render(const wb::Trace& t, const wb::TimelineOptions& o = {}) {
  wb::TraceModel m(t);
  return wb::render_timeline_svg(m, o);
}

const std::filesystem::path kPyCpuTrace =
    std::filesystem::path(WORKBOOK_ROOT) / "tests/data/traces/py_cpu_64.json";

std::vector<std::string> step_labels(const Doc& d) {
  std::vector<std::string> r;
  for (const auto* e : d.by_class("step-label")) r.push_back(e->text);
  return r;
}

}  // namespace

TEST_CASE("the XML checker itself rejects broken documents", "[render][timeline][common][cpu]") {
  CHECK(parse_xml("<svg><g></g></svg>").ok());
  CHECK_FALSE(parse_xml("<svg><g></svg>").ok());                       // mismatched
  CHECK_FALSE(parse_xml("<svg><text>a < b</text></svg>").ok());        // raw '<'
  CHECK_FALSE(parse_xml("<svg><text>R&D</text></svg>").ok());          // raw '&'
  CHECK_FALSE(parse_xml("<svg><text x=\"a<b\">t</text></svg>").ok());  // '<' in attribute
  CHECK_FALSE(parse_xml("<svg></svg><svg></svg>").ok());               // two roots
  CHECK_FALSE(parse_xml("<svg>").ok());                                // unclosed
}

TEST_CASE("svg builder: text and attribute values are escaped", "[render][timeline][common][cpu]") {
  using wb::svg::Element;
  const std::string s =
      Element("text").attr("data-name", "a<b> & \"c\" 'd'").text("x < y && \"z\" > 'w'").str();
  CHECK(s ==
        "<text data-name=\"a&lt;b&gt; &amp; &quot;c&quot; &apos;d&apos;\">"
        "x &lt; y &amp;&amp; &quot;z&quot; &gt; &apos;w&apos;</text>");
  const Doc d = parse_xml(s);  // ... and a parser gets the original strings back
  REQUIRE(d.ok());
  CHECK(d.elements.at(0).attrs.at("data-name") == "a<b> & \"c\" 'd'");
  CHECK(d.elements.at(0).text == "x < y && \"z\" > 'w'");
  // Kernel names: every special, in a tooltip.
  CHECK(Element("title").text("void at::native::f<(int)4>(float const&, bool) && 'x'").str() ==
        "<title>void at::native::f&lt;(int)4&gt;(float const&amp;, bool) &amp;&amp; &apos;x&apos;</title>");
  // A newline stays a newline in text; in an attribute it would become a space, so it is a reference.
  CHECK(Element("title").text("aten::mm\n1.9 µs").str() == "<title>aten::mm\n1.9 µs</title>");
  CHECK(Element("g").attr("data-x", "1\n2\t3").str() == "<g data-x=\"1&#10;2&#9;3\"/>");
  // What XML cannot hold (a control character, broken UTF-8) becomes U+FFFD; valid UTF-8 stays.
  CHECK(Element("t").text(std::string("a\x01z \xff µs →")).str() ==
        "<t>a\xEF\xBF\xBDz \xEF\xBF\xBD µs →</t>");
  CHECK(wb::svg::escape_text("R&D <1>") == "R&amp;D &lt;1&gt;");
  CHECK(wb::svg::escape_attribute("\"q\"\n") == "&quot;q&quot;&#10;");
}

TEST_CASE("svg builder: nesting, self-closing tags, one child per line", "[render][timeline][common][cpu]") {
  using wb::svg::Element;
  CHECK(Element("rect").str() == "<rect/>");
  CHECK(Element("text").text("").str() == "<text></text>");  // text given, even empty: both tags
  CHECK(Element("svg").add(Element("g").add(Element("g").add(Element("text").text("deep")))).str() ==
        "<svg><g><g><text>deep</text></g></g></svg>");

  Element bar("g");
  bar.attr("class", "ev");
  bar.add(Element("title").text("aten::mm"));
  bar.add(Element("rect").attr("x", 12.0).attr("width", 3));
  CHECK(bar.str() == "<g class=\"ev\"><title>aten::mm</title><rect x=\"12\" width=\"3\"/></g>");
  CHECK(bar.children().size() == 2);

  // multiline: a newline after the start tag and after every child; a fragment is one line.
  Element lane("g");
  lane.attr("class", "lane").multiline();
  lane.add(Element("line"));
  lane.add(Element::fragment().add(Element("line")).add(Element("text").text("1 µs")));
  lane.add(std::move(bar));
  CHECK(lane.str() ==
        "<g class=\"lane\">\n<line/>\n<line/><text>1 µs</text>\n"
        "<g class=\"ev\"><title>aten::mm</title><rect x=\"12\" width=\"3\"/></g>\n</g>");
  CHECK(Element::fragment().add(Element("a")).add(Element("b")).str() == "<a/><b/>");
  Element joined("g");
  joined.add(Element("a")).add_children_of(Element::fragment().add(Element("b")).add(Element("c")));
  CHECK(joined.str() == "<g><a/><b/><c/></g>");

  std::ostringstream os;
  lane.write(os);
  CHECK(os.str() == lane.str());
  std::string out = "<?xml?>";
  lane.append_to(out);
  CHECK(out == "<?xml?>" + lane.str());
}

TEST_CASE("svg builder: attributes keep the order they were set in", "[render][timeline][common][cpu]") {
  using wb::svg::Element;
  Element e("rect");
  e.attr("y", 2)
      .attr("x", int64_t{-1})
      .attr("fill", "#fff")
      .attr("height", 4.25)
      .attr("rx", std::string("1.5"));
  CHECK(e.str() == "<rect y=\"2\" x=\"-1\" fill=\"#fff\" height=\"4.3\" rx=\"1.5\"/>");
  e.attr("x", 7);  // set again: replaced in place, not moved to the end
  CHECK(e.str() == "<rect y=\"2\" x=\"7\" fill=\"#fff\" height=\"4.3\" rx=\"1.5\"/>");
  REQUIRE(e.attrs().size() == 5);
  CHECK(e.attrs()[1].first == "x");
  // Numbers: fixed, locale-free, no "-0", trailing zeros dropped.
  CHECK(wb::svg::num(-0.04) == "0");
  CHECK(wb::svg::num(12.0) == "12");
  CHECK(wb::svg::num(1.234, 2) == "1.23");
  CHECK(wb::svg::num(99.96) == "100");
  CHECK(wb::svg::num(std::numeric_limits<double>::quiet_NaN()) == "0");
}

TEST_CASE("a GPU trace: well-formed, lanes, steps, flows, idle", "[render][timeline][common][cpu]") {
  const auto t = h200_cold_64();
  const Doc d = parse_xml(render(t));
  REQUIRE(d.ok());
  REQUIRE(d.elements.front().name == "svg");

  CHECK(d.by_class("lane cpu").size() == 1);
  const auto gpu = d.by_class("lane gpu");
  REQUIRE(gpu.size() == 1);
  CHECK(gpu[0]->attrs.at("data-stream") == "7");
  CHECK(step_labels(d) == std::vector<std::string>{"ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"});

  // Every launch in the window gets a flow line to its kernel: 2 kernels x 3 steps.
  CHECK(d.by_class("flow").size() == 6);
  // The Trace span is not a bar; everything else is: 3 x (2 annotations, 3 ops, 2 launches,
  // 2 kernels, 1 GPU annotation) + the final sync.
  CHECK(d.by_class("ev").size() == 3 * 10 + 1);
  CHECK(d.by_class("note").empty());

  // An overhead-bound run: the stream is idle almost all of every step (a few µs of work in
  // 60-220 µs). One idle label per step, each above 80%.
  const auto idle = d.by_class("idle");
  REQUIRE(idle.size() == 3);
  for (const auto* e : idle) {
    INFO(e->text);
    REQUIRE(e->text.rfind("idle ", 0) == 0);
    CHECK(std::stod(e->text.substr(5)) > 80.0);
  }
}

TEST_CASE("tiny kernels stay visible and long names are shortened, not lost",
          "[render][timeline][common][cpu]") {
  // 400 px for ~380 µs: the 0.9 µs add kernel would be half a pixel wide at its true scale.
  wb::TimelineOptions o;
  o.width_px = 400;
  const Doc d = parse_xml(render(h200_cold_64(), o));
  REQUIRE(d.ok());
  int kernels = 0;
  for (size_t i = 0; i < d.elements.size(); ++i) {
    if (d.elements[i].name != "rect" || i == 0 || d.elements[i - 1].name != "title") continue;
    const std::string& tip = d.elements[i - 1].text;
    CHECK(std::stod(d.elements[i].attrs.at("width")) >= 1.5);
    if (tip.find("\nkernel") == std::string::npos && tip.find("· kernel") == std::string::npos) continue;
    ++kernels;
    // The tooltip names the kernel, and a long demangled name by its number in the list of
    // full names under the picture, where it is written once, template arguments and all.
    CHECK((tip.rfind(kGemm, 0) == 0 || tip.rfind(kAdd, 0) == 0 ||
           tip.find(" under the picture]") != std::string::npos));
  }
  CHECK(kernels == 6);
  std::string full;
  for (const auto* e : d.by_class("fullname")) full += e->text;
  for (const std::string& name : {kGemm, kAdd}) {
    if (name.size() <= 80) continue;
    // Wrapped over lines: every piece is in the list, in order.
    CHECK(full.find(name.substr(0, 40)) != std::string::npos);
  }
  // No bar label is longer than the longest name it could come from.
  for (const auto* e : d.by_name("text")) CHECK(e->text.size() < kAdd.size());
}

TEST_CASE("a lane per CPU thread and per GPU stream", "[render][timeline][common][cpu]") {
  const Doc d = parse_xml(render(two_threads_two_streams()));
  REQUIRE(d.ok());
  const auto cpu = d.by_class("lane cpu");
  const auto gpu = d.by_class("lane gpu");
  REQUIRE(cpu.size() == 2);
  REQUIRE(gpu.size() == 2);
  CHECK(cpu[0]->attrs.at("data-tid") != cpu[1]->attrs.at("data-tid"));
  CHECK(gpu[0]->attrs.at("data-stream") != gpu[1]->attrs.at("data-stream"));
  CHECK(d.by_class("flow").size() == 2);  // one from each thread, to each stream
}

TEST_CASE("step windows select what is drawn", "[render][timeline][common][cpu]") {
  const auto t = h200_cold_64();
  wb::TimelineOptions o;
  o.first_step = 3;
  o.last_step = 3;
  const Doc d = parse_xml(render(t, o));
  REQUIRE(d.ok());
  CHECK(step_labels(d) == std::vector<std::string>{"ProfilerStep#3"});
  CHECK(d.by_class("idle").size() == 1);
  CHECK(d.by_class("flow").size() == 2);

  o.first_step = 2;  // steps 2..3: the picture grows, step 4 stays out
  const Doc d23 = parse_xml(render(t, o));
  CHECK(step_labels(d23) == std::vector<std::string>{"ProfilerStep#2", "ProfilerStep#3"});
}

TEST_CASE("a step window keeps the GPU work it queued, even when it runs late",
          "[render][timeline][common][cpu]") {
  // 4096-like: the GEMM (175 µs) starts after the CPU step that launched it has ended.
  Builder b;
  using wb::Kind;
  b.cpu(Kind::UserAnnotation, "ProfilerStep#2", 0, 40);
  const int64_t mm = b.cpu(Kind::CpuOp, "aten::mm", 5, 30);
  b.launch(Kind::Driver, "cuLaunchKernelEx", mm, 20, 6, Kind::Kernel, kGemm, 30, 175);
  b.cpu(Kind::UserAnnotation, "ProfilerStep#3", 45, 40);
  wb::TimelineOptions o;
  o.first_step = 2;
  o.last_step = 2;
  const Doc d = parse_xml(render(b.t, o));
  REQUIRE(d.ok());
  CHECK(d.by_class("flow").size() == 1);
  bool whole_kernel = false;  // drawn ~175 µs wide, not cut at the CPU step's end (40 µs)
  for (size_t i = 1; i < d.elements.size(); ++i)
    if (d.elements[i].name == "rect" && d.elements[i - 1].name == "title" &&
        d.elements[i - 1].text.rfind(kGemm, 0) == 0)
      whole_kernel = std::stod(d.elements[i].attrs.at("width")) > 0.8 * (1200 - 176 - 18) * 175 / 230;
  CHECK(whole_kernel);
}

TEST_CASE("names are escaped and sanitised", "[render][timeline][common][cpu]") {
  Builder b;
  const std::string nasty = "op<T> & \"x\" 'y' \x01 end";
  b.cpu(wb::Kind::UserAnnotation, "ProfilerStep#1", 0, 100);
  b.cpu(wb::Kind::CpuOp, nasty, 10, 80);
  b.cpu(wb::Kind::CpuOp, std::string("bad\xff\xfeutf8"), 20, 10);
  wb::TimelineOptions o;
  o.title = "A <b>&amp; title";
  const std::string svg = render(b.t, o);
  const Doc d = parse_xml(svg);
  REQUIRE(d.ok());
  CHECK(svg.find("op<T>") == std::string::npos);
  CHECK(svg.find("op&lt;T&gt; &amp; &quot;x&quot; &apos;y&apos;") != std::string::npos);
  CHECK(svg.find('\x01') == std::string::npos);
  CHECK(svg.find('\xff') == std::string::npos);
  bool tip_found = false;
  for (const auto* e : d.by_name("title")) tip_found |= e->text.rfind("op<T> & \"x\" 'y' ", 0) == 0;
  CHECK(tip_found);
  CHECK(d.by_name("title").front()->text == "A <b>&amp; title");
}

TEST_CASE("the same input gives the same bytes", "[render][timeline][common][cpu]") {
  wb::TimelineOptions o;
  o.highlights.push_back(
      wb::Highlight::of_range(Builder::kBase + us(1.5), Builder::kBase + us(22.5), "dead window"));
  const auto a = h200_cold_64();
  const auto b = h200_cold_64();  // a second, independent trace and model
  const std::string s1 = render(a, o);
  CHECK(s1 == render(a, o));
  CHECK(s1 == render(b, o));
  o.width_px = 900;  // ... and a different request gives a different picture
  CHECK(s1 != render(a, o));
}

TEST_CASE("empty windows and CPU-only traces are pictures, not errors", "[render][timeline][common][cpu]") {
  SECTION("a window where nothing ran") {
    wb::TimelineOptions o;
    o.from_ns = Builder::kBase + us(5000);
    o.to_ns = Builder::kBase + us(6000);
    const Doc d = parse_xml(render(h200_cold_64(), o));
    REQUIRE(d.ok());
    CHECK(d.by_class("ev").empty());
    CHECK(step_labels(d).empty());
    REQUIRE(d.by_class("note").size() == 1);
    CHECK(d.by_class("note")[0]->text.find("No events") != std::string::npos);
    CHECK(d.by_class("idle").size() == 1);  // the stream is still there: idle 100% of window
  }
  SECTION("a CPU-only trace has no GPU lane and says so") {
    const Doc d = parse_xml(render(cpu_only()));
    REQUIRE(d.ok());
    CHECK(d.by_class("lane gpu").empty());
    CHECK(d.by_class("lane cpu").size() == 1);
    REQUIRE(d.by_class("note").size() == 1);
    CHECK(d.by_class("note")[0]->text.find("CPU-only trace") == 0);
    CHECK(d.by_class("flow").empty());
  }
  SECTION("the GPU trace is not mistaken for CPU-only") {
    const Doc d = parse_xml(render(h200_cold_64()));
    CHECK(d.by_class("note").empty());
  }
  SECTION("an empty trace") {
    wb::Trace t;
    const Doc d = parse_xml(render(t));
    REQUIRE(d.ok());
    CHECK(d.by_class("ev").empty());
    CHECK(d.by_class("note").size() == 2);  // CPU-only + nothing in the window
  }
}

TEST_CASE("a trace without steps has no step labels", "[render][timeline][common][cpu]") {
  const Doc d = parse_xml(render(without_steps()));
  REQUIRE(d.ok());
  CHECK(step_labels(d).empty());
  CHECK(d.by_class("ev").size() == 2);  // drawn anyway: the whole trace
  // ... while the same check passes on a trace that has them.
  CHECK(step_labels(parse_xml(render(cpu_only()))).size() == 3);
}

TEST_CASE("depth limit, highlights and flow switch", "[render][timeline][common][cpu]") {
  const auto t = h200_cold_64();
  wb::TraceModel m(t);
  wb::TimelineOptions o;
  o.max_depth = 2;  // ProfilerStep and matmul_add only
  const std::string shallow = wb::render_timeline_svg(m, o);
  const Doc d = parse_xml(shallow);
  REQUIRE(d.ok());
  CHECK(d.by_class("ev").size() == 3 * 2 + 1 + 3 * 3);  // CPU rows 0-1, the sync, GPU work + annotations
  CHECK(shallow.find("deeper calls hidden") != std::string::npos);
  CHECK(d.by_class("flow").empty());  // launchers are hidden, so no line can start

  wb::TimelineOptions h;
  h.flows = false;
  const auto mm = m.find("aten::mm");
  REQUIRE(mm.size() == 3);
  h.highlights.push_back(wb::Highlight::of_event(mm[0], "aten::mm of the cold step"));
  h.highlights.push_back(
      wb::Highlight::of_range(Builder::kBase + us(1.5), Builder::kBase + us(22.5), "dead window"));
  h.highlights.push_back(
      wb::Highlight::of_range(Builder::kBase + us(9000), Builder::kBase + us(9100), "far away"));
  const Doc dh = parse_xml(wb::render_timeline_svg(m, h));
  REQUIRE(dh.ok());
  CHECK(dh.by_class("flow").empty());
  CHECK(dh.by_class("highlight").size() == 2);
  const auto caps = dh.by_class("caption");
  REQUIRE(caps.size() == 3);
  std::string all;
  for (const auto* e : dh.by_name("text")) all += e->text + "\n";
  CHECK(all.find("dead window\n") != std::string::npos);
  CHECK(all.find("far away  (outside this picture)") != std::string::npos);
}

TEST_CASE("options that make no sense are clear errors", "[render][timeline][common][cpu]") {
  const auto t = h200_cold_64();
  wb::TraceModel m(t);
  auto fails = [&](wb::TimelineOptions o, const std::string& part) {
    try {
      wb::render_timeline_svg(m, o);
    } catch (const std::invalid_argument& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(part) != std::string::npos);
      return;
    }
    FAIL("no error for: " << part);
  };
  // Fresh options with only the time range, or only the steps, set.
  auto range = [](std::optional<int64_t> from, std::optional<int64_t> to) {
    wb::TimelineOptions o;
    o.from_ns = from;
    o.to_ns = to;
    return o;
  };
  auto steps = [](int first, int last) {
    wb::TimelineOptions o;
    o.first_step = first;
    o.last_step = last;
    return o;
  };
  fails(range(10, 10), "empty time range");
  fails(range(10, std::nullopt), "both ends");
  fails(steps(7, 9), "ProfilerStep#2 to #4, none in 7-9");
  fails(steps(4, 2), "inverted");
  wb::TimelineOptions narrow;
  narrow.width_px = 50;
  fails(narrow, "width");
  // Would overflow end - start.
  fails(range(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()), "longer than a day");

  const auto plain = without_steps();
  wb::TraceModel pm(plain);
  wb::TimelineOptions s;
  s.first_step = 2;
  CHECK_THROWS_AS(wb::render_timeline_svg(pm, s), std::invalid_argument);
}

TEST_CASE("the real Python CPU trace", "[render][timeline][common][cpu]") {
  if (!std::filesystem::exists(kPyCpuTrace)) SKIP("no " << kPyCpuTrace.string());
  const wb::Trace t = wb::read_trace(kPyCpuTrace);
  const Doc d = parse_xml(render(t));
  REQUIRE(d.ok());
  CHECK(step_labels(d) == std::vector<std::string>{"ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"});
  CHECK(d.by_class("lane cpu").size() == 1);
  CHECK(d.by_class("lane gpu").empty());
  REQUIRE(d.by_class("note").size() == 1);
  CHECK(d.by_class("note")[0]->text.find("CPU-only") == 0);
  CHECK(d.by_class("ev").size() == 24);  // every op and annotation of the three steps
}

// Not a check: writes the README pictures as SVG into $WB_TIMELINE_DOCS (hidden; run it by tag).
TEST_CASE("README pictures", "[render][.docs][cpu]") {
  const char* dir = std::getenv("WB_TIMELINE_DOCS");
  if (!dir) SKIP("set WB_TIMELINE_DOCS=<dir>");
  {
    const auto t = h200_cold_64();
    const wb::TraceModel m(t);
    wb::TimelineOptions o;
    o.title = "y = add(matmul(x, w), b), 64x64 bf16, cold: synthetic trace with H200 timings";
    const auto matmul = m.find("aten::matmul");
    const auto gemm = m.find(kGemm);
    REQUIRE((!matmul.empty() && !gemm.empty()));
    o.highlights.push_back(wb::Highlight::of_range(Builder::kBase + us(1.5), m.at(matmul[0]).start_ns,
                                                   "Dead window: 21 µs between matmul_add and aten::matmul "
                                                   "in the first step (one-time setup); ~1-2 µs later"));
    o.highlights.push_back(wb::Highlight::of_event(
        gemm[0],
        "The GEMM kernel: 1.9 µs of GPU work in a 221 µs step. The GPU idles; the run is overhead-bound"));
    wb::write_timeline_svg(m, o, std::filesystem::path(dir) / "timeline_h200_cold_64.svg");
  }
  if (std::filesystem::exists(kPyCpuTrace)) {
    const wb::Trace t = wb::read_trace(kPyCpuTrace);
    const wb::TraceModel m(t);
    wb::TimelineOptions o;
    o.title = "Python torch.profiler, CPU only, 64x64 (real trace: tests/data/traces/py_cpu_64.json)";
    wb::write_timeline_svg(m, o, std::filesystem::path(dir) / "timeline_py_cpu_64.svg");
  }
}

TEST_CASE("a big trace: a few steps by default, sub-pixel bars merged, a line over all steps",
          "[timeline][tools][cpu]") {
  // The Python training trace: 3 steps of ~1000 ops each; in a 1200 px picture most ops are
  // far narrower than a pixel.
  const wb::Trace t =
      wb::read_trace(std::filesystem::path(WORKBOOK_ROOT) / "tests/data/python/cpu_plain.json.gz");
  const wb::TraceModel m(t);
  const wb::DefaultSteps two = wb::default_steps(m, 2);
  CHECK(two.limited);
  CHECK(two.total == 3);
  CHECK(two.last - two.first == 1);
  CHECK_FALSE(wb::default_steps(m, 3).limited);  // all of them: nothing left out, nothing to say
  const std::string summary = wb::steps_summary(m);
  CHECK(summary.find("3 steps") == 0);
  CHECK(summary.find("CPU step width median") != std::string::npos);

  wb::TimelineOptions every, merged;
  every.merge_below_px = -1;  // every bar, however crowded
  merged.merge_below_px = 1.0;
  const std::string a = wb::render_timeline_svg(m, every), b = wb::render_timeline_svg(m, merged);
  const Doc da = parse_xml(a), db = parse_xml(b);
  REQUIRE(da.ok());
  REQUIRE(db.ok());
  CHECK(da.by_class("merged").empty());
  REQUIRE_FALSE(db.by_class("merged").empty());
  // Fewer drawn bars, a smaller file, and the same steps.
  CHECK(db.by_class("ev").size() + db.by_class("merged").size() < da.by_class("ev").size());
  CHECK(b.size() < a.size() / 2);
  CHECK(step_labels(da) == step_labels(db));
}

// ---- the memory lane (profile_memory) -------------------------------------------------------
TEST_CASE("a profile_memory trace: a memory lane under the steps, the peak marked; none without",
          "[render][timeline][memory][cpu]") {
  const auto data = std::filesystem::path(WORKBOOK_ROOT) / "tests/data/python";
  const wb::Trace mem = wb::read_trace(data / "cpu_memory_sched.json.gz");
  const std::string svg = render(mem);
  const Doc d = parse_xml(svg);
  REQUIRE(d.ok());
  REQUIRE(d.by_class("lane memory").size() == 1);
  REQUIRE(d.by_class("mem-allocated").size() == 1);
  CHECK(d.by_class("mem-reserved").empty());  // the CPU allocator holds no cache: no reserved line
  const auto peaks = d.by_class("mem-peak");
  REQUIRE(peaks.size() == 1);
  // The marked peak is the series' peak: "peak 420.0 MB" (the fixture's 400 MiB buffer on top).
  const auto series = wb::memory_series(mem);
  const wb::MemorySeries* s = wb::main_memory_series(series);
  REQUIRE(s != nullptr);
  CHECK(s->peak_allocated() > 419'000'000);
  CHECK(svg.find("peak 420.0 MB") != std::string::npos);
  // The lane sits between the step band and the first CPU lane.
  CHECK(svg.find("class=\"lane memory\"") < svg.find("class=\"lane cpu\""));
  // A trace without [memory] records has no such lane.
  const std::string plain = render(wb::read_trace(data / "cpu_plain.json.gz"));
  CHECK(plain.find("lane memory") == std::string::npos);
  CHECK(plain.find("mem-peak") == std::string::npos);
}

TEST_CASE("every recording's timeline is <= 1 MB and legible", "[timeline][cpu][recordings]") {
  // Rendered from each recording's trace with the chapters' options (chapter.cpp: the default
  // TimelineOptions and a title), so a re-record writes what is checked here. The H200 decode
  // and graph runs were 3.9-6.1 MB: tooltips of 400-character kernel names on every bar, an
  // arrow per graph kernel, warm-up replays inside the window.
  namespace fs = std::filesystem;
  const fs::path root = fs::path(WORKBOOK_ROOT) / "expected_output";
  std::vector<fs::path> traces;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.path().filename() == "trace.json" || e.path().filename() == "trace.json.gz")
      traces.push_back(e.path());
  std::sort(traces.begin(), traces.end());
  REQUIRE(traces.size() >= 20);
  size_t biggest = 0;
  for (const auto& p : traces) {
    const wb::Trace t = wb::read_trace(p);
    const wb::TraceModel m(t);
    wb::TimelineOptions o;
    o.title = fs::relative(p.parent_path(), root).string();
    const std::string svg = wb::render_timeline_svg(m, o);
    INFO(p.string() << ": " << svg.size() << " bytes");
    CHECK(svg.size() <= 1'000'000);
    biggest = std::max(biggest, svg.size());
    // Legible: no tooltip carries a whole demangled signature (those are listed once, under
    // the picture), and a CUDA graph launch has one arrow, not one per kernel.
    size_t longest_title = 0, graph_launches = 0;
    for (size_t at = svg.find("<title>"); at != std::string::npos; at = svg.find("<title>", at + 1))
      longest_title = std::max(longest_title, svg.find("</title>", at) - at - 7);
    CHECK(longest_title <= 200);
    for (const auto& e : t.events)
      if (e.kind == wb::Kind::Runtime && e.name.find("GraphLaunch") != std::string::npos) ++graph_launches;
    size_t flows = 0;
    for (size_t at = svg.find("class=\"flow\""); at != std::string::npos;
         at = svg.find("class=\"flow\"", at + 1))
      ++flows;
    size_t other_launches = 0;
    for (const auto& e : t.events)
      if ((e.kind == wb::Kind::Runtime || e.kind == wb::Kind::Driver) &&
          e.name.find("GraphLaunch") == std::string::npos)
        ++other_launches;
    CHECK(flows <= graph_launches + other_launches);
  }
  WARN("largest rendered timeline: " << biggest << " bytes over " << traces.size() << " recordings");
}
