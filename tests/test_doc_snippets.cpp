// The code in docs/profiler-in-cpp.md cannot rot: every cpp / cmake / python block of the page
// is a marked region of a file that the build compiles or the tests run, copied verbatim. The
// marks are HTML comments on the page itself (a reader of the rendered page does not see them).
//
//   On the page:    <!-- snippet: examples/minimal/main.cpp#loop -->
//                   ```cpp
//                   ...the region...
//                   ```
//   In the file:    // [snippet:loop]   ...the region...   // [/snippet:loop]    (# for cmake/python)
//
// Shell commands (```bash) and program output (```text) are not code and need no marker.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "process.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;

namespace {
// Files the build compiles or the tests run (test_examples builds your_model from the package).
const std::set<std::string> kCheckedFiles = {
    "examples/minimal/main.cpp",
    "examples/minimal/minimal.py",
    "examples/raw_kineto/main.cpp",
    "examples/your_model/main.cpp",
    "examples/your_model/CMakeLists.txt",
    "common/torch/src/profiler.cpp",
    "cmake/TorchProfilerWorkbookConfig.cmake.in",
};

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Removes the indentation all non-blank lines share; joins with '\n'.
std::string dedent(const std::vector<std::string>& lines) {
  size_t indent = std::string::npos;
  for (const auto& l : lines)
    if (!trim(l).empty()) indent = std::min(indent, l.find_first_not_of(' '));
  std::string out;
  for (const auto& l : lines)
    out += (trim(l).empty() ? "" : l.substr(indent == std::string::npos ? 0 : indent)) + "\n";
  return out;
}

// The lines strictly between "[snippet:NAME]" and "[/snippet:NAME]" comment lines, or nullopt.
// The markers of regions nested inside (a whole program quoted around its loop) are left out.
std::optional<std::string> region(const std::string& source, const std::string& name) {
  const auto lines = split_lines(source);
  auto is_marker = [](const std::string& line, const std::string& tag) {
    const std::string t = trim(line);
    return t == "// " + tag || t == "# " + tag;
  };
  const std::regex any_marker(R"(^\s*(//|#) \[/?snippet:[A-Za-z0-9_-]+\]\s*$)");
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!is_marker(lines[i], "[snippet:" + name + "]")) continue;
    for (size_t j = i + 1; j < lines.size(); ++j) {
      if (!is_marker(lines[j], "[/snippet:" + name + "]")) continue;
      std::vector<std::string> body;
      for (size_t k = i + 1; k < j; ++k)
        if (!std::regex_match(lines[k], any_marker)) body.push_back(lines[k]);
      return dedent(body);
    }
    return std::nullopt;
  }
  return std::nullopt;
}

// What is wrong with the page's code blocks (empty: every one is a checked file's region).
std::vector<std::string> check_page(const std::string& page, const fs::path& root, int* checked = nullptr) {
  std::vector<std::string> problems;
  const auto lines = split_lines(page);
  const std::regex marker(R"(^<!-- snippet: ([^#\s]+)#([A-Za-z0-9_-]+) -->$)");
  int blocks = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("```", 0) != 0) continue;
    const std::string lang = trim(lines[i].substr(3));
    size_t end = i + 1;
    while (end < lines.size() && trim(lines[end]) != "```") ++end;
    const std::string where = "line " + std::to_string(i + 1) + " (```" + lang + ")";
    const std::vector<std::string> body(lines.begin() + static_cast<long>(i) + 1,
                                        lines.begin() + static_cast<long>(end));
    const size_t open = i;
    i = end;  // continue after the closing fence
    if (lang == "bash" || lang == "text") continue;
    ++blocks;
    size_t prev = open;
    while (prev > 0 && trim(lines[prev - 1]).empty()) --prev;
    std::smatch m;
    if (prev == 0 || !std::regex_match(lines[prev - 1], m, marker)) {
      problems.push_back(where + ": no <!-- snippet: FILE#NAME --> line above the block");
      continue;
    }
    const std::string file = m[1], name = m[2];
    if (!kCheckedFiles.count(file)) {
      problems.push_back(where + ": " + file + " is not a file the build compiles or the tests run");
      continue;
    }
    const auto code = region(proc::slurp(root / file), name);
    if (!code) {
      problems.push_back(where + ": " + file + " has no region [snippet:" + name + "]");
    } else if (*code != dedent(body)) {
      problems.push_back(where + ": differs from " + file + "#" + name + ":\n--- page\n" + dedent(body) +
                         "--- file\n" + *code);
    }
  }
  if (checked) *checked = blocks;
  return problems;
}

const fs::path kRoot = WORKBOOK_ROOT;
const fs::path kPage = kRoot / "docs/profiler-in-cpp.md";  // the page, with its marks
}  // namespace

TEST_CASE("docs/profiler-in-cpp.md: every code block is a region of a compiled or tested file",
          "[docs][tools][cpu]") {
  const std::string page = proc::slurp(kPage);
  REQUIRE_FALSE(page.empty());
  int checked = 0;
  const auto problems = check_page(page, kRoot, &checked);
  for (const auto& p : problems) UNSCOPED_INFO(p);
  CHECK(problems.empty());
  CHECK(checked >= 5);  // Python, wb::Profiler, the raw calls, the package, ...
}

TEST_CASE("the snippet check fails on a changed, an unmarked or an untested block", "[docs][tools][cpu]") {
  const std::string page = proc::slurp(kPage);
  // One changed character inside the first C++ block.
  std::string changed = page;
  const auto at = changed.find("prof.step();");
  REQUIRE(at != std::string::npos);
  changed.replace(at, 12, "prof.step(1);");
  CHECK(check_page(changed, kRoot).size() == 1);
  // A block without its marker.
  CHECK_THAT(check_page("text\n\n```cpp\nint x;\n```\n", kRoot).at(0), ContainsSubstring("no <!-- snippet"));
  // A block quoted from a file nothing builds.
  CHECK_THAT(check_page("<!-- snippet: README.md#x -->\n```cpp\nint x;\n```\n", kRoot).at(0),
             ContainsSubstring("not a file the build compiles"));
  // A region that does not exist.
  CHECK_THAT(
      check_page("<!-- snippet: examples/minimal/main.cpp#nope -->\n```cpp\nint x;\n```\n", kRoot).at(0),
      ContainsSubstring("no region"));
}

TEST_CASE("the page is linked from the top README and from chapter 01", "[docs][tools][cpu]") {
  CHECK_THAT(proc::slurp(kRoot / "README.md"), ContainsSubstring("docs/profiler-in-cpp.md"));
  CHECK_THAT(proc::slurp(kRoot / "chapters/01_cold_64/README.md"),
             ContainsSubstring("docs/profiler-in-cpp.md"));
}
