#pragma once
// Figures in the workbook's Markdown, tied to the recordings they quote.
//
// resolve() reads the value a reference (FILE#SELECTOR, below) names; the claims files'
// figures use it (claim_figures.hpp, docs/claims/README.md): the pages are plain Markdown.
//
// FILE lives under expected_output/ (a reference that starts with a platform folder, "h200/...",
// "cpu/..."), under docs/ ("docs/...") or among a second run's lessons and tables
// ("tests/data/reruns/h200-run2/..."). Selectors:
//   *.json   a JSON pointer whose segments may pick an array element by a field:
//            /facts[id=step_widths]/data/steps[step=2]/width_us. In lessons.json and
//            comparison.json a selector that does not start with '/' starts with a fact id:
//            step_widths/data/first_us == /facts[id=step_widths]/data/first_us.
//   trace*.json with "event=NAME[;nth=K][;on=cpu|gpu][;value=dur|cbid]": the duration (us) of
//            the K-th event of that name (the Kineto trace itself), or its CUPTI callback id.
//   *.txt    "row=NAME;col=COLUMN[;nth=K]": a cell of a key_averages table (us; a footer
//            "Self CPU time total" is a row too); "re=REGEX": the first capture group of the
//            first match (ECMAScript; write \s, not a space).
//   *.md     "row=NAME;col=HEADER" or "HEADER=VALUE;...;col=HEADER": a cell of a Markdown table
//            (the first row whose first cell is NAME, or whose named cells all match; a
//            trailing %, x or unit is read as for *.txt); "re=REGEX" as for *.txt.
//   *.svg    "re=REGEX" as for *.txt (a picture's titles: pictures.hpp).
// A trailing " scale=F" multiplies the value (us -> ms: scale=0.001; fraction -> %: scale=100).
//
// A claim's figure agrees with its reference at the precision the page prints: "17.7" matches
// any value within 0.05 of it, "174" within 0.5. `figures update` rewrites a figure that moved,
// keeping its number of decimals (and its thousands separators).
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace wb::figures {

struct FigureError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The value a reference (FILE#SELECTOR[ scale=F]) points at, relative to the repository root.
// Throws FigureError: missing file, no such element, not a number.
double resolve(const std::filesystem::path& root, std::string_view ref);

// Every Markdown page a learner reads, sorted: README.md, chapters/*/README.md, and every *.md
// under docs/, exercises/ and solutions/ (a NAME.src.md file aside).
std::vector<std::filesystem::path> pages(const std::filesystem::path& root);

// The NAME.src.md files in those places (README.src.md, chapters/*/README.src.md, any under
// docs/, exercises/, solutions/), sorted. The pages were once generated from such sources; none
// is left, and `figures check` fails on one that comes back.
std::vector<std::filesystem::path> leftover_sources(const std::filesystem::path& root);

// GitHub's heading anchor for a Markdown heading's text ("cuBLAS / cuBLASLt" -> "cublas--cublaslt").
std::string github_anchor(std::string_view heading);
// Every anchor the headings of a Markdown text define (duplicates get -1, -2, ... as on GitHub).
std::vector<std::string> anchors(std::string_view markdown);

}  // namespace wb::figures
