// Lesson facts and chapter specs: each fact on synthetic traces where its pattern holds and
// where it fails, CPU-only traces (GPU facts -> not applicable), and every chapter's spec on a
// trace shaped like the H200 run it describes, plus a trace it must reject.
// Assertions are on relationships and statuses, never on absolute times.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "lessons_fixtures.hpp"
#include "process.hpp"
#include "workbook/across.hpp"
#include "workbook/json_spec.hpp"
#include "workbook/lessons.hpp"
#include "workbook/peaks.hpp"
#include "workbook/trace_reader.hpp"

using Catch::Matchers::ContainsSubstring;
using fixtures::Scenario;
using wb::Status;

namespace {

wb::Fact fact(const wb::Trace& t, std::string_view id, const wb::FactOptions& o = {}) {
  const wb::TraceModel m(t);
  return wb::compute_fact(id, m, o);
}

wb::Trace fixture(const std::string& name) { return wb::read_trace(fixtures::data_dir() / name); }

wb::LessonsReport chapter(const wb::Trace& t, const std::string& ch, wb::Problem p = {}) {
  const wb::TraceModel m(t);
  wb::FactOptions o;
  o.problem = p;
  return wb::check_lessons(m, *wb::find_lesson_spec(ch), o);
}

const wb::Fact& find(const wb::LessonsReport& r, std::string_view id) {
  for (const auto& f : r.facts)
    if (f.id == id) return f;
  FAIL("no fact " << id << " in the report");
  throw;  // unreachable
}

// A 4096-like run: long GEMMs that queue up behind each other.
Scenario compute_bound() {
  Scenario s;
  s.steps = {{200, 17, 170, 23}, {90, 1.3, 170, 23}, {70, 1.5, 170, 23}};
  return s;
}

// One fact on the default trace (64-like: the GPU keeps up) and on compute_bound()'s.
std::pair<wb::Fact, wb::Fact> on_64_and_4096(std::string_view id) {
  return {fact(fixtures::make_trace({}), id), fact(fixtures::make_trace(compute_bound()), id)};
}

}  // namespace

TEST_CASE("CPU-only trace: GPU facts are not applicable, with a reason", "[lessons][cpu]") {
  const wb::Trace t = fixture("py_cpu_64.json");
  for (const char* id : {"overhead_bound", "launch_path", "copies_next_to_launch", "kernel_footprint",
                         "launch_latency", "end_sync", "kernel_durations", "throughput"}) {
    const wb::Fact f = fact(t, id, {"matmul_add", wb::Problem::square(64, 1, 2), 1.5});
    INFO(id);
    CHECK(f.status == Status::NotApplicable);
    CHECK_FALSE(f.measured);
    CHECK_THAT(f.verdict, ContainsSubstring("CPU-only"));
  }
  // CPU facts still measure.
  CHECK(fact(t, "step_widths").measured);
  CHECK(fact(t, "dead_window").measured);
  CHECK(fact(t, "dispatch_chain").measured);
}

TEST_CASE("overhead_bound: tiny kernels pass, long kernels fail", "[lessons][cpu]") {
  const auto [tiny, heavy] = on_64_and_4096("overhead_bound");
  CHECK(tiny.status == Status::Pass);
  CHECK(tiny.data["cuda_cpu_ratio"].get<double>() < 0.1);
  CHECK(tiny.data["gpu_busy_fraction"].get<double>() < 0.5);

  CHECK(heavy.status == Status::Fail);
  CHECK(heavy.data["cuda_cpu_ratio"].get<double>() > 0.5);
  CHECK(heavy.data["gpu_busy_fraction"].get<double>() > 0.5);
  // Self CUDA counts kernels only (no GPU-side annotation): 3 x (170 + 23) us.
  CHECK(heavy.data["self_cuda_total_us"].get<double>() == 579.0);
}

TEST_CASE("step_widths: the first step's width against the others", "[lessons][cpu]") {
  Scenario cold;  // 200 / 70 / 60
  const wb::Fact f = fact(fixtures::make_trace(cold), "step_widths");
  CHECK(f.status == Status::Pass);
  CHECK(f.data["first_is_widest"] == true);
  CHECK(f.data["steps"].size() == 3);

  Scenario even;
  even.steps = {{60, 1}, {70, 1}, {65, 1}};
  const wb::Fact g = fact(fixtures::make_trace(even), "step_widths");
  CHECK(g.status == Status::Fail);
  CHECK(g.data["first_is_widest"] == false);

  Scenario one;
  one.steps = {{60, 1}};
  CHECK(fact(fixtures::make_trace(one), "step_widths").status == Status::NotApplicable);
}

TEST_CASE("dead_window: the first step's gap before its first op", "[lessons][cpu]") {
  const wb::Fact f = fact(fixtures::make_trace({}), "dead_window");  // gaps 20 / 1.5 / 1
  CHECK(f.status == Status::Pass);
  CHECK(f.data["gaps"][0]["first_child"] == "aten::matmul");
  CHECK(f.data["first_gap_us"].get<double>() > f.data["median_later_gap_us"].get<double>());

  Scenario flat;
  flat.steps = {{60, 1}, {60, 1.5}, {60, 1}};
  CHECK(fact(fixtures::make_trace(flat), "dead_window").status == Status::Fail);

  wb::FactOptions other;
  other.annotation = "no_such_range";
  const wb::Fact none = fact(fixtures::make_trace({}), "dead_window", other);
  CHECK(none.status == Status::NotApplicable);
  CHECK_THAT(none.verdict, ContainsSubstring("no_such_range"));
}

TEST_CASE("dispatch_chain: annotation > matmul > mm > launch > kernel, as paths and a tree",
          "[lessons][cpu]") {
  const wb::Fact f = fact(fixtures::make_trace({}), "dispatch_chain");
  CHECK(f.status == Status::Pass);
  CHECK(f.data["reaches_device"] == true);
  CHECK_THAT(f.value, ContainsSubstring("matmul_add > aten::matmul > aten::mm > cuLaunchKernelEx > nvjet_"));
  CHECK_THAT(f.detail, ContainsSubstring("[GPU] nvjet_"));
  CHECK_THAT(f.detail, ContainsSubstring("└─ aten::add"));

  // On a CPU trace the chain stops at the op.
  const wb::Fact cpu = fact(fixture("py_cpu_64.json"), "dispatch_chain");
  CHECK(cpu.data["reaches_device"] == false);
  CHECK_THAT(cpu.value, ContainsSubstring("aten::matmul > aten::mm"));
}

TEST_CASE("launch_path: launch API per kernel and occupancy queries before it", "[lessons][cpu]") {
  const wb::Fact h200 = fact(fixtures::make_trace({}), "launch_path");
  CHECK(h200.status == Status::Fail);  // the symptom (an occupancy query) is absent
  CHECK(h200.data["gemm_launchers"] == nlohmann::json::array({"cuLaunchKernelEx"}));
  CHECK(h200.data["elementwise_launchers"] == nlohmann::json::array({"cudaLaunchKernel"}));
  CHECK(h200.data["occupancy_queries"] == 0);

  Scenario a100;
  for (auto& s : a100.steps) s.occupancy_queries = 1;
  const wb::Fact f = fact(fixtures::make_trace(a100), "launch_path");
  CHECK(f.status == Status::Pass);
  CHECK(f.data["gemm_occupancy_queries"] == 3);
  CHECK(f.data["elementwise_occupancy_queries"] == 0);
  CHECK_THAT(f.evidence.front(), ContainsSubstring("occupancy"));
}

TEST_CASE("copies_next_to_launch: the DtoD copy before the addmm GEMM", "[lessons][cpu]") {
  const wb::Fact addmm = fact(fixture("h200_4096_addmm.json"), "copies_next_to_launch");
  CHECK(addmm.status == Status::Pass);
  CHECK(addmm.data["dtod_before_gemm"] == 3);
  CHECK(addmm.data["memset_before_gemm"] == 3);
  const wb::Fact eager = fact(fixture("h200_64_cold.json"), "copies_next_to_launch");
  CHECK(eager.status == Status::Fail);
  CHECK(eager.data["copies"] == 0);
}

TEST_CASE("kernel_footprint: heavy GEMM vs light add; no launch config -> not applicable", "[lessons][cpu]") {
  const wb::Fact f = fact(fixtures::make_trace({}), "kernel_footprint");
  CHECK(f.status == Status::Pass);
  CHECK(f.data["gemm"]["grid"] == nlohmann::json::array({4, 2, 1}));
  CHECK(f.data["gemm"]["registers_per_thread"] == 168);
  CHECK(f.data["elementwise"]["shared_memory"] == 0);

  Scenario bare;
  bare.kernel_info = false;
  const wb::Fact g = fact(fixtures::make_trace(bare), "kernel_footprint");
  CHECK(g.status == Status::NotApplicable);
  CHECK_THAT(g.verdict, ContainsSubstring("launch configuration"));
}

TEST_CASE("launch_latency: flat when the GPU keeps up, growing when the queue fills", "[lessons][cpu]") {
  const auto [flat, grows] = on_64_and_4096("launch_latency");
  CHECK(flat.status == Status::Fail);
  CHECK(flat.data["growth"].get<double>() < 2);

  CHECK(grows.status == Status::Pass);
  CHECK(grows.data["growth"].get<double>() >= 3);
  CHECK(grows.data["per_step"].size() == 3);
}

TEST_CASE("end_sync: idle wait at 64, draining a queue at 4096; no sync -> not applicable",
          "[lessons][cpu]") {
  const auto [idle, busy] = on_64_and_4096("end_sync");
  CHECK(idle.status == Status::Pass);
  CHECK(idle.data["busy_during_sync_fraction"].get<double>() < 0.5);

  CHECK(busy.status == Status::Fail);
  CHECK(busy.data["busy_during_sync_fraction"].get<double>() >= 0.5);

  Scenario none;
  none.sync = false;
  CHECK(fact(fixtures::make_trace(none), "end_sync").status == Status::NotApplicable);
}

TEST_CASE("kernel_durations: an outlier is marked by the stated rule", "[lessons][cpu]") {
  Scenario slow;
  slow.steps = {{200, 20, 2}, {70, 1.5, 2}, {60, 1, 5}};  // third GEMM 2.5x its median
  const wb::Fact f = fact(fixtures::make_trace(slow), "kernel_durations");
  CHECK(f.status == Status::Pass);
  CHECK(f.data["outliers"] == 1);
  CHECK(f.data["gemm"]["outliers"][0]["step"] == 4);
  CHECK(f.data["gemm"]["mean_over_median"].get<double>() > 1.4);
  CHECK_THAT(f.data["outlier_rule"].get<std::string>(), ContainsSubstring("1.5 x the median"));
  CHECK_THAT(f.detail, ContainsSubstring("outlier"));

  const wb::Fact steady = fact(fixtures::make_trace({}), "kernel_durations");
  CHECK(steady.status == Status::Fail);
  CHECK(steady.data["outliers"] == 0);
}

TEST_CASE("profiler_artefacts: one-time setup of the first GEMM of a process", "[lessons][cpu]") {
  const wb::Fact first = fact(fixture("h200_64_first_call.json"), "profiler_artefacts");
  CHECK(first.status == Status::Pass);
  CHECK(first.data["activity_buffer_requests"] == 1);
  const std::string names = first.data["events"].dump();
  CHECK_THAT(names, ContainsSubstring("Runtime Triggered Module Loading"));
  CHECK_THAT(names, ContainsSubstring("cudaFuncSetAttribute"));

  CHECK(fact(fixture("h200_64_cold.json"), "profiler_artefacts").status == Status::Fail);
}

TEST_CASE("throughput: % of the device's peak, unknown peak and unknown size", "[lessons][cpu]") {
  const wb::Trace t = fixture("h200_4096_warm.json.gz");
  const wb::Fact f = fact(t, "throughput", {"matmul_add", wb::Problem::square(4096, 1, 2), 1.5});
  CHECK(f.status == Status::Pass);
  CHECK(f.data["gemm_pct_of_peak"].get<double>() > 50);
  CHECK(f.data["gemm_pct_of_peak"].get<double>() < 100);
  CHECK(f.data["elementwise_pct_of_peak"].get<double>() < 100);
  CHECK_THAT(f.data["peak"]["source"].get<std::string>(), ContainsSubstring("H200"));

  const wb::Fact small = fact(t, "throughput", {"matmul_add", wb::Problem::square(64, 1, 2), 1.5});
  CHECK(small.status == Status::Fail);  // the same times, 64^3 work: far from peak

  CHECK(fact(t, "throughput").status == Status::NotApplicable);  // no problem size

  Scenario odd;
  odd.device = "Imaginary GPU 9000";
  const wb::Fact unknown =
      fact(fixtures::make_trace(odd), "throughput", {"matmul_add", wb::Problem::square(64, 1, 2), 1.5});
  CHECK(unknown.status == Status::NotApplicable);
  CHECK_THAT(unknown.verdict, ContainsSubstring("unknown peak"));
  CHECK(unknown.data.contains("gemm_tflops"));  // measured all the same
}

TEST_CASE("hot_ops and compile_markers", "[lessons][cpu]") {
  Scenario hot;
  hot.extra_ops_per_step.assign(12, "aten::view");
  const wb::Fact f = fact(fixtures::make_trace(hot), "hot_ops");
  CHECK(f.status == Status::Pass);
  CHECK(f.data["top"][0]["name"] == "aten::view");
  CHECK(fact(fixtures::make_trace({}), "hot_ops").status == Status::Fail);

  Scenario compiled;
  compiled.extra_ops_per_step = {"TorchDynamo Cache Lookup", "Torch-Compiled Region: 0/0",
                                 "## Call CompiledFxGraph fabc123 ##"};
  const wb::Fact c = fact(fixtures::make_trace(compiled), "compile_markers");
  CHECK(c.status == Status::Pass);
  CHECK(c.data["cache_hit"] == true);
  CHECK(fact(fixtures::make_trace({}), "compile_markers").status == Status::Fail);
}

TEST_CASE("apply_pattern: scopes, sizes, missing keys, contains", "[lessons][cpu]") {
  using Op = wb::Condition::Op;
  using Scope = wb::Condition::Scope;
  const wb::Trace h200 = fixtures::make_trace({});
  Scenario a100s;
  a100s.device = "NVIDIA A100-SXM4-80GB";
  a100s.cc_major = 8;
  const wb::Trace a100 = fixtures::make_trace(a100s);
  const wb::Fact f = fact(h200, "kernel_footprint");

  wb::Pattern hopper{"tile", "", {{"/gemm/grid", Op::Eq, nlohmann::json::array({4, 2, 1}), Scope::Hopper}}};
  CHECK(wb::apply_pattern(f, hopper, h200).status == Status::Pass);
  const wb::Fact on_a100 = wb::apply_pattern(fact(a100, "kernel_footprint"), hopper, a100);
  CHECK(on_a100.status == Status::NotApplicable);
  CHECK_THAT(on_a100.verdict, ContainsSubstring("Hopper"));

  wb::Pattern sized = hopper;
  sized.all[0].only_n = 64;
  CHECK(wb::apply_pattern(f, sized, h200, wb::Problem::square(64, 1, 2)).status == Status::Pass);
  CHECK(wb::apply_pattern(f, sized, h200, wb::Problem::square(128, 1, 2)).status == Status::NotApplicable);

  wb::Pattern missing{"x", "", {{"/no/such/key", Op::Gt, 0}}};
  const wb::Fact m = wb::apply_pattern(f, missing, h200);
  CHECK(m.status == Status::Fail);
  CHECK_THAT(m.verdict, ContainsSubstring("not measured"));

  wb::Pattern bad{"x", "", {{"not-a-pointer", Op::Gt, 0}}};
  CHECK(wb::apply_pattern(f, bad, h200).status == Status::Fail);

  const wb::Fact chain = fact(h200, "dispatch_chain");
  wb::Pattern has{"x", "", {{"/paths", Op::Contains, "aten::mm > cuLaunchKernelEx"}}};
  wb::Pattern hasnt{"x", "", {{"/paths", Op::NotContains, "aten::mm > cuLaunchKernelEx"}}};
  CHECK(wb::apply_pattern(chain, has, h200).status == Status::Pass);
  CHECK(wb::apply_pattern(chain, hasnt, h200).status == Status::Fail);

  // GPU-scoped conditions are skipped on CPU traces.
  const wb::Trace cpu = fixture("py_cpu_64.json");
  wb::Pattern gpu_only{"x", "", {{"/paths", Op::Contains, "cuLaunch", Scope::Gpu}}};
  CHECK(wb::apply_pattern(fact(cpu, "dispatch_chain"), gpu_only, cpu).status == Status::NotApplicable);
}

TEST_CASE("chapter specs hold on traces shaped like the H200 runs", "[lessons][cpu]") {
  struct Case {
    const char* chapter;
    const char* trace;
    wb::Problem p;
    const char* reference;
  };
  const Case cases[] = {
      {"01_cold_64", "h200_64_cold.json", wb::Problem::square(64, 1, 2), nullptr},
      {"02_warmup", "h200_64_cold.json", wb::Problem::square(64, 1, 2), nullptr},
      // Chapter 03 compares its batched run with the 2-D one (batch_chain): the harness saves
      // that run as trace_2d.json next to trace.json.
      {"03_batched_bmm", "h200_64_bmm.json", wb::Problem::square(64, 8, 2), "h200_64_cold.json"},
      {"04_compute_bound_4096", "h200_4096_warm.json.gz", wb::Problem::square(4096, 1, 2), nullptr},
      {"05_compiled_addmm", "h200_4096_addmm.json", wb::Problem::square(4096, 1, 2), nullptr},
  };
  for (const auto& c : cases) {
    const wb::Trace t = fixture(c.trace);
    const wb::TraceModel m(t);
    std::optional<wb::Trace> ref_trace;
    std::optional<wb::TraceModel> ref;
    wb::FactOptions o;
    o.problem = c.p;
    if (c.reference) {
      ref_trace = fixture(c.reference);
      ref.emplace(*ref_trace);
      o.reference = &*ref;
    }
    const wb::LessonSpec& spec = *wb::find_lesson_spec(c.chapter);
    const wb::LessonsReport r = wb::check_lessons(m, spec, o);
    INFO(c.chapter << " on " << c.trace << "\n" << wb::render_lessons(r, wb::Format::Text));
    CHECK(r.failed == 0);
    CHECK(r.not_applicable == 0);  // every condition applies on a Hopper GPU trace
    CHECK(r.ok());
    // Every lesson is in the report but those about the CPU edition (Scope::Cpu), which a GPU
    // report leaves out.
    int gpu_lessons = 0;
    for (const auto& e : spec.expect)
      gpu_lessons += !std::all_of(e.pattern.all.begin(), e.pattern.all.end(), [](const wb::Condition& cond) {
        return cond.scope == wb::Condition::Scope::Cpu;
      });
    CHECK(r.passed == gpu_lessons);
  }
  // Without its reference, chapter 03's comparison cannot be measured and, since it applies on
  // every platform, fails rather than stepping aside.
  const wb::LessonsReport alone =
      chapter(fixture("h200_64_bmm.json"), "03_batched_bmm", wb::Problem::square(64, 8, 2));
  CHECK(find(alone, "batch_chain").status == Status::Fail);
  CHECK_THAT(find(alone, "batch_chain").verdict, ContainsSubstring("could not be measured"));
  // The CPU edition's lesson is left out of a GPU report, and judged on a CPU trace.
  const wb::LessonsReport gpu4 =
      chapter(fixture("h200_4096_warm.json.gz"), "04_compute_bound_4096", wb::Problem::square(4096, 1, 2));
  CHECK(std::none_of(gpu4.facts.begin(), gpu4.facts.end(),
                     [](const wb::Fact& f) { return f.id == "cpu_shares"; }));
  const wb::LessonsReport cpu4 =
      chapter(fixture("py_cpu_64.json"), "04_compute_bound_4096", wb::Problem::square(64, 1, 4));
  CHECK(find(cpu4, "cpu_shares").status == Status::Fail);  // 64x64 on a CPU: the overhead shows
  CHECK_FALSE(cpu4.ok());
}

TEST_CASE("chapter specs fail on the wrong trace", "[lessons][cpu]") {
  // The warm 4096 run is not overhead-bound: ch01's pattern must fail on it.
  const wb::LessonsReport r1 =
      chapter(fixture("h200_4096_warm.json.gz"), "01_cold_64", wb::Problem::square(64, 1, 2));
  CHECK(find(r1, "overhead_bound").status == Status::Fail);
  CHECK(find(r1, "launch_latency").status == Status::Fail);
  CHECK_FALSE(r1.ok());
  // A 2-D trace fails the bmm pattern.
  CHECK(find(chapter(fixture("h200_64_cold.json"), "03_batched_bmm", wb::Problem::square(64, 8, 2)),
             "dispatch_chain")
            .status == Status::Fail);
  // A cold first call carries one-time setup: not what ch02 expects.
  const wb::LessonsReport r2 = chapter(fixture("h200_64_first_call.json"), "02_warmup");
  CHECK(find(r2, "profiler_artefacts").status == Status::Fail);
  CHECK(find(r2, "launch_path").status == Status::Fail);
  // 64x64 is not compute-bound.
  const wb::LessonsReport r4 =
      chapter(fixture("h200_64_cold.json"), "04_compute_bound_4096", wb::Problem::square(4096, 1, 2));
  CHECK(find(r4, "overhead_bound").status == Status::Fail);
  CHECK(find(r4, "launch_latency").status == Status::Fail);
  // Eager matmul + add is not addmm.
  const wb::LessonsReport r5 =
      chapter(fixture("h200_4096_warm.json.gz"), "05_compiled_addmm", wb::Problem::square(4096, 1, 2));
  CHECK(find(r5, "dispatch_chain").status == Status::Fail);
  CHECK(find(r5, "copies_next_to_launch").status == Status::Fail);
}

TEST_CASE("dispatch patterns on real Python CPU traces: mm, bmm, addmm", "[lessons][cpu]") {
  const wb::Trace mm = fixture("py_cpu_64.json");
  const wb::Trace bmm = fixture("py_cpu_64_bmm.json");
  const wb::Trace addmm = fixture("py_cpu_64_addmm.json");
  CHECK_THAT(fact(bmm, "dispatch_chain").value, ContainsSubstring("aten::matmul > aten::bmm"));
  CHECK_THAT(fact(addmm, "dispatch_chain").value, ContainsSubstring("matmul_add > aten::addmm"));

  CHECK(find(chapter(bmm, "03_batched_bmm", wb::Problem::square(64, 8, 4)), "dispatch_chain").status ==
        Status::Pass);
  CHECK(find(chapter(mm, "03_batched_bmm", wb::Problem::square(64, 8, 4)), "dispatch_chain").status ==
        Status::Fail);
  CHECK(find(chapter(bmm, "01_cold_64", wb::Problem::square(64, 1, 4)), "dispatch_chain").status ==
        Status::Fail);
  CHECK(find(chapter(addmm, "05_compiled_addmm", wb::Problem::square(64, 1, 4)), "dispatch_chain").status ==
        Status::Pass);
  CHECK(find(chapter(mm, "05_compiled_addmm", wb::Problem::square(64, 1, 4)), "dispatch_chain").status ==
        Status::Fail);
}

TEST_CASE("chapter specs on other machines: Hopper-only patterns step aside", "[lessons][cpu]") {
  const wb::LessonsReport a100 =
      chapter(fixture("a100_64_cold.json"), "01_cold_64", wb::Problem::square(64, 1, 2));
  INFO(wb::render_lessons(a100, wb::Format::Text));
  CHECK(a100.failed == 0);
  const wb::LessonsReport cpu =
      chapter(fixture("py_cpu_64.json"), "01_cold_64", wb::Problem::square(64, 1, 2));
  CHECK(cpu.failed == 0);
  CHECK(cpu.passed == 2);  // dead window, dispatch chain
  CHECK(find(cpu, "overhead_bound").status == Status::NotApplicable);
  // Step widths are judged on GPU traces only: a CPU's cold first step is too close to the rest.
  CHECK(find(cpu, "step_widths").status == Status::NotApplicable);
}

// The recorded runs (expected_output/<platform>/...) are judged in one place:
// tests/test_recordings.cpp (every recorded verdict recomputed, every recorded run passing).

TEST_CASE("reports render as text, markdown and JSON, and JSON reads back", "[lessons][cpu]") {
  const wb::LessonsReport r =
      chapter(fixture("h200_64_cold.json"), "01_cold_64", wb::Problem::square(64, 1, 2));
  const std::string text = wb::render_lessons(r, wb::Format::Text);
  CHECK_THAT(text, ContainsSubstring("[PASS] Overhead-bound vs compute-bound"));
  CHECK_THAT(text, ContainsSubstring("10 passed, 0 failed, 0 not applicable"));
  const std::string md = wb::render_lessons(r, wb::Format::Markdown);
  CHECK_THAT(md, ContainsSubstring("| PASS | Overhead-bound vs compute-bound |"));
  CHECK_THAT(md, ContainsSubstring("```\nmatmul_add"));

  const auto j = nlohmann::json::parse(wb::render_lessons(r, wb::Format::Json));
  CHECK(j["chapter"] == "01_cold_64");
  CHECK(j["summary"]["passed"] == 10);
  CHECK(j["summary"]["min_passes"] == 1);
  CHECK(j["summary"]["ok"] == true);
  const wb::LessonsReport back = wb::lessons_from_json(j);
  REQUIRE(back.facts.size() == r.facts.size());
  for (size_t i = 0; i < r.facts.size(); ++i) {
    CHECK(back.facts[i].status == r.facts[i].status);
    CHECK(back.facts[i].data == r.facts[i].data);
    CHECK(back.facts[i].pattern.all.size() == r.facts[i].pattern.all.size());
  }
  CHECK(back.options.problem.n == 64);
  CHECK(back.min_passes == r.min_passes);

  CHECK_THROWS_WITH(wb::lessons_from_json(nlohmann::json::array()),
                    ContainsSubstring("not a lessons report"));
  CHECK_THROWS_WITH(wb::lessons_from_json({{"facts", {{{"id", "x"}, {"status", "maybe"}}}}}),
                    ContainsSubstring("unknown status 'maybe'"));
  CHECK_THROWS_AS(wb::compute_fact("no_such_fact", wb::TraceModel(fixtures::make_trace({}))),
                  std::invalid_argument);
}

TEST_CASE("peaks: device names match whole words, most specific first", "[lessons][cpu]") {
  REQUIRE(wb::find_peak("NVIDIA H200") != nullptr);
  CHECK(wb::find_peak("NVIDIA H200")->bf16_tflops == 989);
  CHECK(wb::find_peak("NVIDIA H200 NVL")->platform == "h200-nvl");
  CHECK(wb::find_peak("NVIDIA A100-SXM4-80GB")->mem_tbps == 2.039);
  CHECK(wb::find_peak("NVIDIA A100 80GB PCIe")->model == "A100 PCIe 80GB");
  CHECK(wb::find_peak("NVIDIA A10")->model == "A10");
  CHECK(wb::find_peak("NVIDIA L40S")->model == "L40S");
  CHECK(wb::find_peak("NVIDIA L4")->model == "L4");
  CHECK(wb::find_peak("NVIDIA H100 80GB HBM3")->platform == "h100");
  CHECK(wb::find_peak("NVIDIA GeForce RTX 4090") == nullptr);
  CHECK(wb::platform_key("NVIDIA H200") == "h200");
  CHECK(wb::platform_key("NVIDIA GeForce RTX 4090") == "geforce-rtx-4090");
  CHECK(wb::platform_key("") == "cpu");
  for (const auto& p : wb::known_peaks()) CHECK_FALSE(p.source.empty());
}

TEST_CASE("peaks: the table is common/core/data/device_peaks.json; a broken one says where",
          "[lessons][cpu]") {
  CHECK(wb::known_peaks().size() == 12);
  const std::string file =
      proc::slurp(std::filesystem::path(WORKBOOK_ROOT) / "common/core/data/device_peaks.json");
  CHECK(wb::check_peaks_table(file, "device_peaks.json") == wb::known_peaks().size());
  auto error_of = [](const std::string& devices, const std::string& sheets = R"({"x": "the x datasheet"})") {
    try {
      wb::check_peaks_table(R"({"datasheets": )" + sheets + R"(, "devices": [)" + devices + "]}",
                            "peaks.json");
    } catch (const wb::SpecError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string ok =
      R"({"match": "x1", "platform": "x1", "model": "X1", "bf16_tflops": 1, "fp32_tflops": 1, "mem_tbps": 1, "datasheet": "x"})";
  CHECK(error_of(ok) == "(no error)");
  CHECK_THAT(error_of(""), ContainsSubstring("devices: needs a non-empty array"));
  CHECK_THAT(
      error_of(R"({"match": "x1", "platform": "x1", "model": "X1", "bf16_tflops": "fast", "fp32_tflops": 1,
                         "mem_tbps": 1, "datasheet": "x"})"),
      ContainsSubstring("peaks.json: devices[0].bf16_tflops: must be a number"));
  CHECK_THAT(error_of(R"({"match": "x1", "platform": "x1", "model": "X1", "bf16_tflops": 1, "fp32_tflops": 1,
                         "mem_tbps": 1, "datasheet": "y"})"),
             ContainsSubstring("devices[0].datasheet: 'y' is not a key of \"datasheets\""));
  CHECK_THAT(error_of(R"({"match": "x1", "platform": "x1", "model": "X1", "bf16_tflops": 1, "fp32_tflops": -1,
                         "mem_tbps": 1, "datasheet": "x"})"),
             ContainsSubstring("the peaks must be positive"));
  CHECK_THAT(error_of(R"({"match": "x1", "platfrom": "x1"})"), ContainsSubstring("platfrom: unknown key"));
  CHECK_THAT(error_of(ok, "[]"), ContainsSubstring("datasheets: needs an object"));
}

TEST_CASE("lesson specs: chapters/NN_name/lessons.json; a broken one says where", "[lessons][cpu]") {
  // The compiled-in file: every entry read, shared lessons and same_as resolved.
  const auto& specs = wb::lesson_specs();
  // as many as the "specs" entries of the lessons.json of every chapter in the build's list
  std::size_t entries = 0;
  for (const auto& ch : proc::chapters()) {
    const auto j = nlohmann::json::parse(
        proc::slurp(std::filesystem::path(WORKBOOK_ROOT) / "chapters" / ch / "lessons.json"));
    INFO(ch);
    CHECK(j.at("specs").size() >= 1);
    for (const auto& e : j.at("specs"))
      CHECK(wb::find_lesson_spec(e.at("chapter").get<std::string>()) != nullptr);
    entries += j.at("specs").size();
  }
  CHECK(entries > 0);
  CHECK(specs.size() == entries);
  const wb::LessonSpec* addmm = wb::find_lesson_spec("05_compiled_addmm/addmm");
  const wb::LessonSpec* base = wb::find_lesson_spec("05_compiled_addmm");
  REQUIRE(addmm != nullptr);
  REQUIRE(base != nullptr);
  CHECK(addmm->expect.size() == base->expect.size());
  CHECK(addmm->title == base->title);
  const wb::LessonSpec* mlp = wb::find_lesson_spec("07_geglu_mlp/aoti");
  REQUIRE(mlp != nullptr);
  CHECK(std::any_of(mlp->expect.begin(), mlp->expect.end(),
                    [](const wb::Expectation& e) { return e.fact == "gemm_tiles"; }));
  CHECK(wb::find_lesson_spec("03_batched_bmm")->min_cpu_passes == 2);

  auto error_of = [](const std::string& text) {
    try {
      wb::parse_lesson_specs(text, "specs.json");
    } catch (const wb::SpecError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string lesson =
      R"({"fact": "dead_window", "text": "t", "all": [{"key": "/count", "op": ">=", "value": 1}]})";
  auto entry = [&](const std::string& fields, const std::string& lessons) {
    return R"({"chapter": "09_x", "title": "t", "problem": {"n": 64, "batch": 1, "dtype_bytes": 2}, )" +
           fields + R"("lessons": [)" + lessons + "]}";
  };
  auto one = [&](const std::string& fields, const std::string& lessons) {
    return R"({"specs": [)" + entry(fields, lessons) + "]}";
  };
  CHECK(error_of(one("", lesson)) == "(no error)");
  CHECK_THAT(error_of("{"), ContainsSubstring("specs.json: not valid JSON"));
  CHECK_THAT(error_of(R"({"specs": []})"), ContainsSubstring("specs.json: specs: needs a non-empty array"));
  CHECK_THAT(
      error_of(one("", R"({"fact": "nope", "text": "t", "all": [{"key": "/a", "op": "==", "value": 1}]})")),
      ContainsSubstring("specs.json: 09_x: lessons[0].fact: unknown fact 'nope'"));
  CHECK_THAT(
      error_of(
          one("", R"({"fact": "dead_window", "text": "t", "all": [{"key": "/a", "op": "=<", "value": 1}]})")),
      ContainsSubstring("09_x: lessons[0].all[0].op: unknown operator '=<'"));
  CHECK_THAT(
      error_of(one("", R"({"fact": "dead_window", "text": "t", "all": [{"key": "/a", "op": "<", "value": 1,
                                  "scope": "tpu"}]})")),
      ContainsSubstring("all[0].scope: unknown scope 'tpu' (use any, gpu, hopper or cpu)"));
  CHECK_THAT(error_of(one("", R"({"fact": "dead_window", "txet": "t", "all": []})")),
             ContainsSubstring("lessons[0].txet: unknown key"));
  CHECK_THAT(error_of(one("", R"({"use": "nothing"})")),
             ContainsSubstring("lessons[0].use: 'nothing' is not a lesson of \"shared\""));
  CHECK_THAT(error_of(one("", "")), ContainsSubstring("09_x: lessons: needs a non-empty array"));
  CHECK_THAT(error_of(one(R"("min_cpu_passes": 0, )", lesson)),
             ContainsSubstring("min_cpu_passes: must be a positive"));
  CHECK_THAT(error_of(R"({"specs": [{"chapter": "09_x", "title": "t", "problem": {"n": 64}, "lessons": [)" +
                      lesson + "]}]}"),
             ContainsSubstring("09_x: problem.batch: missing"));
  CHECK_THAT(error_of(R"({"specs": [{"chapter": "09_y", "same_as": "09_x"}]})"),
             ContainsSubstring("09_y: same_as: '09_x' is not an entry above this one"));
  CHECK_THAT(error_of(R"({"specs": [)" + entry("", lesson) + "," + entry("", lesson) + "]}"),
             ContainsSubstring("09_x: chapter: a second entry for the same chapter"));
  // A shared lesson is used where named.
  CHECK(wb::parse_lesson_specs(R"({"shared": {"s": )" + lesson + "}, " + one("", R"({"use": "s"})").substr(1),
                               "specs.json")
            .front()
            .expect.front()
            .fact == "dead_window");
}

namespace {

// The figures in a pattern's text and explanation that look measured: a number with a unit of
// time, throughput or a percent, or a decimal in a clause about the H200, a probe or a
// recording. Allowed: the pattern's own thresholds (and fractions of them as percents), the
// datasheet (989 TFLOP/s, 4.8 TB/s), the 105 % cap, and anything said of the original post's A100.
std::vector<std::string> measured_figures(const wb::Pattern& p) {
  std::vector<double> allowed{989, 4.8, 105, 100};
  for (const auto& c : p.all)
    if (c.value.is_number())
      allowed.insert(allowed.end(), {c.value.get<double>(), 100 * c.value.get<double>()});
  auto is_allowed = [&](double v) {
    return std::any_of(allowed.begin(), allowed.end(),
                       [&](double a) { return std::abs(a - v) <= 1e-9 * std::max(1.0, std::abs(a)); });
  };
  static const std::regex kClauseEnd(R"([;()]|\.\s)");
  // A figure right after a comparison (">= 85%", "< 2 us") is a stated bound, not a measurement.
  static const std::regex kWithUnit(R"(((?:[<>]=?|==)\s*)?(\d+(?:\.\d+)?)\s*(us|µs|ms|TFLOP/s|TB/s|GB/s|%))");
  static const std::regex kDecimal(R"(\b\d+\.\d+\b)");
  static const std::regex kAboutRuns(R"(H200|probe|recorded|recording|profiled)");
  static const std::regex kAboutA100(R"(A100|original post)");
  std::vector<std::string> out;
  for (const std::string& text : {p.text, p.why}) {
    for (std::sregex_token_iterator it(text.begin(), text.end(), kClauseEnd, -1), end; it != end; ++it) {
      const std::string clause = *it;
      if (std::regex_search(clause, kAboutA100)) continue;
      for (std::sregex_iterator m(clause.begin(), clause.end(), kWithUnit), e; m != e; ++m)
        if (!(*m)[1].matched && !is_allowed(std::stod((*m)[2])))
          out.push_back(m->str() + " in \"" + clause + "\"");
      if (!std::regex_search(clause, kAboutRuns)) continue;
      const std::string bare = std::regex_replace(clause, kWithUnit, "");  // each figure once
      for (std::sregex_iterator m(bare.begin(), bare.end(), kDecimal), e; m != e; ++m)
        if (!is_allowed(std::stod(m->str()))) out.push_back(m->str() + " in \"" + clause + "\"");
    }
  }
  return out;
}

}  // namespace

TEST_CASE("lesson explanations quote no measured figure: the measured value is the fact's own",
          "[lessons][docs][cpu]") {
  // Shown failing first: an explanation that quotes a run.
  wb::Pattern quoted{"the kernel runs at >= 60% of HBM bandwidth",
                     "H200: 36.4 us (86%) profiled in this chapter; the A100 took 0.19 ms",
                     {{"/pct_of_hbm", wb::Condition::Op::Ge, 60}}};
  CHECK(measured_figures(quoted).size() == 2);  // 36.4 us and 86%; the A100's figure is allowed
  wb::Pattern ratio{
      "compute-bound: ratio >= 0.5", "the H200 sits near 0.8", {{"/r", wb::Condition::Op::Ge, 0.5}}};
  CHECK(measured_figures(ratio).size() == 1);

  int patterns = 0;
  for (const auto& spec : wb::lesson_specs())
    for (const auto& e : spec.expect) {
      ++patterns;
      INFO(spec.chapter << " / " << e.fact);
      CHECK(measured_figures(e.pattern) == std::vector<std::string>{});
    }
  // The facts' default (cheatsheet) patterns, as inspect applies them.
  const wb::Trace empty;
  const wb::TraceModel m(empty);
  for (const auto& info : wb::all_facts()) {
    const wb::Fact f = wb::compute_fact(info.id, m);
    ++patterns;
    INFO("default pattern of " << info.id);
    CHECK(measured_figures(f.pattern) == std::vector<std::string>{});
  }
  CHECK(patterns > 50);
}

TEST_CASE("the comparison's header names the problem the variants ran", "[lessons][cpu]") {
  // Chapter 05's variants compute an N x N product; chapter 11's a model's decode step, whose
  // size is its config (it takes no --size). No runs: only the header is looked at.
  wb::LessonsReport rep;
  const std::vector<wb::VariantRun> none;
  auto header = [&](const std::string& problem) {
    const std::string text = wb::render_across(none, rep, problem);
    return text.substr(0, text.find('\n'));
  };
  rep.options.problem = wb::Problem::square(4096, 1, 2);
  CHECK(header("") == "==== all variants, N=4096 ====");  // chapter 05, as recorded
  // chapter 11 names its model; the --size it does not use (64 by default) is not said
  rep.options.problem = wb::Problem::square(64, 1, 2);
  CHECK(header("1b, batch 1, 512-token prompt") == "==== all variants, 1b, batch 1, 512-token prompt ====");
  rep.options.problem = wb::Problem();  // n = 0: no size to say
  CHECK(header("") == "==== all variants ====");
}
