#include "exercise/checker.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "workbook/fs_util.hpp"
#include "workbook/model.hpp"

namespace fs = std::filesystem;

namespace exercise {

using nlohmann::json;

std::string_view outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Pass: return "pass";
    case Outcome::Fail: return "fail";
    case Outcome::NeedsGpu: return "needs_gpu";
    case Outcome::Error: return "error";
  }
  return "error";
}

int exit_code(Outcome o) {
  switch (o) {
    case Outcome::Pass: return 0;
    case Outcome::Fail: return 1;
    case Outcome::Error: return 3;
    case Outcome::NeedsGpu: return 4;
  }
  return 3;
}

bool gpu_present() {
  if (::access("/dev/nvidiactl", F_OK) == 0) return true;
  return std::system("nvidia-smi -L >/dev/null 2>&1") == 0;
}

namespace {

std::string last_lines(const std::string& text, int n) {
  size_t pos = text.size();
  if (pos > 0 && text[pos - 1] == '\n') --pos;
  for (int i = 0; i < n && pos != std::string::npos && pos > 0; ++i) pos = text.rfind('\n', pos - 1);
  return pos == std::string::npos || pos == 0 ? text : text.substr(pos + 1);
}

std::string shell_words(const fs::path& program, const std::vector<std::string>& args) {
  std::string s = program.string();
  for (const auto& a : args) s += " " + (a.find(' ') == std::string::npos ? a : "'" + a + "'");
  return s;
}

struct Ran {
  int exit_code = -1;
  bool timed_out = false;
  int signal = 0;
  double seconds = 0;
};

// Runs `program args...` with stdout and stderr into `log`; kills it (only it: the pid we
// started) after `timeout_s`.
Ran run_program(const fs::path& program, const std::vector<std::string>& args, const fs::path& log, int timeout_s) {
  Ran r;
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot start " + program.string() + ": fork failed");
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
    std::vector<std::string> argv_s{program.string()};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(program.c_str(), argv.data());
    std::fprintf(stderr, "cannot run %s: %s\n", program.c_str(), std::strerror(errno));
    std::_Exit(127);
  }
  int status = 0;
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) throw std::runtime_error("lost track of " + program.string());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > timeout_s) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

// A check whose every condition needs a GPU cannot say anything about a CPU run.
bool gpu_only(const Check& c) {
  for (const auto& cond : c.pattern.all)
    if (cond.scope == wb::Condition::Scope::Any) return false;
  return true;
}

std::string indent(const std::string& text, const std::string& pad) {
  std::string out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out += pad + line + "\n";
  return out;
}

// "1 of 2 checks hold.", "1 of 1 check holds."
std::string holds(int passed, int of) {
  return std::to_string(passed) + " of " + std::to_string(of) + (of == 1 ? " check holds." : " checks hold.");
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

CheckResult judge(const Exercise& e, const fs::path& out_dir) {
  CheckResult r;
  r.out_dir = out_dir;
  const RunOutput run = read_run_output(out_dir);
  const wb::TraceModel model(run.trace);
  const bool gpu = run.on_gpu();
  r.device = gpu ? "cuda" : "cpu";
  for (const auto& c : e.checks) {
    CheckVerdict v;
    v.check = &c;
    if (!gpu && gpu_only(c)) {
      v.gpu_only = true;
      v.fact.id = c.fact;
      v.fact.pattern = c.pattern;
      v.fact.status = wb::Status::NotApplicable;
      v.fact.verdict = "checked on a GPU only";
    } else {
      try {
        v.fact = wb::apply_pattern(measure(c.fact, run, model, c.annotation), c.pattern, run.trace, run.problem());
      } catch (const std::exception& ex) {
        v.fact.id = c.fact;
        v.fact.pattern = c.pattern;
        v.fact.status = wb::Status::Fail;
        v.fact.verdict = std::string("could not be measured: ") + ex.what();
      }
    }
    if (v.skipped()) r.skipped++;
    else if (v.passed()) r.passed++;
    else r.failed++;
    r.verdicts.push_back(std::move(v));
  }
  if (r.failed > 0) {
    r.outcome = Outcome::Fail;
  } else if (r.passed > 0) {
    r.outcome = Outcome::Pass;
  } else if (!gpu) {
    r.outcome = Outcome::NeedsGpu;
    r.message = "every check of this exercise needs a GPU, and this run was on the CPU";
  } else {
    r.outcome = Outcome::Fail;
    r.message = "no check applies to this run (did a flag change the problem size?)";
  }
  return r;
}

CheckResult check_exercise(const Exercise& e, const CheckOptions& o) {
  CheckResult r;
  r.program = !o.program.empty() ? o.program : o.bin_dir / (e.name + (o.solution ? "_solution" : ""));
  r.out_dir = o.out_dir;
  r.device = o.device;
  std::string device = o.device;
  if (e.needs_gpu) {
    if (o.device == "cpu") {
      r.outcome = Outcome::NeedsGpu;
      r.message = e.id + " needs a GPU: with --device cpu there is nothing to check.";
      return r;
    }
    if (!gpu_present()) {
      r.outcome = Outcome::NeedsGpu;
      r.message = e.id + " needs a GPU, and this machine has none (no NVIDIA driver). Check it on a GPU machine.";
      return r;
    }
    device = "cuda";
  }
  if (!fs::exists(r.program)) {
    r.outcome = Outcome::Error;
    const std::string target = r.program.filename().string();
    r.message = "the program is not built: " + r.program.string() + "\nBuild it with:  cmake --build build --target " +
                target +
                (o.solution ? "\n(solutions are built when the solutions/ folder exists and "
                              "WORKBOOK_EXERCISE_SOLUTIONS is ON)"
                            : "");
    return r;
  }
  try {
    fs::remove_all(o.out_dir);
    fs::create_directories(o.out_dir);
  } catch (const fs::filesystem_error& ex) {
    r.outcome = Outcome::Error;
    r.message = "cannot prepare " + o.out_dir.string() + ": " + ex.code().message();
    return r;
  }
  r.args = e.args;
  for (const std::string& a : {std::string("--device"), device, std::string("--quiet"), std::string("--out"),
                               o.out_dir.string()})
    r.args.push_back(a);
  r.log = o.out_dir / "program.log";
  Ran ran;
  try {
    ran = run_program(r.program, r.args, r.log, o.timeout_s);
  } catch (const std::exception& ex) {
    r.outcome = Outcome::Error;
    r.message = ex.what();
    return r;
  }
  r.exit_code = ran.exit_code;
  r.seconds = ran.seconds;
  const std::string log = slurp(r.log);
  if (ran.exit_code == 2 && e.needs_gpu && log.find("no CUDA device") != std::string::npos) {
    r.outcome = Outcome::NeedsGpu;
    r.message = e.id + " needs a GPU, and LibTorch sees no CUDA device here:\n" + last_lines(log, 3);
    return r;
  }
  if (ran.timed_out || ran.exit_code != 0) {
    r.outcome = Outcome::Error;
    r.message = ran.timed_out ? "the program ran longer than " + std::to_string(o.timeout_s) + " s and was stopped"
                : ran.signal   ? "the program crashed (signal " + std::to_string(ran.signal) + ")"
                               : "the program exited with code " + std::to_string(ran.exit_code);
    if (!log.empty()) r.message += "; its last lines:\n" + last_lines(log, 12);
    return r;
  }
  try {
    CheckResult j = judge(e, o.out_dir);
    j.program = r.program;
    j.args = r.args;
    j.log = r.log;
    j.exit_code = r.exit_code;
    j.seconds = r.seconds;
    return j;
  } catch (const std::exception& ex) {
    r.outcome = Outcome::Error;
    r.message = std::string("the program ran, but its outputs cannot be read: ") + ex.what();
    return r;
  }
}

std::string render(const Exercise& e, const CheckResult& r, bool with_hint) {
  std::ostringstream os;
  os << e.id << "  " << e.title << "   (chapter " << e.chapter << ")\n";
  if (!r.args.empty()) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f", r.seconds);
    os << "ran " << shell_words(r.program, r.args) << "\n    on the " << (r.device == "cuda" ? "GPU" : "CPU") << ", "
       << secs << " s\n";
  }
  if (r.outcome == Outcome::NeedsGpu && r.verdicts.empty()) {
    os << "\nNEEDS A GPU -- " << r.message << "\nThis is not a failure: the exercise is checked on a GPU machine.\n";
    return os.str();
  }
  if (r.outcome == Outcome::Error) {
    os << "\nCOULD NOT CHECK -- " << r.message << "\n";
    return os.str();
  }
  os << "\n";
  for (const auto& v : r.verdicts) {
    const char* tag = v.skipped() ? "[skip]   " : v.passed() ? "[ok]     " : "[not yet]";
    os << "  " << tag << " " << v.check->pattern.text << "\n";
    if (v.gpu_only) {
      os << "            (needs a GPU: checked when this runs on one)\n";
      continue;
    }
    if (!v.fact.value.empty()) os << "            " << v.fact.value << "\n";
    if (!v.fact.verdict.empty()) os << "            " << (v.passed() ? "holds: " : v.skipped() ? "" : "because: ")
                                    << v.fact.verdict << "\n";
    if (!v.passed() && !v.skipped())
      for (size_t i = 0; i < v.fact.evidence.size() && i < 4; ++i) os << "            - " << v.fact.evidence[i] << "\n";
  }
  os << "\n";
  const int applicable = r.passed + r.failed;
  switch (r.outcome) {
    case Outcome::Pass:
      os << "PASS -- " << holds(r.passed, applicable);
      if (r.skipped > 0) os << " (" << r.skipped << " need" << (r.skipped == 1 ? "s" : "") << " a GPU: not checked here.)";
      os << "\n";
      if (r.skipped > 0 && !e.gpu_note.empty()) os << indent(e.gpu_note, "  ");
      break;
    case Outcome::Fail:
      os << "NOT YET -- " << holds(r.passed, applicable);
      if (!r.message.empty()) os << " " << r.message;
      os << "\n";
      if (with_hint) os << "\nHint:\n" << indent(e.hint, "  ");
      break;
    case Outcome::NeedsGpu:
      os << "NEEDS A GPU -- " << r.message << "\n";
      break;
    case Outcome::Error: break;
  }
  os << "\nWhat the run wrote: " << r.out_dir.string()
     << "/ (table.txt; trace.json: open it at https://ui.perfetto.dev)\n";
  return os.str();
}

std::map<std::string, StatusEntry> StatusStore::load(std::string* warning) const {
  std::map<std::string, StatusEntry> out;
  if (!fs::exists(file_)) return out;
  const json j = json::parse(slurp(file_), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("exercises") || !j["exercises"].is_object()) {
    if (warning) *warning = file_.string() + " is damaged; starting from an empty progress record";
    return out;
  }
  for (const auto& [id, v] : j["exercises"].items()) {
    if (!v.is_object()) continue;
    StatusEntry s;
    s.status = v.value("status", "pending");
    s.last = v.value("last", "");
    s.device = v.value("device", "");
    s.checked_at = v.value("checked_at", "");
    out[id] = s;
  }
  return out;
}

void StatusStore::record(const std::string& id, const CheckResult& r) const {
  if (r.outcome == Outcome::NeedsGpu) return;  // neither a pass nor a failure
  auto all = load();
  StatusEntry& s = all[id];
  s.status = r.outcome == Outcome::Pass ? "done" : "pending";
  s.last = std::string(outcome_name(r.outcome));
  s.device = r.device;
  s.checked_at = utc_now();
  json j = {{"version", 1}, {"exercises", json::object()}};
  for (const auto& [k, v] : all)
    j["exercises"][k] = {{"status", v.status}, {"last", v.last}, {"device", v.device}, {"checked_at", v.checked_at}};
  fs::create_directories(file_.parent_path());
  wb::write_file_atomic(file_, j.dump(2) + "\n");
}

}  // namespace exercise
