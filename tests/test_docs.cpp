// The documentation's figures and links ([docs], torch-free).
//   - every figure the claims files quote by "ref" agrees with the recording it names, at the
//     precision the page prints, and every quoted block is what it quotes (tools/figures,
//     claim_figures.hpp); the pages are plain: no NAME.src.md, no placeholder, no <!--fig marker
//     (`figures check` fails on a page with a marker and on a NAME.src.md file left beside one);
//   - on a scratch copy of chapter 01's page and claims with a doctored recording, `figures
//     update` rewrites the moved figure in the page and in its claims together and nothing else;
//     `figures check` fails on it first, and on a number edited by hand, a stale quoted block and
//     a reference to a missing recording; references resolve by their selectors and a figure
//     agrees at the precision printed;
//   - docs/glossary.md defines every term, each chapter README links it, every relative link
//     resolves to a file and, with #anchor, to a heading that exists;
//   - each chapter README links a glossary term where the term first appears in its prose (the
//     rule docs/glossary.md states), and the check fails on a copy with one link moved later;
//   - every inspect rule docs/cheatsheet.md names is a fact id of wb::all_facts(), and every
//     lesson id (the facts, the chapter specs, the recorded lessons.json files) has a row; the
//     check fails on a copy with one rule left out.
//   - [ch11] the picture of a token's GPU time by class (tools/figures, pictures.hpp): in every
//     variant the classes add up to the token's GPU span (the span the lessons across variants
//     measure), the bars are ordered as the chapter says, and the order fails on chapter 10's
//     recording and on a doctored trace; a CPU trace or one without its launches draws nothing;
//     the picture on disk is what the recording draws, and `figures check` fails on a doctored
//     one until `figures update` redraws it; `figures update` draws the picture before it reads
//     the figures a page takes from it (a stale or missing picture: the page gets the new value).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "process.hpp"
#include "workbook/across.hpp"
#include "workbook/claim_figures.hpp"
#include "workbook/figures.hpp"
#include "workbook/lessons.hpp"
#include "workbook/pictures.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;
namespace fg = wb::figures;
using Catch::Matchers::ContainsSubstring;

namespace {
const fs::path kRoot = WORKBOOK_ROOT;

// The pages a learner reads.
std::vector<fs::path> markdown_pages() { return fg::pages(kRoot); }

bool is_chapter_readme(const fs::path& p) {
  return p.filename() == "README.md" && p.parent_path().parent_path().filename() == "chapters";
}

// ---- glossary terms: linked where they first appear ---------------------------------------
// The rule (docs/glossary.md states it in its introduction): a term's occurrences are
// case-insensitive whole words in any of the forms listed here (plurals, a verb's -es/-ed/-ing,
// "dispatcher"); only prose counts: fenced and indented code blocks, `code spans`, headings,
// HTML comments (the figure markers) and the text of links to other pages are skipped. The first
// occurrence must be the text of a link to docs/glossary.md#anchor; later ones need no link.
struct Term {
  const char* anchor;
  const char* forms;  // an ECMAScript alternation, matched case-insensitively between \b
};
const std::vector<Term> kTerms = {
    {"kernel", "kernels?"},
    {"launch", "launch(?:es|ed|ing)?"},
    {"stream", "streams?"},
    {"gemm", "gemms?"},
    {"cublas-and-cublaslt", "cublas(?:lt)?"},
    {"nvjet", "nvjet"},
    {"kineto", "kineto"},
    {"cupti", "cupti"},
    {"sm", "sms?"},
    {"occupancy", "occupancy"},
    {"hopper", "hopper"},
    {"hbm", "hbm(?:3e?)?"},
    {"epilogue", "epilogues?"},
    {"view", "views?"},
    {"dispatch", "dispatch(?:es|ed|ing|ers?)?"},
    {"user-annotation-and-gpu_user_annotation", R"(user\s+annotations?|(?:gpu_)?user_annotations?)"},
    {"overhead-bound", R"(overhead[- ]bound)"},
    {"compute-bound", R"(compute[- ]bound)"},
    {"profilerstep-and-the-schedule", R"(profilersteps?|schedules?)"},
    {"activity-buffer-request", R"((?:activity\s+)?buffer\s+requests?)"},
    {"self-and-total", R"(self\s+(?:cpu|cuda|columns?))"},
};

struct GlossaryLink {
  size_t begin, end;  // the link text's range in the page
  std::string anchor;
};
struct Prose {
  std::string text;  // the page, same length, with everything that is not prose blanked ('\x01')
  std::vector<GlossaryLink> links;
};

// `page_dir` resolves relative link targets (a chapter's README: chapters/NN_name).
Prose prose_of(const std::string& md, const fs::path& page_dir) {
  Prose out{md, {}};
  std::string& p = out.text;
  auto blank = [&p](size_t a, size_t b) {
    for (size_t i = a; i < b && i < p.size(); ++i)
      if (p[i] != '\n') p[i] = '\x01';
  };
  // Line by line: fenced code, indented code (4 spaces after a blank line), headings.
  bool fence = false, prev_blank = true, indented = false;
  for (size_t at = 0; at < p.size();) {
    size_t end = p.find('\n', at);
    if (end == std::string::npos) end = p.size();
    const std::string_view line(p.data() + at, end - at);
    const size_t lead = line.find_first_not_of(' ');
    const bool is_blank = lead == std::string_view::npos;
    const std::string_view body = is_blank ? std::string_view() : line.substr(lead);
    const bool fence_line =
        !is_blank && lead < 4 && (body.substr(0, 3) == "```" || body.substr(0, 3) == "~~~");
    indented = !fence && !is_blank && lead >= 4 && (indented || prev_blank);
    if (fence || fence_line || indented || (!is_blank && lead < 4 && body[0] == '#')) blank(at, end);
    if (fence_line) fence = !fence;
    prev_blank = is_blank;
    at = end + 1;
  }
  // HTML comments (the figure markers).
  for (size_t a = p.find("<!--"); a != std::string::npos; a = p.find("<!--", a)) {
    const size_t b = p.find("-->", a + 4);
    const size_t e = b == std::string::npos ? p.size() : b + 3;
    blank(a, e);
    a = e;
  }
  // Code spans: a run of n backticks up to the next run of exactly n in the same paragraph.
  auto run_at = [&p](size_t i) {
    size_t k = 0;
    while (i + k < p.size() && p[i + k] == '`') ++k;
    return k;
  };
  for (size_t a = p.find('`'); a != std::string::npos;) {
    const size_t n = run_at(a);
    size_t close = std::string::npos;
    for (size_t b = p.find('`', a + n); b != std::string::npos; b = p.find('`', b + run_at(b)))
      if (run_at(b) == n) {
        close = b;
        break;
      }
    if (close == std::string::npos || p.find("\n\n", a) < close) {
      a = p.find('`', a + n);
      continue;
    }
    blank(a, close + n);
    a = p.find('`', close + n);
  }
  // Links: the target never counts; the text counts only for a link into the glossary.
  const fs::path glossary = (kRoot / "docs/glossary.md").lexically_normal();
  static const std::regex link(R"(!?\[([^\]\n]*)\]\(([^)\s#]*)(?:#([^)\s]*))?\))");
  std::vector<std::pair<size_t, size_t>> other_text;
  for (auto it = std::sregex_iterator(p.begin(), p.end(), link); it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    const size_t text_begin = static_cast<size_t>(m.position(1)), text_end = text_begin + m.length(1);
    const bool to_glossary = m.str(0)[0] != '!' && m[3].matched && !m.str(2).empty() &&
                             m.str(2).find("://") == std::string::npos &&
                             (page_dir / m.str(2)).lexically_normal() == glossary;
    if (to_glossary)
      out.links.push_back({text_begin, text_end, m.str(3)});
    else
      other_text.emplace_back(text_begin, text_end);
    blank(text_end, static_cast<size_t>(m.position(0) + m.length(0)));  // "](target)"
  }
  for (auto [a, b] : other_text) blank(a, b);
  return out;
}

int line_at(const std::string& s, size_t pos) {
  return 1 + static_cast<int>(std::count(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
}

struct FirstUse {
  std::string anchor, word;
  size_t pos = 0;
  bool linked = false;
};
// The first prose occurrence of each term that the page uses.
std::vector<FirstUse> first_uses(const std::string& md, const fs::path& page_dir) {
  const Prose prose = prose_of(md, page_dir);
  std::vector<FirstUse> v;
  for (const auto& t : kTerms) {
    const std::regex rx(std::string(R"(\b(?:)") + t.forms + R"()\b)",
                        std::regex::ECMAScript | std::regex::icase);
    std::smatch m;
    if (!std::regex_search(prose.text, m, rx)) continue;
    FirstUse u{t.anchor, m.str(0), static_cast<size_t>(m.position(0)), false};
    for (const auto& l : prose.links)
      if (l.anchor == t.anchor && l.begin <= u.pos && u.pos < l.end) u.linked = true;
    v.push_back(u);
  }
  return v;
}

// One line per term whose first occurrence is not a link to its glossary entry.
std::vector<std::string> unlinked_first_uses(const std::string& md, const fs::path& page_dir) {
  std::vector<std::string> problems;
  for (const auto& u : first_uses(md, page_dir))
    if (!u.linked)
      problems.push_back("line " + std::to_string(line_at(md, u.pos)) + ": the first '" + u.word +
                         "' is not a link to docs/glossary.md#" + u.anchor);
  return problems;
}

// ---- cheatsheet: every lesson id has a row ------------------------------------------------
std::set<std::string> sheet_rules(const std::string& sheet) {
  static const std::regex rule(R"(`rule:([a-z_0-9]+)`)");
  std::set<std::string> s;
  for (auto it = std::sregex_iterator(sheet.begin(), sheet.end(), rule); it != std::sregex_iterator(); ++it)
    s.insert((*it)[1].str());
  return s;
}

// Every lesson id the workbook uses: the registered facts, the chapter specs' expectations and
// the facts of every recorded lessons.json under expected_output/.
std::set<std::string> lesson_ids_in_use() {
  std::set<std::string> ids;
  for (const auto& f : wb::all_facts()) ids.insert(std::string(f.id));
  for (const auto& spec : wb::lesson_specs())
    for (const auto& e : spec.expect) ids.insert(e.fact);
  int recordings = 0;
  for (const auto& e : fs::recursive_directory_iterator(kRoot / "expected_output")) {
    if (!e.is_regular_file() || e.path().filename() != "lessons.json") continue;
    const auto doc = nlohmann::json::parse(proc::slurp(e.path()));
    for (const auto& f : doc.at("facts")) ids.insert(f.at("id").get<std::string>());
    ++recordings;
  }
  CHECK(recordings >= 10);
  return ids;
}

std::vector<std::string> missing_rules(const std::string& sheet, const std::set<std::string>& ids) {
  const auto have = sheet_rules(sheet);
  std::vector<std::string> missing;
  for (const auto& id : ids)
    if (have.count(id) == 0) missing.push_back(id);
  return missing;
}
}  // namespace

TEST_CASE("every figure the claims quote by ref agrees with its recording; the pages are plain",
          "[docs][cpu]") {
  const fg::ClaimsPass pass = fg::claims_pass(kRoot, fg::Mode::Check);
  for (const auto& p : pass.problems) UNSCOPED_INFO(p);
  CHECK(pass.problems.empty());
  CHECK(pass.changes.empty());
  CHECK(pass.written.empty());
  CHECK(pass.figures >= 500);                  // the seven chapters, README.md, docs/performance.md, ...
  CHECK(pass.blocks >= 3);                     // chapter 01's two parity tables, the cheatsheet
  CHECK(fg::leftover_sources(kRoot).empty());  // no NAME.src.md left: the pages are what a writer edits
  int pages = 0;
  for (const auto& page : fg::pages(kRoot)) {
    const std::string text = proc::slurp(page);
    INFO(fs::relative(page, kRoot).string());
    CHECK(text.find("<!--fig") == std::string::npos);  // read raw, a page has no markers
    // nor placeholders (one in a `code span` is an example, and `{{1, 2}}` in C++ is code)
    static const std::regex placeholder(
        R"((^|[^`])\{\{(\d[\d,]*(\.\d+)? ([^}]*#[^}]*|seed|datasheet|calc|spec)|[#/](seed|datasheet|calc|spec)|include [^}]+|cheatsheet)\}\})");
    CHECK_FALSE(std::regex_search(text, placeholder));
    CHECK(text.find("<!-- generated from ") == std::string::npos);
    ++pages;
  }
  CHECK(pages >= 15);
}

namespace {
// A scratch repository root: chapter 01's page and claims file, the recordings and docs it quotes
// (links to the real ones), and chapter 01's own recording a real folder whose lessons.json can
// be doctored.
struct Scratch {
  fs::path root = proc::scratch("docs_claims");
  const std::string page_rel = "chapters/01_cold_64/README.md", claims_rel = "docs/claims/01_cold_64.json";
  fs::path page = root / page_rel, claims = root / claims_rel;
  fs::path lessons = root / "expected_output/h200/01_cold_64/lessons.json";
  std::string original_page = proc::slurp(kRoot / page_rel),
              original_claims = proc::slurp(kRoot / claims_rel);
  Scratch() {
    fs::create_directories(page.parent_path());
    fs::create_directories(claims.parent_path());
    fs::copy_file(kRoot / page_rel, page);
    fs::copy_file(kRoot / claims_rel, claims);
    for (const char* d : {"docs/parity", "docs/bench", "tests"}) {
      fs::create_directories((root / d).parent_path());
      fs::create_directory_symlink(kRoot / d, root / d);
    }
    const fs::path rec = kRoot / "expected_output/h200";
    for (const auto& e : fs::directory_iterator(rec)) {
      const fs::path to = root / "expected_output/h200" / e.path().filename();
      fs::create_directories(to.parent_path());
      if (e.path().filename() != "01_cold_64") {
        fs::create_directory_symlink(e.path(), to);
        continue;
      }
      fs::create_directories(to);
      for (const auto& f : fs::directory_iterator(e.path()))
        if (f.path().filename() == "lessons.json")
          fs::copy_file(f.path(), to / "lessons.json");
        else if (f.is_directory())
          fs::create_directory_symlink(f.path(), to / f.path().filename());
        else
          fs::create_symlink(f.path(), to / f.path().filename());
    }
  }
  ~Scratch() { fs::remove_all(root); }
  proc::Exit figures(const std::string& mode) const {
    return proc::run(proc::bin("figures"), {mode, "--root", root.string()});
  }
  // Sets one value of chapter 01's recorded lessons.json (a re-record that moved it).
  void record(const std::string& fact, const std::string& key, double value) const {
    auto j = nlohmann::json::parse(proc::slurp(lessons));
    for (auto& f : j["facts"])
      if (f["id"] == fact) f["data"][key] = value;
    std::ofstream(lessons) << j.dump(1);
  }
};

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}
}  // namespace

TEST_CASE("figures update rewrites a moved figure in the page and its claim together", "[docs][cpu]") {
  Scratch s;
  REQUIRE(s.figures("check").code == 0);
  // The GEMM's median, printed at one decimal in two sentences of the page and tied by two
  // claims. A re-record moves it to 2.43 us.
  const double was = fg::resolve(kRoot, "h200/01_cold_64/lessons.json#throughput/data/gemm_median_us");
  char printed[16];
  std::snprintf(printed, sizeof printed, "%.1f", was);
  const std::string old_a = std::string(printed) + " µs, the add in",
                    old_b = std::string("takes ~") + printed + " µs (";
  REQUIRE(s.original_page.find(old_a) != std::string::npos);
  REQUIRE(s.original_page.find(old_b) != std::string::npos);
  // A claim on the same number by "key" of the fact's data (read from the recorded lessons.json).
  const std::string key_claim =
      "{\"page\": \"" + s.page_rel + "\", \"claims\": [{\"quote\": \"" + old_b +
      "\", \"recording\": \"h200/01_cold_64\", \"fact\": \"throughput\", \"text\": \"t\", "
      "\"all\": [], \"figures\": [{\"printed\": \"" +
      printed + "\", \"key\": \"/gemm_median_us\"}]}]}\n";
  std::ofstream(s.root / "docs/claims/key.json") << key_claim;
  REQUIRE(s.figures("check").code == 0);
  s.record("throughput", "gemm_median_us", was + 1.01);
  char moved[16];
  std::snprintf(moved, sizeof moved, "%.1f", was + 1.01);

  // check fails, names the figure and writes nothing
  auto c = s.figures("check");
  CHECK(c.code == 1);
  CHECK_THAT(c.err, ContainsSubstring("chapters/01_cold_64/README.md:"));
  CHECK_THAT(c.err, ContainsSubstring(std::string("prints ") + printed + " but the recording says " + moved));
  CHECK(proc::slurp(s.page) == s.original_page);
  CHECK(proc::slurp(s.claims) == s.original_claims);
  // generate does not take numbers from the recordings either
  CHECK(s.figures("generate").code == 1);
  CHECK(proc::slurp(s.page) == s.original_page);

  // update rewrites both places on the page, nothing else, and the claims' printed and quotes
  auto u = s.figures("update");
  INFO(u.err);
  CHECK(u.code == 0);
  CHECK_THAT(u.out, ContainsSubstring(std::string(printed) + " -> " + moved));
  const std::string want = replaced(replaced(s.original_page, old_a, std::string(moved) + " µs, the add in"),
                                    old_b, std::string("takes ~") + moved + " µs (");
  CHECK(proc::slurp(s.page) == want);
  const auto claims = nlohmann::json::parse(proc::slurp(s.claims));
  int tied = 0;
  for (const auto& c : claims["claims"])
    for (const auto& f : c.value("figures", nlohmann::json::array()))
      if (f.value("ref", "") == "h200/01_cold_64/lessons.json#throughput/data/gemm_median_us") {
        CHECK(f["printed"] == moved);
        CHECK_THAT(c["quote"].get<std::string>(), ContainsSubstring(moved));
        CHECK(want.find(c["quote"].get<std::string>()) != std::string::npos);
        ++tied;
      }
  CHECK(tied >= 2);
  const auto key = nlohmann::json::parse(proc::slurp(s.root / "docs/claims/key.json"));
  CHECK(key["claims"][0]["figures"][0]["printed"] == moved);
  CHECK(key["claims"][0]["quote"] == std::string("takes ~") + moved + " µs (");
  // the file keeps its layout: one entry a line, only the moved figure's lines differ
  const std::string after = proc::slurp(s.claims);
  CHECK(std::count(after.begin(), after.end(), '\n') ==
        std::count(s.original_claims.begin(), s.original_claims.end(), '\n'));
  CHECK(s.figures("check").code == 0);
  CHECK(s.figures("update").out.empty());  // nothing left to rewrite
}

TEST_CASE("figures check fails on a number edited by hand and on a stale quoted block", "[docs][cpu]") {
  Scratch s;
  REQUIRE(s.figures("check").code == 0);
  SECTION("a figure edited on the page: its quote is no longer there; update does not paper over it") {
    static const std::regex width(R"(The H200 C\+\+ run: (\d+) / )");
    std::smatch m;
    REQUIRE(std::regex_search(s.original_page, m, width));
    const std::string shown = m[1].str(), other = std::to_string(std::stoi(shown) + 7);
    std::string edited = s.original_page;
    edited.replace(static_cast<size_t>(m.position(1)), shown.size(), other);
    std::ofstream(s.page) << edited;
    auto e = s.figures("check");
    CHECK(e.code == 1);
    CHECK_THAT(e.err, ContainsSubstring("chapters/01_cold_64/README.md: no longer says \""));
    CHECK(s.figures("update").code == 1);
    CHECK(proc::slurp(s.page) == edited);
  }
  SECTION("a quoted file's block edited on the page: check names it, generate puts the file back") {
    const std::string table = proc::slurp(kRoot / "docs/parity/h200/cpp_table.txt");
    const std::string first = table.substr(0, table.find('\n', table.find('\n') + 1));  // two lines
    REQUIRE(s.original_page.find(first) != std::string::npos);
    std::ofstream(s.page) << replaced(s.original_page, first, first + " (edited)");
    auto e = s.figures("check");
    CHECK(e.code == 1);
    CHECK_THAT(e.err, ContainsSubstring("is not docs/parity/h200/cpp_table.txt"));
    CHECK(s.figures("generate").code == 0);
    CHECK(proc::slurp(s.page) == s.original_page);
  }
  SECTION("a number with a unit added to a chapter README fails until a claim or a source backs it") {
    std::ofstream(s.page) << s.original_page << "\nThe GEMM now takes 3.2 µs.\n";
    auto e = s.figures("check");
    CHECK(e.code == 1);
    CHECK_THAT(e.err, ContainsSubstring("unbacked figure '3.2 µs'"));
    std::ofstream(s.root / "docs/claims/extra.json")
        << "{\"page\": \"" << s.page_rel
        << "\", \"sources\": [{\"quote\": \"The GEMM now takes 3.2 µs.\", \"source\": \"calc\", \"what\": "
           "\"x\"}]}\n";
    CHECK(s.figures("check").code == 0);
  }
  SECTION("a claim whose reference names no recording fails, naming it") {
    std::ofstream(s.claims) << replaced(s.original_claims,
                                        "h200/01_cold_64/lessons.json#throughput/data/gemm_median_us",
                                        "h200/99_no_such/lessons.json#throughput/data/gemm_median_us");
    auto e = s.figures("check");
    CHECK(e.code == 1);
    CHECK_THAT(e.err, ContainsSubstring("99_no_such"));
  }
}

TEST_CASE("figures: a plain chapter README passes; a <!--fig marker or a NAME.src.md left fails",
          "[docs][cpu]") {
  const fs::path root = proc::scratch("docs_plain");
  fs::create_directories(root / "chapters/08_plain");
  const std::string plain = "# Chapter 08\n\nThe GEMM takes 3.2 µs here.\n";
  std::ofstream(root / "chapters/08_plain/README.md") << plain;
  auto e = proc::run(proc::bin("figures"), {"check", "--root", root.string()});
  CHECK(e.code == 0);
  CHECK(fg::leftover_sources(root).empty());
  std::ofstream(root / "chapters/08_plain/README.md")
      << "# Chapter 08\n\nThe GEMM takes 3.2 µs<!--fig calc-->.\n";
  e = proc::run(proc::bin("figures"), {"check", "--root", root.string()});
  CHECK(e.code == 1);
  CHECK(e.err.find("chapters/08_plain/README.md:3: a <!--fig marker") != std::string::npos);
  // A page's old source brought back (a merge of an old branch): its edits would never reach the
  // page. check names each one, in a chapter and under docs/, and is not a page itself.
  std::ofstream(root / "chapters/08_plain/README.md") << plain;
  std::ofstream(root / "chapters/08_plain/README.src.md")
      << "# Chapter 08\n\nThe GEMM takes {{3.2 calc}} µs.\n";
  fs::create_directories(root / "docs/sub");
  std::ofstream(root / "docs/sub/notes.src.md") << "Notes.\n";
  CHECK(fg::leftover_sources(root) ==
        std::vector<fs::path>{root / "chapters/08_plain/README.src.md", root / "docs/sub/notes.src.md"});
  CHECK(fg::pages(root) == std::vector<fs::path>{root / "chapters/08_plain/README.md"});
  e = proc::run(proc::bin("figures"), {"check", "--root", root.string()});
  CHECK(e.code == 1);
  CHECK_THAT(e.err, ContainsSubstring("chapters/08_plain/README.src.md: a NAME.src.md source"));
  CHECK_THAT(e.err, ContainsSubstring("docs/sub/notes.src.md: a NAME.src.md source"));
  CHECK_THAT(e.err, ContainsSubstring("2 leftover markers or sources"));
  fs::remove_all(root);
}

TEST_CASE("figures: selectors and precision", "[docs][cpu]") {
  const std::string L = "h200/01_cold_64/lessons.json#";
  // fact-id shorthand == the explicit pointer; [field=value] picks an array element
  CHECK(fg::resolve(kRoot, L + "step_widths/data/first_us") ==
        fg::resolve(kRoot, L + "/facts[id=step_widths]/data/steps[step=2]/width_us"));
  CHECK(fg::resolve(kRoot, "h200/01_cold_64/table.txt#row=Self CPU time total") ==
        fg::resolve(kRoot, L + "overhead_bound/data/self_cpu_total_us"));
  CHECK(fg::resolve(kRoot, L + "end_sync/data/sync_us scale=0.001") * 1000 ==
        fg::resolve(kRoot, "h200/01_cold_64/table.txt#row=cudaDeviceSynchronize;col=Self CPU"));
  CHECK_THROWS_AS(fg::resolve(kRoot, L + "no_such_fact/data/x"), fg::FigureError);
  CHECK_THROWS_AS(fg::resolve(kRoot, "../secrets.json#/x"), fg::FigureError);
  // a Markdown table's cell, by its first cell or by named cells, equals the regex over the row
  const std::string G = "docs/bench/geglu_h200.md#";
  CHECK(fg::resolve(kRoot, G + "row=handwritten fused;col=vs eager") ==
        fg::resolve(kRoot, G + R"(re=handwritten\sfused(?:\s\|\s[^|]+){5}\s\|\s([\d.]+)x)"));
  CHECK(fg::resolve(kRoot, G + "row=handwritten fused;col=% of copy") ==
        fg::resolve(kRoot, G + R"(re=handwritten\sfused(?:\s\|\s[^|]+){4}\s\|\s([\d.]+)%)"));
  const std::string P = "docs/bench/ch05_vs_python_h200.md#";
  CHECK(fg::resolve(kRoot, P + "N=64;side=C++;variant=graph;col=CPU us/step") ==
        fg::resolve(kRoot, P + R"(re=\|\s64\s\|\sC\+\+\s\|\sgraph\s\|\s([\d.]+)\s\|)"));
  CHECK_THROWS_AS(fg::resolve(kRoot, G + "row=no such kernel;col=vs eager"), fg::FigureError);
  // a trace event's CUPTI callback id: chapter 01's cold run names three runtime calls INVALID
  // (cbid 468); cudaFree is 22; a call with no cbid, a fourth INVALID or another value fail
  const std::string T = "h200/01_cold_64/cold/trace.json#event=";
  for (const char* nth : {"1", "2", "3"})
    CHECK(fg::resolve(kRoot, T + "INVALID;value=cbid;nth=" + nth) == 468);
  CHECK(fg::resolve(kRoot, T + "cudaFree;value=cbid") == 22);
  CHECK(fg::resolve(kRoot, T + "INVALID") == fg::resolve(kRoot, T + "INVALID;value=dur"));
  CHECK_THROWS_AS(fg::resolve(kRoot, T + "INVALID;value=cbid;nth=4"), fg::FigureError);
  CHECK_THROWS_AS(fg::resolve(kRoot, T + "aten::mm;value=cbid"), fg::FigureError);
  CHECK_THROWS_AS(fg::resolve(kRoot, T + "INVALID;value=name"), fg::FigureError);
  // a second run's lessons (tests/data/reruns/) resolve as a recording's do
  CHECK(fg::resolve(kRoot,
                    "tests/data/reruns/h200-run2/01_cold_64/cold/lessons.json#profiler_artefacts/data/"
                    "library_events") == 60);
  CHECK_THROWS_AS(fg::resolve(kRoot, G + "row=handwritten fused;col=no such column"), fg::FigureError);
  // the printed precision decides: with the recorded 17.684, 17.7 matches and 17.6 does not; 18
  // matches, 17 does not. The strings are made from whatever the recording holds.
  const double v = fg::resolve(kRoot, L + "dead_window/data/first_gap_us");
  auto fixed = [](double x, int decimals) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(decimals) << x;
    return o.str();
  };
  // A scratch root: a page that prints the gap, its claim by "ref", the recordings.
  const fs::path root = proc::scratch("docs_precision");
  fs::create_directories(root / "docs/claims");
  fs::create_directory_symlink(kRoot / "expected_output", root / "expected_output");
  for (auto [shown, ok] : std::vector<std::pair<std::string, bool>>{
           {fixed(v, 1), true}, {fixed(v - 0.1, 1), false}, {fixed(v, 0), true}, {fixed(v - 1, 0), false}}) {
    INFO(shown);
    const std::string quote = "the first gap takes " + shown + " µs";
    std::ofstream(root / "docs/gap.md") << "# Gap\n\nIn chapter 01 " << quote << ".\n";
    std::ofstream(root / "docs/claims/gap.json")
        << "{\"page\": \"docs/gap.md\", \"claims\": [{\"quote\": \"" << quote
        << "\", \"figures\": [{\"printed\": \"" << shown << "\", \"ref\": \"" << L
        << "dead_window/data/first_gap_us\"}]}]}\n";
    const fg::ClaimsPass pass = fg::claims_pass(root, fg::Mode::Check);
    for (const auto& p : pass.problems) UNSCOPED_INFO(p);
    CHECK(pass.figures == 1);
    CHECK(pass.problems.empty() == ok);
  }
  fs::remove_all(root);
}

TEST_CASE("no page points at files outside the repository", "[docs][cpu]") {
  for (const auto& p : markdown_pages()) {
    std::string text = proc::slurp(p);
    INFO(p.string());
    CHECK(text.find("lessons.md") == std::string::npos);
    CHECK(text.find("h200-probe") == std::string::npos);
  }
}

TEST_CASE("glossary: every term defined, linked from each chapter, every link resolves", "[docs][cpu]") {
  const std::string glossary = proc::slurp(kRoot / "docs/glossary.md");
  auto anchors = fg::anchors(glossary);
  std::set<std::string> have(anchors.begin(), anchors.end());
  // every term the first-use rule knows, among them the compile section's five
  for (const auto& t : kTerms) {
    INFO(t.anchor);
    CHECK(have.count(t.anchor) == 1);
  }
  CHECK(kTerms.size() >= 21);
  static const std::regex link(R"(\]\(([^)#\s]*)(?:#([^)\s]+))?\))");
  for (const auto& page : markdown_pages()) {
    std::string text = proc::slurp(page);
    bool in_chapters = page.parent_path().parent_path().filename() == "chapters";
    if (in_chapters) {
      INFO(page.string());
      CHECK(text.find("docs/glossary.md#") != std::string::npos);
    }
    for (auto it = std::sregex_iterator(text.begin(), text.end(), link); it != std::sregex_iterator(); ++it) {
      std::string target = (*it)[1].str(), anchor = (*it)[2].str();
      if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) continue;
      fs::path file = target.empty() ? page : (page.parent_path() / target).lexically_normal();
      INFO(page.string() + " -> " + target + (anchor.empty() ? "" : "#" + anchor));
      REQUIRE(fs::exists(file));
      if (!anchor.empty() && file.extension() == ".md") {
        auto a = fg::anchors(proc::slurp(file));
        CHECK(std::find(a.begin(), a.end(), anchor) != a.end());
      }
    }
  }
}

TEST_CASE("glossary: each chapter README links a term where it first appears", "[docs][cpu]") {
  std::set<std::string> anchors_used;
  int readmes = 0;
  for (const auto& page : markdown_pages()) {
    if (!is_chapter_readme(page)) continue;
    ++readmes;
    const std::string text = proc::slurp(page);
    const auto uses = first_uses(text, page.parent_path());
    for (const auto& u : uses) anchors_used.insert(u.anchor);
    std::string problems;
    for (const auto& s : unlinked_first_uses(text, page.parent_path())) problems += s + "\n";
    INFO(fs::relative(page, kRoot).string() + ":\n" + problems);
    CHECK(problems.empty());
    CHECK(uses.size() >= 3);  // each chapter uses at least kernel, launch/GEMM, ...
  }
  CHECK(readmes == static_cast<int>(proc::chapters().size()));  // every chapter in the build's list
  CHECK(anchors_used.size() >= 12);  // the terms are in use, so the rule is not vacuous
  const auto a = fg::anchors(proc::slurp(kRoot / "docs/glossary.md"));
  for (const auto& t : kTerms) {  // and every term the check knows is a glossary heading
    INFO(t.anchor);
    CHECK(std::find(a.begin(), a.end(), t.anchor) != a.end());
  }
}

TEST_CASE("glossary: a link moved past a term's first use fails; code, headings and other links do not count",
          "[docs][cpu]") {
  const fs::path dir = kRoot / "chapters/01_cold_64";
  SECTION("chapter 01 with its first GEMM link moved to the next GEMM") {
    const std::string original = proc::slurp(dir / "README.md");
    const std::string linked = "[GEMM](../../docs/glossary.md#gemm)";
    const size_t at = original.find(linked);
    REQUIRE(at != std::string::npos);
    REQUIRE(unlinked_first_uses(original, dir).empty());
    std::string moved = original;
    moved.replace(at, linked.size(), "GEMM");  // unlinked here ...
    const Prose prose = prose_of(moved, dir);
    static const std::regex gemm(R"(\bGEMMs?\b)", std::regex::icase);
    std::smatch next;
    const std::string after = prose.text.substr(at + 4);
    REQUIRE(std::regex_search(after, next, gemm));
    const size_t later = at + 4 + static_cast<size_t>(next.position(0));
    moved.replace(later, next.length(0),
                  "[" + next.str(0) + "](../../docs/glossary.md#gemm)");  // ... linked there
    REQUIRE(moved.find(linked) != std::string::npos);
    const auto problems = unlinked_first_uses(moved, dir);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0] == "line " + std::to_string(line_at(original, at)) +
                             ": the first 'GEMM' is not a link to docs/glossary.md#gemm");
  }
  SECTION("the rule on small pages") {
    auto problems = [&](const std::string& md) { return unlinked_first_uses(md, dir).size(); };
    const std::string k = "[kernel](../../docs/glossary.md#kernel)";
    CHECK(problems("A " + k + " runs.\n") == 0);
    CHECK(problems("A kernel runs. Then a " + k + ".\n") == 1);                   // linked after first use
    CHECK(problems("Two [kernels](../../docs/glossary.md#kernel) run.\n") == 0);  // plural
    CHECK(problems("Two KERNELS run, then a " + k + ".\n") == 1);                 // any case
    CHECK(problems("A [kernel](../../docs/glossary.md#launch) runs.\n") == 1);    // the wrong anchor
    CHECK(problems("A [kernel](glossary.md#kernel) runs, a kernel.\n") ==
          1);  // another page: its text does not count
    CHECK(problems("A `kernel` in code, then a " + k + ".\n") == 0);
    CHECK(problems("``a `kernel` span`` then a " + k + ".\n") == 0);
    CHECK(problems("# A kernel heading\n\nThen a " + k + ".\n") == 0);
    CHECK(problems("```\nkernel\n```\nThen a " + k + ".\n") == 0);
    CHECK(problems("Run:\n\n    kernel --flag\n\nThen a " + k + ".\n") == 0);
    CHECK(problems("See [the kernel chapter](../04_compute_bound_4096/README.md), then a " + k + ".\n") == 0);
    CHECK(problems("2 us<!--fig label=kernel--> then a " + k + ".\n") == 0);
    CHECK(problems("nvjet_sm90_kernel_name is an identifier, then a " + k + ".\n") == 0);
    CHECK(problems("The dispatcher routes it; a [dispatch](../../docs/glossary.md#dispatch).\n") == 1);
    CHECK(problems("A user\nannotation, then a [user annotation](../../docs/glossary.md#"
                   "user-annotation-and-gpu_user_annotation).\n") == 1);
    CHECK(problems("Nothing to link here.\n") == 0);
  }
}

TEST_CASE("cheatsheet: every inspect rule it names is a registered fact", "[docs][cpu]") {
  const std::string sheet = proc::slurp(kRoot / "docs/cheatsheet.md");
  std::set<std::string> ids;
  for (const auto& f : wb::all_facts()) ids.insert(std::string(f.id));
  // Rules are written `rule:ID` in the sheet's last column.
  static const std::regex rule(R"(`rule:([a-z_0-9]+)`)");
  int named = 0;
  std::set<std::string> used;
  for (auto it = std::sregex_iterator(sheet.begin(), sheet.end(), rule); it != std::sregex_iterator(); ++it) {
    INFO((*it)[1].str());
    CHECK(ids.count((*it)[1].str()) == 1);
    used.insert((*it)[1].str());
    ++named;
  }
  CHECK(named >= 8);
  // and every pattern row names at least one rule
  std::istringstream in(sheet);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| **", 0) != 0) continue;
    INFO(line);
    CHECK(line.find("`rule:") != std::string::npos);
  }
}

TEST_CASE("cheatsheet: every lesson id in use has a row; a copy without one fails", "[docs][cpu]") {
  const std::string sheet = proc::slurp(kRoot / "docs/cheatsheet.md");
  const std::set<std::string> ids = lesson_ids_in_use();
  for (const char* id : {"batch_chain", "cpu_shares", "gemm_tiles", "kernel_gaps", "pointwise_traffic",
                         "view_ops", "work_per_step", "overhead_bound"})
    CHECK(ids.count(id) == 1);
  std::string missing;
  for (const auto& id : missing_rules(sheet, ids)) missing += id + " ";
  INFO("lesson ids with no cheatsheet row: " << missing);
  CHECK(missing.empty());
  // A copy of the sheet with one rule left out is caught, by name.
  std::string copy = sheet;
  const std::string cut = "`rule:batch_chain`";
  REQUIRE(copy.find(cut) != std::string::npos);
  for (size_t at; (at = copy.find(cut)) != std::string::npos;) copy.erase(at, cut.size());
  std::vector<std::string> expected = missing_rules(sheet, ids);
  expected.insert(std::lower_bound(expected.begin(), expected.end(), "batch_chain"), "batch_chain");
  CHECK(missing_rules(copy, ids) == expected);
}

TEST_CASE("the C++ pages: C++17 only, the profiler's defaults and Torch's configure warnings said",
          "[docs][cpu]") {
  // C++20 designated initialisers ({.group_by_stack_n = N}) warn under -std=c++17 -pedantic: no
  // page or public header shows one.
  const std::regex designated(R"(\{\s*\.[A-Za-z_]\w*\s*=)");
  std::vector<fs::path> files = markdown_pages();
  for (const char* dir : {"common/core/include/workbook", "common/torch/include/workbook",
                          "common/lessons/include/workbook", "common/render/include/workbook"})
    for (const auto& e : fs::directory_iterator(kRoot / dir)) files.push_back(e.path());
  for (const auto& f : files) {
    const std::string text = proc::slurp(f);
    std::smatch m;
    INFO(f.string());
    CHECK_FALSE(std::regex_search(text, m, designated));
  }
  const std::string page = proc::slurp(kRoot / "docs/profiler-in-cpp.md");
  for (const char* said : {
           "group_by_input_shape",                // Python's option, and ours
           "--group-by-input-shape",              // the table tool's flag
           "`wb::ProfilerOptions{}` comes with",  // its default schedule is not Python's
           "last_nonempty()",                     // repeat=0's trailing empty cycle
           "library kineto not found.",           // Torch's configure warnings, explained
           "TORCH_CUDA_ARCH_LIST",
           "find_dependency(CUDAToolkit)` is called only",
       }) {
    INFO(said);
    CHECK(page.find(said) != std::string::npos);
  }
}

TEST_CASE("the installed package asks for CUDAToolkit only when it was built with CUDA", "[docs][cpu]") {
  const std::string in = proc::slurp(kRoot / "cmake/TorchProfilerWorkbookConfig.cmake.in");
  const size_t call = in.find("find_dependency(CUDAToolkit)");
  REQUIRE(call != std::string::npos);
  CHECK(in.find("find_dependency(CUDAToolkit)", call + 1) == std::string::npos);  // once
  // ... inside the switch the build sets, not unconditionally.
  CHECK(in.rfind("if(@WORKBOOK_PACKAGE_NEEDS_CUDATOOLKIT@)", call) != std::string::npos);
  CHECK(in.find("endif()", call) != std::string::npos);
  const std::string pkg = proc::slurp(kRoot / "cmake/WorkbookPackage.cmake");
  CHECK(pkg.find("if(\"CUDA::cupti\" IN_LIST _wb_cupti_links)") != std::string::npos);
  // A build's generated config says OFF when its LibTorch has no CUDA (and CUPTI was not linked).
  const fs::path generated = fs::path(WORKBOOK_BUILD_DIR) / "package/TorchProfilerWorkbookConfig.cmake";
  if (!fs::exists(generated)) SKIP("no generated package config in " << generated.string());
  const std::string cfg = proc::slurp(generated);
  const std::string cache = proc::slurp(fs::path(WORKBOOK_BUILD_DIR) / "CMakeCache.txt");
  const bool cupti = cache.find("CUDA_cupti_LIBRARY:FILEPATH=/") != std::string::npos;
  CHECK(cfg.find(cupti ? "if(ON)\n  find_dependency(CUDAToolkit)"
                       : "if(OFF)\n  find_dependency(CUDAToolkit)") != std::string::npos);
}

namespace {
const char* kTokenPicture = "docs/img/ch11_token_time_h200.svg";
const std::vector<std::string> kCh11 = {"graph_fused", "gemv", "fused", "attention", "overlap"};

wb::Trace recorded(const std::string& folder) {
  fs::path p = kRoot / "expected_output" / folder / "trace.json";
  if (!fs::exists(p)) p += ".gz";
  return wb::read_trace(p);
}

double share(const fg::TokenBar& b, fg::TokenClass c) { return b.us[static_cast<size_t>(c)] / b.sum_us(); }

// What chapter 11's README says of the bars, first variant to last: the other kernels and copies
// are at least three times the share of the first token that they are of the last; the GEMVs are
// at most half of the first token and at least 70% of the last; the gaps under 5% of the last;
// and from the third variant on each token is shorter than the one before. "" when all hold.
std::string ch11_order(const std::vector<fg::TokenBar>& bars) {
  using C = fg::TokenClass;
  const fg::TokenBar &first = bars.front(), &last = bars.back();
  if (share(first, C::Other) < 3 * share(last, C::Other)) return "the other kernels' share did not shrink";
  if (share(first, C::Gemv) > 0.5) return "the GEMVs are over half of the first token";
  if (share(last, C::Gemv) < 0.7) return "the GEMVs are under 70% of the last token";
  if (share(last, C::Gap) > 0.05) return "the gaps are over 5% of the last token";
  for (size_t i = 2; i < bars.size(); ++i)
    if (bars[i].sum_us() >= bars[i - 1].sum_us())
      return bars[i].variant + " is no shorter than the step before";
  return "";
}
}  // namespace

TEST_CASE("the token picture: the classes add up, in the recording's order", "[docs][ch11][cpu]") {
  std::vector<fg::TokenBar> bars;
  for (const auto& v : kCh11) {
    INFO(v);
    const wb::Trace t = recorded("h200/11_llm_decode_kernels/" + v);
    bars.push_back(fg::token_time(t, v));
    const fg::TokenBar& b = bars.back();
    CHECK(b.steps == 5);  // the schedule's active steps (1,2,5,1)
    // The classes' medians add up to the median span within 1%; the span is the one the lessons
    // across variants measure (summarize_variant: the same steps, the same work).
    CHECK(std::abs(b.sum_us() - b.span_us) <= 0.01 * b.span_us);
    wb::VariantRun r;
    r.name = v;
    r.trace = std::make_shared<const wb::Trace>(t);
    CHECK(std::abs(wb::summarize_variant(r, "decode").gpu_span_us - b.span_us) < 1e-6);
    for (double us : b.us) CHECK(us >= 0);
    CHECK(b.us[static_cast<size_t>(fg::TokenClass::Gemv)] > 0);
    CHECK(b.us[static_cast<size_t>(fg::TokenClass::Attention)] > 0);
  }
  CHECK(ch11_order(bars) == "");
  // graph_fused's other small kernels are a larger share of its token than fused's, fused's than
  // attention's; overlap waits less between kernels than attention does.
  using C = fg::TokenClass;
  CHECK(share(bars[0], C::Other) > share(bars[2], C::Other));
  CHECK(share(bars[2], C::Other) > share(bars[3], C::Other));
  CHECK(bars[4].us[static_cast<size_t>(C::Gap)] < bars[3].us[static_cast<size_t>(C::Gap)]);
  // what the rules say of the names in these traces
  wb::Event k;
  k.kind = wb::Kind::Kernel;
  for (const char* name : {"nvjet_sm90_tst_64x8_64x16_4x1_v_bx_splitK_TNT",
                           "void cublasLt::splitKreduce_kernel<32, 16, int, float>",
                           "void llmk::(anonymous namespace)::gemv_kernel<1, 0>(uint4 const*)"}) {
    k.name = name;
    CHECK(fg::token_class(k) == C::Gemv);
  }
  for (const char* name : {"cudnn_generated_fort_native_sdpa_sm80_flash_fprop_wmma_f16_knob_35",
                           "void cudnn::fusion::lean_reduction_kernel<false, false, false>(void*)",
                           "llmk::(anonymous namespace)::attention_kernel(__nv_bfloat16 const*)"}) {
    k.name = name;
    CHECK(fg::token_class(k) == C::Attention);
  }
  k.name = "llmk::(anonymous namespace)::rope_kv_write_kernel(__nv_bfloat16 const*)";
  CHECK(fg::token_class(k) == C::Other);
  k.kind = wb::Kind::Memcpy;
  k.name = "Memcpy DtoD (Device -> Device)";
  CHECK(fg::token_class(k) == C::Other);

  SECTION("chapter 10's recording breaks the order") {
    std::vector<fg::TokenBar> ch10;
    for (const char* v : {"eager", "graph", "graph_fused"})
      ch10.push_back(fg::token_time(recorded(std::string("h200/10_llm_decode_graphs/") + v), v));
    CHECK(ch11_order(ch10) != "");
  }
  SECTION("a doctored trace: overlap's GEMVs renamed are no GEMVs, and the picture differs") {
    wb::Trace t = recorded("h200/11_llm_decode_kernels/overlap");
    for (auto& e : t.events)
      if (e.kind == wb::Kind::Kernel && e.name.find("gemv_kernel") != std::string::npos)
        e.name = "void llmk::rowdot_kernel";
    std::vector<fg::TokenBar> doctored = bars;
    doctored.back() = fg::token_time(t, "overlap");
    CHECK(doctored.back().us[static_cast<size_t>(C::Gemv)] == 0);
    CHECK(ch11_order(doctored) == "the other kernels' share did not shrink");  // they count as other now
    CHECK(fg::token_time_svg(doctored, 0.487, {"x"}) != fg::token_time_svg(bars, 0.487, {"x"}));
  }
  SECTION("no device work in the profiled steps: a CPU trace, a trace without its launches") {
    CHECK_THROWS_AS(fg::token_time(recorded("cpu/11_llm_decode_kernels/gemv"), "gemv"), fg::FigureError);
    wb::Trace t = recorded("h200/11_llm_decode_kernels/overlap");
    t.events.erase(std::remove_if(t.events.begin(), t.events.end(),
                                  [](const wb::Event& e) { return e.kind == wb::Kind::Runtime; }),
                   t.events.end());
    // every kernel names a launch the trace no longer holds: launched before the window
    CHECK_THROWS_AS(fg::token_time(t, "overlap"), fg::FigureError);
  }
}

TEST_CASE("the token picture on disk is what the recording draws; check fails on a doctored one",
          "[docs][ch11][cpu]") {
  const std::string drawn = fg::draw_picture(kRoot, kTokenPicture);
  CHECK(proc::slurp(kRoot / kTokenPicture) == drawn);
  CHECK(drawn.find("expected_output/h200/11_llm_decode_kernels") != std::string::npos);  // its caption
  // the bound, as the chapter prints it with its napkin math ("A token reads 2.069 GB = 0.487 ms.")
  const double bound = fg::resolve(kRoot,
                                   "h200/11_llm_decode_kernels/stdout.txt#re=A\\stoken\\sreads\\s[0-9.]+"
                                   "\\sGB\\s=\\s([0-9.]+)\\sms");
  char said[64];
  std::snprintf(said, sizeof said, "weight-read bound %.3f ms", bound);
  CHECK(drawn.find(said) != std::string::npos);
  // every variant in the chapter's order, each once
  size_t at = 0;
  for (const auto& v : kCh11) {
    const size_t next = drawn.find(">" + v + "</text>", at);
    INFO(v);
    CHECK(next != std::string::npos);
    at = next;
  }
  // A scratch root with chapter 11's page, the recordings, and the picture edited by hand.
  const fs::path root = proc::scratch("docs_picture");
  fs::create_directories(root / "chapters/11_llm_decode_kernels");
  fs::create_directories(root / "docs/img");
  fs::copy_file(kRoot / "chapters/11_llm_decode_kernels/README.md",
                root / "chapters/11_llm_decode_kernels/README.md");
  fs::create_directory_symlink(kRoot / "expected_output", root / "expected_output");
  std::string doctored = drawn;
  const size_t bar = doctored.find(">overlap</text>");  // the last bar's label, moved
  REQUIRE(bar != std::string::npos);
  doctored.replace(bar, 8, ">overlay");
  std::ofstream(root / kTokenPicture) << doctored;
  auto e = proc::run(proc::bin("figures"), {"check", "--root", root.string()});
  CHECK(e.code == 1);
  CHECK(e.err.find(std::string(kTokenPicture) + ": differs from its recording") != std::string::npos);
  e = proc::run(proc::bin("figures"), {"update", "--root", root.string()});
  CHECK(e.code == 0);
  CHECK(proc::slurp(root / kTokenPicture) == drawn);
  CHECK(proc::run(proc::bin("figures"), {"check", "--root", root.string()}).code == 0);
  fs::remove(root / kTokenPicture);  // missing: check fails too
  CHECK(proc::run(proc::bin("figures"), {"check", "--root", root.string()}).code == 1);
  fs::remove_all(root);
}

TEST_CASE("figures update draws the pictures before it reads the figures a page takes from them",
          "[docs][ch11][cpu]") {
  // Chapter 11's page prints figures read from its picture's titles (docs/claims/
  // 11_llm_decode_kernels.json). After a re-record the picture on disk is stale, or missing, until
  // update draws it again: update must draw first and read after. Read first, a stale picture
  // leaves the page on the old number (update says nothing; the next check fails), a missing one
  // fails the update.
  const std::string drawn = fg::draw_picture(kRoot, kTokenPicture);
  static const std::regex title(R"(<title>overlap: GEMV / GEMM ([0-9.]+) ms)");
  std::smatch m;
  REQUIRE(std::regex_search(drawn, m, title));
  const std::string fresh = m[1].str();
  char old_value[16];
  std::snprintf(old_value, sizeof old_value, "%.3f", std::stod(fresh) + 0.111);
  const std::string stale = old_value;
  // A scratch root: a chapter 11 page that prints the number as the stale picture says it, its
  // claim on the picture's title, the recordings.
  const fs::path root = proc::scratch("docs_picture_order");
  const std::string page_rel = "chapters/11_llm_decode_kernels/README.md";
  fs::create_directories((root / page_rel).parent_path());
  fs::create_directories(root / "docs/img");
  fs::create_directories(root / "docs/claims");
  fs::create_directory_symlink(kRoot / "expected_output", root / "expected_output");
  auto page = [&](const std::string& n) {
    return "# 11\n\nThe GEMVs take " + n + " ms of an `overlap` token.\n";
  };
  std::ofstream(root / page_rel) << page(stale);
  std::ofstream(root / "docs/claims/11.json")
      << "{\"page\": \"" << page_rel << "\", \"claims\": [{\"quote\": \"The GEMVs take " << stale
      << " ms\", \"figures\": [{\"printed\": \"" << stale
      << R"(", "ref": "docs/img/ch11_token_time_h200.svg#re=<title>overlap:\\sGEMV\\s/\\sGEMM\\s([0-9.]+)\\sms"}]}]})"
      << "\n";
  SECTION("the picture on disk is stale: the page gets the number the new picture shows") {
    std::string old_picture = drawn;
    old_picture.replace(static_cast<size_t>(m.position(1)), fresh.size(), stale);
    std::ofstream(root / kTokenPicture) << old_picture;
  }
  SECTION("the picture is missing: update draws it, then reads it") {}
  auto u = proc::run(proc::bin("figures"), {"update", "--root", root.string()});
  INFO(u.err);
  CHECK(u.code == 0);
  CHECK(proc::slurp(root / kTokenPicture) == drawn);
  CHECK_THAT(u.out, ContainsSubstring(stale + " -> " + fresh));
  CHECK(proc::slurp(root / page_rel) == page(fresh));
  const auto c = proc::run(proc::bin("figures"), {"check", "--root", root.string()});
  INFO(c.err);
  CHECK(c.code == 0);
  fs::remove_all(root);
}
