// Runs a chapter program the way a learner does (a separate process, so "cold" really is the
// first call of a process), and reads what it wrote into --out. For the tests/test_NN_*.cpp
// files. Torch-free: the tests link wb_core only and start in milliseconds.
//
//   auto r = chapter_runner::run("02_warmup", {"--warmup-iters", "0"}, "cold");
//   CHECK(r.rc == 0);
//   CHECK(chapter_runner::fact(r.lessons, "step_widths")["data"]["first_over_median_rest"] > 5);
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "process.hpp"

namespace chapter_runner {

namespace fs = std::filesystem;

inline fs::path root() { return WORKBOOK_ROOT; }

struct Result {
  int rc = -1;
  std::string out, err;
  fs::path dir;            // --out
  nlohmann::json lessons;  // lessons.json (null if the run wrote none)
  fs::path trace() const { return dir / "trace.json"; }
};

// Runs bin/<chapter> with `args` plus --quiet --out <fresh dir> (posix_spawn, no shell, with a
// deadline). Skips when the chapter has not been built (the test target depends on it, so that
// means a partial build).
//
// OMP_NUM_THREADS=1 for the child: on a small shared machine (CI, ctest -j) a 2-thread GEMM
// whose second thread is descheduled spins for milliseconds, and a 64x64 step that takes
// ~10 us idle takes ~20 ms. One thread keeps the CPU timings about the workload.
inline Result run(const std::string& chapter, const std::vector<std::string>& args, const std::string& tag) {
  const fs::path bin = proc::bin(chapter);
  if (!fs::exists(bin)) SKIP("chapter binary not built: " << bin.string());
  ::setenv("OMP_NUM_THREADS", "1", /*overwrite=*/0);
  Result r;
  r.dir = proc::scratch(chapter + "_" + tag) / "out";
  std::vector<std::string> argv = args;
  argv.insert(argv.end(), {"--quiet", "--out", r.dir.string()});
  const proc::Exit e = proc::run(bin, argv, /*timeout_s=*/300);
  r.rc = e.timed_out ? -1 : e.code;
  r.out = e.out;
  r.err = e.err + (e.timed_out ? "\n(killed after 300 s)" : "");
  r.lessons = nlohmann::json::parse(proc::slurp(r.dir / "lessons.json"), nullptr,
                                    /*allow_exceptions=*/false);
  if (r.lessons.is_discarded()) r.lessons = nullptr;
  return r;
}

// The same on the GPU (--device cuda). Skips when there is no usable CUDA device: no
// nvidia-smi, or the chapter itself says LibTorch sees none (exit 2).
inline Result run_gpu(const std::string& chapter, std::vector<std::string> args, const std::string& tag) {
  if (!wb::have_cuda_device()) SKIP("no CUDA device (no nvidia-smi)");
  args.insert(args.begin(), {"--device", "cuda"});
  Result r = run(chapter, args, tag);
  if (r.rc == 2 && r.err.find("no CUDA device") != std::string::npos)
    SKIP("no CUDA device visible to LibTorch: " << r.err);
  return r;
}

// One fact of a lessons.json, by id; fails the test when it is missing.
inline const nlohmann::json& fact(const nlohmann::json& lessons, const std::string& id) {
  if (lessons.is_object() && lessons.contains("facts"))
    for (const auto& f : lessons["facts"])
      if (f.value("id", "") == id) return f;
  FAIL("no fact '" << id << "' in lessons.json");
  throw;  // unreachable
}

// Checks an --experiment run: it exited 0, its lessons (<out>/<experiment>/lessons.json) all hold,
// and each fact of `passing` is a pass. Returns those lessons (REQUIREs that they were written).
inline nlohmann::json experiment_lessons_pass(const Result& r, const std::string& experiment,
                                              const std::vector<std::string>& passing) {
  CHECK(r.rc == 0);
  const auto lessons =
      nlohmann::json::parse(proc::slurp(r.dir / experiment / "lessons.json"), nullptr, false);
  REQUIRE(lessons.is_object());
  CHECK(lessons["summary"]["failed"] == 0);
  for (const auto& id : passing) {
    INFO(id);
    CHECK(fact(lessons, id)["status"] == "pass");
  }
  return lessons;
}

// expected_output/<platform>/<chapter>/trace.json[.gz], or an empty path when not recorded.
// WORKBOOK_EXPECTED_ROOT points the tests at another folder of recordings.
inline fs::path recorded_trace(const std::string& platform, const std::string& chapter) {
  const char* env = std::getenv("WORKBOOK_EXPECTED_ROOT");
  const fs::path dir = (env && *env ? fs::path(env) : root() / "expected_output") / platform / chapter;
  for (const char* name : {"trace.json", "trace.json.gz"})
    if (fs::exists(dir / name)) return dir / name;
  return {};
}

}  // namespace chapter_runner
