// The exercise catalog: exercises/exercises.json, one entry per exercise (its task, hint, and
// the check the trace must pass), read and validated here.
//
//   exercise::Catalog c = exercise::load_catalog("exercises/exercises.json");
//   const exercise::Exercise* e = c.find("ex01.1");   // also "01.1" or "ex01_1_hot_loop"
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "workbook/lessons.hpp"
#include "workbook/pattern_json.hpp"

namespace exercise {

// A broken catalog: the message names the file, the exercise and the field (the checks are
// read by the one pattern reader, workbook/pattern_json.hpp).
using CatalogError = wb::SpecError;

// One thing the check looks at: a fact measured on the run (a lesson fact such as
// "dispatch_chain", or one of the checker's own, see facts.hpp) and the pattern it must match.
struct Check {
  std::string fact;
  std::string annotation;  // for facts that look into a record_function range ("" = the run's)
  wb::Pattern pattern;     // text, why, conditions
};

struct Exercise {
  std::string id;       // "ex01.1"
  std::string name;     // "ex01_1_hot_loop": folder, program and target name
  std::string chapter;  // "01_cold_64"
  std::string title;
  std::string task;  // what to do (several lines)
  std::string hint;  // level 1 of `hints`
  std::vector<std::string>
      hints;               // `exercise hint ID --level N`: 1 a nudge ... the last may point at the solution
  std::string gpu_note;    // what only a GPU run checks (exercises that also run on a CPU)
  bool needs_gpu = false;  // nothing to check without a GPU
  std::vector<std::string> args;  // extra flags the checker passes to the program
  std::vector<Check> checks;
  // Per-learner variation: key -> choices (the first is the default, used without a student).
  // The program applies size, cpu_size, batch and schedule; other keys are values it prints
  // and the checks compare against ({"var": "key"}). {} : no variation.
  nlohmann::json vary = nlohmann::json::object();
  int stub_fails = -1;  // the check the untouched stub fails (CI proves it); -1: not stated
};

struct Catalog {
  std::filesystem::path source;
  std::vector<Exercise> exercises;  // in teaching order

  // By id ("ex01.1"), short id ("01.1") or name ("ex01_1_hot_loop"); nullptr if none.
  const Exercise* find(std::string_view key) const;
  std::string ids() const;  // "ex01.1, ex01.2, ..." for error messages
};

// Reads and validates the catalog: known fact ids and condition operators, unique ids, a name
// per exercise. Throws CatalogError.
Catalog load_catalog(const std::filesystem::path& path);
Catalog parse_catalog(const std::string& json_text, const std::string& source = "<memory>");

}  // namespace exercise
