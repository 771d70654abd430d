// exercise: the workbook's exercises -- list them, read one, get a hint, check your work.
//
//   exercise list                       every exercise, done or pending, and which need a GPU
//   exercise show ex01.1                the task, the files to edit, how to build and check
//   exercise hint ex01.1 [--level 2]    a hint, level 1 a nudge, higher levels say more
//   exercise check ex01.1 --student ada runs your program (your variation), reads its trace,
//                                       says pass or not yet -- and that a hint exists, never the hint
//   exercise check ex01.1 --solution    the same for the reference solution (instructors)
//   exercise grade class/               every exercise of every learner (class/<name>/...):
//                                       class/grades.csv and class/grades.json (instructors)
//
// Exit codes of check: 0 pass, 1 not yet, 2 bad flags or unknown id, 3 could not check
// (program missing or crashed), 4 needs a GPU (nothing checked on this machine).
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "exercise/catalog.hpp"
#include "exercise/checker.hpp"
#include "exercise/grade.hpp"
#include "exercise/variation.hpp"
#include "workbook/fs_util.hpp"

namespace fs = std::filesystem;

namespace {

// The workbook's root: --root, else the nearest folder above the current one holding
// exercises/exercises.json, else the source tree this tool was built from.
fs::path find_root(const std::string& flag) {
  if (!flag.empty()) return flag;
  std::error_code ec;
  for (fs::path p = fs::current_path(ec); !p.empty(); p = p.parent_path()) {
    if (fs::exists(p / "exercises" / "exercises.json")) return p;
    if (p == p.root_path()) break;
  }
  return WORKBOOK_ROOT;
}

// The exercise programs sit next to this tool (build/bin).
fs::path own_dir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path(WORKBOOK_BIN_DIR) : self.parent_path();
}

// A path as the user would type it: relative to the current folder when inside it.
std::string shown(const fs::path& p) {
  std::error_code ec;
  const fs::path rel = fs::relative(p, fs::current_path(ec), ec);
  if (!ec && !rel.empty() && *rel.begin() != "..") return rel.string();
  return p.string();
}

std::string pad(const std::string& s, size_t w) {
  return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' ');
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "The workbook's exercises: list them, read one, get a hint, check your work.\n"
      "Start with:  exercise list",
      "exercise"};
  app.require_subcommand(1);
  app.footer(
      "Exit codes of check: 0 pass, 1 not yet, 2 bad flags or unknown id, 3 could not check,\n"
      "4 needs a GPU (not a failure: nothing could be checked on this machine).");
  std::string root_flag, bin_flag, state_flag;
  app.add_option("--root", root_flag, "the workbook folder (default: found from the current folder)");
  app.add_option("--bin", bin_flag, "where the built exercise programs are (default: next to this tool)");
  app.add_option("--state", state_flag, "where runs and progress go (default: <root>/out/exercises)");

  bool list_ids = false, list_json = false;
  auto* list =
      app.add_subcommand("list", "every exercise with its status (pending/done) and whether it needs a GPU");
  list->add_flag("--ids", list_ids, "only the ids, one per line (for scripts)");
  list->add_flag("--json", list_json, "machine-readable");
  list->fallthrough();

  std::string id, student;
  auto student_ok = [](const std::string& s) {
    return exercise::valid_student_name(s)
               ? std::string()
               : "'" + s + "' is not a learner's name: 1-64 letters, digits, '.', '_', '-'";
  };
  auto* show = app.add_subcommand("show", "the task of one exercise, its files, how to build and check it");
  show->add_option("id", id, "exercise id, e.g. ex01.1")->required();
  show->add_option("--student", student, "show this learner's variation (size, schedule, targets)")
      ->check(student_ok);
  show->fallthrough();
  int level = 1;
  auto* hint = app.add_subcommand("hint", "a hint for one exercise: level 1 a nudge, higher levels say more");
  hint->add_option("id", id, "exercise id, e.g. ex01.1")->required();
  hint->add_option("--level", level, "how much to say (the last level may point at the solution)")
      ->check(CLI::Range(1, 9))
      ->capture_default_str();
  hint->fallthrough();

  exercise::CheckOptions co;
  bool no_hint = false, no_record = false;
  std::string program;
  auto* check =
      app.add_subcommand("check", "run an exercise's program, read its trace, and say pass or not yet");
  check->add_option("id", id, "exercise id, e.g. ex01.1")->required();
  check->add_flag("--solution", co.solution, "check the reference solution instead of your program");
  check->add_option("--device", co.device, "where the program runs")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  check->add_option("--program", program, "check this built program instead (e.g. a learner's submission)");
  check->add_option("--timeout", co.timeout_s, "seconds the program may run")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  check->add_option("--student", co.student, "your name: the program runs your own variation of the exercise")
      ->check(student_ok);
  check->add_flag("--no-hint", no_hint, "(kept for old scripts: check never prints a hint)");
  check->add_flag("--no-record", no_record, "do not record the result in <state>/status.json");
  check->fallthrough();

  exercise::GradeOptions go;
  std::string only;
  auto* grade = app.add_subcommand(
      "grade", "judge every exercise of a class: DIR/<learner>/... -> DIR/grades.csv, .json");
  grade->add_option("dir", go.dir, "the class folder: one sub-folder per learner, named as their --student")
      ->required()
      ->check(CLI::ExistingDirectory);
  grade->add_option("--only", only, "these exercises only, comma-separated (e.g. ex01.3,ex04.1)");
  grade->add_option("--device", go.device, "where submitted programs run")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  grade->add_option("--timeout", go.timeout_s, "seconds a submitted program may run")
      ->check(CLI::Range(1, 86400));
  grade->fallthrough();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  const fs::path root = find_root(root_flag);
  const fs::path bin = bin_flag.empty() ? own_dir() : fs::path(bin_flag);
  const fs::path state = state_flag.empty() ? root / "out" / "exercises" : fs::path(state_flag);
  exercise::Catalog cat;
  try {
    cat = exercise::load_catalog(root / "exercises" / "exercises.json");
  } catch (const exercise::CatalogError& e) {
    std::cerr << "exercise: " << e.what() << "\n(--root names the workbook folder)\n";
    return 3;
  }
  const exercise::StatusStore store(state / "status.json");

  const exercise::Exercise* ex = nullptr;
  if (!id.empty()) {
    ex = cat.find(id);
    if (!ex) {
      std::cerr << "exercise: unknown exercise '" << id << "'.\nValid ids: " << cat.ids()
                << "\n(`exercise list` shows them with their titles)\n";
      return 2;
    }
  }

  if (*list) {
    std::string warning;
    const auto status = store.load(&warning);
    if (!warning.empty()) std::cerr << "exercise: " << warning << "\n";
    if (list_ids) {
      for (const auto& e : cat.exercises) std::cout << e.id << "\n";
      return 0;
    }
    if (list_json) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& e : cat.exercises) {
        const auto it = status.find(e.id);
        j.push_back({{"id", e.id},
                     {"name", e.name},
                     {"chapter", e.chapter},
                     {"title", e.title},
                     {"needs_gpu", e.needs_gpu},
                     {"status", it == status.end() ? "pending" : it->second.status}});
      }
      std::cout << j.dump(2) << "\n";
      return 0;
    }
    int done = 0;
    std::cout << pad("ID", 8) << pad("CHAPTER", 23) << pad("GPU", 11) << pad("STATUS", 9) << "TITLE\n";
    for (const auto& e : cat.exercises) {
      const auto it = status.find(e.id);
      const std::string st = it == status.end() ? "pending" : it->second.status;
      done += st == "done";
      std::cout << pad(e.id, 8) << pad(e.chapter, 23) << pad(e.needs_gpu ? "needs one" : "-", 11)
                << pad(st, 9) << e.title << "\n";
    }
    std::cout << "\n"
              << done << " of " << cat.exercises.size() << " done.  `exercise show ID` for a task, "
              << "`exercise check ID` to check it.\n";
    if (!exercise::gpu_present())
      std::cout << "No GPU here: exercises marked 'needs one' are checked on a GPU machine.\n";
    return 0;
  }

  if (*grade) {
    for (size_t pos = 0; pos < only.size();) {
      const size_t comma = std::min(only.find(',', pos), only.size());
      const std::string one = only.substr(pos, comma - pos);
      const exercise::Exercise* e = cat.find(one);
      if (!e) {
        std::cerr << "exercise: --only: unknown exercise '" << one << "'.\nValid ids: " << cat.ids() << "\n";
        return 2;
      }
      go.only.push_back(e->id);
      pos = comma + 1;
    }
    go.work_dir = state / "grade";
    exercise::GradeReport g;
    try {
      g = exercise::grade(cat, go);
      wb::write_file_atomic(go.dir / "grades.csv", exercise::grades_csv(g));
      wb::write_file_atomic(go.dir / "grades.json", exercise::grades_json(g).dump(2) + "\n");
    } catch (const std::exception& e) {
      std::cerr << "exercise: grade: " << e.what() << "\n";
      return 3;
    }
    std::cout << exercise::grades_text(g) << "Wrote " << shown(go.dir / "grades.csv") << " and "
              << shown(go.dir / "grades.json") << "\n";
    return 0;
  }

  if (*show) {
    const fs::path stub = root / "exercises" / ex->name / "main.cpp";
    const std::string build = shown(bin.parent_path()), tool = shown(bin / "exercise");
    std::cout << ex->id << "  " << ex->title << "\n"
              << "chapter " << ex->chapter << (ex->needs_gpu ? "; needs a GPU" : "; runs on a CPU or a GPU")
              << "\n\n"
              << ex->task << "\n"
              << "Edit:   " << shown(stub) << "  (look for TODO(" << ex->id << "))\n"
              << "Build:  cmake --build " << build << " --target " << ex->name << "\n"
              << "Run:    " << shown(bin / ex->name) << "   (writes out/" << ex->name
              << "/: table.txt, trace.json)\n"
              << "Check:  " << tool << " check " << ex->id << "\n"
              << "Stuck?  " << tool << " hint " << ex->id << "\n";
    if (!ex->vary.empty()) {
      std::cout << "\nThis exercise varies per learner: run and check it with --student YOUR_NAME.\n";
      if (!student.empty())
        std::cout << "Your variation (" << student
                  << "): " << exercise::describe_variation(exercise::variation(*ex, student)) << "\n";
    }
    if (!ex->gpu_note.empty()) std::cout << "\n" << ex->gpu_note;
    return 0;
  }

  if (*hint) {
    const int levels = static_cast<int>(ex->hints.size());
    const int shown_level = std::min(level, levels);
    std::cout << "Hint for " << ex->id << " (" << ex->title << "), level " << shown_level << " of " << levels
              << ":\n"
              << ex->hints[static_cast<size_t>(shown_level - 1)];
    if (level > levels)
      std::cout << "(there is no level " << level << ": this is the last one)\n";
    else if (shown_level < levels)
      std::cout << "(more: exercise hint " << ex->id << " --level " << shown_level + 1 << ")\n";
    return 0;
  }

  // check
  co.bin_dir = bin;
  co.program = program;
  co.out_dir = state / (ex->name + (co.solution ? "_solution" : ""));
  std::cout << "Checking " << ex->id << (co.solution ? " (the reference solution)" : "") << " ...\n"
            << std::flush;
  const exercise::CheckResult r = exercise::check_exercise(*ex, co);
  (void)no_hint;
  std::cout << exercise::render(*ex, r) << std::flush;
  if (!no_record && !co.solution && program.empty()) {
    try {
      store.record(ex->id, r);
    } catch (const std::exception& e) {
      std::cerr << "exercise: could not save progress in " << store.file().string() << ": " << e.what()
                << "\n";
    }
  }
  return exercise::exit_code(r.outcome);
}
