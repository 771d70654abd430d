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

// `exercise list`: every exercise with its status (--ids: the ids; --json: machine-readable).
int list_exercises(const exercise::Catalog& cat, const exercise::StatusStore& store, bool ids, bool as_json) {
  std::string warning;
  const auto status = store.load(&warning);
  if (!warning.empty()) std::cerr << "exercise: " << warning << "\n";
  if (ids) {
    for (const auto& e : cat.exercises) std::cout << e.id << "\n";
    return 0;
  }
  if (as_json) {
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
    std::cout << pad(e.id, 8) << pad(e.chapter, 23) << pad(e.needs_gpu ? "needs one" : "-", 11) << pad(st, 9)
              << e.title << "\n";
  }
  std::cout << "\n"
            << done << " of " << cat.exercises.size() << " done.  `exercise show ID` for a task, "
            << "`exercise check ID` to check it.\n";
  if (!exercise::gpu_present())
    std::cout << "No GPU here: exercises marked 'needs one' are checked on a GPU machine.\n";
  return 0;
}

// `exercise grade DIR`: every learner's exercises (--only: these), into DIR/grades.csv, .json.
int grade_class(const exercise::Catalog& cat, exercise::GradeOptions go, const std::string& only,
                const fs::path& state) {
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

// `exercise show ID`: the task, its files, how to build and check it (--student: the variation).
int show_exercise(const exercise::Exercise& e, const fs::path& root, const fs::path& bin,
                  const std::string& student) {
  const exercise::Exercise* ex = &e;
  const fs::path stub = root / "exercises" / ex->name / "main.cpp";
  const std::string build = shown(bin.parent_path()), tool = shown(bin / "exercise");
  // With --student, the commands to copy say it too: the program and the check run this
  // learner's variation only when they are given the name.
  const std::string as = student.empty() ? std::string() : " --student " + student;
  std::cout << ex->id << "  " << ex->title << "\n"
            << "chapter " << ex->chapter << (ex->needs_gpu ? "; needs a GPU" : "; runs on a CPU or a GPU")
            << "\n\n"
            << ex->task << "\n"
            << "Edit:   " << shown(stub) << "  (look for TODO(" << ex->id << "))\n"
            << "Build:  cmake --build " << build << " --target " << ex->name << "\n"
            << "Run:    " << shown(bin / ex->name) << as << "   (writes out/" << ex->name
            << "/: table.txt, trace.json)\n"
            << "Check:  " << tool << " check " << ex->id << as << "\n"
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

// `exercise hint ID --level N`: one hint; the last level may point at the solution.
int show_hint(const exercise::Exercise& e, int level) {
  const exercise::Exercise* ex = &e;
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

// The tool's flags and subcommands, as parsed.
struct Cli {
  std::string root_flag, bin_flag, state_flag;
  bool list_ids = false, list_json = false;
  std::string id, student;
  int level = 1;
  exercise::CheckOptions co;
  bool no_hint = false, no_record = false;
  std::string program;
  exercise::GradeOptions go;
  std::string only;
  CLI::App *list = nullptr, *show = nullptr, *hint = nullptr, *check = nullptr, *grade = nullptr;
};

void declare_flags(CLI::App& app, Cli& c) {
  app.require_subcommand(1);
  app.footer(
      "Exit codes of check: 0 pass, 1 not yet, 2 bad flags or unknown id, 3 could not check,\n"
      "4 needs a GPU (not a failure: nothing could be checked on this machine).");
  app.add_option("--root", c.root_flag, "the workbook folder (default: found from the current folder)");
  app.add_option("--bin", c.bin_flag, "where the built exercise programs are (default: next to this tool)");
  app.add_option("--state", c.state_flag, "where runs and progress go (default: <root>/out/exercises)");

  c.list =
      app.add_subcommand("list", "every exercise with its status (pending/done) and whether it needs a GPU");
  c.list->add_flag("--ids", c.list_ids, "only the ids, one per line (for scripts)");
  c.list->add_flag("--json", c.list_json, "machine-readable");
  c.list->fallthrough();

  auto student_ok = [](const std::string& s) {
    return exercise::valid_student_name(s)
               ? std::string()
               : "'" + s + "' is not a learner's name: 1-64 letters, digits, '.', '_', '-'";
  };
  c.show = app.add_subcommand("show", "the task of one exercise, its files, how to build and check it");
  c.show->add_option("id", c.id, "exercise id, e.g. ex01.1")->required();
  c.show->add_option("--student", c.student, "show this learner's variation (size, schedule, targets)")
      ->check(student_ok);
  c.show->fallthrough();
  c.hint = app.add_subcommand("hint", "a hint for one exercise: level 1 a nudge, higher levels say more");
  c.hint->add_option("id", c.id, "exercise id, e.g. ex01.1")->required();
  c.hint->add_option("--level", c.level, "how much to say (the last level may point at the solution)")
      ->check(CLI::Range(1, 9))
      ->capture_default_str();
  c.hint->fallthrough();

  c.check = app.add_subcommand("check", "run an exercise's program, read its trace, and say pass or not yet");
  c.check->add_option("id", c.id, "exercise id, e.g. ex01.1")->required();
  c.check->add_flag("--solution", c.co.solution, "check the reference solution instead of your program");
  c.check->add_option("--device", c.co.device, "where the program runs")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  c.check
      ->add_option("--program", c.program, "check this built program instead (e.g. a learner's submission)")
      ->check([](const std::string& p) {
        std::error_code ec;
        if (!fs::exists(p, ec)) return "no such file: " + p + " (--program names a built program)";
        if (fs::is_directory(p, ec)) return p + " is a folder, not a program";
        return std::string();
      });
  c.check->add_option("--timeout", c.co.timeout_s, "seconds the program may run")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  c.check
      ->add_option("--student", c.co.student,
                   "your name: the program runs your own variation of the exercise")
      ->check(student_ok);
  c.check->add_flag("--no-hint", c.no_hint, "(kept for old scripts: check never prints a hint)");
  c.check->add_flag("--no-record", c.no_record, "do not record the result in <state>/status.json");
  c.check->fallthrough();

  c.grade = app.add_subcommand("grade",
                               "judge every exercise of a class: DIR/<learner>/... -> DIR/grades.csv, .json");
  c.grade
      ->add_option("dir", c.go.dir, "the class folder: one sub-folder per learner, named as their --student")
      ->required()
      ->check(CLI::ExistingDirectory);
  c.grade->add_option("--only", c.only, "these exercises only, comma-separated (e.g. ex01.3,ex04.1)");
  c.grade->add_option("--device", c.go.device, "where submitted programs run")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  c.grade->add_option("--timeout", c.go.timeout_s, "seconds a submitted program may run")
      ->check(CLI::Range(1, 86400));
  c.grade->fallthrough();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "The workbook's exercises: list them, read one, get a hint, check your work.\n"
      "Start with:  exercise list",
      "exercise"};
  Cli c;
  declare_flags(app, c);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  const fs::path root = find_root(c.root_flag);
  const fs::path bin = c.bin_flag.empty() ? own_dir() : fs::path(c.bin_flag);
  const fs::path state = c.state_flag.empty() ? root / "out" / "exercises" : fs::path(c.state_flag);
  exercise::Catalog cat;
  try {
    cat = exercise::load_catalog(root / "exercises" / "exercises.json");
  } catch (const exercise::CatalogError& e) {
    std::cerr << "exercise: " << e.what() << "\n(--root names the workbook folder)\n";
    return 3;
  }
  const exercise::StatusStore store(state / "status.json");

  const exercise::Exercise* ex = nullptr;
  if (!c.id.empty()) {
    ex = cat.find(c.id);
    if (!ex) {
      std::cerr << "exercise: unknown exercise '" << c.id << "'.\nValid ids: " << cat.ids()
                << "\n(`exercise list` shows them with their titles)\n";
      return 2;
    }
  }

  if (*c.list) return list_exercises(cat, store, c.list_ids, c.list_json);

  if (*c.grade) return grade_class(cat, c.go, c.only, state);

  if (*c.show) return show_exercise(*ex, root, bin, c.student);

  if (*c.hint) return show_hint(*ex, c.level);

  // check
  c.co.bin_dir = bin;
  c.co.program = c.program;
  c.co.out_dir = state / (ex->name + (c.co.solution ? "_solution" : ""));
  std::cout << "Checking " << ex->id << (c.co.solution ? " (the reference solution)" : "") << " ...\n"
            << std::flush;
  const exercise::CheckResult r = exercise::check_exercise(*ex, c.co);
  (void)c.no_hint;
  std::cout << exercise::render(*ex, r) << std::flush;
  if (!c.no_record && !c.co.solution && c.program.empty()) {
    try {
      store.record(ex->id, r);
    } catch (const std::exception& e) {
      std::cerr << "exercise: could not save progress in " << store.file().string() << ": " << e.what()
                << "\n";
    }
  }
  return exercise::exit_code(r.outcome);
}
