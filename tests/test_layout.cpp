// The shape of the tree, checked on the sources (one shape for every chapter):
//   * common/ is split by what each part may include: the torch-free libraries (core, lessons,
//     render, cupti) never include LibTorch, and the LibTorch side (common/torch) never includes
//     fmt or spdlog (LibTorch bundles its own fmt). The include paths enforce the first at build
//     time (torch's headers are not on a torch-free target's path); this test names the file.
//   * every test case carries an area tag ([chNN], [tools], [exercises], [docs], [core], ...)
//     and a platform tag ([cpu] or [gpu]).
//   * chapters are leaves: no chapter, exercise or bench includes another chapter's files or
//     links a library a chapter defines (shared workloads live in models/).
//   * a chapter's main.cpp reads as the lesson, the profiler in sight: ProfilerOptions, the
//     Profiler, start(), the loop with its annotation and step(), stop(), then run.report(), as
//     in Python; and it stays a page (at most 100 lines), so the harness's work does not move in.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = WORKBOOK_ROOT;

// The chapters, in run order: the one list (chapters/CMakeLists.txt's WORKBOOK_CHAPTER_ORDER),
// as the build wrote it to WORKBOOK_BUILD_DIR/chapters.txt.
std::vector<std::string> chapter_order() {
  const char* env = std::getenv("WORKBOOK_BUILD_DIR");
  std::ifstream in(fs::path(env && *env ? env : WORKBOOK_BUILD_DIR) / "chapters.txt");
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

std::vector<fs::path> sources_under(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) {
      const auto ext = e.path().extension().string();
      if (ext == ".cpp" || ext == ".hpp" || ext == ".h" || ext == ".cu" || ext == ".cuh")
        out.push_back(e.path());
    }
  return out;
}

// Includes in `text` that match `banned` (an #include line's target), as "file:line: #include ...".
std::vector<std::string> banned_includes(const std::string& name, const std::string& text,
                                         const std::regex& banned) {
  std::vector<std::string> found;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  static const std::regex include(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])");
  while (std::getline(in, line)) {
    ++n;
    std::smatch m;
    if (std::regex_search(line, m, include) && std::regex_search(m[1].str(), banned))
      found.push_back(name + ":" + std::to_string(n) + ": " + line);
  }
  return found;
}

const std::regex kTorchHeaders(R"(^(torch|ATen|c10|caffe2)/)");
const std::regex kFmtHeaders(R"(^(fmt|spdlog)/)");

// TEST_CASE lines whose tags lack an area tag or a platform tag.
std::vector<std::string> untagged_cases(const std::string& name, const std::string& text) {
  // The name: string literals, possibly joined with macro arguments ("exercise " ID ": ...").
  static const std::regex test_case(
      R"re(TEST_CASE\s*\(\s*((?:"(?:[^"\\]|\\.)*"|\s|\w)+?)\s*(?:,\s*"([^"]*)")?\s*\))re");
  static const std::regex area(
      R"(\[(ch[0-9][0-9]|tools|exercises|docs|core|lessons|render|profiler|cupti|recordings|examples|layout|h200)\])");
  static const std::regex platform(R"(\[(cpu|gpu)\])");
  std::vector<std::string> bad;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), test_case); it != std::sregex_iterator();
       ++it) {
    const std::string tags = (*it)[2].matched ? (*it)[2].str() : "";
    if (!std::regex_search(tags, area) || !std::regex_search(tags, platform))
      bad.push_back(name + ": \"" + (*it)[1].str() + "\" has tags \"" + tags + "\"");
  }
  return bad;
}

int lines_of(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) ++n;
  return n;
}

// Chapters are leaves. What each chapter folder holds: its code files' names and the libraries
// its CMakeLists.txt defines (add_library).
struct ChapterFiles {
  std::string chapter;
  std::vector<std::string> files;      // code file names, e.g. "llm.hpp"
  std::vector<std::string> libraries;  // e.g. "05_compiled_addmm_lib"
};

std::vector<ChapterFiles> chapter_files(const fs::path& chapters) {
  std::vector<ChapterFiles> out;
  static const std::regex add_library(R"(add_library\s*\(\s*([A-Za-z0-9_]+))");
  for (const auto& e : fs::directory_iterator(chapters)) {
    if (!e.is_directory()) continue;
    ChapterFiles c{e.path().filename().string(), {}, {}};
    for (const auto& f : sources_under(e.path())) c.files.push_back(f.filename().string());
    const std::string cmake = slurp(e.path() / "CMakeLists.txt");
    for (auto it = std::sregex_iterator(cmake.begin(), cmake.end(), add_library);
         it != std::sregex_iterator(); ++it)
      c.libraries.push_back((*it)[1].str());
    out.push_back(std::move(c));
  }
  return out;
}

// Lines of `text` (a source or a CMakeLists.txt in folder `owner`, "" outside chapters/) that
// include a code file of another chapter, name a chapters/ path, or name a library another
// chapter defines. Comments are not uses.
std::vector<std::string> cross_chapter_uses(const std::string& name, const std::string& owner,
                                            const std::string& text,
                                            const std::vector<ChapterFiles>& chapters) {
  static const std::regex include(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::vector<std::string> found;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const auto hash = line.find('#');
    const bool cmake_comment = name.find("CMakeLists.txt") != std::string::npos && hash != std::string::npos;
    const std::string code = cmake_comment ? line.substr(0, hash) : line.substr(0, line.find("//"));
    std::smatch m;
    const bool is_include = std::regex_search(line, m, include);
    const std::string target = is_include ? m[1].str() : "";
    bool bad = code.find("chapters/") != std::string::npos;
    for (const auto& c : chapters) {
      if (c.chapter == owner) continue;
      if (is_include)
        for (const auto& f : c.files) bad = bad || fs::path(target).filename() == f;
      for (const auto& lib : c.libraries)
        bad = bad || std::regex_search(code, std::regex("(^|[^A-Za-z0-9_])" + lib + "($|[^A-Za-z0-9_])"));
    }
    if (bad) found.push_back(name + ":" + std::to_string(n) + ": " + line);
  }
  return found;
}

}  // namespace

TEST_CASE("layout: torch-free libraries include no LibTorch header, the torch side no fmt/spdlog",
          "[layout][cpu]") {
  std::vector<std::string> problems;
  for (const char* lib : {"core", "lessons", "render", "cupti"})
    for (const auto& f : sources_under(kRoot / "common" / lib))
      for (auto& p : banned_includes(f.string(), slurp(f), kTorchHeaders)) problems.push_back(p);
  for (const auto& f : sources_under(kRoot / "common" / "torch"))
    for (auto& p : banned_includes(f.string(), slurp(f), kFmtHeaders)) problems.push_back(p);
  for (const auto& p : problems) UNSCOPED_INFO(p);
  CHECK(problems.empty());
}

TEST_CASE("layout: the include check finds a torch header in torch-free code", "[layout][cpu]") {
  CHECK(banned_includes("x.cpp", "#include <torch/types.h>\n", kTorchHeaders).size() == 1);
  CHECK(banned_includes("x.cpp", "  #  include \"ATen/Parallel.h\"\n", kTorchHeaders).size() == 1);
  CHECK(banned_includes("x.cpp", "#include <spdlog/spdlog.h>\n", kFmtHeaders).size() == 1);
  CHECK(banned_includes("x.cpp",
                        "#include \"workbook/trace.hpp\"\n// #include <torch/torch.h> in a comment\n",
                        kTorchHeaders)
            .empty());
}

TEST_CASE("layout: every test case has an area tag and a platform tag", "[layout][cpu]") {
  std::vector<std::string> problems;
  for (const auto& f : sources_under(kRoot / "tests")) {
    if (f.filename() == "test_layout.cpp") continue;  // its own examples below are meant to fail
    for (auto& p : untagged_cases(f.filename().string(), slurp(f))) problems.push_back(p);
  }
  for (const auto& p : problems) UNSCOPED_INFO(p);
  CHECK(problems.empty());
  // The check itself fails on a case without them.
  CHECK(untagged_cases("x.cpp", R"(TEST_CASE("a", "[ch01]") {})").size() == 1);
  CHECK(untagged_cases("x.cpp", R"(TEST_CASE("a") {})").size() == 1);
  CHECK(untagged_cases("x.cpp", R"(TEST_CASE("ex " ID ": b", "[exercises]") {})").size() == 1);
  CHECK(untagged_cases("x.cpp", R"(TEST_CASE("ex " ID ": b", "[exercises][gpu]") {})").empty());
  CHECK(untagged_cases("x.cpp", R"(TEST_CASE("a \"quoted\"", "[ch01][cpu]") {})").empty());
}

TEST_CASE("layout: a chapter's main.cpp shows the profiled loop, and stays a page", "[layout][cpu]") {
  const std::vector<std::string> api = {"wb::ProfilerOptions", "wb::Profiler prof(", "prof.start()",
                                        "wb::Annotation",      "prof.step()",        "prof.stop()",
                                        "run.report("};
  auto missing = [&](const std::string& text) {
    std::vector<std::string> out;
    for (const auto& a : api)
      if (text.find(a) == std::string::npos) out.push_back(a);
    return out;
  };
  // Every profiled loop stops on Ctrl-C: as many run.stop_if_interrupted() as prof.step(), in
  // the code (comments left out).
  auto unstoppable_loops = [](const std::string& text) {
    std::string code;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) code += line.substr(0, line.find("//")) + "\n";
    auto count = [&](const std::string& what) {
      int n = 0;
      for (auto at = code.find(what); at != std::string::npos; at = code.find(what, at + 1)) ++n;
      return n;
    };
    return std::max(0, count("prof.step()") - count("run.stop_if_interrupted()"));
  };
  int chapters = 0;
  for (const auto& e : fs::directory_iterator(kRoot / "chapters")) {
    const fs::path main = e.path() / "main.cpp";
    if (!fs::exists(main)) continue;
    ++chapters;
    INFO(main.string());
    CHECK(lines_of(main) <= 100);
    const std::string text = slurp(main);
    for (const auto& m : missing(text)) FAIL_CHECK("the profiler API is not in sight: no " << m);
    CHECK(unstoppable_loops(text) == 0);
  }
  REQUIRE(!chapter_order().empty());  // WORKBOOK_BUILD_DIR/chapters.txt: the build's list
  CHECK(chapters == static_cast<int>(chapter_order().size()));  // every folder is in the list
  // and every chapter of the list has its test, which tests/CMakeLists.txt registers from the list
  for (const auto& ch : chapter_order()) {
    INFO(ch);
    CHECK(fs::exists(kRoot / "tests" / ("test_" + ch + ".cpp")));
  }
  // The check fails on a main that hides the loop in a helper, and on a loop Ctrl-C cannot stop.
  CHECK(missing("return ch.main(argc, argv, [](wb::Run& run) { return "
                "run.exit_code(run.report(run.profile(step))); });")
            .size() == 6);
  CHECK(unstoppable_loops("for (;;) { step(); prof.step(); }") == 1);
  CHECK(unstoppable_loops("for (;;) { step(); prof.step(); run.stop_if_interrupted(); }") == 0);
  CHECK(unstoppable_loops("prof.step();  // prof.step()\nrun.stop_if_interrupted();\n") == 0);
}

TEST_CASE(
    "layout: chapters, exercises and benches include and link no other chapter's files, no tools/ library",
    "[layout][cpu]") {
  auto chapters = chapter_files(kRoot / "chapters");
  // and the libraries tools/ defines: a tool's code is not a chapter's, an exercise's or a bench's
  ChapterFiles tools{"tools/", {}, {}};
  static const std::regex add_library(R"(add_library\s*\(\s*([A-Za-z0-9_]+))");
  for (const auto& e : fs::recursive_directory_iterator(kRoot / "tools"))
    if (e.path().filename() == "CMakeLists.txt") {
      const std::string cmake = slurp(e.path());
      for (auto it = std::sregex_iterator(cmake.begin(), cmake.end(), add_library);
           it != std::sregex_iterator(); ++it)
        tools.libraries.push_back((*it)[1].str());
    }
  chapters.push_back(tools);
  std::vector<std::string> problems;
  auto check = [&](const fs::path& f, const std::string& owner) {
    for (auto& p : cross_chapter_uses(f.string(), owner, slurp(f), chapters)) problems.push_back(p);
  };
  for (const auto& c : chapters) {
    if (c.chapter == "tools/") continue;
    for (const auto& f : sources_under(kRoot / "chapters" / c.chapter)) check(f, c.chapter);
    check(kRoot / "chapters" / c.chapter / "CMakeLists.txt", c.chapter);
  }
  for (const char* dir : {"exercises", "bench"}) {
    for (const auto& f : sources_under(kRoot / dir)) check(f, "");
    for (const auto& e : fs::recursive_directory_iterator(kRoot / dir))
      if (e.path().filename() == "CMakeLists.txt") check(e.path(), "");
  }
  for (const auto& p : problems) UNSCOPED_INFO(p);
  CHECK(problems.empty());
  // The check fails where chapter 10 used chapter 09's decoder, and where a bench linked it.
  const std::vector<ChapterFiles> two = {{"09_llm", {"llm.hpp", "main.cpp"}, {"09_llm_lib"}},
                                         {"10_graphs", {"main.cpp"}, {}}};
  CHECK(cross_chapter_uses("main.cpp", "10_graphs", "#include \"llm.hpp\"\n", two).size() == 1);
  CHECK(cross_chapter_uses("b.cpp", "", "#include \"../chapters/09_llm/x.hpp\"\n", two).size() == 1);
  CHECK(
      cross_chapter_uses("CMakeLists.txt", "", "target_link_libraries(b PRIVATE 09_llm_lib)\n", two).size() ==
      1);
  CHECK(cross_chapter_uses("CMakeLists.txt", "10_graphs", "workbook_add_chapter(10_graphs LIBS 09_llm_lib)\n",
                           two)
            .size() == 1);
  // and passes a chapter's own files, a model's header, a comment and a longer name
  CHECK(cross_chapter_uses("main.cpp", "09_llm", "#include \"llm.hpp\"\n", two).empty());
  CHECK(cross_chapter_uses("main.cpp", "10_graphs", "#include \"graph.hpp\"  // chapter 09's llm.hpp\n", two)
            .empty());
  CHECK(cross_chapter_uses("CMakeLists.txt", "", "# not 09_llm_lib\nadd_library(x 09_llm_lib2)\n", two)
            .empty());
}
