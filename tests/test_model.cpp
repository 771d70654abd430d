// TraceModel: call trees, GPU lanes, launch links and step windows, on the real Python
// trace, the synthetic H200-like trace, and small hand-made traces that break each rule.
#include <algorithm>
#include <catch2/catch_test_macros.hpp>
#include <filesystem>
#include <set>
#include <string>

#include "workbook/lessons.hpp"
#include "workbook/names.hpp"
#include "workbook/rules.hpp"
#include "workbook/schedule.hpp"
#include "workbook/trace_diff.hpp"
#include "workbook/trace_model.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kTraces = fs::path(WORKBOOK_ROOT) / "tests" / "data" / "traces";
const fs::path kPyCpu = kTraces / "py_cpu_64.json";                  // real
const fs::path kSynthGpu = kTraces / "synthetic_h200_eager64.json";  // SYNTHETIC

wb::EventIdx idx(const wb::TraceModel& m, const std::string& name, size_t nth = 0) {
  const auto all = m.find(name);
  REQUIRE(all.size() > nth);
  return all[nth];
}

std::string name_of_parent(const wb::TraceModel& m, wb::EventIdx i) {
  const auto p = m.parent(i);
  return p ? m.at(*p).name : "<root>";
}

// A tiny CPU event list: {"name", start_us, dur_us, external id}.
struct Spec {
  const char* name;
  double ts;
  double dur;
  int ext;
  const char* cat = "cpu_op";
};
std::string trace_of(std::initializer_list<Spec> specs) {
  std::string s = R"({"traceEvents":[)";
  bool first = true;
  for (const Spec& e : specs) {
    if (!first) s += ",";
    first = false;
    s += std::string(R"({"ph":"X","pid":1,"tid":1,"cat":")") + e.cat + R"(","name":")" + e.name +
         R"(","ts":)" + std::to_string(e.ts) + R"(,"dur":)" + std::to_string(e.dur) +
         R"(,"args":{"External id":)" + std::to_string(e.ext) + "}}";
  }
  return s + "]}";
}

}  // namespace

TEST_CASE("call tree of the real Python trace", "[core][model][tree][cpu]") {
  const wb::Trace t = wb::read_trace(kPyCpu);
  const wb::TraceModel m(t);
  REQUIRE(m.cpu_lanes().size() == 1);  // the Trace span and instants are not on a CPU lane
  const wb::CpuLane& lane = m.cpu_lanes()[0];
  CHECK(lane.pid == 2927);
  CHECK(lane.events.size() == 24);
  REQUIRE(lane.roots.size() == 3);
  for (size_t k = 0; k < 3; ++k) CHECK(m.at(lane.roots[k]).name == "ProfilerStep#" + std::to_string(k + 2));
  CHECK(m.gpu_lanes().empty());

  // aten::matmul inside matmul_add inside ProfilerStep#2 (and likewise in steps 3 and 4).
  for (size_t k = 0; k < 3; ++k) {
    const wb::EventIdx matmul = idx(m, "aten::matmul", k);
    const wb::EventIdx annotation = *m.parent(matmul);
    CHECK(m.at(annotation).name == "matmul_add");
    CHECK(name_of_parent(m, annotation) == "ProfilerStep#" + std::to_string(k + 2));
    CHECK_FALSE(m.parent(*m.parent(annotation)).has_value());
    // children by start: matmul, then add
    const auto& kids = m.children(annotation);
    REQUIRE(kids.size() == 2);
    CHECK(m.at(kids[0]).name == "aten::matmul");
    CHECK(m.at(kids[1]).name == "aten::add");
  }
  for (wb::EventIdx rc : m.find("aten::resolve_conj")) CHECK(name_of_parent(m, rc) == "aten::mm");
  CHECK(m.children(idx(m, "aten::add")).empty());

  // lane.events are in start order
  for (size_t k = 1; k < lane.events.size(); ++k)
    CHECK(m.at(lane.events[k - 1]).start_ns <= m.at(lane.events[k]).start_ns);
  // find() is in start order too, even though the file order is what it is
  const auto steps = m.find("matmul_add");
  REQUIRE(steps.size() == 3);
  CHECK(m.at(steps[0]).start_ns < m.at(steps[1]).start_ns);
  CHECK(m.find("aten::nothing").empty());
}

TEST_CASE("steps: ProfilerStep#N windows and step_at", "[core][model][steps][cpu]") {
  const wb::Trace t = wb::read_trace(kPyCpu);
  const wb::TraceModel m(t);
  REQUIRE(m.steps().size() == 3);
  for (size_t k = 0; k < 3; ++k) {
    const wb::StepWindow& s = m.steps()[k];
    CHECK(s.number == static_cast<int>(k) + 2);
    CHECK(m.at(s.event).name == "ProfilerStep#" + std::to_string(s.number));
    CHECK(s.start_ns == m.at(s.event).start_ns);
    CHECK(s.end_ns == m.at(s.event).end_ns());
  }
  const wb::StepWindow& s3 = m.steps()[1];
  REQUIRE(m.step_at(s3.start_ns) != nullptr);
  CHECK(m.step_at(s3.start_ns)->number == 3);
  CHECK(m.step_at(s3.end_ns - 1)->number == 3);
  CHECK(m.step_at(s3.end_ns) == nullptr);  // half-open; the gap before step 4
  CHECK(m.step_at(m.at(idx(m, "aten::add", 2)).start_ns)->number == 4);
  CHECK(m.step_at(0) == nullptr);  // the span starts before step 2
  CHECK(m.step_at(INT64_MIN) == nullptr);
  CHECK(m.step_at(INT64_MAX) == nullptr);

  // Wrong input: names that only look like steps are not steps, and a GPU-side projection
  // of a step annotation is not a CPU step.
  const wb::Trace fake = wb::parse_trace(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#","ts":0,"dur":1},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#7x","ts":2,"dur":1},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#-1","ts":4,"dur":1},
    {"ph":"X","cat":"cpu_op","name":"ProfilerStep#3","ts":6,"dur":1},
    {"ph":"X","cat":"gpu_user_annotation","name":"ProfilerStep#4","ts":8,"dur":1},
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#12","ts":10,"dur":1}]})");
  const wb::TraceModel fm(fake);
  REQUIRE(fm.steps().size() == 1);
  CHECK(fm.steps()[0].number == 12);
}

TEST_CASE("tree ties: same start, the longer event is the parent", "[core][model][tree][cpu]") {
  // The shorter event comes first in the file; sorting by (start, longer first) fixes it.
  const wb::Trace t = wb::parse_trace(trace_of({{"inner", 10, 2, 2}, {"outer", 10, 5, 1}}));
  const wb::TraceModel m(t);
  CHECK(name_of_parent(m, idx(m, "inner")) == "outer");
  CHECK(name_of_parent(m, idx(m, "outer")) == "<root>");

  // Wrong input: an event that starts inside another but ends after it is not its child.
  const wb::Trace bad = wb::parse_trace(trace_of({{"a", 10, 5, 1}, {"b", 12, 5, 2}}));
  const wb::TraceModel mb(bad);
  CHECK(name_of_parent(mb, idx(mb, "b")) == "<root>");
  CHECK(mb.cpu_lanes()[0].roots.size() == 2);

  // Different threads never nest, however their times line up.
  const wb::Trace two = wb::parse_trace(R"({"traceEvents":[
    {"ph":"X","name":"outer","pid":1,"tid":1,"ts":0,"dur":100},
    {"ph":"X","name":"inner","pid":1,"tid":2,"ts":10,"dur":1}]})");
  const wb::TraceModel m2(two);
  CHECK(m2.cpu_lanes().size() == 2);
  CHECK_FALSE(m2.parent(idx(m2, "inner")).has_value());
}

TEST_CASE("GPU lanes and launch links on the synthetic H200-like trace", "[core][model][links][cpu]") {
  const wb::Trace t = wb::read_trace(kSynthGpu);
  const wb::TraceModel m(t);
  REQUIRE(m.gpu_lanes().size() == 1);
  const wb::GpuLane& gpu = m.gpu_lanes()[0];
  CHECK(gpu.device == 0);
  CHECK(gpu.stream == 7);
  CHECK(gpu.events.size() == 10);  // 1 memcpy + 3 memsets + 6 kernels; annotations excluded
  for (size_t k = 1; k < gpu.events.size(); ++k)
    CHECK(m.at(gpu.events[k - 1]).start_ns <= m.at(gpu.events[k]).start_ns);
  REQUIRE(m.cpu_lanes().size() == 1);
  CHECK(m.cpu_lanes()[0].pid == 4242);

  // Runtime/driver calls sit in the tree under the op that made them.
  for (size_t k = 0; k < 3; ++k) {
    CHECK(name_of_parent(m, idx(m, "cuLaunchKernelEx", k)) == "aten::mm");
    CHECK(name_of_parent(m, idx(m, "cudaMemsetAsync", k)) == "aten::mm");
    CHECK(name_of_parent(m, idx(m, "cudaLaunchKernel", k)) == "aten::add");
    CHECK(name_of_parent(m, idx(m, "aten::mm", k)) == "aten::matmul");
  }
  CHECK(name_of_parent(m, idx(m, "cudaMemcpyAsync")) == "aten::copy_");
  CHECK(name_of_parent(m, idx(m, "cudaDeviceSynchronize")) == "ProfilerStep#4");

  // Every device event has its launch call (same correlation) and its CPU op (External id).
  for (wb::EventIdx g : gpu.events) {
    const auto call = m.launcher(g);
    REQUIRE(call.has_value());
    CHECK(m.at(*call).id == m.at(g).id);
    const auto launched = m.launched(*call);
    CHECK(std::find(launched.begin(), launched.end(), g) != launched.end());
    REQUIRE(m.op_of(g).has_value());
    CHECK(m.at(*m.op_of(g)).kind == wb::Kind::CpuOp);
    CHECK(m.op_of(*call) == m.op_of(g));
  }
  const wb::EventIdx nvjet = idx(m, "nvjet_sm90_tst_64x8_64x16_1x4_h_bz_NNT", 1);
  CHECK(m.at(*m.launcher(nvjet)).name == "cuLaunchKernelEx");
  CHECK(m.at(*m.op_of(nvjet)).name == "aten::mm");
  CHECK(m.step_at(m.at(*m.op_of(nvjet)).start_ns)->number == 3);
  CHECK(m.at(*m.op_of(idx(m, "Memcpy HtoD (Pageable -> Device)"))).name == "aten::copy_");
  CHECK(m.launched(idx(m, "cuLaunchKernelEx")) ==
        std::vector<wb::EventIdx>{idx(m, "nvjet_sm90_tst_64x8_64x16_1x4_h_bz_NNT")});
  // Not launch calls / not launched: empty answers.
  CHECK(m.launched(idx(m, "aten::mm")).empty());
  CHECK(m.launched(idx(m, "cudaDeviceSynchronize")).empty());
  CHECK_FALSE(m.op_of(idx(m, "cudaDeviceSynchronize")).has_value());  // External id 0
  CHECK_FALSE(m.launcher(idx(m, "aten::mm")).has_value());
  CHECK_FALSE(m.op_of(idx(m, "aten::mm")).has_value());
  CHECK_FALSE(m.launcher(idx(m, "matmul_add", 1)).has_value());  // GPU annotation
}

TEST_CASE("launch links: wrong ids break them; ops win over annotations", "[core][model][links][cpu]") {
  // Annotation "region" and op "aten::mm" share External id 5, annotation first in the file.
  // The kernel with correlation 9 belongs to the op. The kernel with correlation 10 has no
  // launch call in the trace. The graph launch (11) runs two kernels on two streams.
  const wb::Trace t = wb::parse_trace(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"region","pid":1,"tid":1,"ts":0,"dur":100,"args":{"External id":5}},
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":50,"args":{"External id":5}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":2,"dur":5,"args":{"External id":5,"correlation":9}},
    {"ph":"X","cat":"kernel","name":"k9","pid":0,"tid":7,"ts":20,"dur":1,"args":{"External id":5,"correlation":9,"device":0,"stream":7}},
    {"ph":"X","cat":"kernel","name":"k10","pid":0,"tid":7,"ts":30,"dur":1,"args":{"External id":5,"correlation":10,"device":0,"stream":7}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaGraphLaunch","pid":1,"tid":1,"ts":60,"dur":5,"args":{"External id":77,"correlation":11}},
    {"ph":"X","cat":"kernel","name":"g2","pid":0,"tid":8,"ts":80,"dur":1,"args":{"correlation":11,"device":0,"stream":8}},
    {"ph":"X","cat":"kernel","name":"g1","pid":0,"tid":7,"ts":70,"dur":1,"args":{"correlation":11,"device":0,"stream":7}},
    {"ph":"X","cat":"user_annotation","name":"graph_region","pid":1,"tid":1,"ts":59,"dur":10,"args":{"External id":77}}
  ]})");
  const wb::TraceModel m(t);
  CHECK(m.gpu_lanes().size() == 2);
  const wb::EventIdx k9 = idx(m, "k9"), k10 = idx(m, "k10");
  CHECK(m.at(*m.launcher(k9)).name == "cudaLaunchKernel");
  CHECK(m.at(*m.op_of(k9)).name == "aten::mm");   // not "region", although it came first
  CHECK_FALSE(m.launcher(k10).has_value());       // wrong correlation: no launch call
  CHECK(m.at(*m.op_of(k10)).name == "aten::mm");  // ...but its External id still names the op

  // One launch call, several kernels: all of them, in start order (g1 before g2).
  const auto graph = m.launched(idx(m, "cudaGraphLaunch"));
  REQUIRE(graph.size() == 2);
  CHECK(m.at(graph[0]).name == "g1");
  CHECK(m.at(graph[1]).name == "g2");
  // Kernels without an External id inherit their launch call's; only an annotation has it.
  CHECK(m.at(*m.op_of(idx(m, "g2"))).name == "graph_region");

  // Out-of-range indices answer "nothing", never crash.
  const wb::EventIdx past = t.events.size() + 3;
  CHECK_FALSE(m.parent(past).has_value());
  CHECK(m.children(past).empty());
  CHECK_FALSE(m.launcher(past).has_value());
  CHECK(m.launched(past).empty());
  CHECK_FALSE(m.op_of(past).has_value());
}

TEST_CASE("find_annotations: find() restricted to CPU-side user annotations", "[core][model][cpu]") {
  // Every name of three traces (a CPU one; the H200 recording of chapter 01, whose annotations
  // also appear as GPU-side annotations of the same name; a training step with several), and
  // names that are not annotations: the same events in the same order as find() + a kind filter.
  const fs::path root(WORKBOOK_ROOT);
  for (const fs::path& file : {kPyCpu, root / "expected_output" / "h200" / "01_cold_64" / "trace.json",
                               root / "expected_output" / "cpu" / "08_memory" / "trace.json"}) {
    INFO(file.string());
    const wb::Trace t = wb::read_trace(file);
    const wb::TraceModel m(t);
    std::set<std::string> names;
    for (const wb::Event& e : t.events) names.insert(e.name);
    int annotated = 0;
    for (const std::string& n : names) {
      std::vector<wb::EventIdx> want;
      for (wb::EventIdx i : m.find(n))
        if (m.at(i).kind == wb::Kind::UserAnnotation) want.push_back(i);
      CHECK(m.find_annotations(n) == want);
      annotated += !want.empty();
    }
    CHECK(annotated >= 2);  // at least the steps and one record_function range
  }
  // Equal starts keep file order, as find() does.
  const wb::Trace t = wb::parse_trace(trace_of({{"b", 1, 5, 0, "user_annotation"},
                                                {"a", 1, 5, 0, "user_annotation"},
                                                {"b", 1, 3, 0, "user_annotation"},
                                                {"b", 1, 2, 0, "cpu_op"}}));
  const wb::TraceModel m(t);
  CHECK(m.find_annotations("b") == std::vector<wb::EventIdx>{0, 2});
  CHECK(m.find_annotations("a") == std::vector<wb::EventIdx>{1});
  CHECK(m.find_annotations("c").empty());
}

TEST_CASE("an empty trace gives an empty model", "[core][model][cpu]") {
  const wb::Trace t = wb::parse_trace(R"({"traceEvents":[]})");
  const wb::TraceModel m(t);
  CHECK(m.cpu_lanes().empty());
  CHECK(m.gpu_lanes().empty());
  CHECK(m.steps().empty());
  CHECK(m.step_at(0) == nullptr);
  CHECK(m.find("").empty());
}

namespace {
// Every value of an enum (0 .. Last) through `name`: how many distinct names came back.
template <class E, E Last, class F>
size_t distinct_names(F name) {
  std::set<std::string> seen;
  for (int v = 0; v <= static_cast<int>(Last); ++v) seen.insert(std::string(name(static_cast<E>(v))));
  return seen.size();
}
}  // namespace

TEST_CASE("enum names: one name per value, read back by name", "[core][names][cpu]") {
  enum class Color { Red, Green, Blue };
  constexpr wb::EnumNames<Color, Color::Blue> kColors{"red", "green", "blue"};
  STATIC_REQUIRE(kColors.name(Color::Green) == "green");
  CHECK(kColors.value("blue") == Color::Blue);
  CHECK_FALSE(kColors.value("Blue").has_value());  // names are exact
  CHECK(kColors.name(static_cast<Color>(7)) == "?");

  // The tables in common/: no two values share a name (so a name reads back as its value).
  CHECK(distinct_names<wb::Kind, wb::Kind::Other>(wb::kind_name) == 11);
  CHECK(distinct_names<wb::KernelClass, wb::KernelClass::Other>(wb::class_name) == 6);
  CHECK(distinct_names<wb::ProfilerAction, wb::ProfilerAction::RecordAndSave>(wb::action_name) == 4);
  CHECK(distinct_names<wb::DiffKind, wb::DiffKind::Removed>(wb::diff_kind_name) == 4);
  CHECK(distinct_names<wb::Status, wb::Status::NotApplicable>(wb::status_name) == 3);
  CHECK(distinct_names<wb::Status, wb::Status::NotApplicable>(wb::status_mark) == 3);
  for (wb::Kind k :
       {wb::Kind::CpuOp, wb::Kind::UserAnnotation, wb::Kind::GpuUserAnnotation, wb::Kind::Runtime,
        wb::Kind::Driver, wb::Kind::Kernel, wb::Kind::Memcpy, wb::Kind::Memset, wb::Kind::Trace})
    CHECK(wb::kind_from_category(wb::kind_name(k)) == k);
  CHECK(wb::status_mark(wb::Status::NotApplicable) == "n/a");
  CHECK(wb::status_name(wb::Status::NotApplicable) == "not_applicable");
}
