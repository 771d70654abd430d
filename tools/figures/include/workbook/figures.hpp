#pragma once
// Figures in the workbook's Markdown, tied to the recordings they quote.
//
// A figure a README quotes from a run carries an invisible marker right after it (number, then
// an optional unit, then the marker):
//
//   the first step took 174 us<!--fig h200/01_cold_64/lessons.json#step_widths/data/first_us-->
//
// Sources live under expected_output/ (a reference that starts with a platform folder, e.g.
// "h200/...", "cpu/...") or under docs/ (a reference that starts with "docs/"). Selectors:
//   *.json   a JSON pointer whose segments may pick an array element by a field:
//            /facts[id=step_widths]/data/steps[step=2]/width_us. In lessons.json and
//            comparison.json a selector that does not start with '/' starts with a fact id:
//            step_widths/data/first_us == /facts[id=step_widths]/data/first_us.
//   trace*.json with "event=NAME[;nth=K][;on=cpu|gpu]": the duration (us) of the K-th event
//            of that name (the Kineto trace itself).
//   *.txt    "row=NAME;col=COLUMN[;nth=K]": a cell of a key_averages table (us; a footer
//            "Self CPU time total" is a row too); "re=REGEX": the first capture group of the
//            first match (ECMAScript; write \s, not a space).
// A trailing " scale=F" multiplies the value (us -> ms: scale=0.001; fraction -> %: scale=100).
//
// The check compares at the precision the text prints: "17.7" matches any value within 0.05
// of it, "174" within 0.5. The update mode rewrites the number in place from the recording,
// keeping its number of decimals (and its thousands separators).
//
// Figures that do not come from a run are labelled instead of sourced, for the reader of the
// source and for the check that no figure goes unbacked:
//   <!--fig label=seed-->       the original post's (A100) measurement
//   <!--fig label=datasheet-->  a vendor's published peak
//   <!--fig label=calc-->       napkin arithmetic from the shapes (no run)
//   <!--fig label=spec-->       a threshold a lesson states (a chapter's lessons.json)
// and a whole passage: <!--fig label=seed begin--> ... <!--fig end-->.
// A fenced code block that quotes a recorded file verbatim follows a line
//   <!--fig-block docs/parity/h200/cpp_table.txt-->
// and must equal that file (trailing spaces aside); update copies the file in.
//
// With require_marks, every number followed by a unit (us, ms, %, x, TFLOP/s, ...) outside a
// checked code block must be sourced or labelled.
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace wb::figures {

struct FigureError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The value a reference (the text after "fig ", modifiers included) points at, relative to the
// repository root. Throws FigureError: missing file, no such element, not a number.
double resolve(const std::filesystem::path& root, std::string_view ref);

struct Problem {
  int line = 0;
  std::string message;
};
struct Change {
  int line = 0;
  std::string old_text, new_text, ref;
};
struct Result {
  std::vector<Problem> problems;  // check failures (in update mode: what could not be fixed)
  std::vector<Change> changes;    // numbers that differ from the recording (update: rewritten)
  int sourced = 0, labelled = 0, blocks = 0;
};

struct Options {
  bool update = false;         // rewrite numbers and blocks in `text` from the recordings
  bool require_marks = false;  // every number-with-unit must be sourced or labelled
};

// Checks one Markdown text (and in update mode rewrites it in place).
Result process(const std::filesystem::path& root, std::string& text, const Options& opts);

// The files the workbook checks: chapters/*/README.md (require_marks) and docs/*.md.
struct FileSet {
  std::filesystem::path path;
  bool require_marks = false;
};
std::vector<FileSet> default_files(const std::filesystem::path& root);

// GitHub's heading anchor for a Markdown heading's text ("cuBLAS / cuBLASLt" -> "cublas--cublaslt").
std::string github_anchor(std::string_view heading);
// Every anchor the headings of a Markdown text define (duplicates get -1, -2, ... as on GitHub).
std::vector<std::string> anchors(std::string_view markdown);

}  // namespace wb::figures
