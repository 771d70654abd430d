// Running a child program: posix_spawn (no shell, so arguments arrive exactly as given), its
// stdout and stderr into files, and a deadline after which it is killed. The one child-process
// runner of the workbook: the exercise checker runs learners' programs with it, and the tests
// (tests/process.hpp) run the workbook's binaries with it.
//
//   wb::Child c("build/bin/01_cold_64", {"--size", "0"}, {"/tmp/out.txt", "/tmp/err.txt"});
//   wb::ChildExit e = c.wait(60);          // e.code == 2, e.seconds, e.timed_out
//
//   wb::ChildExit e = wb::run_child(program, args, {log, log}, 600);   // one log for both
//   if (wb::have_cuda_device()) ...                                     // nvidia-smi -L
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace wb {

struct ChildOutput {
  std::filesystem::path out;  // the child's stdout (created or truncated)
  std::filesystem::path err;  // its stderr; the same path as `out`: both go into one file
};

struct ChildExit {
  int code = -1;           // exit status, or -1 when a signal ended it
  int signal = 0;          // the signal that ended it, if any
  bool timed_out = false;  // killed at the deadline
  double seconds = 0;      // from start to exit
};

// A started child (stdin is /dev/null). wait() reaps it; the destructor kills and reaps a child
// nobody waited for, so a failing caller never leaves a process behind. Only this child is ever
// signalled: the pid it started.
class Child {
 public:
  // Throws std::runtime_error when the program cannot be started (the message names it).
  Child(const std::filesystem::path& program, const std::vector<std::string>& args,
        const ChildOutput& output);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  bool running() const;
  void signal(int sig) const;
  // Waits at most timeout_s seconds, then kills it (SIGKILL).
  ChildExit wait(double timeout_s);

 private:
  pid_t pid_ = -1;
  double started_ = 0;
};

// Start and wait in one call.
ChildExit run_child(const std::filesystem::path& program, const std::vector<std::string>& args,
                    const ChildOutput& output, double timeout_s);

// Whether this machine has a CUDA device, asked the torch-free way: `nvidia-smi -L` (found on
// PATH, run with run_child, output discarded) exits 0. False when there is no nvidia-smi, it
// fails, or it does not answer within 60 s. Asked once per process; the answer is kept.
bool have_cuda_device();

}  // namespace wb
