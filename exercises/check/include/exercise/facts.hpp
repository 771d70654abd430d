// What the checker measures on an exercise run: the lesson facts (lessons.hpp) plus a few of its
// own that exercises need -- the table's order, the learner's answers next to what the trace
// says, the steps that were recorded, launches per step. Each is a wb::Fact, judged the same
// way: a stated pattern (from the catalog) applied with wb::apply_pattern.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "workbook/lessons.hpp"
#include "workbook/trace_model.hpp"
#include "workbook/trace.hpp"

namespace exercise {

// Everything one run of an exercise program left in its --out folder.
struct RunOutput {
  std::filesystem::path dir;
  wb::Trace trace;                                    // trace.json
  std::string table;                                  // table.txt ("" if missing)
  nlohmann::json answers = nlohmann::json::object();  // answer.json ({} if none)
  nlohmann::json run = nlohmann::json::object();      // run.json: size, batch, device, student, ...
  // Set by the checker, not read from the folder: whose run this should be, and the variation
  // that learner's program must have run (variation.hpp). Facts compare against these.
  std::string student;
  nlohmann::json variation = nlohmann::json::object();
  bool on_gpu() const { return run.value("device", "") == "cuda" || trace.has_device_activity(); }
  wb::Problem problem() const;  // N, batch, bytes per element
};

// A file's whole content; "" when it cannot be opened (callers that need it check first).
std::string slurp(const std::filesystem::path& path);

// Reads a run's folder. Throws std::runtime_error (naming the file) when trace.json is missing
// or unreadable, or answer.json / run.json are not JSON.
RunOutput read_run_output(const std::filesystem::path& dir);

// The checker's own facts (ids below); lesson fact ids work too (wb::all_facts()).
const std::vector<std::string_view>& exercise_fact_ids();

// Measures fact `id` on a run. `annotation` "" = the run's (run.json), else that range.
// Throws std::invalid_argument for an unknown id.
wb::Fact measure(std::string_view id, const RunOutput& run, const wb::TraceModel& model,
                 const std::string& annotation = "");

}  // namespace exercise
