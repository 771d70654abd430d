// Starts a workbook program as a child process (wb::Child of workbook/process.hpp: posix_spawn,
// no shell), captures its stdout and stderr, and waits for it with a deadline.
// For the tests that drive the real binaries: test_bad_input, test_no_data_lost.
//
//   auto r = proc::run(proc::bin("01_cold_64"), {"--size", "0"});
//   CHECK(r.code == 2);
//   CHECK_THAT(r.err, ContainsSubstring("--size"));
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "workbook/process.hpp"

namespace proc {

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
inline fs::path bin(const std::string& name) { return build_dir() / "bin" / name; }

// A fresh, empty folder for one test (pid in the name: ctest runs test cases in parallel).
inline fs::path scratch(const std::string& tag) {
  const fs::path d = fs::temp_directory_path() / ("wb_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

struct Exit {
  int code = -1;           // exit status, or -1 when killed by a signal
  int signal = 0;          // the signal that ended it, if any
  bool timed_out = false;  // we killed it at the deadline
  std::string out, err;
};

// A started child: workbook/process.hpp's runner (the one the exercise checker uses too), with
// its stdout and stderr in temporary files that wait() reads back and the destructor removes.
class Child {
 public:
  Child(const fs::path& program, const std::vector<std::string>& args)
      : files_(temp_files()), child_(program, args, {files_.first, files_.second}) {}
  ~Child() {
    std::error_code ec;
    fs::remove(files_.first, ec);
    fs::remove(files_.second, ec);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return child_.pid(); }
  bool running() const { return child_.running(); }
  void signal(int sig) const { child_.signal(sig); }
  std::string err_so_far() const { return slurp(files_.second); }

  Exit wait(double timeout_s = 300) {
    const wb::ChildExit x = child_.wait(timeout_s);
    Exit e;
    e.code = x.code;
    e.signal = x.signal;
    e.timed_out = x.timed_out;
    e.out = slurp(files_.first);
    e.err = slurp(files_.second);
    return e;
  }

 private:
  static std::pair<fs::path, fs::path> temp_files() {
    static int serial = 0;
    const std::string tag = std::to_string(::getpid()) + "_" + std::to_string(serial++);
    return {fs::temp_directory_path() / ("wb_proc_" + tag + ".out"),
            fs::temp_directory_path() / ("wb_proc_" + tag + ".err")};
  }
  std::pair<fs::path, fs::path> files_;
  wb::Child child_;
};

inline Exit run(const fs::path& program, const std::vector<std::string>& args, double timeout_s = 300) {
  Child c(program, args);
  return c.wait(timeout_s);
}

// The chapters this build made, in run order (WORKBOOK_BUILD_DIR/chapters.txt).
inline std::vector<std::string> chapters() {
  std::vector<std::string> v;
  std::istringstream in(slurp(build_dir() / "chapters.txt"));
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) v.push_back(line);
  return v;
}

}  // namespace proc
