// Compare a chapter run with the reference output recorded on a real machine:
//
//   expected_output/<platform>/<chapter>/{table.txt, trace.json[.gz], lessons.json}
//
// Times differ from run to run and machine to machine, so nothing here compares a time:
//   * lessons: both sides judged by the same chapter spec; the report puts the learner's
//     value and the reference value side by side, with whether each side's pattern holds;
//   * table: times masked, only the rows' names and "# of Calls" are compared.
// The platform comes from the run's trace (deviceProperties name -> "h200"; no GPU -> "cpu")
// unless the caller overrides it.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "workbook/lessons.hpp"

namespace wb {

// Missing or unreadable inputs, with the path and what to do about it.
struct CompareError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TableLine {
  std::string name;  // as printed (long names end in "...")
  int64_t calls = 0;
};
// Reads the "Name" and "# of Calls" columns of a key_averages table (ours or Python's).
// Throws CompareError naming `source` when the text is not such a table.
std::vector<TableLine> parse_table_calls(std::string_view text, const std::string& source);

struct TableDiffRow {
  TableDiffRow() = default;
  TableDiffRow(std::string name, int64_t learner_calls, int64_t reference_calls)
      : name(std::move(name)), learner_calls(learner_calls), reference_calls(reference_calls) {}
  std::string name;
  int64_t learner_calls = -1;  // -1: no such row on that side
  int64_t reference_calls = -1;
  // Where a side's table does not show the row (its top rows are cut by time), the count is
  // read from that side's trace, and these say so.
  bool learner_below_cut = false, reference_below_cut = false;
  // Device work (kernels, memcpys, memsets) and CUDA API calls (runtime, driver): their counts
  // may move by a few calls from run to run. A CUDA graph replay or an AOTI run straddles the
  // first or the last step; the AOTI runner waits on its previous run (cudaEventSynchronize)
  // only when the GPU is still busy with it.
  bool timing_dependent = false;
  // The side's trace was searched for the row: -1 calls there means none at all (0).
  bool learner_traced = false, reference_traced = false;
  std::string learner_name;  // set when yours names the same row otherwise ("Memset (Unknown)")
  // Device rows, where the side's trace was read and its table line is the trace's row: how
  // many of the calls were launched inside the window (their runtime or driver call, by CUPTI
  // correlation id, is in the trace); -1 otherwise. A table also counts the kernels of a CUDA
  // graph replay launched before the window and still running when it opened: how many depends
  // on how far the GPU trailed the CPU (chapter 10's graph: 143 in the recording, 34 of them
  // with no launch in its trace).
  int64_t learner_launched = -1, reference_launched = -1;
  bool launched_known() const { return learner_launched >= 0 && reference_launched >= 0; }
  bool same() const { return learner_calls == reference_calls; }
  // same(), or a timing-dependent row within kTimingCallTolerance (or 1 call) of the reference;
  // for a device row with launched_known(), the launched counts are compared, not the table's.
  bool matches() const;
};
// Timing-dependent rows match when their counts differ by at most this share of the larger (or
// by 1 call).
constexpr double kTimingCallTolerance = 0.05;

struct LessonDiffRow {
  std::string fact, title, pattern;
  std::string learner_value, reference_value;
  Status learner = Status::NotApplicable, reference = Status::NotApplicable;
  bool agree() const { return learner == reference; }
};

struct CompareOptions {
  std::string chapter;   // "01_cold_64" (required)
  std::string platform;  // "": from the run's trace
  std::filesystem::path expected_root = "expected_output";
  FactOptions facts;  // problem size when no lessons.json says it
};

struct CompareReport {
  std::string chapter, platform, platform_reason;  // reason: "from the trace: NVIDIA H200"
  std::filesystem::path run_dir, expected_dir;
  std::vector<LessonDiffRow> lessons;
  std::vector<TableDiffRow> table;
  std::vector<std::string> notes;  // what could not be compared, and why
  int lessons_agree() const;
  int table_same() const;
  bool ok() const;  // every lesson agrees and every table row matches (TableDiffRow::matches)
};

// "h200", "a100", ... from the trace's first device; "cpu" for a CPU-only trace.
std::string detect_platform(const Trace& t);
// DIR/trace.json or DIR/trace.json.gz; empty path if neither exists.
std::filesystem::path find_trace_file(const std::filesystem::path& dir);

// Checks, before a run does any work, that ROOT/PLATFORM/CHAPTER exists and that its files
// (and those of its variant subfolders) parse. `platform_reason` says where the platform came
// from ("your --platform", "this machine's GPU: NVIDIA H200"). Returns the folder; throws
// CompareError saying what is missing or corrupt.
std::filesystem::path check_reference(const std::string& chapter, const std::string& platform,
                                      const std::string& platform_reason,
                                      const std::filesystem::path& expected_root);

// Throws CompareError for a missing/corrupt run or reference.
CompareReport compare_run(const std::filesystem::path& run_dir, const CompareOptions& o);
// Two lessons reports fact by fact (matched by id, in order): the verdicts side by side.
std::vector<LessonDiffRow> compare_lessons(const LessonsReport& mine, const LessonsReport& reference);
// A chapter's lessons across variants against ROOT/PLATFORM/CHAPTER/comparison.json (chapter
// 05). A reference without comparison.json gives a note, not an error; throws CompareError for
// a missing reference folder or a corrupt file.
CompareReport compare_across(const LessonsReport& mine, const std::string& chapter,
                             const std::string& platform, const std::string& platform_reason,
                             const std::filesystem::path& expected_root);
std::string render_compare(const CompareReport& r, Format f);

}  // namespace wb
