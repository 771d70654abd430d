#pragma once
// Figures in the workbook's Markdown, tied to the recordings they quote.
//
// resolve() reads the value a reference (FILE#SELECTOR, below) names; the claims files'
// figures use it (claim_figures.hpp, docs/claims/README.md): the pages are plain Markdown.
//
// The rest is the placeholder syntax of the NAME.src.md sources the pages were once generated
// from (the page NAME.md beside each, its first line
//   <!-- generated from NAME.src.md by ./workbook docs: edit that file -->
// ). `figures convert` reads them once, with process() below, to turn them into claims; it is
// kept until every branch's sources are converted.
//
// Placeholders (a source's only machinery; none holds '|' or '}}'):
//   {{174 h200/01_cold_64/lessons.json#step_widths/data/first_us}}
//            a figure from a recording: the number as printed, then FILE#SELECTOR. The page
//            reads "174"; a unit goes after the placeholder: "{{174 FILE#SEL}} us".
//   {{989 datasheet}}   a figure that comes from no run, labelled: seed (the original post's
//            A100 measurement), datasheet (a vendor's peak), calc (napkin arithmetic from the
//            shapes), spec (a threshold a lesson states)
//   {{#seed}} ... {{/seed}}   a whole passage so labelled (it may span lines; a line that holds
//            only an opener or a closer is left out of the page, with the blank line after it
//            when it stood between two blank lines)
//   {{include docs/parity/h200/cpp_table.txt}}   alone on a line inside a fenced code block:
//            the page quotes the file there, verbatim (trailing blank lines aside)
//   {{cheatsheet}}   alone on a line: the lesson facts' cheatsheet table, generated from their
//            registry (wb::cheatsheet_markdown(); docs/cheatsheet.src.md)
// A line that is one whole HTML comment (<!-- ... -->) is a note for the source's authors (the
// snippet check's <!-- snippet: FILE#NAME --> lines, tests/test_doc_snippets.cpp) and is left
// out of the page as a marker-only line is.
// Inside fenced code only the include line is read; `{{` elsewhere in code is code, and so is a
// placeholder in a `code span` (on one line): an example, shown as written.
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
// A trailing " scale=F" multiplies the value (us -> ms: scale=0.001; fraction -> %: scale=100).
//
// The check compares at the precision the text prints: "17.7" matches any value within 0.05
// of it, "174" within 0.5. The update rewrites the number in the source from the recording,
// keeping its number of decimals (and its thousands separators); the page is then regenerated.
//
// With require_marks (chapter READMEs), every number followed by a unit (us, ms, %, x,
// TFLOP/s, ...) outside an included code block must be a placeholder or in a labelled passage.
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

struct Problem {
  int line = 0;
  std::string message;
  bool bad = false;  // a bad placeholder (syntax, unknown label, a reference that resolves to
                     // nothing): the command line exits 2 on these, 1 on the others
};
struct Change {
  int line = 0;
  std::string old_text, new_text, ref;
};
// A page line that a source's placeholders tie (what `figures convert` turns into claims):
// its text as the page prints it, the figures from recordings on it (printed, FILE#SELECTOR),
// the labels on it (a labelled figure, or a labelled passage it lies in), or the file a
// fenced code block quotes / the cheatsheet table starting there.
struct Placed {
  int page_line = 0;  // 0-based, in the page without its generated first line
  std::string text;
  std::vector<std::pair<std::string, std::string>> figures;
  std::vector<std::string> labels;
  std::string include;      // {{include FILE}}: the block's first line is page_line
  bool cheatsheet = false;  // {{cheatsheet}}: the table's first line is page_line
};
struct Result {
  std::vector<Placed> placed;
  std::vector<Problem> problems;  // check failures (in update mode: what could not be fixed)
  std::vector<Change> changes;    // numbers that differ from the recording (update: rewritten)
  int sourced = 0, labelled = 0, blocks = 0;
  std::string page;  // the generated page, first line included, from the source as it is
                     // after the update (or as it was, without update)
};

struct Options {
  bool update = false;                        // rewrite the numbers in `source` from the recordings
  bool require_marks = false;                 // every number-with-unit a placeholder or labelled
  std::string source_name = "README.src.md";  // named in the page's first line
  bool keep_comments = false;                 // keep whole-line HTML comments on the page (`figures convert`:
                                              // the snippet check's marks stay with the plain page)
};

// Checks one source (and in update mode rewrites its numbers in place); fills Result::page.
Result process(const std::filesystem::path& root, std::string& source, const Options& opts);

// The first line of a page generated from `source_name` ("README.src.md").
std::string generated_line(std::string_view source_name);

// NAME.src.md -> NAME.md
std::filesystem::path page_of(const std::filesystem::path& source);
bool is_source(const std::filesystem::path& p);

// The workbook's sources: README.src.md, chapters/*/README.src.md, and every *.src.md under
// docs/, exercises/ and solutions/. Chapter READMEs require marks.
struct FileSet {
  std::filesystem::path path;  // the source
  bool require_marks = false;
};
std::vector<FileSet> default_files(const std::filesystem::path& root);

// Every Markdown page a learner reads in those places (generated or plain), sorted.
std::vector<std::filesystem::path> pages(const std::filesystem::path& root);

// The first line where two texts differ (1-based; 0 when equal), for "the page is stale" messages.
int first_difference(std::string_view a, std::string_view b);

// GitHub's heading anchor for a Markdown heading's text ("cuBLAS / cuBLASLt" -> "cublas--cublaslt").
std::string github_anchor(std::string_view heading);
// Every anchor the headings of a Markdown text define (duplicates get -1, -2, ... as on GitHub).
std::vector<std::string> anchors(std::string_view markdown);

}  // namespace wb::figures
