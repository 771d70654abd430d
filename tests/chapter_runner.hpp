// Runs a chapter program the way a learner does (a separate process, so "cold" really is the
// first call of a process), and reads what it wrote into --out. For the tests/test_NN_*.cpp
// files. Torch-free: the tests link wb_core only and start in milliseconds.
//
//   auto r = chapter_runner::run("02_warmup", {"--warmup-iters", "0"}, "cold");
//   CHECK(r.rc == 0);
//   CHECK(chapter_runner::fact(r.lessons, "step_widths")["data"]["first_over_median_rest"] > 5);
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace chapter_runner {

namespace fs = std::filesystem;

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline fs::path build_dir() {
  if (const char* env = std::getenv("WORKBOOK_BUILD_DIR"); env && *env) return env;
  return WORKBOOK_BUILD_DIR;
}

inline fs::path root() { return WORKBOOK_ROOT; }

// A fresh folder per test and tag (pid in the name: ctest runs test cases in parallel).
inline fs::path temp_dir(const std::string& chapter, const std::string& tag) {
  const fs::path d = fs::temp_directory_path() /
                     ("wb_test_" + chapter + "_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct Result {
  int rc = -1;
  std::string out, err;
  fs::path dir;                 // --out
  nlohmann::json lessons;       // lessons.json (null if the run wrote none)
  fs::path trace() const { return dir / "trace.json"; }
};

// Runs bin/<chapter> with `args` plus --quiet --out <fresh dir>. Skips when the chapter has
// not been built (the test target depends on it, so that means a partial build).
inline Result run(const std::string& chapter, const std::vector<std::string>& args,
                  const std::string& tag) {
  const fs::path bin = build_dir() / "bin" / chapter;
  if (!fs::exists(bin)) SKIP("chapter binary not built: " << bin.string());
  Result r;
  const fs::path tmp = temp_dir(chapter, tag);
  r.dir = tmp / "out";
  std::string cmd = quote(bin.string());
  for (const auto& a : args) cmd += " " + quote(a);
  cmd += " --quiet --out " + quote(r.dir.string()) + " >" + quote((tmp / "stdout.txt").string()) +
         " 2>" + quote((tmp / "stderr.txt").string());
  const int status = std::system(cmd.c_str());
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(tmp / "stdout.txt");
  r.err = slurp(tmp / "stderr.txt");
  const std::string lj = slurp(r.dir / "lessons.json");
  r.lessons = nlohmann::json::parse(lj, nullptr, /*allow_exceptions=*/false);
  if (r.lessons.is_discarded()) r.lessons = nullptr;
  return r;
}

// The same on the GPU (--device cuda). Skips when there is no usable CUDA device: no
// nvidia-smi, or the chapter itself says LibTorch sees none (exit 2).
inline Result run_gpu(const std::string& chapter, std::vector<std::string> args,
                      const std::string& tag) {
  if (std::system("nvidia-smi -L >/dev/null 2>&1") != 0) SKIP("no CUDA device (no nvidia-smi)");
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

// expected_output/<platform>/<chapter>/trace.json[.gz], or an empty path when not recorded.
inline fs::path recorded_trace(const std::string& platform, const std::string& chapter) {
  const fs::path dir = root() / "expected_output" / platform / chapter;
  for (const char* name : {"trace.json", "trace.json.gz"})
    if (fs::exists(dir / name)) return dir / name;
  return {};
}

}  // namespace chapter_runner
