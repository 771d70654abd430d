// Checking an exercise: run the learner's program (or the solution) into a fresh folder, read
// what it wrote, judge every check of the catalog entry, and say so in words a beginner reads.
//
//   exercise::CheckOptions o;
//   o.bin_dir = "build/bin";
//   o.out_dir = "out/exercises/ex01_1_hot_loop";
//   exercise::CheckResult r = exercise::check_exercise(*catalog.find("ex01.1"), o);
//   std::cout << exercise::render(e, r);   // never prints a hint: `exercise hint` does
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "exercise/catalog.hpp"
#include "exercise/facts.hpp"

namespace exercise {

enum class Outcome {
  Pass,      // every check that applies here holds
  Fail,      // a check does not hold (yet)
  NeedsGpu,  // nothing to check on this machine: the exercise needs a GPU
  Error,     // the program is missing, crashed, or left no trace
};
std::string_view outcome_name(Outcome o);  // "pass", "fail", "needs_gpu", "error"

// Exit codes of `exercise check`.
int exit_code(Outcome o);  // pass 0, fail 1, error 3, needs a GPU 4 (2 is a usage error)

struct CheckOptions {
  std::filesystem::path bin_dir;  // where the exercise programs are (build/bin)
  std::filesystem::path program;  // a program to check instead of bin_dir/<name>[_solution]
  std::filesystem::path out_dir;  // the run's --out (emptied first)
  std::string device = "auto";    // auto | cpu | cuda
  bool solution = false;          // run <name>_solution
  std::string student;            // "": no variation (the exercise's defaults); else --student NAME
  int timeout_s = 600;
};

// One catalog check, judged.
struct CheckVerdict {
  const Check* check = nullptr;
  wb::Fact fact;          // measured and judged (status, verdict, value, evidence)
  bool gpu_only = false;  // skipped: every condition needs a GPU and this run had none
  bool skipped() const { return gpu_only || (fact.measured && fact.status == wb::Status::NotApplicable); }
  bool passed() const { return !skipped() && fact.status == wb::Status::Pass; }
};

struct CheckResult {
  Outcome outcome = Outcome::Error;
  std::string message;  // Error / NeedsGpu: why, in one or two lines
  std::filesystem::path program, out_dir, log;
  std::vector<std::string> args;
  int exit_code = -1;  // the program's
  double seconds = 0;
  std::string device;   // where it ran: "cpu" / "cuda"
  std::string student;  // whose variation was judged ("" = the defaults)
  std::vector<CheckVerdict> verdicts;
  wb::LessonsReport report;  // the same verdicts as lesson facts (kind "exercise"), tallied by wb::tally
  int passed = 0, failed = 0, skipped = 0;  // the report's passed / failed / not_applicable
  std::string first_failed;                 // Fail: the first check that does not hold (its text)
};

// Runs and judges. Never throws for the program's failures (they become Outcome::Error).
CheckResult check_exercise(const Exercise& e, const CheckOptions& o);

// Judges a run that already happened (its --out folder), as `student`'s: an exercise with a
// variation first checks that the run is that learner's own (variation.hpp). Throws
// std::runtime_error when the folder has no readable trace.
CheckResult judge(const Exercise& e, const std::filesystem::path& out_dir, const std::string& student = "");

// What `exercise check` prints: the checks (as wb::render_lessons shows facts) and the outcome.
// Never a hint's text: on a failure it says that a hint exists and how to ask for it.
std::string render(const Exercise& e, const CheckResult& r);
std::string hint_notice(const Exercise& e);

// A quick, torch-free look for an NVIDIA GPU (the driver's device node or nvidia-smi).
bool gpu_present();

// ---- progress: out/exercises/status.json --------------------------------------------------
struct StatusEntry {
  std::string status = "pending";  // "done" when the last check passed
  std::string last;                // outcome of the last check: pass, fail, needs_gpu, error
  std::string device;              // where the last check ran
  std::string checked_at;          // UTC, ISO 8601
};

class StatusStore {
 public:
  explicit StatusStore(std::filesystem::path file) : file_(std::move(file)) {}
  const std::filesystem::path& file() const { return file_; }
  // A missing file is an empty store; a damaged one too, with `warning` set (never a crash).
  std::map<std::string, StatusEntry> load(std::string* warning = nullptr) const;
  // Records a learner's check (written atomically): done when it passed, pending when it
  // failed or could not run; a "needs a GPU" leaves the status as it was.
  void record(const std::string& id, const CheckResult& r) const;

 private:
  std::filesystem::path file_;
};

}  // namespace exercise
