// Starts a workbook program as a child process (posix_spawn, no shell: arguments arrive
// exactly as given), captures its stdout and stderr in files, and waits for it with a deadline.
// For the tests that drive the real binaries: test_bad_input, test_no_data_lost.
//
//   auto r = proc::run(proc::bin("01_cold_64"), {"--size", "0"});
//   CHECK(r.code == 2);
//   CHECK_THAT(r.err, ContainsSubstring("--size"));
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

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

// A started child. wait() reaps it; the destructor kills and reaps a child nobody waited for,
// so a failing test never leaves a process behind.
class Child {
 public:
  Child(const fs::path& program, const std::vector<std::string>& args) {
    static int serial = 0;
    const std::string tag = std::to_string(::getpid()) + "_" + std::to_string(serial++);
    out_ = fs::temp_directory_path() / ("wb_proc_" + tag + ".out");
    err_ = fs::temp_directory_path() / ("wb_proc_" + tag + ".err");
    std::vector<std::string> argv_s{program.string()};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int rc = posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw std::runtime_error("cannot start " + program.string() + ": " + std::to_string(rc));
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    std::error_code ec;
    fs::remove(out_, ec);
    fs::remove(err_, ec);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0; }
  void signal(int sig) const { if (pid_ > 0) ::kill(pid_, sig); }
  std::string err_so_far() const { return slurp(err_); }

  Exit wait(double timeout_s = 300) {
    Exit e;
    if (pid_ <= 0) return e;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        e.timed_out = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    pid_ = -1;
    if (WIFEXITED(status)) e.code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
    e.out = slurp(out_);
    e.err = slurp(err_);
    return e;
  }

 private:
  pid_t pid_ = -1;
  fs::path out_, err_;
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
