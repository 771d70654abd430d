// Chapter 01: the cold 64x64 run teaches what it says, live on CPU, live on a GPU when one is
// present, and in the C++/Python parity recorded on the H200.
#include <catch2/catch_test_macros.hpp>

#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "process.hpp"
#include "workbook/lessons.hpp"
#include "workbook/trace_model.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;

namespace {
using proc::slurp;

struct Ran {
  int code = -1;
  std::string out;
};
// Runs the chapter binary with `args`; `out` holds its stdout and then its stderr.
Ran run_chapter(const std::vector<std::string>& args) {
  const proc::Exit e = proc::run(proc::bin("01_cold_64"), args);
  return {e.code, e.out + e.err};
}

fs::path fresh_dir(const std::string& tag) { return proc::scratch("ch01_" + tag); }

bool has_cuda_device() {
  // The chapter itself decides: --device cuda exits 2 without a GPU.
  static const bool yes = run_chapter({"--device", "cuda", "--schedule", "0,0,1", "--quiet", "--out",
                                       fresh_dir("probe").string()})
                              .code == 0;
  return yes;
}

// A profiler table's rows: name -> {column -> text}. Columns are split on runs of 2+ spaces.
using Row = std::vector<std::string>;
std::map<std::string, Row> table_rows(const std::string& text) {
  std::map<std::string, Row> rows;
  std::istringstream in(text);
  std::string line;
  const std::regex sep("\\s{2,}");
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '-' || line.rfind("Self C", 0) == 0) continue;  // rules, footers
    std::vector<std::string> cols;
    for (std::sregex_token_iterator it(line.begin(), line.end(), sep, -1), end; it != end; ++it)
      if (!it->str().empty()) cols.push_back(*it);
    if (cols.size() < 2 || cols[0] == "Name") continue;
    // Two rows may share a name (the CPU and the GPU side of an annotation): keep both.
    std::string key = cols[0];
    while (rows.count(key)) key += "'";
    rows[key] = cols;
  }
  return rows;
}
double micros(const std::string& t) {  // "5.569us", "1.2ms"
  const double v = std::stod(t);
  if (t.find("ms") != std::string::npos) return v * 1e3;
  if (t.find("us") != std::string::npos) return v;
  return v * 1e6;
}

// Parity as the issue states it: same names, identical # of Calls, Self CUDA of every kernel
// within 10%. Returns "" when it holds, else what broke.
std::string parity_problem(const std::string& cpp, const std::string& py) {
  auto a = table_rows(cpp), b = table_rows(py);
  if (a.size() != b.size())
    return "row count differs: " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
  for (const auto& [name, row] : a) {
    auto it = b.find(name);
    if (it == b.end()) return "no Python row named " + name;
    if (row.back() != it->second.back())
      return name + ": # of Calls " + row.back() + " vs " + it->second.back();
    if (row.size() >= 11 && it->second.size() >= 11) {  // CUDA columns present: Self CUDA is column 6
      const double x = micros(row[6]), y = micros(it->second[6]);
      // A kernel row: device time only. The GPU-side annotation row (same name as its CPU
      // row, hence the "'") spans idle gaps too and is not a kernel.
      const bool kernel = row[2] == "0.000us" && x > 0 && name.back() != '\'' && !a.count(name + "'");
      if (kernel && std::abs(x - y) > 0.10 * y)
        return name + ": Self CUDA " + row[6] + " vs " + it->second[6];
    }
  }
  return "";
}
}  // namespace

TEST_CASE("ch01 on CPU: runs, writes its outputs, and its lessons hold", "[ch01][cpu]") {
  const auto out = fresh_dir("cpu");
  auto r = run_chapter({"--device", "cpu", "--quiet", "--check", "--out", out.string()});
  INFO(r.out);
  REQUIRE(r.code == 0);
  for (const char* f : {"trace.json", "table.txt", "lessons.txt", "lessons.json", "timeline.svg"})
    CHECK(fs::file_size(out / f) > 0);

  // The trace read back: ProfilerStep#2..#4 and matmul_add > aten::matmul > aten::mm.
  const wb::Trace t = wb::read_trace(out / "trace.json");
  const wb::TraceModel m(t);
  REQUIRE(m.steps().size() == 3);
  CHECK(m.steps().front().number == 2);
  CHECK(m.steps().back().number == 4);
  wb::FactOptions fo;
  fo.problem.n = 64;
  fo.problem.dtype_bytes = 4;
  const wb::LessonsReport rep = wb::check_lessons(m, *wb::find_lesson_spec("01_cold_64"), fo);
  CHECK(rep.failed == 0);
  CHECK(rep.passed >= 2);  // dead window, dispatch chain (the rest, step widths included, need a GPU)
  const std::string table = slurp(out / "table.txt");
  CHECK(table.find("Self CPU time total:") != std::string::npos);
  CHECK(table.find("Self CUDA") == std::string::npos);  // no device time, no CUDA columns
  fs::remove_all(out);
}

TEST_CASE("ch01 lessons reject a trace that does not show them", "[ch01][cpu]") {
  // A real Python CPU trace of the batched workload (chapter 03's): its matmul dispatches
  // aten::bmm, so chapter 01's dispatch-chain lesson (matmul > mm, no bmm) must fail on it,
  // while it passes on the 2-D trace.
  const fs::path data = fs::path(WORKBOOK_ROOT) / "tests/data/lessons";
  auto check = [&](const char* file) {
    const auto t = wb::read_trace(data / file);
    const wb::TraceModel m(t);
    wb::FactOptions fo;
    fo.problem.dtype_bytes = 4;
    return wb::check_lessons(m, *wb::find_lesson_spec("01_cold_64"), fo);
  };
  const auto bmm = check("py_cpu_64_bmm.json");
  CHECK(bmm.failed > 0);
  const auto mm = check("py_cpu_64.json");
  CHECK(mm.failed == 0);
}

TEST_CASE("ch01 rejects bad flags with exit code 2 before any work", "[ch01][cpu]") {
  struct Case {
    std::vector<std::string> args;
    const char* says;
  };
  for (const Case& c : {Case{{"--dtype", "bf17"}, "--dtype"}, Case{{"--device", "tpu"}, "--device"},
                        Case{{"--size", "0"}, "--size"}, Case{{"--size", "-3"}, "--size"},
                        Case{{"--schedule", "1,1,0"}, "active must be > 0"},
                        Case{{"--schedule", "x"}, "--schedule"}, Case{{"--sort-by", "speed"}, "--sort-by"},
                        Case{{"--out", "/proc/nope/x"}, "--out"}, Case{{"--no-such-flag"}, "no-such-flag"}}) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--device", "cpu"});
    auto r = run_chapter(args);
    INFO(c.args.front() << " " << c.args.back() << " -> " << r.out);
    CHECK(r.code == 2);
    CHECK(r.out.find(c.says) != std::string::npos);
  }
  auto help = run_chapter({"--help"});
  CHECK(help.code == 0);
  CHECK(help.out.find("--schedule") != std::string::npos);
}

TEST_CASE("ch01 on the GPU: every lesson holds live", "[ch01][gpu]") {
  if (!has_cuda_device()) SKIP("no CUDA device");
  const auto out = fresh_dir("gpu");
  auto r = run_chapter({"--device", "cuda", "--check", "--out", out.string()});
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("0 failed") != std::string::npos);
  fs::remove_all(out);
}

// ---- the truly cold experiment (--experiment cold: schedule 0,0,3) --------------------------

namespace {
// A recorded H200 run (expected_output/h200/<chapter>/trace.json[.gz]); missing is a failure.
wb::Trace recorded(const std::string& chapter) {
  fs::path rec = fs::path(WORKBOOK_ROOT) / "expected_output/h200" / chapter / "trace.json";
  if (!fs::exists(rec)) rec += ".gz";  // big traces are recorded gzipped
  REQUIRE(fs::exists(rec));
  return wb::read_trace(rec);
}
wb::LessonsReport judge(const wb::Trace& t, const char* spec) {
  const wb::TraceModel m(t);
  wb::FactOptions fo;
  fo.problem = wb::Problem::square(64, 1, 2);
  return wb::check_lessons(m, *wb::find_lesson_spec(spec), fo);
}
wb::Status status_of(const wb::LessonsReport& r, const std::string& id) {
  for (const auto& f : r.facts)
    if (f.id == id) return f.status;
  FAIL("no lesson " << id << " in " << r.chapter);
  throw;
}
}  // namespace

TEST_CASE("ch01 cold lessons: pass on the truly cold H200 trace, fail on warm ones", "[ch01][h200][cpu]") {
  // Truly cold (the recorded --experiment cold, schedule 0,0,3): every cold lesson holds.
  const wb::LessonsReport cold = judge(recorded("01_cold_64/cold"), "01_cold_64/cold");
  INFO(wb::render_lessons(cold, wb::Format::Text));
  CHECK(cold.failed == 0);
  CHECK(cold.passed == static_cast<int>(wb::find_lesson_spec("01_cold_64/cold")->expect.size()));
  CHECK(cold.ok());

  // Chapter 02's recorded H200 run (warm-up iterations, then 1,1,3): no one-time work, no
  // occupancy query, an ordinary first step.
  const wb::LessonsReport warm = judge(recorded("02_warmup"), "01_cold_64/cold");
  INFO(wb::render_lessons(warm, wb::Format::Text));
  CHECK(status_of(warm, "profiler_artefacts") == wb::Status::Fail);
  CHECK(status_of(warm, "launch_path") == wb::Status::Fail);
  CHECK(status_of(warm, "step_widths") == wb::Status::Fail);
  CHECK_FALSE(warm.ok());

  // Warm libraries with the profiler starting in the window (chapter 02's recorded
  // --experiment profiler_startup, 0,0,20): the profiler's buffer request alone is not a cold start.
  const wb::LessonsReport startup = judge(recorded("02_warmup/profiler_startup"), "01_cold_64/cold");
  INFO(wb::render_lessons(startup, wb::Format::Text));
  CHECK(status_of(startup, "profiler_artefacts") == wb::Status::Fail);
  CHECK(status_of(startup, "step_widths") == wb::Status::Fail);
  CHECK_FALSE(startup.ok());

  // The default run's spec: its first recorded step holds no library work, so the cold trace
  // fails it.
  CHECK(status_of(judge(recorded("01_cold_64/cold"), "01_cold_64"), "profiler_artefacts") ==
        wb::Status::Fail);
}

TEST_CASE("ch01 --experiment cold on CPU: schedule 0,0,3 into out/cold/, lessons hold", "[ch01][cpu]") {
  const auto out = fresh_dir("cold");
  auto r =
      run_chapter({"--device", "cpu", "--experiment", "cold", "--quiet", "--check", "--out", out.string()});
  INFO(r.out);
  REQUIRE(r.code == 0);
  const fs::path dir = out / "cold";
  for (const char* f : {"trace.json", "table.txt", "lessons.txt", "lessons.json", "timeline.svg"})
    CHECK(fs::file_size(dir / f) > 0);
  CHECK_FALSE(fs::exists(out / "trace.json"));  // the default run's place stays empty
  const auto lessons = nlohmann::json::parse(slurp(dir / "lessons.json"), nullptr, false);
  REQUIRE(lessons.is_object());
  CHECK(lessons["chapter"] == "01_cold_64/cold");
  CHECK(lessons["summary"]["ok"] == true);
  CHECK(lessons["summary"]["failed"] == 0);
  const wb::Trace t = wb::read_trace(dir / "trace.json");
  const wb::TraceModel m(t);
  REQUIRE(m.steps().size() == 3);
  CHECK(m.steps().front().number == 0);  // nothing before the window: the process's first step
  fs::remove_all(out);
}

TEST_CASE("ch01 experiments: listed, and refused with a schedule of their own", "[ch01][cpu]") {
  auto list = run_chapter({"--list-experiments"});
  CHECK(list.code == 0);
  CHECK(list.out == "cold\n");
  auto both = run_chapter({"--device", "cpu", "--experiment", "cold", "--schedule", "0,0,1"});
  INFO(both.out);
  CHECK(both.code == 2);
  CHECK(both.out.find("--schedule") != std::string::npos);
  auto unknown = run_chapter({"--device", "cpu", "--experiment", "x", "--schedule", "0,0,1"});
  INFO(unknown.out);
  CHECK(unknown.code == 2);
  CHECK(unknown.out.find("--experiment") != std::string::npos);
  auto help = run_chapter({"--help"});
  CHECK(help.out.find("cold: schedule 0,0,3") != std::string::npos);
}

TEST_CASE("ch01 GPU: --experiment cold shows the first calls, and its lessons hold live", "[ch01][gpu]") {
  if (!has_cuda_device()) SKIP("no CUDA device");
  const auto out = fresh_dir("gpu_cold");
  auto r = run_chapter({"--device", "cuda", "--experiment", "cold", "--check", "--out", out.string()});
  INFO(r.out);
  CHECK(r.code == 0);
  const auto lessons = nlohmann::json::parse(slurp(out / "cold" / "lessons.json"), nullptr, false);
  REQUIRE(lessons.is_object());
  CHECK(lessons["summary"]["failed"] == 0);
  for (const auto& f : lessons["facts"]) {
    INFO(f["id"] << ": " << f["verdict"]);
    CHECK(f["status"] == "pass");  // on the H200 every cold lesson applies
  }
  fs::remove_all(out);
}

TEST_CASE("C++ and Python tables agree on the H200 (recorded parity run)", "[ch01][parity][cpu]") {
  const fs::path dir = fs::path(WORKBOOK_ROOT) / "docs/parity/h200";
  for (const char* run : {"", "_run2"}) {
    const std::string cpp = slurp(dir / (std::string("cpp_table") + run + ".txt"));
    const std::string py = slurp(dir / (std::string("python_table") + run + ".txt"));
    REQUIRE(!cpp.empty());
    REQUIRE(!py.empty());
    CHECK(table_rows(cpp).size() >= 11);
    CHECK(parity_problem(cpp, py) == "");
  }
}

TEST_CASE("the parity check fails on tables that differ", "[ch01][parity][cpu]") {
  const fs::path dir = fs::path(WORKBOOK_ROOT) / "docs/parity/h200";
  const std::string cpp = slurp(dir / "cpp_table.txt"), py = slurp(dir / "python_table.txt");
  // A call count off by one.
  std::string calls = cpp;
  const auto pos = calls.find("             1  \n");  // cudaDeviceSynchronize's single call
  REQUIRE(pos != std::string::npos);
  calls.replace(pos, 16, "             2  \n");
  CHECK(parity_problem(calls, py) != "");
  // A kernel 20% slower on one side.
  std::string slow = cpp;
  const auto line = slow.find("nvjet_");
  REQUIRE(line != std::string::npos);
  const auto k = slow.find("5.569us", line);
  REQUIRE(k != std::string::npos);
  slow.replace(k, 7, "6.800us");
  CHECK(parity_problem(slow, py).find("Self CUDA") != std::string::npos);
  // A missing row.
  CHECK(parity_problem(cpp, py.substr(0, py.find("cudaDeviceSynchronize"))) != "");
}
