#include "workbook/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <thread>

extern char** environ;

namespace wb {

namespace {
double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

Child::Child(const std::filesystem::path& program, const std::vector<std::string>& args,
             const ChildOutput& output) {
  std::vector<std::string> argv_s{program.string()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, output.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (output.err == output.out)
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
  else
    posix_spawn_file_actions_addopen(&fa, 2, output.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  started_ = now_s();
  const int rc = posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    pid_ = -1;
    throw std::runtime_error("cannot start " + program.string() + ": " + std::strerror(rc));
  }
}

Child::~Child() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

bool Child::running() const { return pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0; }

void Child::signal(int sig) const {
  if (pid_ > 0) ::kill(pid_, sig);
}

ChildExit Child::wait(double timeout_s) {
  ChildExit e;
  if (pid_ <= 0) return e;
  const double deadline = started_ + timeout_s;
  int status = 0;
  for (;;) {
    const pid_t w = ::waitpid(pid_, &status, WNOHANG);
    if (w == pid_) break;
    if (w < 0 && errno != EINTR) break;
    if (now_s() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      e.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pid_ = -1;
  e.seconds = now_s() - started_;
  if (WIFEXITED(status)) e.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
  return e;
}

ChildExit run_child(const std::filesystem::path& program, const std::vector<std::string>& args,
                    const ChildOutput& output, double timeout_s) {
  Child c(program, args, output);
  return c.wait(timeout_s);
}

namespace {
// The first executable PROGRAM in the folders of $PATH; empty when there is none.
std::filesystem::path on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "";
  while (!dirs.empty()) {
    const size_t colon = std::min(dirs.find(':'), dirs.size());
    const std::filesystem::path candidate =
        std::filesystem::path(colon == 0 ? "." : std::string(dirs.substr(0, colon))) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    dirs.remove_prefix(std::min(colon + 1, dirs.size()));
  }
  return {};
}
}  // namespace

bool have_cuda_device() {
  static const bool have = [] {
    const std::filesystem::path smi = on_path("nvidia-smi");
    if (smi.empty()) return false;
    try {
      const ChildExit e = run_child(smi, {"-L"}, {"/dev/null", "/dev/null"}, 60);
      return !e.timed_out && e.code == 0;
    } catch (const std::runtime_error&) {
      return false;
    }
  }();
  return have;
}

}  // namespace wb
