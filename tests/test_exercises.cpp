// The exercises' checkers are honest: every untouched stub fails its check, every reference
// solution passes it -- on this CPU for the exercises that mean something on a CPU, on a GPU
// for all of them ([gpu] cases skip without one). Below that, each check is shown failing and
// passing on recorded-shape traces (tests/data/lessons), so the GPU patterns are exercised here
// too, and the catalog, the command line and the progress file are tested for bad input.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
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
#include "process.hpp"
#include "workbook/lessons.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using Catch::Matchers::ContainsSubstring;

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
fs::path make_run(const std::string& tag, const fs::path& trace, const json& run, const json& answers = nullptr,
                  const std::string& table = "") {
  const fs::path d = temp_dir(tag);
  fs::copy_file(trace, d / "trace.json");  // .json.gz too: the reader goes by the magic bytes
  std::ofstream(d / "run.json") << run.dump();
  if (!answers.is_null()) std::ofstream(d / "answer.json") << answers.dump();
  if (!table.empty()) std::ofstream(d / "table.txt") << table;
  return d;
}
const json kRun64 = {{"size", 64}, {"batch", 1}, {"dtype_bytes", 2}, {"annotation", "matmul_add"}};
const json kRun4096 = {{"size", 4096}, {"batch", 1}, {"dtype_bytes", 2}, {"annotation", "matmul_add"}};

// A synthetic GPU trace of three steps, each one cudaGraphLaunch replaying a GEMM and an add.
fs::path graph_trace(const std::string& tag) {
  json ev = json::array();
  int corr = 100, ext = 1;
  for (int step = 2; step <= 4; ++step) {
    const double t = 1000.0 + 100.0 * step;
    ev.push_back({{"ph", "X"}, {"cat", "user_annotation"}, {"name", "ProfilerStep#" + std::to_string(step)},
                  {"pid", 1}, {"tid", 1}, {"ts", t}, {"dur", 30}, {"args", {{"External id", ext++}}}});
    ev.push_back({{"ph", "X"}, {"cat", "user_annotation"}, {"name", "matmul_add"}, {"pid", 1}, {"tid", 1},
                  {"ts", t + 1}, {"dur", 25}, {"args", {{"External id", ext++}}}});
    ev.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaGraphLaunch"}, {"pid", 1}, {"tid", 1},
                  {"ts", t + 2}, {"dur", 8}, {"args", {{"External id", ext - 1}, {"correlation", corr}}}});
    ev.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "nvjet_sm90_tst_64x8_64x16_1x4_h_bz_NNT"}, {"pid", 0},
                  {"tid", 7}, {"ts", t + 12}, {"dur", 1.9}, {"args", {{"correlation", corr}}}});
    ev.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "void at::native::vectorized_elementwise_kernel<8>"},
                  {"pid", 0}, {"tid", 7}, {"ts", t + 14}, {"dur", 0.9}, {"args", {{"correlation", corr}}}});
    ++corr;
  }
  const fs::path p = temp_dir(tag + "_src") / "graph.json";
  std::ofstream(p) << json({{"traceEvents", ev}}).dump();
  return p;
}

exercise::Outcome judged(const std::string& id, const fs::path& dir) { return exercise::judge(ex(id), dir).outcome; }

// ---- the end-to-end honesty check --------------------------------------------------------
#ifndef WORKBOOK_EXERCISE_SOLUTIONS
#define WORKBOOK_EXERCISE_SOLUTIONS 1
#endif
// The solutions are built while solutions/ exists, unless the build turned them off.
bool solutions_expected() { return WORKBOOK_EXERCISE_SOLUTIONS && fs::exists(kRoot / "solutions"); }

exercise::CheckResult run_check(const exercise::Exercise& e, bool solution, const std::string& device) {
  exercise::CheckOptions o;
  o.bin_dir = bin_dir();
  o.solution = solution;
  o.device = device;
  o.out_dir = temp_dir(e.name + (solution ? "_solution" : "_stub") + "_" + device);
  o.timeout_s = 900;
  const fs::path program = o.bin_dir / (e.name + (solution ? "_solution" : ""));
  if (!fs::exists(program)) {
    if (solution && !solutions_expected())
      SKIP("solutions not built (no solutions/ folder, or WORKBOOK_EXERCISE_SOLUTIONS=OFF)");
    FAIL("not built: " << program.string() << " (build the 'exercises' target)");
  }
  exercise::CheckResult r = exercise::check_exercise(e, o);
  INFO(exercise::render(e, r, false));
  return r;
}

void stub_fails_solution_passes(const std::string& id, const std::string& device) {
  const exercise::Exercise& e = ex(id);
  if (device == "cuda" && !exercise::gpu_present()) SKIP("no GPU on this machine");
  {
    const exercise::CheckResult stub = run_check(e, false, device);
    INFO(exercise::render(e, stub, false));
    if (stub.outcome == exercise::Outcome::NeedsGpu) SKIP(stub.message);
    CHECK(stub.outcome == exercise::Outcome::Fail);
    CHECK(stub.failed >= 1);
  }
  {
    const exercise::CheckResult sol = run_check(e, true, device);
    INFO(exercise::render(e, sol, false));
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
#define CPU_EXERCISE(ID)                                                                   \
  static Register WB_CAT(reg_, __LINE__){ID, false};                                       \
  TEST_CASE("exercise " ID ": the stub fails, the solution passes (CPU)", "[exercises]") { \
    stub_fails_solution_passes(ID, "cpu");                                                 \
  }                                                                                        \
  TEST_CASE("exercise " ID ": the stub fails, the solution passes (GPU)", "[exercises][gpu]") { \
    stub_fails_solution_passes(ID, "cuda");                                                \
  }
#define GPU_EXERCISE(ID)                                                                   \
  static Register WB_CAT(reg_, __LINE__){ID, true};                                        \
  TEST_CASE("exercise " ID ": the stub fails, the solution passes (GPU)", "[exercises][gpu]") { \
    stub_fails_solution_passes(ID, "cuda");                                                \
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

TEST_CASE("every exercise of the catalog has its honesty cases, GPU-only ones tagged [gpu]", "[exercises]") {
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
TEST_CASE("the catalog: at least two exercises per chapter, ten in all, files in place", "[exercises]") {
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
    // The hint stays out of the source: no line of it appears in the stub.
    std::istringstream hint(e.hint);
    for (std::string line; std::getline(hint, line);)
      if (line.size() > 20) CHECK_THAT(src, !ContainsSubstring(line));
    if (fs::exists(kRoot / "solutions")) {
      const fs::path sol = kRoot / "solutions" / e.name / "main.cpp";
      REQUIRE(fs::exists(sol));
      CHECK_THAT(slurp(sol), !ContainsSubstring("TODO(" + e.id + ")"));
    }
  }
  for (const char* ch : {"01_cold_64", "02_warmup", "03_batched_bmm", "04_compute_bound_4096", "05_compiled_addmm"}) {
    INFO(ch);
    CHECK(per_chapter[ch] >= 2);
  }
}

TEST_CASE("the catalog finds exercises by id, short id and name", "[exercises]") {
  const auto& c = catalog();
  REQUIRE(c.find("ex01.1") != nullptr);
  CHECK(c.find("01.1") == c.find("ex01.1"));
  CHECK(c.find("ex01_1_hot_loop") == c.find("ex01.1"));
  CHECK(c.find("ex99.9") == nullptr);
  CHECK(c.find("") == nullptr);
  CHECK_THAT(c.ids(), ContainsSubstring("ex05.2"));
}

TEST_CASE("a broken catalog says where it is broken", "[exercises]") {
  auto error_of = [](const std::string& text) -> std::string {
    try {
      exercise::parse_catalog(text, "cat.json");
    } catch (const exercise::CatalogError& e) {
      return e.what();
    }
    return "(no error)";
  };
  const std::string ok_check = R"({"fact": "steps", "text": "t", "all": [{"key": "/first", "op": "==", "value": 3}]})";
  auto one = [&](const std::string& fields, const std::string& check) {
    return R"({"exercises": [{"id": "ex09.1", "name": "ex09_1_x", "chapter": "c", "title": "t", "task": "t",
              "hint": "h", )" + fields + R"("checks": [)" + check + "]}]}";
  };
  CHECK_THAT(error_of("{"), ContainsSubstring("not valid JSON"));
  CHECK_THAT(error_of("[]"), ContainsSubstring("\"exercises\" array"));
  CHECK_THAT(error_of(R"({"exercises": []})"), ContainsSubstring("no exercises"));
  CHECK(error_of(one("", ok_check)) == "(no error)");
  CHECK_THAT(error_of(one("", R"({"fact": "nope", "text": "t", "all": [{"key": "/a", "op": "==", "value": 1}]})")),
             ContainsSubstring("ex09.1: checks[0].fact: unknown fact 'nope'"));
  CHECK_THAT(error_of(one("", R"({"fact": "steps", "text": "t", "all": [{"key": "/a", "op": "~", "value": 1}]})")),
             ContainsSubstring("unknown operator '~'"));
  CHECK_THAT(error_of(one("", R"({"fact": "steps", "text": "t", "all": [{"key": "a", "op": "==", "value": 1}]})")),
             ContainsSubstring("JSON pointer"));
  CHECK_THAT(error_of(one("", R"({"fact": "steps", "text": "t", "all": []})")), ContainsSubstring("non-empty"));
  CHECK_THAT(error_of(one(R"("needs_gpu": "yes", )", ok_check)), ContainsSubstring("needs_gpu: must be true or false"));
  CHECK_THAT(error_of(one(R"("args": [1], )", ok_check)), ContainsSubstring("args"));
  CHECK_THAT(error_of(R"({"exercises": [{"id": "ex09.1", "name": "Bad Name", "chapter": "c", "title": "t",
                          "task": "t", "hint": "h", "checks": [)" + ok_check + "]}]}"),
             ContainsSubstring("lowercase"));
  const std::string e1 = R"({"id": "ex09.1", "name": "a", "chapter": "c", "title": "t", "task": "t", "hint": "h", "checks": [)" +
                         ok_check + "]}";
  CHECK_THAT(error_of(R"({"exercises": [)" + e1 + "," + e1 + "]}"), ContainsSubstring("duplicate id"));
  CHECK_THAT(error_of(R"({"exercises": [{"id": "ex09.1"}]})"), ContainsSubstring("name: missing"));
}

// ---- each check fails and passes on recorded-shape traces -----------------------------------
TEST_CASE("table: sorted by # of Calls or not", "[exercises]") {
  const std::string by_count = slurp(kRoot / "tests/data/table/cpu_by_count.txt");
  const std::string by_time = slurp(kRoot / "tests/data/table/cpu_by_cpu_time_total.txt");
  REQUIRE(exercise::parse_table(by_count).size() >= 3);
  CHECK(exercise::parse_table("no table here").empty());
  const json right = {{"most_called_op", "aten::resolve_conj"}};
  CHECK(judged("ex01.1", make_run("t_count", kData / "py_cpu_64.json", kRun64, right, by_count)) ==
        exercise::Outcome::Pass);
  CHECK(judged("ex01.1", make_run("t_time", kData / "py_cpu_64.json", kRun64, right, by_time)) ==
        exercise::Outcome::Fail);
  // A wrong answer fails even with the right order; a missing table is a failure, not a crash.
  CHECK(judged("ex01.1", make_run("t_wrong", kData / "py_cpu_64.json", kRun64, {{"most_called_op", "aten::mm"}},
                                  by_count)) == exercise::Outcome::Fail);
  CHECK(judged("ex01.1", make_run("t_none", kData / "py_cpu_64.json", kRun64, right)) == exercise::Outcome::Fail);
}

TEST_CASE("dead_window_answer: the right step and op pass, others fail", "[exercises]") {
  const fs::path t = kData / "py_cpu_64.json";
  CHECK(judged("ex01.3", make_run("dw_ok", t, kRun64, {{"dead_window_step", 2}, {"first_op_after_gap", "aten::matmul"}})) ==
        exercise::Outcome::Pass);
  CHECK(judged("ex01.3", make_run("dw_step", t, kRun64, {{"dead_window_step", 3}, {"first_op_after_gap", "aten::matmul"}})) ==
        exercise::Outcome::Fail);
  CHECK(judged("ex01.3", make_run("dw_op", t, kRun64, {{"dead_window_step", 2}, {"first_op_after_gap", "aten::mm"}})) ==
        exercise::Outcome::Fail);
  CHECK(judged("ex01.3", make_run("dw_none", t, kRun64)) == exercise::Outcome::Fail);
}

TEST_CASE("dispatch checks: bmm for a batch, addmm as one op, a named region", "[exercises]") {
  CHECK(judged("ex03.1", make_run("bmm_ok", kData / "h200_64_bmm.json", kRun64)) == exercise::Outcome::Pass);
  CHECK(judged("ex03.1", make_run("bmm_no", kData / "h200_64_cold.json", kRun64)) == exercise::Outcome::Fail);
  CHECK(judged("ex03.1", make_run("bmm_cpu", kData / "py_cpu_64_bmm.json", kRun64)) == exercise::Outcome::Pass);
  CHECK(judged("ex03.2", make_run("fold_no", kData / "py_cpu_64_bmm.json", kRun64)) == exercise::Outcome::Fail);
  CHECK(judged("ex03.2", make_run("fold_2d", kData / "py_cpu_64.json", kRun64)) == exercise::Outcome::Fail);
  // addmm: one op on the CPU lane, and on the GPU the bias copy before the GEMM.
  const exercise::CheckResult a = exercise::judge(ex("ex05.1"), make_run("addmm_gpu", kData / "h200_4096_addmm.json", kRun4096));
  CHECK(a.outcome == exercise::Outcome::Pass);
  CHECK(a.skipped == 0);
  CHECK(judged("ex05.1", make_run("addmm_cpu", kData / "py_cpu_64_addmm.json", kRun64)) == exercise::Outcome::Pass);
  CHECK(judged("ex05.1", make_run("addmm_eager", kData / "h200_64_cold.json", kRun64)) == exercise::Outcome::Fail);
  CHECK(judged("ex01.2", make_run("region_none", kData / "py_cpu_64.json", kRun64)) == exercise::Outcome::Fail);
}

TEST_CASE("steps and GEMM samples: what the schedule kept", "[exercises]") {
  const exercise::CheckResult s = exercise::judge(ex("ex02.3"), make_run("steps", kData / "py_cpu_64.json", kRun64));
  CHECK(s.outcome == exercise::Outcome::Fail);
  REQUIRE(s.verdicts.size() == 1);
  CHECK(s.verdicts[0].fact.data["first"] == 2);
  CHECK(s.verdicts[0].fact.data["count"] == 3);
  const exercise::CheckResult g = exercise::judge(ex("ex04.2"), make_run("samples", kData / "h200_64_cold.json", kRun64));
  CHECK(g.outcome == exercise::Outcome::Fail);
  CHECK(g.verdicts[0].fact.data["samples"] == 3);
}

TEST_CASE("tflops_answer: within 5% of the lesson's throughput, or not", "[exercises]") {
  const fs::path t = kData / "h200_4096_warm.json.gz";
  const wb::Trace trace = wb::read_trace(t);
  const wb::TraceModel m(trace);
  wb::FactOptions o;
  o.problem = {4096, 1, 2};
  const double lesson = wb::compute_fact("throughput", m, o).data.at("gemm_tflops").get<double>();
  REQUIRE(lesson > 100);
  CHECK(judged("ex04.1", make_run("tf_ok", t, kRun4096, {{"achieved_tflops", lesson * 1.01}})) == exercise::Outcome::Pass);
  CHECK(judged("ex04.1", make_run("tf_half", t, kRun4096, {{"achieved_tflops", lesson / 2}})) == exercise::Outcome::Fail);
  CHECK(judged("ex04.1", make_run("tf_us", t, kRun4096, {{"achieved_tflops", lesson * 1e6}})) == exercise::Outcome::Fail);
  CHECK(judged("ex04.1", make_run("tf_text", t, kRun4096, {{"achieved_tflops", "800"}})) == exercise::Outcome::Fail);
  CHECK(judged("ex04.1", make_run("tf_null", t, kRun4096, {{"achieved_tflops", nullptr}})) == exercise::Outcome::Fail);
  // On a CPU trace the reference is 2*N^3 over the median aten::mm.
  CHECK(judged("ex04.1", make_run("tf_cpu0", kData / "py_cpu_64.json", kRun64, {{"achieved_tflops", 0.0}})) ==
        exercise::Outcome::Fail);
}

TEST_CASE("GPU patterns: first-call setup, the profiler's buffer, the hidden sync, graph launches", "[exercises]") {
  // The first GEMM of a process loads its module; a warm run does not.
  CHECK(judged("ex02.1", make_run("cold", kData / "h200_64_first_call.json", kRun64)) == exercise::Outcome::Fail);
  CHECK(judged("ex02.1", make_run("warm", kData / "h200_64_cold.json", kRun64)) == exercise::Outcome::Pass);
  CHECK(judged("ex02.1", make_run("cpu", kData / "py_cpu_64.json", kRun64)) == exercise::Outcome::NeedsGpu);
  CHECK(judged("ex02.2", make_run("buf", kData / "h200_64_first_call.json", kRun64)) == exercise::Outcome::Pass);
  CHECK(judged("ex02.2", make_run("nobuf", kData / "h200_64_cold.json", kRun64)) == exercise::Outcome::Fail);
  // At 4096 a CPU that runs ahead makes the launch-to-start wait grow; a flat one (64-style) fails.
  const exercise::CheckResult ahead = exercise::judge(ex("ex04.3"), make_run("ahead", kData / "h200_4096_warm.json.gz", kRun4096));
  CHECK(ahead.outcome == exercise::Outcome::Pass);
  CHECK(ahead.skipped == 0);
  CHECK(judged("ex04.3", make_run("flat", kData / "h200_64_cold.json", kRun4096)) == exercise::Outcome::Fail);
  // Graph replay: one launch call per step; eager: two.
  CHECK(judged("ex05.2", make_run("graph", graph_trace("graph"), kRun64)) == exercise::Outcome::Pass);
  CHECK(judged("ex05.2", make_run("eager", kData / "h200_64_cold.json", kRun64)) == exercise::Outcome::Fail);
  CHECK(judged("ex05.2", make_run("graph_cpu", kData / "py_cpu_64.json", kRun64)) == exercise::Outcome::NeedsGpu);
}

TEST_CASE("a run folder without a trace cannot be judged, with a clear message", "[exercises]") {
  const fs::path d = temp_dir("empty");
  CHECK_THROWS_WITH(exercise::judge(ex("ex01.1"), d), ContainsSubstring("no trace.json"));
  const fs::path bad = make_run("badanswer", kData / "py_cpu_64.json", kRun64);
  std::ofstream(bad / "answer.json") << "{ half";
  CHECK_THROWS_WITH(exercise::judge(ex("ex01.1"), bad), ContainsSubstring("answer.json"));
}

TEST_CASE("check_exercise: a missing program is an error that says how to build it", "[exercises]") {
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
}

// ---- progress ------------------------------------------------------------------------------
TEST_CASE("status.json: done when the last check passed, pending otherwise, never a crash", "[exercises]") {
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

TEST_CASE("exercise list / show / hint, and bad ids", "[exercises]") {
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
  const Cli hint = cli({"hint", "03.1"});
  CHECK(hint.rc == 0);
  CHECK_THAT(hint.out, ContainsSubstring(ex("ex03.1").hint.substr(0, 30)));
  for (const char* sub : {"show", "hint", "check"}) {
    const Cli bad = cli({sub, "ex42.0"});
    INFO(bad.out);
    CHECK(bad.rc == 2);
    CHECK_THAT(bad.out, ContainsSubstring("unknown exercise 'ex42.0'"));
    CHECK_THAT(bad.out, ContainsSubstring("ex01.1, ex01.2"));
  }
  CHECK(cli({"check"}).rc == 2);                                 // no id
  CHECK(cli({"check", "ex01.1", "--device", "tpu"}).rc == 2);    // bad flag value
  CHECK(cli({"frobnicate"}).rc == 2);                            // bad subcommand
  for (const auto& help : std::vector<std::vector<std::string>>{
           {"--help"}, {"list", "--help"}, {"show", "--help"}, {"hint", "--help"}, {"check", "--help"}}) {
    const Cli h = cli(help);
    INFO(help.front() << " " << help.back());
    CHECK(h.rc == 0);
    CHECK_THAT(h.out, ContainsSubstring("Usage"));
  }
  const Cli nowhere = cli({"--root", "/nonexistent", "list"}, false);
  CHECK(nowhere.rc == 3);  // no catalog there: said, not crashed
  CHECK_THAT(nowhere.out, ContainsSubstring("cannot open the exercise catalog"));
}

TEST_CASE("exercise check records progress, and list shows it", "[exercises]") {
  const fs::path state = temp_dir("cli_progress");
  if (!fs::exists(bin_dir() / "ex02_3_schedule_solution")) SKIP("solutions not built");
  const Cli stub = cli({"--state", state.string(), "check", "ex02.3", "--device", "cpu"});
  INFO(stub.out);
  CHECK(stub.rc == 1);
  CHECK_THAT(stub.out, ContainsSubstring("NOT YET"));
  CHECK_THAT(stub.out, ContainsSubstring("Hint:"));
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
