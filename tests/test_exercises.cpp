// The exercises' checkers are honest: every untouched stub fails its check, every reference
// solution passes it -- on this CPU for the exercises that mean something on a CPU, on a GPU
// for all of them ([gpu] cases skip without one). Below that, each check is shown failing and
// passing on recorded-shape traces (tests/data/lessons), so the GPU patterns are exercised here
// too, and the catalog, the command line and the progress file are tested for bad input.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <vector>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "exercise/catalog.hpp"
#include "exercise/checker.hpp"
#include "exercise/facts.hpp"
#include "exercise/grade.hpp"
#include "exercise/variation.hpp"
#include "process.hpp"
#include "workbook/compare.hpp"
#include "workbook/lessons.hpp"
#include "workbook/rules.hpp"
#include "workbook/schedule.hpp"
#include "workbook/stats.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;
using nlohmann::json;

namespace {

const fs::path kRoot = WORKBOOK_ROOT;
const fs::path kData = kRoot / "tests" / "data" / "lessons";

using proc::slurp;
fs::path bin_dir() { return proc::build_dir() / "bin"; }

const exercise::Catalog& catalog() {
  static const exercise::Catalog c = exercise::load_catalog(kRoot / "exercises" / "exercises.json");
  return c;
}
const exercise::Exercise& ex(const std::string& id) {
  const exercise::Exercise* e = catalog().find(id);
  if (!e) FAIL("no exercise " << id << " in the catalog");
  return *e;
}

// A fresh folder per test (pid in the name: ctest runs cases in parallel).
fs::path temp_dir(const std::string& tag) { return proc::scratch("test_exercises_" + tag); }

// A run folder as an exercise program leaves it, from a recorded trace: for judging checks
// without running anything.
fs::path make_run(const std::string& tag, const fs::path& trace, const json& run,
                  const json& answers = nullptr, const std::string& table = "") {
  const fs::path d = temp_dir(tag);
  fs::copy_file(trace, d / "trace.json");  // .json.gz too: the reader goes by the magic bytes
  std::ofstream(d / "run.json") << run.dump();
  if (!answers.is_null()) std::ofstream(d / "answer.json") << answers.dump();
  if (!table.empty()) std::ofstream(d / "table.txt") << table;
  return d;
}
const json kRun64 = {{"size", 64}, {"batch", 1}, {"dtype_bytes", 2}, {"annotation", "matmul_add"}};
const json kRun4096 = {{"size", 4096}, {"batch", 1}, {"dtype_bytes", 2}, {"annotation", "matmul_add"}};

// A complete ("X") event of a Chrome trace.
json x_event(const std::string& cat, const std::string& name, int pid, int tid, double ts, const json& dur,
             const json& args) {
  return {{"ph", "X"},  {"cat", cat}, {"name", name}, {"pid", pid},
          {"tid", tid}, {"ts", ts},   {"dur", dur},   {"args", args}};
}

// A synthetic GPU trace of three steps, each one cudaGraphLaunch replaying a GEMM and an add.
fs::path graph_trace(const std::string& tag) {
  json ev = json::array();
  int corr = 100, ext = 1;
  for (int step = 2; step <= 4; ++step) {
    const double t = 1000.0 + 100.0 * step;
    ev.push_back(x_event("user_annotation", std::string(wb::kStepPrefix) + std::to_string(step), 1, 1, t, 30,
                         {{"External id", ext++}}));
    ev.push_back(x_event("user_annotation", "matmul_add", 1, 1, t + 1, 25, {{"External id", ext++}}));
    ev.push_back(x_event("cuda_runtime", "cudaGraphLaunch", 1, 1, t + 2, 8,
                         {{"External id", ext - 1}, {"correlation", corr}}));
    ev.push_back(x_event("kernel", "nvjet_sm90_tst_64x8_64x16_1x4_h_bz_NNT", 0, 7, t + 12, 1.9,
                         {{"correlation", corr}}));
    ev.push_back(x_event("kernel", "void at::native::vectorized_elementwise_kernel<8>", 0, 7, t + 14, 0.9,
                         {{"correlation", corr}}));
    ++corr;
  }
  const fs::path p = temp_dir(tag + "_src") / "graph.json";
  std::ofstream(p) << json({{"traceEvents", ev}}).dump();
  return p;
}

// A run folder made from a recorded trace says whose run it is, as a program's run.json does:
// `student`'s variation of exercise `id` (the defaults for ""), unless run.json already says.
fs::path as_run_of(const std::string& id, const fs::path& dir, const std::string& student = "") {
  json run = json::parse(slurp(dir / "run.json"));
  if (!run.contains("student")) run["student"] = student;
  if (!run.contains("variation")) run["variation"] = exercise::variation(ex(id), student);
  std::ofstream(dir / "run.json") << run.dump();
  return dir;
}
// A recorded trace is not a run of the exercise's program: no harness verified its values, and
// its ops are the chapter's. These cases judge the exercise's own checks on it, so the workload
// check is left out; the honesty runs and the gaming cases judge the workload.
const exercise::Exercise& without_workload(const std::string& id) {
  static std::map<std::string, exercise::Exercise> copies;  // a result points at its checks: kept
  auto it = copies.find(id);
  if (it == copies.end()) {
    it = copies.emplace(id, ex(id)).first;
    it->second.workload = json::object();
  }
  return it->second;
}
exercise::CheckResult judge_as(const std::string& id, const fs::path& dir, const std::string& student = "") {
  return exercise::judge(without_workload(id), as_run_of(id, dir, student), student);
}
exercise::Outcome judged(const std::string& id, const fs::path& dir) { return judge_as(id, dir).outcome; }

// A recorded trace with its ProfilerStep#N renamed to #N+delta, as if the schedule had waited
// delta steps more (or fewer): the events stay as the real run recorded them.
fs::path shift_steps(const fs::path& trace, int delta, const std::string& tag) {
  json t = json::parse(slurp(trace));
  for (auto& e : t["traceEvents"]) {
    const std::string name = e.value("name", "");
    if (wb::is_step_name(name))
      e["name"] = std::string(wb::kStepPrefix) + std::to_string(wb::step_number(name) + delta);
  }
  const fs::path p = temp_dir(tag + "_shift") / "trace.json";
  std::ofstream(p) << t.dump();
  return p;
}

// A synthetic CPU trace of `steps` recorded steps (from ProfilerStep#0), one aten::mm each, of
// the given durations (us).
fs::path mm_trace(const std::vector<double>& dur_us, const std::string& tag) {
  json ev = json::array();
  int ext = 1;
  for (size_t i = 0; i < dur_us.size(); ++i) {
    const double t = 1000.0 + 2000.0 * static_cast<double>(i);
    ev.push_back(x_event("user_annotation", std::string(wb::kStepPrefix) + std::to_string(i), 1, 1, t, 1500,
                         {{"External id", ext++}}));
    ev.push_back(x_event("cpu_op", "aten::mm", 1, 1, t + 10, dur_us[i], {{"External id", ext++}}));
  }
  const fs::path p = temp_dir(tag + "_src") / "trace.json";
  std::ofstream(p) << json({{"traceEvents", ev}}).dump();
  return p;
}

// The verdict of catalog check `index` of exercise `e` in a result: the verdicts of the
// catalog's checks come in its order, after the harness's own (fresh run, workload, variation).
const exercise::CheckVerdict* verdict_of(const exercise::CheckResult& r, const exercise::Exercise& e,
                                         size_t index) {
  REQUIRE(index < e.checks.size());
  size_t i = 0;
  for (const auto& v : r.verdicts) {
    const std::string& f = v.check->fact;
    if (f == "fresh_run" || f == "workload" || f == "variation") continue;
    if (i++ == index) return v.check->fact == e.checks[index].fact ? &v : nullptr;
  }
  return nullptr;
}

// ---- the end-to-end honesty check --------------------------------------------------------
#ifndef WORKBOOK_EXERCISE_SOLUTIONS
#define WORKBOOK_EXERCISE_SOLUTIONS 1
#endif
// The solutions are built while solutions/ exists, unless the build turned them off.
bool solutions_expected() { return WORKBOOK_EXERCISE_SOLUTIONS && fs::exists(kRoot / "solutions"); }

exercise::CheckResult run_check(const exercise::Exercise& e, bool solution, const std::string& device,
                                const std::string& student = "") {
  exercise::CheckOptions o;
  o.student = student;
  o.bin_dir = bin_dir();
  o.solution = solution;
  o.device = device;
  o.out_dir = temp_dir(e.name + (solution ? "_solution" : "_stub") + "_" + device + "_" + student);
  o.timeout_s = 900;
  const fs::path program = o.bin_dir / (e.name + (solution ? "_solution" : ""));
  if (!fs::exists(program)) {
    if (solution && !solutions_expected())
      SKIP("solutions not built (no solutions/ folder, or WORKBOOK_EXERCISE_SOLUTIONS=OFF)");
    FAIL("not built: " << program.string() << " (build the 'exercises' target)");
  }
  exercise::CheckResult r = exercise::check_exercise(e, o);
  INFO(exercise::render(e, r));
  return r;
}

void stub_fails_solution_passes(const std::string& id, const std::string& device) {
  const exercise::Exercise& e = ex(id);
  if (device == "cuda" && !exercise::gpu_present()) SKIP("no GPU on this machine");
  {
    const exercise::CheckResult stub = run_check(e, false, device);
    INFO(exercise::render(e, stub));
    if (stub.outcome == exercise::Outcome::NeedsGpu) SKIP(stub.message);
    CHECK(stub.outcome == exercise::Outcome::Fail);
    // ... on the check it is meant to fail, not on any other.
    REQUIRE(e.stub_fails >= 0);
    const exercise::CheckVerdict* intended = verdict_of(stub, e, static_cast<size_t>(e.stub_fails));
    REQUIRE(intended != nullptr);
    CHECK(intended->fact.status == wb::Status::Fail);
  }
  // The solution passes every check, with the defaults and (for a varied exercise) as a learner.
  std::vector<std::string> students{""};
  if (!e.vary.empty()) students.push_back("grace");
  for (const auto& student : students) {
    const exercise::CheckResult sol = run_check(e, true, device, student);
    INFO("student '" << student << "'\n" << exercise::render(e, sol));
    if (sol.outcome == exercise::Outcome::NeedsGpu) SKIP(sol.message);
    CHECK(sol.outcome == exercise::Outcome::Pass);
    CHECK(sol.failed == 0);
    if (device == "cuda") CHECK(sol.skipped == 0);  // on a GPU every check is judged, GPU parts included
  }
}

std::set<std::string>& registered(bool gpu_only) {
  static std::set<std::string> cpu, gpu;
  return gpu_only ? gpu : cpu;
}
struct Register {
  Register(const char* id, bool gpu_only) { registered(gpu_only).insert(id); }
};

}  // namespace

// One pair of cases per exercise (so ctest runs them in parallel). An exercise that means
// something on a CPU is checked here and on a GPU; a GPU-only one on a GPU only.
#define WB_CAT2(a, b) a##b
#define WB_CAT(a, b) WB_CAT2(a, b)
#define CPU_EXERCISE(ID)                                                                        \
  static Register WB_CAT(reg_, __LINE__){ID, false};                                            \
  TEST_CASE("exercise " ID ": the stub fails, the solution passes (CPU)", "[exercises][cpu]") { \
    stub_fails_solution_passes(ID, "cpu");                                                      \
  }                                                                                             \
  TEST_CASE("exercise " ID ": the stub fails, the solution passes (GPU)", "[exercises][gpu]") { \
    stub_fails_solution_passes(ID, "cuda");                                                     \
  }
#define GPU_EXERCISE(ID)                                                                        \
  static Register WB_CAT(reg_, __LINE__){ID, true};                                             \
  TEST_CASE("exercise " ID ": the stub fails, the solution passes (GPU)", "[exercises][gpu]") { \
    stub_fails_solution_passes(ID, "cuda");                                                     \
  }

CPU_EXERCISE("ex01.1")
CPU_EXERCISE("ex01.2")
CPU_EXERCISE("ex01.3")
GPU_EXERCISE("ex02.1")
GPU_EXERCISE("ex02.2")
CPU_EXERCISE("ex02.3")
CPU_EXERCISE("ex03.1")
CPU_EXERCISE("ex03.2")
CPU_EXERCISE("ex04.1")
CPU_EXERCISE("ex04.2")
CPU_EXERCISE("ex04.3")
CPU_EXERCISE("ex05.1")
GPU_EXERCISE("ex05.2")
CPU_EXERCISE("ex06.1")
CPU_EXERCISE("ex06.2")
CPU_EXERCISE("ex07.1")
CPU_EXERCISE("ex07.2")
CPU_EXERCISE("ex08.1")
CPU_EXERCISE("ex08.2")
CPU_EXERCISE("ex09.1")
CPU_EXERCISE("ex09.2")
GPU_EXERCISE("ex10.1")
CPU_EXERCISE("ex10.2")
CPU_EXERCISE("ex11.1")
CPU_EXERCISE("ex11.2")

TEST_CASE("every exercise of the catalog has its honesty cases, GPU-only ones tagged [gpu]",
          "[exercises][cpu]") {
  std::set<std::string> all;
  for (const auto& e : catalog().exercises) {
    INFO(e.id);
    all.insert(e.id);
    CHECK(registered(e.needs_gpu).count(e.id) == 1);
    CHECK(registered(!e.needs_gpu).count(e.id) == 0);
  }
  for (bool g : {false, true})
    for (const auto& id : registered(g)) CHECK(all.count(id) == 1);
}

// ---- the catalog --------------------------------------------------------------------------
TEST_CASE("the catalog: at least two exercises per chapter, ten in all, files in place", "[exercises][cpu]") {
  const auto& c = catalog();
  REQUIRE(c.exercises.size() >= 10);
  std::map<std::string, int> per_chapter;
  for (const auto& e : c.exercises) {
    INFO(e.id);
    per_chapter[e.chapter]++;
    CHECK(fs::exists(kRoot / "chapters" / e.chapter));
    const fs::path stub = kRoot / "exercises" / e.name / "main.cpp";
    REQUIRE(fs::exists(stub));
    const std::string src = slurp(stub);
    CHECK_THAT(src, ContainsSubstring("TODO(" + e.id + ")"));
    // The hints stay out of the source: no line of any level appears in the stub.
    CHECK(e.hints.size() >= 2);  // levels: a nudge first, more on request
    for (const auto& level : e.hints) {
      std::istringstream hint(level);
      for (std::string line; std::getline(hint, line);)
        if (line.size() > 20) CHECK_THAT(src, !ContainsSubstring(line));
    }
    CHECK(e.stub_fails >= 0);  // CI knows which check the stub fails
    if (fs::exists(kRoot / "solutions")) {
      const fs::path sol = kRoot / "solutions" / e.name / "main.cpp";
      REQUIRE(fs::exists(sol));
      CHECK_THAT(slurp(sol), !ContainsSubstring("TODO(" + e.id + ")"));
    }
  }
  for (const char* ch :
       {"01_cold_64", "02_warmup", "03_batched_bmm", "04_compute_bound_4096", "05_compiled_addmm",
        "06_linear", "07_geglu_mlp", "09_llm_prefill_decode", "10_llm_decode_graphs"}) {
    INFO(ch);
    CHECK(per_chapter[ch] >= 2);
  }
}

TEST_CASE("the catalog finds exercises by id, short id and name", "[exercises][cpu]") {
  const auto& c = catalog();
  REQUIRE(c.find("ex01.1") != nullptr);
  CHECK(c.find("01.1") == c.find("ex01.1"));
  CHECK(c.find("ex01_1_hot_loop") == c.find("ex01.1"));
  CHECK(c.find("ex99.9") == nullptr);
  CHECK(c.find("") == nullptr);
  CHECK_THAT(c.ids(), ContainsSubstring("ex05.2"));
}

TEST_CASE("a broken catalog says where it is broken", "[exercises][cpu]") {
  auto error_of = [](const std::string& text) -> std::string {
    try {
      exercise::parse_catalog(text, "cat.json");
    } catch (const exercise::CatalogError& e) {
      return e.what();
    }
    return "(no error)";
  };
  const std::string ok_check =
      R"({"fact": "steps", "text": "t", "all": [{"key": "/first", "op": "==", "value": 3}]})";
  auto one = [&](const std::string& fields, const std::string& check) {
    return R"({"exercises": [{"id": "ex09.1", "name": "ex09_1_x", "chapter": "c", "title": "t", "task": "t",
              "hint": "h", )" +
           fields + R"("checks": [)" + check + "]}]}";
  };
  CHECK_THAT(error_of("{"), ContainsSubstring("not valid JSON"));
  CHECK_THAT(error_of("[]"), ContainsSubstring("\"exercises\" array"));
  CHECK_THAT(error_of(R"({"exercises": []})"), ContainsSubstring("exercises: needs a non-empty array"));
  CHECK_THAT(error_of(R"({"exercises": [3]})"), ContainsSubstring("exercises[0]: must be an exercise"));
  CHECK_THAT(error_of(one(R"("stub_fail": 0, )", ok_check)),
             ContainsSubstring("ex09.1: stub_fail: unknown key"));
  CHECK_THAT(
      error_of(one("", R"({"fact": "steps", "txt": "t", "all": [{"key": "/a", "op": "==", "value": 1}]})")),
      ContainsSubstring("ex09.1: checks[0].txt: unknown key"));
  CHECK(error_of(one("", ok_check)) == "(no error)");
  CHECK_THAT(
      error_of(one("", R"({"fact": "nope", "text": "t", "all": [{"key": "/a", "op": "==", "value": 1}]})")),
      ContainsSubstring("ex09.1: checks[0].fact: unknown fact 'nope'"));
  CHECK_THAT(
      error_of(one("", R"({"fact": "steps", "text": "t", "all": [{"key": "/a", "op": "~", "value": 1}]})")),
      ContainsSubstring("unknown operator '~'"));
  CHECK_THAT(
      error_of(one("", R"({"fact": "steps", "text": "t", "all": [{"key": "a", "op": "==", "value": 1}]})")),
      ContainsSubstring("JSON pointer"));
  CHECK_THAT(error_of(one("", R"({"fact": "steps", "text": "t", "all": []})")),
             ContainsSubstring("non-empty"));
  CHECK_THAT(error_of(one(R"("needs_gpu": "yes", )", ok_check)),
             ContainsSubstring("needs_gpu: must be true or false"));
  CHECK_THAT(error_of(one(R"("args": [1], )", ok_check)), ContainsSubstring("args"));
  CHECK_THAT(error_of(R"({"exercises": [{"id": "ex09.1", "name": "Bad Name", "chapter": "c", "title": "t",
                          "task": "t", "hint": "h", "checks": [)" +
                      ok_check + "]}]}"),
             ContainsSubstring("lowercase"));
  const std::string e1 =
      R"({"id": "ex09.1", "name": "a", "chapter": "c", "title": "t", "task": "t", "hint": "h", "checks": [)" +
      ok_check + "]}";
  CHECK_THAT(error_of(R"({"exercises": [)" + e1 + "," + e1 + "]}"), ContainsSubstring("duplicate id"));
  CHECK_THAT(error_of(R"({"exercises": [{"id": "ex09.1"}]})"), ContainsSubstring("name: missing"));
}

// ---- each check fails and passes on recorded-shape traces -----------------------------------
TEST_CASE("table: sorted by # of Calls or not", "[exercises][cpu]") {
  const std::string by_count = slurp(kRoot / "tests/data/table/cpu_by_count.txt");
  const std::string by_time = slurp(kRoot / "tests/data/table/cpu_by_cpu_time_total.txt");
  REQUIRE(wb::parse_table_calls(by_count, "by_count").size() >= 3);
  const json right = {{"most_called_op", "aten::resolve_conj"}};
  // Chapter 01's trace has no add_ loop: ex01.1's workload check fails on it (the trick of
  // deleting the loop), so the table and answer checks are judged here without it.
  CHECK(exercise::judge(ex("ex01.1"), as_run_of("ex01.1", make_run("t_loopless", kData / "py_cpu_64.json",
                                                                   kRun64, right, by_count)))
            .first_failed == "the exercise's workload ran as specified: its ops, their counts, its results");
  exercise::Exercise e = ex("ex01.1");
  e.workload = json::object();
  auto judged_alone = [&](const fs::path& d) { return exercise::judge(e, as_run_of("ex01.1", d)).outcome; };
  CHECK(judged_alone(make_run("t_count", kData / "py_cpu_64.json", kRun64, right, by_count)) ==
        exercise::Outcome::Pass);
  CHECK(judged_alone(make_run("t_time", kData / "py_cpu_64.json", kRun64, right, by_time)) ==
        exercise::Outcome::Fail);
  // A wrong answer fails even with the right order; a missing table is a failure, not a crash.
  CHECK(judged_alone(make_run("t_wrong", kData / "py_cpu_64.json", kRun64, {{"most_called_op", "aten::mm"}},
                              by_count)) == exercise::Outcome::Fail);
  CHECK(judged_alone(make_run("t_none", kData / "py_cpu_64.json", kRun64, right)) == exercise::Outcome::Fail);
}

TEST_CASE("dead_window_answer: the right step and op pass, others fail", "[exercises][cpu]") {
  const fs::path t = kData / "py_cpu_64.json";
  CHECK(judged("ex01.3", make_run("dw_ok", t, kRun64,
                                  {{"dead_window_step", 2}, {"first_op_after_gap", "aten::matmul"}})) ==
        exercise::Outcome::Pass);
  CHECK(judged("ex01.3", make_run("dw_step", t, kRun64,
                                  {{"dead_window_step", 3}, {"first_op_after_gap", "aten::matmul"}})) ==
        exercise::Outcome::Fail);
  CHECK(judged("ex01.3",
               make_run("dw_op", t, kRun64, {{"dead_window_step", 2}, {"first_op_after_gap", "aten::mm"}})) ==
        exercise::Outcome::Fail);
  CHECK(judged("ex01.3", make_run("dw_none", t, kRun64)) == exercise::Outcome::Fail);
}

TEST_CASE("dispatch checks: bmm for a batch, addmm as one op, a named region", "[exercises][cpu]") {
  CHECK(judged("ex03.1", make_run("bmm_ok", kData / "h200_64_bmm.json", kRun64)) == exercise::Outcome::Pass);
  CHECK(judged("ex03.1", make_run("bmm_no", kData / "h200_64_cold.json", kRun64)) == exercise::Outcome::Fail);
  CHECK(judged("ex03.1", make_run("bmm_cpu", kData / "py_cpu_64_bmm.json", kRun64)) ==
        exercise::Outcome::Pass);
  CHECK(judged("ex03.2", make_run("fold_no", kData / "py_cpu_64_bmm.json", kRun64)) ==
        exercise::Outcome::Fail);
  CHECK(judged("ex03.2", make_run("fold_2d", kData / "py_cpu_64.json", kRun64)) == exercise::Outcome::Fail);
  // addmm: one op on the CPU lane, and on the GPU the bias copy before the GEMM.
  const exercise::CheckResult a =
      judge_as("ex05.1", make_run("addmm_gpu", kData / "h200_4096_addmm.json", kRun4096));
  CHECK(a.outcome == exercise::Outcome::Pass);
  CHECK(a.skipped == 0);
  CHECK(judged("ex05.1", make_run("addmm_cpu", kData / "py_cpu_64_addmm.json", kRun64)) ==
        exercise::Outcome::Pass);
  CHECK(judged("ex05.1", make_run("addmm_eager", kData / "h200_64_cold.json", kRun64)) ==
        exercise::Outcome::Fail);
  CHECK(judged("ex01.2", make_run("region_none", kData / "py_cpu_64.json", kRun64)) ==
        exercise::Outcome::Fail);
}

TEST_CASE("steps and GEMM samples: what the schedule kept", "[exercises][cpu]") {
  const exercise::CheckResult s = judge_as("ex02.3", make_run("steps", kData / "py_cpu_64.json", kRun64));
  CHECK(s.outcome == exercise::Outcome::Fail);
  const exercise::CheckVerdict* steps = verdict_of(s, ex("ex02.3"), 0);
  REQUIRE(steps != nullptr);
  CHECK(steps->fact.data["first"] == 2);
  CHECK(steps->fact.data["count"] == 3);
  const exercise::CheckResult g =
      judge_as("ex04.2", make_run("samples", kData / "h200_64_cold.json", kRun64));
  CHECK(g.outcome == exercise::Outcome::Fail);
  CHECK(verdict_of(g, ex("ex04.2"), 0)->fact.data["samples"] == 3);
}

TEST_CASE("tflops_answer: within 5% of the lesson's throughput, or not", "[exercises][cpu]") {
  const fs::path t = kData / "h200_4096_warm.json.gz";
  const wb::Trace trace = wb::read_trace(t);
  const wb::TraceModel m(trace);
  wb::FactOptions o;
  o.problem = wb::Problem::square(4096, 1, 2);
  const double lesson = wb::compute_fact("throughput", m, o).data.at("gemm_tflops").get<double>();
  REQUIRE(lesson > 100);
  const json v = exercise::variation(ex("ex04.1"), "");
  const double probe = 2.0 * v["probe_batch"].get<double>() * std::pow(v["probe_n"].get<double>(), 3) /
                       (v["probe_us"].get<double>() * 1e-6) / 1e12;
  CHECK(judged("ex04.1", make_run("tf_ok", t, kRun4096,
                                  {{"achieved_tflops", lesson * 1.01}, {"probe_tflops", probe}})) ==
        exercise::Outcome::Pass);
  CHECK(judged("ex04.1", make_run("tf_half", t, kRun4096, {{"achieved_tflops", lesson / 2}})) ==
        exercise::Outcome::Fail);
  CHECK(judged("ex04.1", make_run("tf_us", t, kRun4096, {{"achieved_tflops", lesson * 1e6}})) ==
        exercise::Outcome::Fail);
  CHECK(judged("ex04.1", make_run("tf_text", t, kRun4096, {{"achieved_tflops", "800"}})) ==
        exercise::Outcome::Fail);
  CHECK(judged("ex04.1", make_run("tf_null", t, kRun4096, {{"achieved_tflops", nullptr}})) ==
        exercise::Outcome::Fail);
  // On a CPU trace the reference is 2*N^3 over the median aten::mm.
  CHECK(judged("ex04.1", make_run("tf_cpu0", kData / "py_cpu_64.json", kRun64, {{"achieved_tflops", 0.0}})) ==
        exercise::Outcome::Fail);
}

TEST_CASE("GPU patterns: first-call setup, the profiler's buffer, the hidden sync, graph launches",
          "[exercises][cpu]") {
  // The first GEMM of a process loads its module; a warm run does not.
  // (recorded with the chapters' 1,1,3: renumbered to the stub's 0,0,3, steps #0..#2)
  CHECK(judged("ex02.1", make_run("cold", shift_steps(kData / "h200_64_first_call.json", -2, "cold"),
                                  kRun64)) == exercise::Outcome::Fail);
  CHECK(judged("ex02.1", make_run("warm", shift_steps(kData / "h200_64_cold.json", -2, "warm"), kRun64)) ==
        exercise::Outcome::Pass);
  CHECK(judged("ex02.1", make_run("cpu", kData / "py_cpu_64.json", kRun64)) == exercise::Outcome::NeedsGpu);
  CHECK(judged("ex02.2", make_run("buf", kData / "h200_64_first_call.json", kRun64)) ==
        exercise::Outcome::Pass);
  CHECK(judged("ex02.2", make_run("nobuf", kData / "h200_64_cold.json", kRun64)) == exercise::Outcome::Fail);
  // At 4096 a CPU that runs ahead makes the launch-to-start wait grow; a flat one (64-style) fails.
  json ahead_run = kRun4096;
  ahead_run["steps_run"] = 5;
  ahead_run["reference"] = {{"checksum_per_step", 1234.5}};
  const exercise::CheckResult ahead = judge_as(
      "ex04.3", make_run("ahead", kData / "h200_4096_warm.json.gz", ahead_run, {{"checksum", 5 * 1234.5}}));
  CHECK(ahead.outcome == exercise::Outcome::Pass);
  CHECK(ahead.skipped == 0);
  CHECK(judged("ex04.3", make_run("flat", kData / "h200_64_cold.json", kRun4096)) == exercise::Outcome::Fail);
  // Graph replay: one launch call per step; eager: two.
  CHECK(judged("ex05.2", make_run("graph", graph_trace("graph"), kRun64)) == exercise::Outcome::Pass);
  CHECK(judged("ex05.2", make_run("eager", kData / "h200_64_cold.json", kRun64)) == exercise::Outcome::Fail);
  CHECK(judged("ex05.2", make_run("graph_cpu", kData / "py_cpu_64.json", kRun64)) ==
        exercise::Outcome::NeedsGpu);
}

TEST_CASE("a run folder without a trace cannot be judged, with a clear message", "[exercises][cpu]") {
  const fs::path d = temp_dir("empty");
  CHECK_THROWS_WITH(exercise::judge(ex("ex01.1"), d), ContainsSubstring("no trace.json"));
  const fs::path bad = make_run("badanswer", kData / "py_cpu_64.json", kRun64);
  std::ofstream(bad / "answer.json") << "{ half";
  CHECK_THROWS_WITH(exercise::judge(ex("ex01.1"), bad), ContainsSubstring("answer.json"));
}

TEST_CASE("check_exercise: a missing program is an error that says how to build it", "[exercises][cpu]") {
  exercise::CheckOptions o;
  o.bin_dir = temp_dir("nobin");
  o.out_dir = temp_dir("nobin_out");
  o.device = "cpu";
  const exercise::CheckResult r = exercise::check_exercise(ex("ex01.1"), o);
  CHECK(r.outcome == exercise::Outcome::Error);
  CHECK_THAT(r.message, ContainsSubstring("--target ex01_1_hot_loop"));
  CHECK(exercise::exit_code(r.outcome) == 3);
  // A GPU-only exercise with --device cpu: needs a GPU, not a failure, nothing run.
  const exercise::CheckResult g = exercise::check_exercise(ex("ex05.2"), o);
  CHECK(g.outcome == exercise::Outcome::NeedsGpu);
  CHECK(exercise::exit_code(g.outcome) == 4);
  // A given program that is not there: said, without a target to build.
  o.program = "/nonexistent";
  const exercise::CheckResult p = exercise::check_exercise(ex("ex01.1"), o);
  CHECK(p.outcome == exercise::Outcome::Error);
  CHECK_THAT(p.message, ContainsSubstring("no program at /nonexistent"));
  CHECK_THAT(p.message, !ContainsSubstring("--target"));
}

// ---- progress ------------------------------------------------------------------------------
TEST_CASE("status.json: done when the last check passed, pending otherwise, never a crash",
          "[exercises][cpu]") {
  const fs::path d = temp_dir("status");
  const exercise::StatusStore store(d / "status.json");
  CHECK(store.load().empty());
  exercise::CheckResult r;
  r.outcome = exercise::Outcome::Pass;
  r.device = "cpu";
  store.record("ex01.1", r);
  CHECK(store.load().at("ex01.1").status == "done");
  r.outcome = exercise::Outcome::NeedsGpu;  // neither pass nor fail: no change
  store.record("ex01.1", r);
  CHECK(store.load().at("ex01.1").status == "done");
  r.outcome = exercise::Outcome::Fail;
  store.record("ex01.1", r);
  CHECK(store.load().at("ex01.1").status == "pending");
  CHECK(store.load().at("ex01.1").last == "fail");
  std::ofstream(d / "status.json") << "{ torn";
  std::string warning;
  CHECK(store.load(&warning).empty());
  CHECK_THAT(warning, ContainsSubstring("damaged"));
  store.record("ex01.2", r);  // rewrites a good file
  CHECK(store.load().count("ex01.2") == 1);
}

// ---- the command line ----------------------------------------------------------------------
namespace {
struct Cli {
  int rc = -1;
  std::string out;
};
// Runs the exercise tool with `args` (after --root this source tree, unless `root` is false);
// `out` holds its stdout and then its stderr.
Cli cli(std::vector<std::string> args, bool root = true) {
  const fs::path tool = bin_dir() / "exercise";
  if (!fs::exists(tool)) SKIP("exercise tool not built: " << tool.string());
  if (root) args.insert(args.begin(), {"--root", kRoot.string()});
  const proc::Exit e = proc::run(tool, args);
  return {e.code, e.out + e.err};
}
}  // namespace

TEST_CASE("exercise list / show / hint, and bad ids", "[exercises][cpu]") {
  const fs::path state = temp_dir("cli_state");
  const Cli list = cli({"--state", state.string(), "list"});
  CHECK(list.rc == 0);
  CHECK_THAT(list.out, ContainsSubstring("ex05.2"));
  CHECK_THAT(list.out, ContainsSubstring("pending"));
  CHECK_THAT(list.out, ContainsSubstring("needs one"));
  const Cli ids = cli({"list", "--ids"});
  CHECK(ids.rc == 0);
  CHECK(std::count(ids.out.begin(), ids.out.end(), '\n') == static_cast<long>(catalog().exercises.size()));
  const Cli show = cli({"show", "ex03.1"});
  CHECK(show.rc == 0);
  CHECK_THAT(show.out, ContainsSubstring("TODO(ex03.1)"));
  CHECK_THAT(show.out, ContainsSubstring("--target ex03_1_batch_axis"));
  // Hints in levels: level 1 by default, more with --level, the last one past the end.
  const auto& levels = ex("ex03.1").hints;
  REQUIRE(levels.size() == 3);
  const Cli hint = cli({"hint", "03.1"});
  CHECK(hint.rc == 0);
  CHECK_THAT(hint.out, ContainsSubstring(levels[0].substr(0, 25)));
  CHECK_THAT(hint.out, !ContainsSubstring(levels[1].substr(0, 25)));
  CHECK_THAT(hint.out, ContainsSubstring("--level 2"));
  for (int l = 2; l <= 3; ++l) {
    const Cli h = cli({"hint", "ex03.1", "--level", std::to_string(l)});
    CHECK(h.rc == 0);
    CHECK_THAT(h.out, ContainsSubstring(levels[static_cast<size_t>(l - 1)].substr(0, 25)));
  }
  const Cli past = cli({"hint", "ex03.1", "--level", "5"});
  CHECK(past.rc == 0);
  CHECK_THAT(past.out, ContainsSubstring(levels[2].substr(0, 25)));
  CHECK_THAT(past.out, ContainsSubstring("no level 5"));
  CHECK(cli({"hint", "ex03.1", "--level", "0"}).rc == 2);
  CHECK(cli({"check", "ex01.1", "--student", "../etc"}).rc == 2);  // not a name
  for (const char* sub : {"show", "hint", "check"}) {
    const Cli bad = cli({sub, "ex42.0"});
    INFO(bad.out);
    CHECK(bad.rc == 2);
    CHECK_THAT(bad.out, ContainsSubstring("unknown exercise 'ex42.0'"));
    CHECK_THAT(bad.out, ContainsSubstring("ex01.1, ex01.2"));
  }
  CHECK(cli({"check"}).rc == 2);                               // no id
  CHECK(cli({"check", "ex01.1", "--device", "tpu"}).rc == 2);  // bad flag value
  CHECK(cli({"frobnicate"}).rc == 2);                          // bad subcommand
  for (const auto& help : std::vector<std::vector<std::string>>{
           {"--help"}, {"list", "--help"}, {"show", "--help"}, {"hint", "--help"}, {"check", "--help"}}) {
    const Cli h = cli(help);
    INFO(help.front() << " " << help.back());
    CHECK(h.rc == 0);
    CHECK_THAT(h.out, ContainsSubstring("Usage"));
  }
  // show --student: the Run and Check lines to copy carry the name (without it the program and
  // the check run the defaults, not this learner's variation).
  const Cli mine = cli({"show", "ex01.3", "--student", "ada"});
  INFO(mine.out);
  CHECK(mine.rc == 0);
  CHECK_THAT(mine.out, ContainsSubstring("ex01_3_dead_window --student ada   (writes"));
  CHECK_THAT(mine.out, ContainsSubstring("check ex01.3 --student ada\n"));
  CHECK_THAT(cli({"show", "ex01.3"}).out, !ContainsSubstring("--student ada"));
  // check --program with no such file: said as such, exit 2, no build advice for a target
  // named after it.
  const Cli missing = cli({"check", "ex01.1", "--device", "cpu", "--program", "/nonexistent"});
  INFO(missing.out);
  CHECK(missing.rc == 2);
  CHECK_THAT(missing.out, ContainsSubstring("no such file: /nonexistent"));
  CHECK_THAT(missing.out, !ContainsSubstring("cmake --build"));
  const Cli folder = cli({"check", "ex01.1", "--device", "cpu", "--program", kRoot.string()});
  CHECK(folder.rc == 2);
  CHECK_THAT(folder.out, ContainsSubstring("is a folder, not a program"));
  const Cli nowhere = cli({"--root", "/nonexistent", "list"}, false);
  CHECK(nowhere.rc == 3);  // no catalog there: said, not crashed
  CHECK_THAT(nowhere.out, ContainsSubstring("cannot open the exercise catalog"));
}

TEST_CASE("exercise check records progress, and list shows it", "[exercises][cpu]") {
  const fs::path state = temp_dir("cli_progress");
  if (!fs::exists(bin_dir() / "ex02_3_schedule_solution")) SKIP("solutions not built");
  const Cli stub = cli({"--state", state.string(), "check", "ex02.3", "--device", "cpu"});
  INFO(stub.out);
  CHECK(stub.rc == 1);
  CHECK_THAT(stub.out, ContainsSubstring("NOT YET"));
  // check says that a hint exists, and never prints one by itself.
  CHECK_THAT(stub.out, ContainsSubstring("A hint is available: exercise hint ex02.3"));
  for (const auto& level : ex("ex02.3").hints) {
    std::istringstream in(level);
    for (std::string line; std::getline(in, line);)
      if (line.size() > 20) CHECK_THAT(stub.out, !ContainsSubstring(line));
  }
  CHECK(exercise::StatusStore(state / "status.json").load().at("ex02.3").status == "pending");
  // The solution program, checked as a submission with --program: the answer is right, and
  // checks of a given program are not recorded as the learner's progress.
  const Cli sol = cli({"--state", state.string(), "check", "ex02.3", "--device", "cpu", "--program",
                       (bin_dir() / "ex02_3_schedule_solution").string()});
  INFO(sol.out);
  CHECK(sol.rc == 0);
  CHECK_THAT(sol.out, ContainsSubstring("PASS"));
  CHECK(exercise::StatusStore(state / "status.json").load().at("ex02.3").status == "pending");
  const Cli gpu = cli({"--state", state.string(), "check", "ex05.2", "--device", "cpu"});
  CHECK(gpu.rc == 4);
  CHECK_THAT(gpu.out, ContainsSubstring("NEEDS A GPU"));
}

// ---- gaming attempts: each one is rejected --------------------------------------------------------
TEST_CASE("gaming: ex04.3 with the .item() line deleted fails on the checksum's value", "[exercises][cpu]") {
  json run = kRun64;
  run["steps_run"] = 5;
  run["reference"] = {{"checksum_per_step", 812.25}};
  // No aten::item in the steps (py_cpu_64 has none), but the checksum was never computed: 0.
  const exercise::CheckResult deleted =
      judge_as("ex04.3", make_run("g_del", kData / "py_cpu_64.json", run, {{"checksum", 0.0}}));
  CHECK(deleted.outcome == exercise::Outcome::Fail);
  CHECK(deleted.first_failed == ex("ex04.3").checks[1].pattern.text);
  // Only one step's worth (the sum read once instead of accumulated): wrong too.
  CHECK(judged("ex04.3", make_run("g_one", kData / "py_cpu_64.json", run, {{"checksum", 812.25}})) ==
        exercise::Outcome::Fail);
  CHECK(judged("ex04.3", make_run("g_ok", kData / "py_cpu_64.json", run, {{"checksum", 5 * 812.25}})) ==
        exercise::Outcome::Pass);
}

TEST_CASE("gaming: ex04.1 with a hard-coded number fails on the probe", "[exercises][cpu]") {
  const fs::path t = kData / "h200_4096_warm.json.gz";
  const wb::Trace trace = wb::read_trace(t);
  wb::FactOptions o;
  o.problem = wb::Problem::square(4096, 1, 2);
  const double lesson =
      wb::compute_fact("throughput", wb::TraceModel(trace), o).data.at("gemm_tflops").get<double>();
  // A function that returns 800 (the H200's number, within 5% of this trace) for any input.
  const double typed = 800.0;
  REQUIRE(std::fabs(typed - lesson) / lesson <= 0.05);
  const exercise::CheckResult r = judge_as(
      "ex04.1", make_run("g_800", t, kRun4096, {{"achieved_tflops", typed}, {"probe_tflops", typed}}));
  CHECK(r.outcome == exercise::Outcome::Fail);
  CHECK(r.first_failed == ex("ex04.1").checks[1].pattern.text);
  // Another learner's correct probe answer does not fit this learner's probe.
  auto probe_of = [](const std::string& who) {
    const json v = exercise::variation(ex("ex04.1"), who);
    return 2.0 * v["probe_batch"].get<double>() * std::pow(v["probe_n"].get<double>(), 3) /
           (v["probe_us"].get<double>() * 1e-6) / 1e12;
  };
  REQUIRE(probe_of("ada") != probe_of("cy"));
  json run = kRun4096;
  run["size"] = exercise::variation(ex("ex04.1"), "cy")["size"];
  const exercise::CheckResult copied = judge_as(
      "ex04.1", make_run("g_copy", t, run, {{"achieved_tflops", lesson}, {"probe_tflops", probe_of("ada")}}),
      "cy");
  CHECK(copied.outcome == exercise::Outcome::Fail);
}

TEST_CASE("gaming: ex02.1 with the schedule changed instead of a warm-up fails", "[exercises][cpu]") {
  // The chapters' 1,1,3 keeps the first call's setup in an unrecorded step: the trace is clean,
  // but the recorded steps are #2..#4, not the stub's #0..#2.
  const exercise::CheckResult r =
      judge_as("ex02.1", make_run("g_sched", kData / "h200_64_first_call.json", kRun64));
  CHECK(r.outcome == exercise::Outcome::Fail);
  CHECK(r.first_failed == ex("ex02.1").checks[0].pattern.text);
  const exercise::CheckResult clean =
      judge_as("ex02.1", make_run("g_sched2", kData / "h200_64_cold.json", kRun64));
  CHECK(clean.outcome == exercise::Outcome::Fail);
  CHECK(clean.first_failed == ex("ex02.1").checks[0].pattern.text);
}

TEST_CASE("gaming: ex04.2 with enough samples but no median/mean, or typed-in ones, fails",
          "[exercises][cpu]") {
  const std::vector<double> us = {410, 402.5, 399, 405, 650,   401,   398,   404,  400, 403,
                                  407, 399.5, 402, 415, 401.5, 400.5, 398.5, 2100, 406, 403.5};
  const fs::path t = mm_trace(us, "g_dist");
  const json run = {{"size", 512}, {"batch", 1}, {"dtype_bytes", 4}, {"annotation", "matmul_add"}};
  CHECK(judged("ex04.2", make_run("g_none", t, run)) == exercise::Outcome::Fail);
  CHECK(judged("ex04.2", make_run("g_typed", t, run, {{"median_us", 400.0}, {"mean_us", 400.0}})) ==
        exercise::Outcome::Fail);
  // The lower middle value for an even count is not the median either.
  std::vector<double> sorted = us;
  std::sort(sorted.begin(), sorted.end());
  REQUIRE(sorted[9] != sorted[10]);
  CHECK(
      judged("ex04.2", make_run("g_lower", t, run, {{"median_us", sorted[9]}, {"mean_us", wb::mean(us)}})) ==
      exercise::Outcome::Fail);
  CHECK(judged("ex04.2",
               make_run("g_ok", t, run, {{"median_us", wb::median(us)}, {"mean_us", wb::mean(us)}})) ==
        exercise::Outcome::Pass);
  // Too few samples for the variation's minimum, answers right or not.
  const std::vector<double> few(us.begin(), us.begin() + 5);
  CHECK(judged("ex04.2", make_run("g_few", mm_trace(few, "g_few"), run,
                                  {{"median_us", wb::median(few)}, {"mean_us", wb::mean(few)}})) ==
        exercise::Outcome::Fail);
}

TEST_CASE("gaming: ex01.3's chapter-schedule answer fails under a learner's own schedule",
          "[exercises][cpu]") {
  // A learner whose schedule waits longer keeps other steps: the widest gap is in their own first
  // recorded step, not in ProfilerStep#2 (the answer for the chapters' 1,1,3).
  std::string learner;
  for (const char* who : {"ada", "ben", "cy", "dee", "eli", "fay", "gus", "hal"}) {
    const std::string sched = exercise::variation(ex("ex01.3"), who)["schedule"];
    if (sched != "1,1,3" && wb::Schedule::parse(sched).active == 3) {  // py_cpu_64 recorded three steps
      learner = who;
      break;
    }
  }
  REQUIRE(!learner.empty());
  const wb::Schedule s =
      wb::Schedule::parse(exercise::variation(ex("ex01.3"), learner)["schedule"].get<std::string>());
  const int first = s.wait + s.warmup;
  const fs::path t = shift_steps(kData / "py_cpu_64.json", first - 2, "g_dw");
  const json chapter_answer = {{"dead_window_step", 2}, {"first_op_after_gap", "aten::matmul"}};
  CHECK(judge_as("ex01.3", make_run("g_dw_copy", t, kRun64, chapter_answer), learner).outcome ==
        exercise::Outcome::Fail);
  const json own = {{"dead_window_step", first}, {"first_op_after_gap", "aten::matmul"}};
  CHECK(judge_as("ex01.3", make_run("g_dw_own", t, kRun64, own), learner).outcome == exercise::Outcome::Pass);
  // Someone else's whole run folder, handed in under this learner's name: not their variation.
  const exercise::CheckResult theirs =
      judge_as("ex01.3", make_run("g_dw_theirs", kData / "py_cpu_64.json", kRun64, chapter_answer), "");
  CHECK(theirs.outcome == exercise::Outcome::Pass);
  json theirs_run = kRun64;
  theirs_run["student"] = "";
  theirs_run["variation"] = exercise::variation(ex("ex01.3"), "");
  CHECK(exercise::judge(ex("ex01.3"),
                        make_run("g_dw_theirs2", kData / "py_cpu_64.json", theirs_run, chapter_answer),
                        learner)
            .outcome == exercise::Outcome::Fail);
}

// ---- gaming attempts: the workload and a fresh run are checked before the exercise's checks
namespace {
const std::string kWorkloadText =
    "the exercise's workload ran as specified: its ops, their counts, its results";
const std::string kFreshText = "the run is fresh: its trace carries this check's one-time token";

exercise::CheckResult check_program(const std::string& id, const fs::path& program, const std::string& tag,
                                    const std::string& student = "") {
  if (!fs::exists(program)) {
    if (program.filename().string().find("_solution") != std::string::npos && !solutions_expected())
      SKIP("solutions not built (no solutions/ folder, or WORKBOOK_EXERCISE_SOLUTIONS=OFF)");
    FAIL("not built: " << program.string());
  }
  exercise::CheckOptions o;
  o.program = program;
  o.device = "auto";  // the GPU where there is one: the tricks are caught on both
  o.student = student;
  o.out_dir = temp_dir(tag);
  o.timeout_s = 600;
  const exercise::CheckResult r = exercise::check_exercise(ex(id), o);
  UNSCOPED_INFO(exercise::render(ex(id), r));
  return r;
}

// A program that runs nothing: a shell script that copies a saved run into its --out.
fs::path replay_script(const fs::path& saved, const std::string& tag) {
  const fs::path script = temp_dir(tag) / "replay.sh";
  std::ofstream(script) << "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = --out ] && out=$2; shift; done\n"
                        << "cp -r '" << saved.string() << "'/. \"$out\"/\n";
  fs::permissions(script, fs::perms::owner_all, fs::perm_options::add);
  return script;
}
}  // namespace

TEST_CASE("gaming: ex01.1 with the add_ loop deleted and the new top op as the answer is caught",
          "[exercises][cpu]") {
  // tests/gaming/ex01_1_loop_deleted.cpp: the table sorted by calls, aten::resolve_conj named.
  const exercise::CheckResult r = check_program("ex01.1", bin_dir() / "gaming_ex01_1_loop_deleted", "g_loop");
  CHECK(r.outcome == exercise::Outcome::Fail);
  CHECK(r.first_failed == kWorkloadText);
  REQUIRE(!r.verdicts.empty());
  CHECK_THAT(r.verdicts[1].fact.value,
             ContainsSubstring("aten::add_ x0 per step (the exercise runs it x16)"));
  CHECK_THAT(r.verdicts[1].fact.value, ContainsSubstring("% from x @ w + 17 b"));
}

TEST_CASE("gaming: ex08.1 with an update that changes nothing, w.sub_(g, 0.0), is caught",
          "[exercises][cpu]") {
  // tests/gaming/ex08_1_update_neutralised.cpp: in place, no allocation, and no update.
  const exercise::CheckResult r =
      check_program("ex08.1", bin_dir() / "gaming_ex08_1_update_neutralised", "g_sub0");
  CHECK(r.outcome == exercise::Outcome::Fail);
  CHECK(r.first_failed == kWorkloadText);
  REQUIRE(r.verdicts.size() > 1);
  CHECK_THAT(r.verdicts[1].fact.value, ContainsSubstring("holds 0.00 updates"));
}

TEST_CASE(
    "gaming: every exercise's workload ops, one call deleted from a step of the solution's run, is caught",
    "[exercises][cpu]") {
  // For each exercise that names its ops: the reference solution's real run passes; the same
  // run with one call of each named op deleted from its last recorded step (what a program that
  // skips part of its workload there leaves) fails on the workload, first.
  int judged = 0;
  for (const auto& e : catalog().exercises) {
    const json ops = e.workload.value("ops", json::object());
    if (ops.empty() || (e.needs_gpu && !exercise::gpu_present())) continue;
    INFO(e.id);
    const exercise::CheckResult r =
        check_program(e.id, bin_dir() / (e.name + "_solution"), "g_ops_" + e.name);
    REQUIRE(r.outcome == exercise::Outcome::Pass);
    const std::string token = exercise::trace_token(r.out_dir / "trace.json");
    REQUIRE(!token.empty());
    const json trace = json::parse(slurp(r.out_dir / "trace.json"));
    double last_step_ts = -1;
    for (const auto& ev : trace["traceEvents"])
      if (wb::is_step_name(ev.value("name", ""))) last_step_ts = std::max(last_step_ts, ev.value("ts", 0.0));
    REQUIRE(last_step_ts >= 0);
    for (const auto& [op, n] : ops.items()) {
      if (n.get<long long>() == 0) continue;
      INFO(op);
      json doctored = trace;
      auto& evs = doctored["traceEvents"];
      bool removed = false;
      for (auto it = evs.begin(); it != evs.end() && !removed; ++it)
        if (it->value("cat", "") == "cpu_op" && it->value("name", "") == op &&
            it->value("ts", 0.0) >= last_step_ts) {
          evs.erase(it);
          removed = true;
        }
      REQUIRE(removed);
      const fs::path d = temp_dir("g_ops_" + e.name + "_doctored");
      for (const char* f : {"run.json", "answer.json", "table.txt"})
        if (fs::exists(r.out_dir / f)) fs::copy_file(r.out_dir / f, d / f);
      std::ofstream(d / "trace.json") << doctored.dump();
      const exercise::CheckResult bad = exercise::judge(e, d, "", token);
      INFO(exercise::render(e, bad));
      CHECK(bad.outcome == exercise::Outcome::Fail);
      CHECK(bad.first_failed == kWorkloadText);
      ++judged;
    }
  }
  CHECK(judged >= 15);  // the CPU exercises' named ops (fewer would mean the catalog lost them)
}

TEST_CASE("gaming: a replayed run, passed off as the program, is caught (ex01.1; ex01.3 as a learner)",
          "[exercises][cpu]") {
  // A passing run of the solution, saved; then a script that copies it into --out.
  const exercise::CheckResult saved =
      check_program("ex01.1", bin_dir() / "ex01_1_hot_loop_solution", "g_replay_saved");
  REQUIRE(saved.outcome == exercise::Outcome::Pass);
  const exercise::CheckResult replayed =
      check_program("ex01.1", replay_script(saved.out_dir, "g_replay_sh"), "g_replay");
  CHECK(replayed.outcome == exercise::Outcome::Fail);
  CHECK(replayed.first_failed == kFreshText);
  CHECK_THAT(replayed.verdicts.front().fact.value, ContainsSubstring("another run's token"));
  // A learner replaying their own earlier passing run of a varied exercise.
  const exercise::CheckResult own =
      check_program("ex01.3", bin_dir() / "ex01_3_dead_window_solution", "g_replay_own_saved", "ada");
  REQUIRE(own.outcome == exercise::Outcome::Pass);
  const exercise::CheckResult again =
      check_program("ex01.3", replay_script(own.out_dir, "g_replay_own_sh"), "g_replay_own", "ada");
  CHECK(again.outcome == exercise::Outcome::Fail);
  CHECK(again.first_failed == kFreshText);
}

TEST_CASE("gaming: a replayed run fails the freshness check of every exercise", "[exercises][cpu]") {
  // Every exercise, judged on a recorded GPU trace as a check would judge a copied folder: with
  // no token in the trace, and with another check's token in it. Without a token to compare (a
  // handed-in folder, `exercise grade`) the check is not made.
  const fs::path src = kData / "h200_64_cold.json";
  json t = json::parse(slurp(src));
  t[exercise::kRunTokenKey] = "0123456789abcdef0123456789abcdef";
  const fs::path stamped = temp_dir("g_fresh_src") / "trace.json";
  std::ofstream(stamped) << t.dump();
  CHECK(exercise::trace_token(stamped) == "0123456789abcdef0123456789abcdef");
  CHECK(exercise::trace_token(src).empty());
  json run = kRun64;
  run["device"] = "cuda";
  for (const auto& e : catalog().exercises) {
    INFO(e.id);
    for (const fs::path& trace : {src, stamped}) {
      const fs::path d = as_run_of(e.id, make_run("g_fresh_" + e.name, trace, run));
      const exercise::CheckResult r = exercise::judge(e, d, "", "fedcba9876543210fedcba9876543210");
      CHECK(r.outcome == exercise::Outcome::Fail);
      CHECK(r.first_failed == kFreshText);
      const exercise::CheckResult without = exercise::judge(e, d, "");
      for (const auto& v : without.verdicts) CHECK(v.fact.id != "fresh_run");
    }
  }
}

TEST_CASE("workload: a broken \"workload\" in the catalog says where", "[exercises][cpu]") {
  auto broken = [](const std::string& workload) {
    return R"({"version": 1, "exercises": [{"id": "ex09.9", "name": "x", "chapter": "c", "title": "t",
              "task": "t", "hint": "h", "workload": )" +
           workload +
           R"(, "checks": [{"fact": "steps", "text": "t", "all": [{"key": "/first", "op": "==", "value": 1}]}]}]})";
  };
  CHECK_THROWS_WITH(exercise::parse_catalog(broken(R"({"ops": {"aten::mm": -1}})")),
                    ContainsSubstring("workload.ops.aten::mm"));
  CHECK_THROWS_WITH(exercise::parse_catalog(broken(R"({"opz": {}})")), ContainsSubstring("unknown key"));
  CHECK_THROWS_WITH(exercise::parse_catalog(broken(R"({"values": "y"})")),
                    ContainsSubstring("array of value names"));
  CHECK_NOTHROW(exercise::parse_catalog(broken(R"({"ops": {"aten::mm": 2}, "values": ["y"]})")));
}

// ---- the GPU-only exercises on recorded H200 traces: the stub's trace fails the intended check ---
TEST_CASE("GPU-only exercises: a stub-shaped H200 trace fails the intended check", "[exercises][cpu]") {
  struct Case {
    const char* id;
    fs::path trace;
  };
  const std::vector<Case> cases = {
      {"ex02.1", shift_steps(kData / "h200_64_first_call.json", -2, "i21")},  // cold, stub's schedule
      {"ex02.2", kData / "h200_64_cold.json"},                                // 1,1,3: no buffer request
      {"ex05.2", kData / "h200_64_cold.json"},                                // eager: two launches a step
  };
  for (const auto& c : cases) {
    INFO(c.id);
    const exercise::Exercise& e = ex(c.id);
    REQUIRE(e.needs_gpu);
    const exercise::CheckResult r = judge_as(c.id, make_run(std::string("i_") + c.id, c.trace, kRun64));
    CHECK(r.outcome == exercise::Outcome::Fail);
    const exercise::CheckVerdict* v = verdict_of(r, e, static_cast<size_t>(e.stub_fails));
    REQUIRE(v != nullptr);
    CHECK(v->fact.status == wb::Status::Fail);
  }
}

// ---- chapters 06 and 07 on their H200 recordings: the GPU halves of ex06.* and ex07.* -----------
namespace {

const fs::path kH200 = kRoot / "expected_output" / "h200";
// What an ex06/ex07 program's run.json says on a GPU (the chapters' 1,1,3 is every varied
// exercise's default schedule, and the recordings keep ProfilerStep#2..#4).
const json kRunLinear = {{"device", "cuda"}, {"size", 1024}, {"batch", 1}, {"dtype_bytes", 2}};

// A recorded trace, edited by `edit`, written to a scratch file: the events stay as the real run
// recorded them, except for what `edit` changes.
template <typename Edit>
fs::path edited_trace(const fs::path& trace, const std::string& tag, Edit edit) {
  json t = json::parse(slurp(trace));
  edit(t["traceEvents"]);
  const fs::path p = temp_dir(tag + "_edit") / "trace.json";
  std::ofstream(p) << t.dump();
  return p;
}

// Chapter 07's eager recording as ex07.1's solution runs it: gate and up as one GEMM. In each
// step the second aten::matmul (up's) goes, with everything the CPU did inside it and the device
// work (GEMM kernel, workspace memset) and flow arrows its launches started.
fs::path gate_up_as_one(const std::string& tag) {
  return edited_trace(kH200 / "07_geglu_mlp" / "eager" / "trace.json", tag, [](json& ev) {
    std::vector<const json*> steps, matmuls;
    for (const auto& e : ev) {
      if (e.value("ph", "") != "X") continue;
      const std::string name = e.value("name", "");
      if (wb::is_step_name(name)) steps.push_back(&e);
      if (name == "aten::matmul") matmuls.push_back(&e);
    }
    std::vector<std::pair<double, double>> drop;  // [begin, end] on the CPU thread
    for (const json* s : steps) {
      std::vector<const json*> in;
      for (const json* m : matmuls)
        if ((*m)["ts"].get<double>() >= (*s)["ts"].get<double>() &&
            (*m)["ts"].get<double>() <= (*s)["ts"].get<double>() + (*s)["dur"].get<double>())
          in.push_back(m);
      std::sort(in.begin(), in.end(), [](const json* a, const json* b) {
        return (*a)["ts"].get<double>() < (*b)["ts"].get<double>();
      });
      REQUIRE(in.size() == 3);  // gate, up, down
      drop.emplace_back(in[1]->at("ts").get<double>(),
                        in[1]->at("ts").get<double>() + in[1]->at("dur").get<double>());
    }
    std::set<int64_t> correlations;
    json kept = json::array();
    // A CPU event within a dropped matmul (device events, on pid 0, go by their correlation).
    auto inside = [&](const json& e) {
      if (e.value("ph", "") != "X" || (e.contains("pid") && e["pid"] == 0)) return false;
      const double ts = e.value("ts", 0.0), end = ts + e.value("dur", 0.0);
      for (const auto& [b, en] : drop)
        if (ts >= b && end <= en + 0.01) return true;
      return false;
    };
    for (const auto& e : ev)
      if (inside(e) && e.contains("args") && e["args"].contains("correlation"))
        correlations.insert(e["args"]["correlation"].get<int64_t>());
    int dropped_mm = 0;
    for (const auto& e : ev) {
      if (inside(e)) {
        dropped_mm += e.value("name", "") == "aten::mm";
        continue;
      }
      if (e.contains("args") && e["args"].contains("correlation") &&
          correlations.count(e["args"]["correlation"].get<int64_t>()))
        continue;
      if (e.value("cat", "") == "ac2g" && e.contains("id") && correlations.count(e["id"].get<int64_t>()))
        continue;
      kept.push_back(e);
    }
    REQUIRE(dropped_mm == 3);  // one per recorded step
    REQUIRE(correlations.size() >= 3);
    ev = kept;
  });
}

// Chapter 07's eager recording as ex07.2's solution runs it: the product in place. aten::mul_
// launches the same MulFunctor kernel as aten::mul; only the op's name changes.
fs::path mul_in_place(const std::string& tag) {
  return edited_trace(kH200 / "07_geglu_mlp" / "eager" / "trace.json", tag, [](json& ev) {
    int renamed = 0;
    for (auto& e : ev)
      if (e.value("cat", "") == "cpu_op" && e.value("name", "") == "aten::mul") {
        e["name"] = "aten::mul_";
        ++renamed;
      }
    REQUIRE(renamed == 3);
  });
}

}  // namespace

TEST_CASE("chapters 06 and 07 on their H200 recordings: the GPU checks of ex06.* and ex07.*",
          "[exercises][cpu]") {
  using S = wb::Status;
  struct Case {
    const char* id;
    std::string trace_name;
    fs::path trace;
    exercise::Outcome outcome;
    std::vector<S> checks;  // the catalog's checks, in order
  };
  using O = exercise::Outcome;
  auto ch06 = [](const char* variant) { return kH200 / "06_linear" / variant / "trace.json"; };
  auto ch07 = [](const char* variant) { return kH200 / "07_geglu_mlp" / variant / "trace.json"; };
  const std::vector<Case> cases = {
      // ex06.1's target is chapter 06's eager step: one addmm, W^T a view, one kernel.
      {"ex06.1", "06 eager", ch06("eager"), O::Pass, {S::Pass, S::Pass, S::Pass, S::Pass}},
      {"ex06.1", "06 no_bias", ch06("no_bias"), O::Fail, {S::Fail, S::Pass, S::Pass, S::Pass}},
      {"ex06.1", "06 aoti", ch06("aoti"), O::Fail, {S::Fail, S::Fail, S::Pass, S::Pass}},
      // ex06.2's target (mm on the view) is chapter 06's no_bias step.
      {"ex06.2", "06 no_bias", ch06("no_bias"), O::Pass, {S::Pass, S::Pass, S::Pass}},
      {"ex06.2", "06 eager", ch06("eager"), O::Fail, {S::Fail, S::Pass, S::Pass}},
      // ex07.1: eager runs three GEMMs (5 kernels); the fused variants fuse the pointwise pair,
      // not the GEMMs (still 3 GEMM kernels, and no aten::mm / aten::gelu left to count).
      {"ex07.1", "07 eager", ch07("eager"), O::Fail, {S::Fail, S::Fail}},
      {"ex07.1", "07 aoti", ch07("aoti"), O::Fail, {S::Fail, S::Fail}},
      {"ex07.1", "07 handwritten", ch07("handwritten"), O::Fail, {S::Fail, S::Fail}},
      {"ex07.1", "07 eager, gate+up as one GEMM", gate_up_as_one("e71"), O::Pass, {S::Pass, S::Pass}},
      // ex07.2: eager still has aten::mul, but its two pointwise kernels are what the GPU check
      // wants; a fused kernel is one pointwise kernel, so the fused variants fail both.
      {"ex07.2", "07 eager", ch07("eager"), O::Fail, {S::Fail, S::Pass}},
      {"ex07.2", "07 aoti", ch07("aoti"), O::Fail, {S::Fail, S::Fail}},
      {"ex07.2", "07 handwritten", ch07("handwritten"), O::Fail, {S::Fail, S::Fail}},
      {"ex07.2", "07 eager, mul in place", mul_in_place("e72"), O::Pass, {S::Pass, S::Pass}},
  };
  int n = 0;
  for (const auto& c : cases) {
    const exercise::Exercise& e = ex(c.id);
    const exercise::CheckResult r =
        judge_as(c.id, make_run("h200_" + std::to_string(n++), c.trace, kRunLinear));
    INFO(c.id << " on " << c.trace_name << "\n" << exercise::render(e, r));
    REQUIRE(r.device == "cuda");
    CHECK(r.outcome == c.outcome);
    CHECK(r.skipped == 0);  // a GPU trace: every check judged, its GPU conditions included
    REQUIRE(c.checks.size() == e.checks.size());
    for (size_t i = 0; i < c.checks.size(); ++i) {
      INFO("check " << i << ": " << e.checks[i].pattern.text);
      const exercise::CheckVerdict* v = verdict_of(r, e, i);
      REQUIRE(v != nullptr);
      CHECK(v->fact.status == c.checks[i]);
    }
  }
  // The stubs' intended check (stub_fails) fails on the recording of the stub's own step: ex07.1's
  // and ex07.2's stubs run chapter 07's eager MLP.
  for (const char* id : {"ex07.1", "ex07.2"}) {
    INFO(id);
    const exercise::Exercise& e = ex(id);
    const exercise::CheckResult r =
        judge_as(id, make_run(std::string("h200_stub_") + id, ch07("eager"), kRunLinear));
    const exercise::CheckVerdict* v = verdict_of(r, e, static_cast<size_t>(e.stub_fails));
    REQUIRE(v != nullptr);
    CHECK(v->fact.status == S::Fail);
  }
}

// ---- no answer where a learner reads before solving --------------------------------------------
TEST_CASE("no leaked answers: headers, READMEs, stubs and first hints", "[exercises][cpu]") {
  // What a learner must not find: each exercise's answer, as a solution writes it.
  // Matched without regard to case: `W.t()` in a README is the same answer as `w.t()`.
  const std::vector<std::pair<std::string, std::string>> answers = {
      {"ex01.1", "sort_by = \"count\""},
      {"ex01.1", "\"aten::add_\""},
      {"ex01.2", "annotation bias(\"bias_add\")"},
      {"ex01.2", "annotation r(\"bias_add\")"},
      {"ex01.3", "kDeadWindowStep = 2"},
      {"ex02.3", "\"2,1,5\""},
      {"ex02.3", "std::to_string(first - 1)"},
      {"ex03.2", "matmul(x, w1)"},
      {"ex03.2", "auto w = w1;"},
      {"ex04.1", "2.0 * nd * nd * nd"},
      {"ex04.2", "\"0,0,20\""},
      {"ex04.2", "samples[h - 1] + samples[h]"},
      {"ex04.3", "total.add_("},
      {"ex05.1", "torch::addmm(b, x, w)"},
      {"ex05.2", "capture_begin();"},
      {"ex06.1", "addmm(b, x, w.t())"},
      {"ex06.2", "auto wt = w.t();"},
      {"ex07.1", "cat({w_gate, w_up})"},
      {"ex07.1", "narrow(-1, 0, hidden)"},
      {"ex07.2", "y.mul_(u)"},
      {"ex07.2", "(`mul_`)"},
      {"ex09.1", "index_copy_(2, positions"},
      {"ex09.2", "at::rms_norm(x"},
      {"ex10.1", "graph->capture_begin();"},
      {"ex10.2",
       "addmm(x, a, w.t())"},  // the op the learner is to find, as a README's exercise title once gave it
      {"ex11.1", "mv(w, x)"},
      {"ex11.2", "linear(h, wg)"},
  };
  std::vector<fs::path> read_first = {kRoot / "exercises" / "common" / "exercise.hpp",
                                      kRoot / "exercises" / "README.md", kRoot / "README.md"};
  for (const auto& d : fs::directory_iterator(kRoot / "chapters"))
    if (fs::exists(d.path() / "README.md")) read_first.push_back(d.path() / "README.md");
  for (const auto& e : catalog().exercises) read_first.push_back(kRoot / "exercises" / e.name / "main.cpp");
  for (const auto& file : read_first) {
    const std::string text = slurp(file);
    for (const auto& [id, answer] : answers) {
      // Chapter 05 teaches the addmm rewrite itself; ex05.1 asks the learner to redo it by hand.
      if (id == "ex05.1" && file.parent_path().filename() == "05_compiled_addmm") continue;
      INFO(file.string() << ": " << id << ": " << answer);
      CHECK_THAT(text, !ContainsSubstring(answer, Catch::CaseSensitive::No));
    }
  }
  // The chapter 01 README must not give ex01.3's step/op pair.
  CHECK_THAT(slurp(kRoot / "chapters" / "01_cold_64" / "README.md"),
             !ContainsSubstring("step 2, `aten::matmul`", Catch::CaseSensitive::No));
  // Nor in any exercise's title, task or level-1 hint (its own or another's).
  for (const auto& e : catalog().exercises)
    for (const auto& [id, answer] : answers) {
      INFO(e.id << " title/task/level-1 hint: " << id << ": " << answer);
      CHECK_THAT(e.title, !ContainsSubstring(answer, Catch::CaseSensitive::No));
      CHECK_THAT(e.hints.front(), !ContainsSubstring(answer, Catch::CaseSensitive::No));
      CHECK_THAT(e.task, !ContainsSubstring(answer, Catch::CaseSensitive::No));
    }
  // The exercise tables show the catalog's title (the index may add what the task asks, not what
  // the learner is to find): a title reworded in one place is reworded in all of them.
  const std::string index = slurp(kRoot / "exercises" / "README.md");
  for (const auto& e : catalog().exercises) {
    INFO(e.id << " title: " << e.title);
    CHECK_THAT(index, ContainsSubstring("| " + e.id + " | " + e.chapter + " | " + e.title));
    CHECK_THAT(slurp(kRoot / "chapters" / e.chapter / "README.md"), ContainsSubstring("| " + e.title + " |"));
  }
}

// ---- variation --------------------------------------------------------------------------------
TEST_CASE("variation: the same name gives the same problem, names differ, no name is the default",
          "[exercises][cpu]") {
  const auto& e = ex("ex04.1");
  CHECK(exercise::variation(e, "ada") == exercise::variation(e, "ada"));
  CHECK(exercise::variation(e, "") ==
        json({{"cpu_size", 512}, {"probe_batch", 3}, {"probe_n", 1000}, {"probe_us", 500}, {"size", 4096}}));
  std::set<std::string> seen;
  for (const char* who : {"ada", "ben", "cy", "dee", "eli", "fay", "gus", "hal"})
    seen.insert(exercise::variation(e, who).dump());
  CHECK(seen.size() >= 6);                                  // 7*5*6*3*4 combinations: collisions are rare
  CHECK(exercise::variation(ex("ex01.1"), "ada").empty());  // an exercise without "vary": nothing varies
  CHECK(exercise::valid_student_name("ada.l-2_x"));
  CHECK_FALSE(exercise::valid_student_name(""));
  CHECK_FALSE(exercise::valid_student_name("../x"));
  CHECK_FALSE(exercise::valid_student_name("a b"));
}

TEST_CASE("the catalog stays backward compatible: one hint is level 1, no vary is no variation",
          "[exercises][cpu]") {
  const exercise::Catalog c = exercise::parse_catalog(
      R"({"exercises": [{"id": "ex09.1", "name": "ex09_1_x", "chapter": "c", "title": "t", "task": "t",
          "hint": ["one line", "two lines"],
          "checks": [{"fact": "steps", "text": "t", "all": [{"key": "/first", "op": "==", "value": 3}]}]}]})");
  const exercise::Exercise& e = c.exercises.front();
  CHECK(e.hints.size() == 1);
  CHECK(e.hint == "one line\ntwo lines\n");
  CHECK(e.vary.empty());
  CHECK(e.stub_fails == -1);
  CHECK(exercise::variation(e, "ada").empty());
  // A {"var": KEY} that names no varied key is an error that says so.
  CHECK_THROWS_WITH(
      exercise::parse_catalog(
          R"({"exercises": [{"id": "ex09.1", "name": "ex09_1_x", "chapter": "c", "title": "t", "task": "t",
                            "hint": "h", "checks": [{"fact": "steps", "text": "t", "all": [{"key": "/first", "op": "==", "value": {"var": "nope"}}]}]}]})"),
      ContainsSubstring("must name a key of \"vary\""));
}

// ---- grading a class ----------------------------------------------------------------------------
// Three learners, their submissions made by running the real programs: ada did everything,
// ben only ex02.3, cy copied ada -- her answers into his own runs, her schedule into his ex02.3,
// and her whole ex04.1 folder. The per-learner variation catches every copy.
TEST_CASE("grade: a class of three, the copier caught", "[exercises][cpu]") {
  for (const char* p : {"ex01_3_dead_window", "ex01_3_dead_window_solution", "ex02_3_schedule",
                        "ex02_3_schedule_solution", "ex04_1_tflops_by_hand_solution"})
    if (!fs::exists(bin_dir() / p)) SKIP(std::string(p) + " not built");
  const std::vector<std::string> ids = {"ex01.3", "ex02.3", "ex04.1"};
  for (const auto& id : ids) {
    INFO(id);
    REQUIRE(exercise::variation(ex(id), "ada") != exercise::variation(ex(id), "cy"));  // the premise
  }
  auto first_step = [](const std::string& who) {
    const wb::Schedule s =
        wb::Schedule::parse(exercise::variation(ex("ex01.3"), who)["schedule"].get<std::string>());
    return s.wait + s.warmup;
  };
  REQUIRE(first_step("ada") != first_step("cy"));
  REQUIRE(exercise::variation(ex("ex02.3"), "ada")["target_first"] !=
          exercise::variation(ex("ex02.3"), "cy")["target_first"]);
  const fs::path cls = temp_dir("class");
  auto run_into = [&](const std::string& program, const std::string& learner, const std::string& name,
                      std::vector<std::string> extra = {}) {
    const fs::path out = cls / learner / name;
    std::vector<std::string> args = {"--device",   "cpu",       "--quiet", "--out",
                                     out.string(), "--student", learner};
    args.insert(args.end(), extra.begin(), extra.end());
    const proc::Exit e = proc::run(bin_dir() / program, args, 600);
    INFO(e.out << e.err);
    REQUIRE(e.code == 0);
    return out;
  };
  // ada: complete.
  run_into("ex01_3_dead_window_solution", "ada", "ex01_3_dead_window");
  run_into("ex02_3_schedule_solution", "ada", "ex02_3_schedule");
  const fs::path ada41 = run_into("ex04_1_tflops_by_hand_solution", "ada", "ex04_1_tflops_by_hand");
  // ben: ex02.3 done, ex01.3 untouched, ex04.1 not handed in.
  run_into("ex01_3_dead_window", "ben", "ex01_3_dead_window");
  run_into("ex02_3_schedule_solution", "ben", "ex02_3_schedule");
  // cy: ex01.3 with ada's answers in his own program, ex02.3 with ada's schedule, ex04.1 ada's folder.
  const fs::path cy13 = run_into("ex01_3_dead_window", "cy", "ex01_3_dead_window");
  fs::copy_file(cls / "ada" / "ex01_3_dead_window" / "answer.json", cy13 / "answer.json",
                fs::copy_options::overwrite_existing);
  const json ada_run = json::parse(slurp(cls / "ada" / "ex02_3_schedule" / "run.json"));
  const json av = ada_run["variation"];
  const std::string ada_schedule = std::to_string(av["target_first"].get<int>() - 1) + ",1," +
                                   std::to_string(av["target_count"].get<int>());
  run_into("ex02_3_schedule", "cy", "ex02_3_schedule", {"--schedule", ada_schedule});
  fs::copy(ada41, cls / "cy" / "ex04_1_tflops_by_hand", fs::copy_options::recursive);

  const fs::path state = temp_dir("class_state");
  const Cli g = cli({"--state", state.string(), "grade", cls.string(), "--only", "ex01.3,ex02.3,ex04.1"});
  INFO(g.out);
  REQUIRE(g.rc == 0);
  const json j = json::parse(slurp(cls / "grades.json"));
  auto verdict = [&](const std::string& who, const std::string& id) {
    return j["learners"][who]["exercises"][id]["verdict"].get<std::string>();
  };
  auto failing = [&](const std::string& who, const std::string& id) {
    return j["learners"][who]["exercises"][id]["failing_check"].get<std::string>();
  };
  for (const auto& id : ids) CHECK(verdict("ada", id) == "pass");
  CHECK(j["learners"]["ada"]["passed"] == 3);
  CHECK(verdict("ben", "ex01.3") == "not yet");
  CHECK(verdict("ben", "ex02.3") == "pass");
  CHECK(verdict("ben", "ex04.1") == "not yet");
  CHECK_THAT(failing("ben", "ex04.1"), ContainsSubstring("no submission"));
  for (const auto& id : ids) CHECK(verdict("cy", id) == "not yet");
  CHECK(j["learners"]["cy"]["passed"] == 0);
  CHECK(failing("cy", "ex01.3") == ex("ex01.3").checks[0].pattern.text);  // ada's step is not his
  CHECK(failing("cy", "ex02.3") == ex("ex02.3").checks[0].pattern.text);  // ada's steps are not his
  CHECK(failing("cy", "ex04.1") ==
        "the run is your own variation (your --student name, your size and schedule)");
  // The CSV says the same, one line per learner and exercise.
  const std::string csv = slurp(cls / "grades.csv");
  CHECK_THAT(csv, ContainsSubstring("learner,exercise,verdict,failing_check,message\n"));
  CHECK_THAT(csv, ContainsSubstring("ada,ex01.3,pass,,"));
  CHECK_THAT(csv, ContainsSubstring("cy,ex04.1,not yet,"));
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 3 * 3);
}

// A submission the grader cannot check is an "error", with the reason, never a "not yet": a
// run folder whose trace.json is not JSON, and a program that fails before writing anything.
TEST_CASE("grade: a submission that cannot be checked is an error, with the reason", "[exercises][cpu]") {
  const fs::path cls = temp_dir("class_errors");
  // dee handed in her run folder, but its trace.json is cut off.
  const fs::path dee = cls / "dee" / "ex06_1_bias_epilogue";
  fs::create_directories(dee);
  std::ofstream(dee / "trace.json") << "{\"traceEvents\": [{\"ph\": \"X\", \"name\": ";
  json dee_run = kRun64;
  dee_run["student"] = "dee";
  dee_run["variation"] = exercise::variation(ex("ex06.1"), "dee");
  std::ofstream(dee / "run.json") << dee_run.dump();
  // eve handed in a program that stops with an error before it runs a step.
  const fs::path eve = cls / "eve" / "bin" / "ex06_1_bias_epilogue";
  fs::create_directories(eve.parent_path());
  std::ofstream(eve) << "#!/bin/sh\necho 'eve: cannot open the weights' >&2\nexit 5\n";
  fs::permissions(eve, fs::perms::owner_all, fs::perm_options::add);

  const fs::path state = temp_dir("class_errors_state");
  const Cli g =
      cli({"--state", state.string(), "grade", cls.string(), "--only", "ex06.1", "--device", "cpu"});
  INFO(g.out);
  REQUIRE(g.rc == 0);  // the grade itself ran; the errors are in its table
  CHECK_THAT(g.out, ContainsSubstring("ERROR"));
  const json j = json::parse(slurp(cls / "grades.json"));
  const json& d = j["learners"]["dee"]["exercises"]["ex06.1"];
  CHECK(d["verdict"] == "error");
  CHECK(d["source"] == "outputs");
  CHECK(d["failing_check"] == "");
  CHECK_THAT(d["message"].get<std::string>(), ContainsSubstring("trace.json"));
  const json& e = j["learners"]["eve"]["exercises"]["ex06.1"];
  CHECK(e["verdict"] == "error");
  CHECK(e["source"] == "program");
  CHECK(e["failing_check"] == "");
  CHECK_THAT(e["message"].get<std::string>(), ContainsSubstring("exited with code 5"));
  CHECK(j["learners"]["dee"]["passed"] == 0);
  CHECK(j["learners"]["eve"]["passed"] == 0);
  // The CSV: verdict error, no failing check, the reason's first line as the message.
  const std::string csv = slurp(cls / "grades.csv");
  CHECK_THAT(csv, ContainsSubstring("dee,ex06.1,error,,"));
  CHECK_THAT(csv, ContainsSubstring("eve,ex06.1,error,,the program exited with code 5"));
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 2);
}

// The chapters' "Exercises" (for reading and thinking, unchecked) have their answers in the
// instructors' answer key, item for item.
TEST_CASE("the answer key covers every exercise of the chapter READMEs", "[exercises][cpu]") {
  // The lines "N. ..." of `text` between the line starting with `begin` and the next line
  // starting with one of `ends` (or the end).
  auto items = [](const std::string& text, const std::string& begin, const std::vector<std::string>& ends) {
    std::istringstream in(text);
    std::vector<int> numbers;
    bool inside = false;
    for (std::string line; std::getline(in, line);) {
      if (!inside) {
        inside = line.rfind(begin, 0) == 0;
        continue;
      }
      if (std::any_of(ends.begin(), ends.end(), [&](const std::string& e) { return line.rfind(e, 0) == 0; }))
        break;
      size_t digits = 0;
      while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits]))) ++digits;
      if (digits > 0 && line.compare(digits, 2, ". ") == 0)
        numbers.push_back(std::stoi(line.substr(0, digits)));
    }
    return numbers;
  };
  const std::string key = slurp(kRoot / "docs" / "instructors.md");
  int chapters = 0;
  for (const auto& d : fs::directory_iterator(kRoot / "chapters")) {
    if (!fs::exists(d.path() / "README.md")) continue;
    const std::string chapter = d.path().filename().string();
    INFO(chapter);
    const std::vector<int> asked = items(slurp(d.path() / "README.md"), "## Exercises", {"## "});
    const std::vector<int> answered =
        items(key, "**Chapter " + chapter.substr(0, 2) + " ", {"**Chapter ", "## "});
    CHECK(!asked.empty());
    CHECK(answered == asked);
    ++chapters;
  }
  CHECK(chapters >= 7);
}
