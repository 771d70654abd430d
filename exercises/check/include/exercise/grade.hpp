// Grading a class: a folder of submissions, one sub-folder per learner (the folder's name is
// the learner's --student name), judged exercise by exercise with the learner's own variation.
//
//   class/ada/ex01_3_dead_window/   what `ex01_3_dead_window --student ada` wrote (trace.json,
//                                   run.json, answer.json, table.txt): judged as it is
//   class/ada/bin/ex04_1_tflops_by_hand   or a built program: run with --student ada, then judged
//   (neither: "not yet", no submission)
//
//   exercise::GradeReport g = exercise::grade(catalog, opts);
//   wb::write_file_atomic("grades.csv", exercise::grades_csv(g));
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exercise/catalog.hpp"
#include "exercise/checker.hpp"

namespace exercise {

struct GradeOptions {
  std::filesystem::path dir;       // the class folder
  std::filesystem::path work_dir;  // where submitted programs write their runs
  std::string device = "auto";
  int timeout_s = 600;
  std::vector<std::string> only;  // exercise ids; empty: every exercise of the catalog
};

struct GradeCell {
  std::string verdict = "not yet";  // "pass", "not yet", "error", "needs a GPU"
  std::string failing_check;        // not yet: the first check that does not hold
  std::string message;              // error / needs a GPU: why
  std::string source;               // "outputs", "program", "none"
};

struct GradeRow {
  std::string learner;
  std::vector<GradeCell> cells;  // one per exercise, in GradeReport::exercises order
  int passed = 0;
};

struct GradeReport {
  std::vector<std::string> exercises;  // ids
  std::vector<GradeRow> rows;          // learners in name order
  std::vector<std::string> skipped;    // sub-folders that are not a learner's name, and why
};

// Throws std::runtime_error when `dir` is not a folder.
GradeReport grade(const Catalog& c, const GradeOptions& o);

// learner,exercise,verdict,failing_check,message (RFC 4180 quoting)
std::string grades_csv(const GradeReport& g);
nlohmann::json grades_json(const GradeReport& g);
// The table for people: one row per learner, one column per exercise.
std::string grades_text(const GradeReport& g);

}  // namespace exercise
