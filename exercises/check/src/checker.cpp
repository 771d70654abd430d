#include "exercise/checker.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "exercise/variation.hpp"
#include "workbook/fs_util.hpp"
#include "workbook/process.hpp"
#include "workbook/trace_model.hpp"

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

bool gpu_present() { return ::access("/dev/nvidiactl", F_OK) == 0 || wb::have_cuda_device(); }

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

// {"var": "key"} in a condition's value: the learner's own choice of that key.
wb::Pattern resolve(wb::Pattern p, const nlohmann::json& variation) {
  for (auto& c : p.all)
    if (c.value.is_object() && c.value.contains("var"))
      c.value = variation.value(c.value["var"].get<std::string>(), nlohmann::json());
  return p;
}

// The check every varied exercise gets first: the run is the learner's own variation.
const Check& variation_check() {
  static const Check c = [] {
    Check k;
    k.fact = "variation";
    k.pattern.text = "the run is your own variation (your --student name, your size and schedule)";
    k.pattern.why =
        "each learner's program runs its own problem, picked from the name; someone else's run does not fit";
    k.pattern.all = {{"/matches", wb::Condition::Op::Eq, true, wb::Condition::Scope::Any, 0, ""}};
    return k;
  }();
  return c;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// A check the harness adds before an exercise's own: its fact, its text and why, and the one
// data key that must be true.
Check harness_check(const char* fact, const char* text, const char* why, const char* key) {
  Check k;
  k.fact = fact;
  k.pattern.text = text;
  k.pattern.why = why;
  k.pattern.all = {{key, wb::Condition::Op::Eq, true, wb::Condition::Scope::Any, 0, ""}};
  return k;
}

// The check every run handed a token gets first: the trace was written by this run.
const Check& fresh_run_check() {
  static const Check c = harness_check(
      "fresh_run", "the run is fresh: its trace carries this check's one-time token",
      "each check hands the program a new token, and the harness writes it into trace.json; a copied "
      "or replayed run carries another one, or none",
      "/matches");
  return c;
}

// The check of every exercise with a "workload": it ran as the exercise specifies.
const Check& workload_check() {
  static const Check c = harness_check(
      "workload", "the exercise's workload ran as specified: its ops, their counts, its results",
      "the checks below judge the trace of the exercise's workload; a program that deletes or "
      "neutralises part of it answers a different exercise",
      "/ok");
  return c;
}

// A new one-time token: 128 random bits, in hex.
std::string new_token() {
  std::random_device rd;
  std::string t;
  char buf[9];
  for (int i = 0; i < 4; ++i) {
    std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(rd()));
    t += buf;
  }
  return t;
}

}  // namespace

CheckResult judge(const Exercise& e, const fs::path& out_dir, const std::string& student,
                  const std::string& token) {
  CheckResult r;
  r.out_dir = out_dir;
  r.student = student;
  RunOutput run = read_run_output(out_dir);
  run.student = student;
  run.variation = variation(e, student);
  run.workload = e.workload;
  run.token = token;
  const wb::TraceModel model(run.trace);
  const bool gpu = run.on_gpu();
  r.device = gpu ? "cuda" : "cpu";
  if (e.needs_gpu && !gpu) {
    r.outcome = Outcome::NeedsGpu;
    r.message = e.id + " needs a GPU, and this run was on the CPU: nothing to check";
    return r;
  }
  r.report.kind = "exercise";
  r.report.chapter = e.id;
  r.report.title = e.title + " (chapter " + e.chapter + ")";
  r.report.source = (out_dir / "trace.json").string();
  r.report.device = gpu ? "GPU" : "CPU only";
  std::vector<const Check*> checks;
  if (!token.empty()) checks.push_back(&fresh_run_check());
  if (!e.workload.empty()) checks.push_back(&workload_check());
  if (!e.vary.empty()) checks.push_back(&variation_check());
  for (const auto& c : e.checks) checks.push_back(&c);
  for (const Check* c : checks) {
    CheckVerdict v;
    v.check = c;
    const wb::Pattern pattern = resolve(c->pattern, run.variation);
    if (!gpu && gpu_only(*c)) {
      v.gpu_only = true;
      v.fact.id = c->fact;
      v.fact.title = c->pattern.text;
      v.fact.pattern = pattern;
      v.fact.status = wb::Status::NotApplicable;
      v.fact.verdict = "checked on a GPU only: this run was on the CPU";
    } else {
      try {
        v.fact =
            wb::apply_pattern(measure(c->fact, run, model, c->annotation), pattern, run.trace, run.problem());
      } catch (const std::exception& ex) {
        v.fact.id = c->fact;
        v.fact.pattern = pattern;
        v.fact.status = wb::Status::Fail;
        v.fact.verdict = std::string("could not be measured: ") + ex.what();
      }
      // n/a is not a pass: a check whose fact could not be measured on a run it applies to
      // (no table.txt, no bias_add range, no answer to compare) does not hold.
      if (!v.fact.measured && v.fact.status == wb::Status::NotApplicable) {
        v.fact.status = wb::Status::Fail;
        v.fact.verdict = "could not be measured: " + v.fact.explanation;
      }
      v.fact.title = c->pattern.text;
    }
    r.report.facts.push_back(v.fact);
    r.verdicts.push_back(std::move(v));
  }
  wb::tally(r.report);
  r.passed = r.report.passed;
  r.failed = r.report.failed;
  r.skipped = r.report.not_applicable;
  if (r.failed > 0) {
    r.outcome = Outcome::Fail;
    for (const auto& v : r.verdicts)
      if (v.fact.status == wb::Status::Fail) {
        r.first_failed = v.check->pattern.text;
        break;
      }
  } else if (r.passed > 0) {
    r.outcome = Outcome::Pass;
  } else if (!gpu) {
    r.outcome = Outcome::NeedsGpu;
    r.message = "every check of this exercise needs a GPU, and this run was on the CPU";
  } else {
    r.outcome = Outcome::Fail;
    r.message = "no check applies to this run (did a flag change the problem size?)";
    r.first_failed = r.message;
  }
  return r;
}

namespace {

// The checks before running: a GPU where the exercise needs one (then `device` is "cuda"), the
// program built, the output folder emptied. False, with r's outcome and message, when one fails.
bool ready_to_run(const Exercise& e, const CheckOptions& o, CheckResult& r, std::string& device) {
  if (e.needs_gpu) {
    if (o.device == "cpu") {
      r.outcome = Outcome::NeedsGpu;
      r.message = e.id + " needs a GPU: with --device cpu there is nothing to check.";
      return false;
    }
    if (!gpu_present()) {
      r.outcome = Outcome::NeedsGpu;
      r.message =
          e.id + " needs a GPU, and this machine has none (no NVIDIA driver). Check it on a GPU machine.";
      return false;
    }
    device = "cuda";
  }
  if (!o.program.empty() && !fs::exists(r.program)) {
    r.outcome = Outcome::Error;
    r.message = "no program at " + r.program.string() + " (the file given to check)";
    return false;
  }
  if (!fs::exists(r.program)) {
    r.outcome = Outcome::Error;
    const std::string target = r.program.filename().string();
    r.message = "the program is not built: " + r.program.string() +
                "\nBuild it with:  cmake --build build --target " + target +
                (o.solution ? "\n(solutions are built when the solutions/ folder exists and "
                              "WORKBOOK_EXERCISE_SOLUTIONS is ON)"
                            : "");
    return false;
  }
  try {
    fs::remove_all(o.out_dir);
    fs::create_directories(o.out_dir);
  } catch (const fs::filesystem_error& ex) {
    r.outcome = Outcome::Error;
    r.message = "cannot prepare " + o.out_dir.string() + ": " + ex.code().message();
    return false;
  }
  return true;
}

// The program's arguments: the exercise's own, then --device, --quiet, --out (and --student).
std::vector<std::string> program_args(const Exercise& e, const CheckOptions& o, const std::string& device) {
  std::vector<std::string> args = e.args;
  for (const std::string& a :
       {std::string("--device"), device, std::string("--quiet"), std::string("--out"), o.out_dir.string()})
    args.push_back(a);
  if (!o.student.empty()) {
    args.push_back("--student");
    args.push_back(o.student);
  }
  return args;
}

// False, with r's outcome and message, when the run did not succeed (no CUDA device, stopped,
// crashed, a non-zero exit).
bool ran_well(const Exercise& e, const CheckOptions& o, const wb::ChildExit& ran, const std::string& log,
              CheckResult& r) {
  if (ran.code == 2 && e.needs_gpu && log.find("no CUDA device") != std::string::npos) {
    r.outcome = Outcome::NeedsGpu;
    r.message = e.id + " needs a GPU, and LibTorch sees no CUDA device here:\n" + last_lines(log, 3);
    return false;
  }
  if (ran.timed_out || ran.code != 0) {
    r.outcome = Outcome::Error;
    r.message = ran.timed_out
                    ? "the program ran longer than " + std::to_string(o.timeout_s) + " s and was stopped"
                : ran.signal ? "the program crashed (signal " + std::to_string(ran.signal) + ")"
                             : "the program exited with code " + std::to_string(ran.code);
    if (!log.empty()) r.message += "; its last lines:\n" + last_lines(log, 12);
    return false;
  }
  return true;
}

}  // namespace

CheckResult check_exercise(const Exercise& e, const CheckOptions& o) {
  CheckResult r;
  r.program = !o.program.empty() ? o.program : o.bin_dir / (e.name + (o.solution ? "_solution" : ""));
  r.out_dir = o.out_dir;
  r.device = o.device;
  std::string device = o.device;
  if (!ready_to_run(e, o, r, device)) return r;
  r.args = program_args(e, o, device);
  r.student = o.student;
  r.log = o.out_dir / "program.log";
  // The one-time token, handed to the program in its environment (the child inherits it).
  const std::string token = o.token.empty() ? new_token() : o.token;
  wb::ChildExit ran;
  try {
    ::setenv(kRunTokenEnv, token.c_str(), 1);
    ran = wb::run_child(r.program, r.args, {r.log, r.log}, o.timeout_s);
    ::unsetenv(kRunTokenEnv);
  } catch (const std::exception& ex) {
    ::unsetenv(kRunTokenEnv);
    r.outcome = Outcome::Error;
    r.message = ex.what();
    return r;
  }
  r.exit_code = ran.code;
  r.seconds = ran.seconds;
  const std::string log = slurp(r.log);
  if (!ran_well(e, o, ran, log, r)) return r;
  try {
    CheckResult j = judge(e, o.out_dir, o.student, token);
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

std::string hint_notice(const Exercise& e) {
  const size_t n = e.hints.empty() ? 1 : e.hints.size();
  return "A hint is available: exercise hint " + e.id +
         (n > 1 ? " (levels 1 to " + std::to_string(n) + ": --level 2 and up say more)" : "") + "\n";
}

std::string render(const Exercise& e, const CheckResult& r) {
  std::ostringstream os;
  os << e.id << "  " << e.title << "   (chapter " << e.chapter << ")\n";
  if (!r.student.empty()) os << "student: " << r.student << "\n";
  if (!r.args.empty()) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f", r.seconds);
    os << "ran " << shell_words(r.program, r.args) << "\n    on the " << (r.device == "cuda" ? "GPU" : "CPU")
       << ", " << secs << " s\n";
  }
  if (r.outcome == Outcome::NeedsGpu && r.verdicts.empty()) {
    os << "\nNEEDS A GPU -- " << r.message
       << "\nThis is not a failure: the exercise is checked on a GPU machine.\n";
    return os.str();
  }
  if (r.outcome == Outcome::Error) {
    os << "\nCOULD NOT CHECK -- " << r.message << "\n";
    return os.str();
  }
  // The checks as the lesson report shows facts: expected pattern, what was measured, verdict.
  os << "\n" << wb::render_lessons(r.report, wb::Format::Text) << "\n";
  switch (r.outcome) {
    case Outcome::Pass:
      os << "PASS -- every check that applies here holds.";
      if (r.skipped > 0)
        os << " (" << r.skipped << " need" << (r.skipped == 1 ? "s" : "") << " a GPU: not checked here.)";
      os << "\n";
      if (r.skipped > 0 && !e.gpu_note.empty()) os << indent(e.gpu_note, "  ");
      break;
    case Outcome::Fail:
      os << "NOT YET -- this check does not hold yet: " << r.first_failed << "\n";
      if (!r.message.empty() && r.message != r.first_failed) os << r.message << "\n";
      os << hint_notice(e);
      break;
    case Outcome::NeedsGpu: os << "NEEDS A GPU -- " << r.message << "\n"; break;
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
    j["exercises"][k] = {
        {"status", v.status}, {"last", v.last}, {"device", v.device}, {"checked_at", v.checked_at}};
  fs::create_directories(file_.parent_path());
  wb::write_file_atomic(file_, j.dump(2) + "\n");
}

}  // namespace exercise
