// Bad input never crashes. Every chapter binary (WORKBOOK_BUILD_DIR/chapters.txt, skipping the
// ones not built) and the tools `inspect` and `timeline` are run for real with one bad input
// each; every row must end the program with a message that names what was wrong and:
//   * exit 2 for a bad flag -- decided before any work: no outputs appear in --out;
//   * exit 1 for a trace file the tools cannot read.
// No row may end in a signal (abort, segfault, the OOM killer) or run into the deadline.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "process.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;

namespace {

struct Row {
  std::string what;               // what the row tests, for the failure message
  std::vector<std::string> args;  // the bad input
  std::vector<std::string> says;  // stderr must contain each of these
  int code = 2;
};

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// The rows every chapter shares (the harness's flags). `dir` is a scratch folder for this
// chapter; each row gets its own --out below it unless it names one.
std::vector<Row> chapter_rows(const std::string& chapter, const fs::path& dir) {
  const fs::path file = dir / "a_file";
  write(file, "not a folder\n");
  // --compare references: none at all, an empty chapter folder, a corrupt lessons.json, a
  // table.txt that is not a table.
  const fs::path none = dir / "expected_none", empty = dir / "expected_empty",
                 corrupt = dir / "expected_corrupt", badtable = dir / "expected_badtable";
  fs::create_directories(none);
  fs::create_directories(empty / "cpu" / chapter);
  fs::create_directories(corrupt / "cpu" / chapter);
  write(corrupt / "cpu" / chapter / "lessons.json", "{\"facts\": [ {\"id\": ");
  fs::create_directories(badtable / "cpu" / chapter);
  write(badtable / "cpu" / chapter / "table.txt", "this is not a profiler table\n");
  const fs::path badvariant = dir / "expected_badvariant";  // chapter 05 keeps one folder per variant
  fs::create_directories(badvariant / "cpu" / chapter / "some_variant");
  write(badvariant / "cpu" / chapter / "some_variant" / "lessons.json", "[1, 2");

  std::vector<Row> rows = {
      {"size zero", {"--size", "0"}, {"--size"}},
      {"negative size", {"--size", "-3"}, {"--size"}},
      {"size not a number", {"--size", "big"}, {"--size"}},
      {"size beyond int64", {"--size", "99999999999999999999"}, {"--size"}},
      // 5 tensors of 10^6 x 10^6 fp32 = 20 TB: refused with the bytes, not an OOM crash.
      {"size too big for memory", {"--size", "1000000"}, {"--size", "bytes", "available"}},
      // N^2 overflows int64 here: the check must still refuse, not wrap around.
      {"size whose N^2 overflows", {"--size", "4000000000"}, {"--size", "bytes", "available"}},
      {"unknown dtype", {"--dtype", "bf17"}, {"--dtype"}},
      {"empty dtype", {"--dtype", ""}, {"--dtype"}},
      {"unknown device", {"--device", "tpu"}, {"--device"}},
      {"schedule with active 0", {"--schedule", "1,1,0"}, {"--schedule", "active"}},
      {"schedule not numbers", {"--schedule", "x"}, {"--schedule"}},
      {"schedule too short", {"--schedule", "1,2"}, {"--schedule"}},
      {"schedule too long", {"--schedule", "1,1,3,1,0,9"}, {"--schedule"}},
      {"schedule negative wait", {"--schedule", "-1,1,3"}, {"--schedule", "wait"}},
      {"schedule empty", {"--schedule", ""}, {"--schedule"}},
      {"unknown sort key", {"--sort-by", "speed"}, {"--sort-by"}},
      {"row limit below -1", {"--row-limit", "-2"}, {"--row-limit"}},
      {"unknown flag", {"--no-such-flag"}, {"no-such-flag"}},
      {"stray argument", {"extra_word"}, {"extra_word"}},
      {"--out under a missing /proc path", {"--out", "/proc/nope/x"}, {"--out"}},
      {"--out empty", {"--out", ""}, {"--out"}},
      {"--out is a file", {"--out", file.string()}, {"--out", "not a directory"}},
      {"--out not writable", {"--out", "/proc/self"}, {"--out", "not writable"}},
      {"--compare without any reference",
       {"--compare", "--expected", none.string()},
       {"--compare", "cpu", "does not exist"}},
      {"--compare, platform not recorded",
       {"--compare", "--platform", "h200", "--expected", none.string()},
       {"--compare", "h200", "does not exist"}},
      {"--compare, reference folder empty",
       {"--compare", "--expected", empty.string()},
       {"--compare", "has no trace.json"}},
      {"--compare, corrupt lessons.json",
       {"--compare", "--expected", corrupt.string()},
       {"--compare", "lessons.json", "corrupt"}},
      {"--compare, table.txt not a table",
       {"--compare", "--expected", badtable.string()},
       {"--compare", "table.txt", "not a profiler table"}},
      {"--compare, a variant's lessons.json corrupt",
       {"--compare", "--expected", badvariant.string()},
       {"--compare", "some_variant", "corrupt"}},
  };
  if (!wb::have_cuda_device()) {
    rows.push_back(
        {"--device cuda without a GPU", {"--device", "cuda"}, {"--device cuda", "no CUDA device"}});
  } else {
    // 5 x 200000^2 bf16 = 400 GB: more than any GPU has free (cudaMemGetInfo).
    rows.push_back({"size too big for the GPU",
                    {"--device", "cuda", "--size", "200000"},
                    {"--size", "bytes", "GPU memory"}});
    // The platform comes from the GPU's name before the run, not from the trace after it.
    rows.push_back({"--compare on a GPU without a reference",
                    {"--device", "cuda", "--compare", "--expected", none.string()},
                    {"--compare", "this run's GPU", "does not exist"}});
  }
  return rows;
}

// The outputs a run writes that `dir` holds ("" for none): a row that worked before failing.
std::string outputs_in(const fs::path& dir) {
  std::string found;
  std::error_code ec;
  for (const char* f : {"trace.json", "table.txt", "lessons.txt", "lessons.json", "timeline.svg"})
    if (fs::exists(dir / f, ec)) found += std::string(f) + " ";
  return found;
}

bool names_flag(const std::vector<std::string>& args, const std::string& flag) {
  for (const auto& a : args)
    if (a == flag) return true;
  return false;
}

// Checks one result against its row. Separate from the runs so that the test below can show
// that these checks fail on a wrong result.
std::string row_problem(const Row& row, const proc::Exit& r, const fs::path& out) {
  if (r.timed_out) return "ran into the deadline (did it start working?)";
  if (r.signal) return "killed by signal " + std::to_string(r.signal);
  if (r.code != row.code)
    return "exit code " + std::to_string(r.code) + ", expected " + std::to_string(row.code);
  for (const auto& s : row.says)
    if (r.err.find(s) == std::string::npos) return "stderr does not say '" + s + "'";
  if (r.err.find("terminate called") != std::string::npos) return "an exception escaped main";
  if (row.code == 2 && !out.empty() && !outputs_in(out).empty())
    return "work was done before the flag was rejected: " + outputs_in(out);
  return "";
}

void check_chapter(const std::string& chapter) {
  const fs::path program = proc::bin(chapter);
  const fs::path dir = proc::scratch("bad_input_" + chapter);
  int i = 0;
  for (const Row& row : chapter_rows(chapter, dir)) {
    std::vector<std::string> args = row.args;
    fs::path out;
    if (!names_flag(args, "--out")) {
      out = dir / ("out_" + std::to_string(i++));
      args.insert(args.end(), {"--out", out.string()});
    }
    if (!names_flag(args, "--device")) args.insert(args.end(), {"--device", "cpu"});
    args.push_back("--quiet");
    const proc::Exit r = proc::run(program, args, 120);
    INFO(chapter << ": " << row.what << "\nstderr: " << r.err);
    CHECK(row_problem(row, r, out) == "");
  }
  fs::remove_all(dir);
}

}  // namespace

TEST_CASE("chapter 01 rejects every bad flag with exit 2, before any work",
          "[tools][bad_input][chapters][cpu]") {
  if (!fs::exists(proc::bin("01_cold_64"))) SKIP("01_cold_64 not built");
  check_chapter("01_cold_64");
}

TEST_CASE("every other chapter rejects the same bad flags", "[tools][bad_input][chapters][cpu]") {
  int checked = 0;
  for (const std::string& chapter : proc::chapters()) {
    if (chapter == "01_cold_64") continue;
    if (!fs::exists(proc::bin(chapter))) {
      WARN("skipped " << chapter << ": not built");
      continue;
    }
    DYNAMIC_SECTION(chapter) { check_chapter(chapter); }
    ++checked;
  }
  if (checked == 0) SKIP("no other chapter binary is built");
}

TEST_CASE("chapter 05 without its AOTI package", "[bad_input][chapters][ch05][cpu]") {
  if (!fs::exists(proc::bin("05_compiled_addmm"))) SKIP("05_compiled_addmm not built");
  // --aoti-manifest points the chapter at a package that is not there. Asked for by name, the
  // aoti variant is a usage error (exit 2, before any output) naming the target that builds it;
  // with --variant all it is reported unavailable and the other variants still run.
  const fs::path dir = proc::scratch("bad_input_ch05");
  const std::string none = (dir / "no_such_manifest.json").string();
  const proc::Exit named =
      proc::run(proc::bin("05_compiled_addmm"), {"--device", "cpu", "--size", "64", "--variant", "aoti",
                                                 "--aoti-manifest", none, "--out", (dir / "named").string()});
  CHECK(named.code == 2);
  CHECK_THAT(named.err, ContainsSubstring("--variant aoti") && ContainsSubstring("05_compiled_addmm_aoti"));
  CHECK_FALSE(fs::exists(dir / "named" / "aoti"));
  const proc::Exit all =
      proc::run(proc::bin("05_compiled_addmm"), {"--device", "cpu", "--size", "64", "--quiet",
                                                 "--aoti-manifest", none, "--out", (dir / "all").string()});
  CHECK(all.code == 0);
  CHECK(fs::exists(dir / "all" / "eager" / "trace.json"));
  CHECK_THAT(proc::slurp(dir / "all" / "comparison.txt"),
             ContainsSubstring("n/a aoti: no AOTI package manifest"));
  fs::remove_all(dir);
}

TEST_CASE("the row checks fail on results that are wrong", "[tools][bad_input][cpu]") {
  const Row row{"size zero", {"--size", "0"}, {"--size"}};
  proc::Exit ok;
  ok.code = 2;
  ok.err = "--size: must be a whole number >= 1, got '0'";
  CHECK(row_problem(row, ok, {}) == "");
  proc::Exit crashed = ok;
  crashed.code = -1;
  crashed.signal = 11;
  CHECK(row_problem(row, crashed, {}) != "");
  proc::Exit exit1 = ok;
  exit1.code = 1;
  CHECK(row_problem(row, exit1, {}) != "");
  proc::Exit silent = ok;
  silent.err = "error";
  CHECK(row_problem(row, silent, {}) != "");
  // Outputs present: the flag was rejected only after the work.
  const fs::path dir = proc::scratch("bad_input_wrong");
  write(dir / "trace.json", "{}");
  CHECK(row_problem(row, ok, dir) != "");
  fs::remove_all(dir);
  // And a real valid run is not an exit-2 row.
  if (fs::exists(proc::bin("01_cold_64"))) {
    const fs::path out = proc::scratch("bad_input_valid");
    const proc::Exit valid = proc::run(
        proc::bin("01_cold_64"),
        {"--device", "cpu", "--size", "8", "--schedule", "0,0,1", "--quiet", "--out", out.string()});
    CHECK(valid.code == 0);
    CHECK(row_problem(row, valid, out) != "");
    fs::remove_all(out);
  }
}

TEST_CASE("compare: a recorded reference is accepted (the check before the run is not too strict)",
          "[tools][bad_input][chapters][cpu]") {
  const fs::path program = proc::bin("01_cold_64");
  if (!fs::exists(program)) SKIP("01_cold_64 not built");
  const fs::path dir = proc::scratch("bad_input_compare_ok");
  const std::vector<std::string> base = {"--device", "cpu", "--quiet", "--schedule", "0,0,2"};
  auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), base.begin(), base.end());
    return extra;
  };
  // A run recorded as the CPU reference, then a second run compared with it.
  REQUIRE(proc::run(program, with({"--out", (dir / "expected" / "cpu" / "01_cold_64").string()})).code == 0);
  const proc::Exit r = proc::run(program, with({"--compare", "--expected", (dir / "expected").string(),
                                                "--out", (dir / "out").string()}));
  INFO("stderr: " << r.err);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, ContainsSubstring("Compare"));
  CHECK(fs::exists(dir / "out" / "trace.json"));
  fs::remove_all(dir);
}

// ------------------------------------------------------------------ the tools
namespace {

// Trace files the tools must refuse (exit 1), made in `dir`.
std::vector<Row> unreadable_traces(const fs::path& dir) {
  const std::string real = proc::slurp(fs::path(WORKBOOK_ROOT) / "tests/data/traces/py_cpu_64.json");
  REQUIRE(real.size() > 1000);
  write(dir / "truncated.json", real.substr(0, real.size() / 2));
  write(dir / "garbage.json", "this is not json at all\n");
  write(dir / "empty.json", "");
  write(dir / "array.json", "[1, 2, 3]\n");
  write(dir / "no_events.json", "{\"schemaVersion\": 1}\n");
  write(dir / "garbage.json.gz", "\x1f\x8b not really gzip");
  {  // a real gzip stream cut in half
    gzFile gz = gzopen((dir / "full.json.gz").c_str(), "wb");
    gzwrite(gz, real.data(), static_cast<unsigned>(real.size()));
    gzclose(gz);
    const std::string z = proc::slurp(dir / "full.json.gz");
    write(dir / "cut.json.gz", z.substr(0, z.size() / 2));
  }
  fs::create_directories(dir / "a_folder.json");
  // Readable, but nothing in it: every tool says "no events" and exits 1 (table used to print
  // nothing and exit 0).
  write(dir / "zero_events.json", "{\"traceEvents\": []}\n");
  write(dir / "only_metadata.json",
        "{\"traceEvents\": [{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"args\": {\"name\": "
        "\"x\"}}]}\n");
  return {
      {"traceEvents: []", {(dir / "zero_events.json").string()}, {"zero_events.json", "no events"}, 1},
      {"only metadata events",
       {(dir / "only_metadata.json").string()},
       {"only_metadata.json", "no events"},
       1},
      {"missing trace", {(dir / "missing.json").string()}, {"missing.json"}, 1},
      {"truncated JSON", {(dir / "truncated.json").string()}, {"truncated.json"}, 1},
      {"not JSON", {(dir / "garbage.json").string()}, {"garbage.json"}, 1},
      {"empty file", {(dir / "empty.json").string()}, {"empty.json"}, 1},
      {"JSON array, not a trace", {(dir / "array.json").string()}, {"array.json"}, 1},
      {"object without traceEvents", {(dir / "no_events.json").string()}, {"traceEvents"}, 1},
      {"not gzip", {(dir / "garbage.json.gz").string()}, {"garbage.json.gz"}, 1},
      {"gzip cut in half", {(dir / "cut.json.gz").string()}, {"cut.json.gz"}, 1},
      {"a folder", {(dir / "a_folder.json").string()}, {"a_folder.json"}, 1},
  };
}

const std::string kTrace = (fs::path(WORKBOOK_ROOT) / "tests/data/traces/py_cpu_64.json").string();

void check_tool(const std::string& tool, const std::vector<Row>& rows, const std::vector<std::string>& tail,
                const fs::path& must_not_exist = {}) {
  for (const Row& row : rows) {
    std::vector<std::string> args = row.args;
    args.insert(args.end(), tail.begin(), tail.end());
    const proc::Exit r = proc::run(proc::bin(tool), args, 60);
    INFO(tool << ": " << row.what << "\nstderr: " << r.err);
    CHECK(row_problem(row, r, {}) == "");
    if (!must_not_exist.empty()) CHECK_FALSE(fs::exists(must_not_exist));
  }
}

}  // namespace

TEST_CASE("inspect: bad flags exit 2, unreadable traces exit 1", "[bad_input][tools][cpu]") {
  if (!fs::exists(proc::bin("inspect"))) SKIP("inspect not built");
  const std::vector<Row> flags = {
      {"no trace", {}, {"trace"}},
      {"unknown format", {kTrace, "--format", "yaml"}, {"--format"}},
      {"unknown chapter", {kTrace, "--chapter", "99_nope"}, {"--chapter"}},
      {"size zero", {kTrace, "--size", "0"}, {"--size"}},
      {"size not a number", {kTrace, "--size", "big"}, {"--size"}},
      {"batch zero", {kTrace, "--batch", "0"}, {"--batch"}},
      {"unknown dtype", {kTrace, "--dtype", "fp8"}, {"--dtype"}},
      {"unknown flag", {kTrace, "--no-such-flag"}, {"no-such-flag"}},
      {"two traces", {kTrace, kTrace}, {"trace"}},
  };
  check_tool("inspect", flags, {});
  const fs::path dir = proc::scratch("bad_input_inspect");
  check_tool("inspect", unreadable_traces(dir), {});
  // The control: the same binary on a good trace prints and exits 0.
  CHECK(proc::run(proc::bin("inspect"), {kTrace}).code == 0);
  fs::remove_all(dir);
}

TEST_CASE("timeline: bad flags exit 2 before reading, unreadable traces exit 1", "[bad_input][tools][cpu]") {
  if (!fs::exists(proc::bin("timeline"))) SKIP("timeline not built");
  const fs::path dir = proc::scratch("bad_input_timeline");
  const std::string svg = (dir / "out.svg").string();
  const std::vector<Row> flags = {
      {"no arguments", {}, {"trace"}},
      {"no -o", {kTrace}, {"--output"}},
      {"steps not a range", {kTrace, "-o", svg, "--steps", "two"}, {"--steps"}},
      {"steps inverted", {kTrace, "-o", svg, "--steps", "4-2"}, {"--steps"}},
      {"steps with junk", {kTrace, "-o", svg, "--steps", "2-4x"}, {"--steps"}},
      {"from without to", {kTrace, "-o", svg, "--from-us", "5"}, {"--to-us"}},
      {"window ends before it starts", {kTrace, "-o", svg, "--from-us", "9", "--to-us", "1"}, {"--from-us"}},
      {"window not finite", {kTrace, "-o", svg, "--from-us", "0", "--to-us", "1e300"}, {"--from-us"}},
      {"steps and a window",
       {kTrace, "-o", svg, "--steps", "2", "--from-us", "0", "--to-us", "1"},
       {"--steps"}},
      {"width too small", {kTrace, "-o", svg, "--width", "10"}, {"--width"}},
      {"depth zero", {kTrace, "-o", svg, "--depth", "0"}, {"--depth"}},
      {"unknown flag", {kTrace, "-o", svg, "--no-such-flag"}, {"no-such-flag"}},
      {"-o in a missing folder",
       {kTrace, "-o", (dir / "nope" / "x.svg").string()},
       {"--output", "does not exist"}},
      {"-o is a folder", {kTrace, "-o", dir.string()}, {"--output", "folder"}},
      {"-o not writable", {kTrace, "-o", "/proc/self/x.svg"}, {"--output", "not writable"}},
  };
  check_tool("timeline", flags, {}, svg);
  check_tool("timeline", unreadable_traces(dir), {"-o", svg}, svg);
  // The control: a good trace gives a picture and exit 0.
  CHECK(proc::run(proc::bin("timeline"), {kTrace, "-o", svg}).code == 0);
  CHECK(fs::file_size(svg) > 1000);
  fs::remove_all(dir);
}

TEST_CASE("table and diff: bad flags exit 2, unreadable traces exit 1 naming the file",
          "[bad_input][tools][cpu]") {
  for (const char* tool : {"table", "diff"})
    if (!fs::exists(proc::bin(tool))) SKIP(std::string(tool) + " not built");
  const fs::path dir = proc::scratch("bad_input_table_diff");
  check_tool("table",
             {
                 {"no trace", {}, {"trace"}},
                 {"unknown sort key", {kTrace, "--sort-by", "speed"}, {"--sort-by", "cpu_time_total"}},
                 {"row limit below -1", {kTrace, "--row-limit", "-5"}, {"--row-limit"}},
                 {"row limit not a number",
                  {kTrace, "--row-limit", "abc"},
                  {"--row-limit", "'abc' is not a whole number (rows to print, -1: all: -1 .. "}},
                 {"name width too small", {kTrace, "--max-name-width", "2"}, {"--max-name-width"}},
                 {"unknown flag", {kTrace, "--no-such-flag"}, {"no-such-flag"}},
             },
             {});
  check_tool("table", unreadable_traces(dir), {});
  check_tool("diff",
             {
                 {"one trace", {kTrace}, {"b"}},
                 {"unknown format", {kTrace, kTrace, "--format", "yaml"}, {"--format"}},
             },
             {});
  // The bad trace first, then second: either way the message names it.
  check_tool("diff", unreadable_traces(dir), {kTrace});
  std::vector<Row> second;
  for (Row r : unreadable_traces(dir)) {
    r.args.insert(r.args.begin(), kTrace);
    second.push_back(r);
  }
  check_tool("diff", second, {});
  // Each tool's --help lists its exit codes; diff's 3 (a difference) among them.
  for (const char* tool : {"table", "diff", "inspect", "timeline"}) {
    const proc::Exit h = proc::run(proc::bin(tool), {"--help"}, 60);
    INFO(tool << "\n" << h.out);
    CHECK(h.code == 0);
    CHECK(h.out.find("Exit codes: 0 ") != std::string::npos);
    CHECK(h.out.find("no events") != std::string::npos);
  }
  CHECK(proc::run(proc::bin("diff"), {"--help"}, 60).out.find("3 changes found") != std::string::npos);
  // The controls: good traces work.
  CHECK(proc::run(proc::bin("table"), {kTrace}).code == 0);
  CHECK(proc::run(proc::bin("diff"), {kTrace, kTrace}).code == 0);
  fs::remove_all(dir);
}

TEST_CASE("./workbook VERB --help prints that verb's help and does no work", "[bad_input][tools][cpu]") {
  const fs::path dir = proc::scratch("workbook_help");
  const fs::path build = dir / "never_made";
  const std::string script = (fs::path(WORKBOOK_ROOT) / "workbook").string();
  for (const char* verb : {"run", "test", "setup", "build", "record", "chapters", "docs"})
    for (const char* flag : {"--help", "-h"}) {
      const proc::Exit r =
          proc::run("/usr/bin/env", {"BUILD_DIR=" + build.string(), "bash", script, verb, flag}, 60);
      INFO(verb << " " << flag << "\nstdout: " << r.out << "\nstderr: " << r.err);
      CHECK(r.code == 0);
      CHECK(r.out.rfind(std::string("./workbook ") + verb, 0) == 0);  // its own usage, first line
      CHECK(r.err.find("[workbook]") == std::string::npos);           // no setup or build step ran
      CHECK_FALSE(fs::exists(build));                                 // nothing configured
      CHECK_FALSE(fs::exists(build.string() + ".configure.log"));
    }
  fs::remove_all(dir);
}

// bench/bench_llm_decode: --batch and the other flags are checked before the model is built (its
// first progress line on stderr says "building the model"), exit 2 naming the flag; a batch
// whose KV cache cannot fit is refused with the bytes. The control runs the tiny model on the
// CPU at batch 2 and batch 1: the batch reaches the output and the JSON, and chapter 11's M = 1
// kernels are skipped at batch 2 only.
TEST_CASE("bench_llm_decode: bad --batch exits 2 before any work; the batch reaches the output",
          "[tools][bench][bad_input][cpu]") {
  const fs::path program = proc::build_dir() / "bench" / "bench_llm_decode";
  if (!fs::exists(program)) SKIP("bench_llm_decode not built");
  const fs::path dir = proc::scratch("bad_input_bench_llm_decode");
  const fs::path json = dir / "never.json";
  std::vector<Row> rows = {
      {"batch zero", {"--batch", "0"}, {"--batch", "out of range"}},
      {"negative batch", {"--batch", "-8"}, {"--batch"}},
      {"batch not a number", {"--batch", "many"}, {"--batch", "not a whole number"}},
      {"batch beyond the range", {"--batch", "5000"}, {"--batch", "out of range"}},
      {"batch beyond int64", {"--batch", "99999999999999999999"}, {"--batch"}},
      // 4096 x 12296 positions of the 1b model's fp32 KV cache: about 2.3 TB, refused with the bytes.
      {"KV cache too big for memory",
       {"--config", "1b", "--batch", "4096", "--prompt", "8192", "--new-tokens", "4096"},
       {"--batch", "KV cache", "available"}},
      {"prompt zero", {"--prompt", "0"}, {"--prompt"}},
      {"one new token", {"--new-tokens", "1"}, {"--new-tokens"}},
      {"repeats zero", {"--repeats", "0"}, {"--repeats"}},
      {"unknown config", {"--config", "7b"}, {"--config", "tiny"}},
      {"unknown device", {"--device", "tpu"}, {"--device"}},
      {"unknown flag", {"--no-such-flag"}, {"no-such-flag"}},
  };
  if (!wb::have_cuda_device())
    rows.push_back({"--device cuda without a GPU", {"--device", "cuda"}, {"--device cuda"}});
  for (const Row& row : rows) {
    std::vector<std::string> args = row.args;
    if (!names_flag(args, "--device")) args.insert(args.end(), {"--device", "cpu"});
    if (!names_flag(args, "--config")) args.insert(args.end(), {"--config", "tiny"});
    args.insert(args.end(), {"--json", json.string()});
    const proc::Exit r = proc::run(program, args, 60);
    INFO(row.what << "\nstderr: " << r.err);
    CHECK(row_problem(row, r, {}) == "");
    CHECK(r.err.find("building the model") == std::string::npos);  // refused before any work
    CHECK(r.out.empty());
    CHECK_FALSE(fs::exists(json));
    fs::remove(json);  // each row on its own
  }
  const proc::Exit help = proc::run(program, {"--help"}, 60);
  CHECK(help.code == 0);
  CHECK_THAT(help.out, ContainsSubstring("--batch") && ContainsSubstring("--prompt"));

  // The control: valid runs do the work; the same checks fail on them.
  for (const int64_t batch : {2, 1}) {
    const fs::path out = dir / ("batch" + std::to_string(batch) + ".json");
    const proc::Exit r =
        proc::run(program,
                  {"--device", "cpu", "--config", "tiny", "--batch", std::to_string(batch), "--prompt", "8",
                   "--new-tokens", "2", "--repeats", "1", "--json", out.string()},
                  120);
    INFO("batch " << batch << "\nstdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.code == 0);
    CHECK(row_problem(rows.front(), r, {}) != "");
    CHECK(r.err.find("building the model") != std::string::npos);
    CHECK_THAT(r.out, ContainsSubstring("batch " + std::to_string(batch) + ", 2 new tokens"));
    CHECK_THAT(r.out, ContainsSubstring("C++ eager") && ContainsSubstring("no peak known"));
    CHECK((r.out.find("M = 1 GEMVs") != std::string::npos) == (batch > 1));
    CHECK_THAT(proc::slurp(out), ContainsSubstring("\"batch\": " + std::to_string(batch) + ","));
  }
  fs::remove_all(dir);
}
