// figures check|generate|update|claims [--root DIR]: the numbers the pages print, tied to
// the recordings in expected_output/ and docs/ by the claims files (docs/claims/*.json; see
// include/workbook/claim_figures.hpp and docs/claims/README.md). `./workbook docs` runs it.
//   check     every claim's quote is in its page, every figure quoted by "ref" agrees with its
//             recording at the printed precision, every quoted block (a file, the cheatsheet
//             table) is what it quotes, every picture is what its recording draws, no page
//             holds a <!--fig marker and no NAME.src.md file (the pages' old sources) is left;
//             exit 1 otherwise, nothing written
//   generate  write the quoted blocks and pictures that differ; check the figures (exit 1 while
//             one differs from its recording)
//   update    also rewrite each figure that moved after a re-record: the number in the page, the
//             claim's "printed" and every quote that holds it; prints each change
//   claims    the sentences of the chapter READMEs, the chapters' lesson texts, the answer key and
//             docs/performance.md that state a number, a comparison or a cause, and for each the
//             claim or source (docs/claims/*.json) that covers it (include/workbook/sentences.hpp);
//             --list prints every one; exit 1 while one is neither covered nor on its page's
//             todo list, or a todo entry is stale
// The pictures drawn from the recordings (include/workbook/pictures.hpp) go with the pages.
// Every file is written atomically.
#include <CLI/CLI.hpp>

#include <fstream>
#include <algorithm>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <iostream>
#include <sstream>

#include "workbook/claim_figures.hpp"
#include "workbook/figures.hpp"
#include "workbook/fs_util.hpp"
#include "workbook/pictures.hpp"
#include "workbook/sentences.hpp"

namespace fs = std::filesystem;
namespace fg = wb::figures;

namespace {

using wb::read_file;

std::string shown(const fs::path& p, const fs::path& root) {
  std::string name = fs::relative(p, root).string();
  return name.rfind("..", 0) == 0 ? p.string() : name;
}

// The pictures of the pages under `root`: drawn from their recordings, compared with the files
// (check) or written where they differ. Returns the number that differ (check) or could not be
// drawn.
int pictures_pass(const fs::path& root, bool write) {
  int bad = 0;
  for (const auto& pic : fg::pictures()) {
    if (!fs::exists(root / pic.page)) continue;  // a root without the page holds none of its pictures
    const fs::path file = root / pic.file;
    std::string drawn;
    try {
      drawn = fg::draw_picture(root, pic.file);
    } catch (const fg::FigureError& e) {
      std::cerr << pic.file << ": cannot be drawn: " << e.what() << "\n";
      ++bad;
      continue;
    }
    if (fs::exists(file) && read_file(file) == drawn) continue;
    if (!write) {
      std::cerr << pic.file << ": " << (fs::exists(file) ? "differs from" : "missing: drawn from")
                << " its recording: run figures update (./workbook docs --update)\n";
      ++bad;
      continue;
    }
    fs::create_directories(file.parent_path());
    wb::write_file_atomic(file, drawn);
    std::cerr << "figures: drew " << pic.file << "\n";
  }
  return bad;
}

// No page a learner reads holds a <!--fig marker, and no NAME.src.md file is left: the pages were
// once generated from such sources; they are plain now, their numbers tied by docs/claims/. A
// source that comes back (a merge of an old branch) would be edited in vain: its edits belong on
// its page.
int leftovers(const fs::path& root) {
  int n = 0;
  for (const auto& p : fg::pages(root)) {
    const std::string text = read_file(p);
    const size_t at = text.find("<!--fig");
    if (at == std::string::npos) continue;
    ++n;
    std::cerr << shown(p, root) << ":"
              << 1 + std::count(text.begin(), text.begin() + static_cast<long>(at), '\n')
              << ": a <!--fig marker: tie the figure with a claim (docs/claims/README.md)\n";
  }
  for (const auto& f : fg::leftover_sources(root)) {
    ++n;
    std::cerr << shown(f, root)
              << ": a NAME.src.md source: the pages are plain Markdown, tied to the recordings by "
                 "docs/claims/ (docs/claims/README.md): carry its edits into its page and remove it\n";
  }
  return n;
}

// `figures claims`: sentence coverage of the pages (all, or the PAGEs given relative to the root).
// A todo entry: the sentence's start, at most 80 characters, cut at a space.
std::string todo_entry(const std::string& text) {
  if (text.size() <= 80) return text;
  const size_t cut = text.rfind(' ', 80);
  return text.substr(0, cut == std::string::npos || cut < 20 ? 80 : cut);
}

// Writes docs/claims/todo/<page with / as _>.json: the page's uncovered sentences and those on
// its list now. Returns the number of entries written.
int write_todo(const fs::path& root, const fg::PageCoverage& pc) {
  nlohmann::json j;
  j["page"] = pc.page;
  j["todo"] = nlohmann::json::array();
  for (size_t i = 0; i < pc.sentences.size(); ++i)
    if (pc.covers[i].by.empty()) j["todo"].push_back(todo_entry(fg::normalized(pc.sentences[i].text)));
  std::string name = pc.page;
  std::replace(name.begin(), name.end(), '/', '_');
  const fs::path file = root / "docs" / "claims" / "todo" / (name + ".json");
  if (j["todo"].empty()) {
    fs::remove(file);
    return 0;
  }
  fs::create_directories(file.parent_path());
  std::string text = "{\"page\": " + j["page"].dump() + ",\n \"todo\": [\n";
  for (size_t i = 0; i < j["todo"].size(); ++i)
    text += "  " + j["todo"][i].dump(-1, ' ', false) + (i + 1 < j["todo"].size() ? ",\n" : "\n");
  text += " ]}\n";
  wb::write_file_atomic(file, text);
  return static_cast<int>(j["todo"].size());
}

int claims_report(const std::string& root, const std::vector<std::string>& only, bool list, bool todo_out) {
  const std::vector<std::string> pages = only.empty() ? fg::coverage_pages(root) : only;
  int total = 0, covered = 0, todo = 0, uncovered = 0, problems = 0;
  for (const auto& page : pages) {
    fg::PageCoverage pc = fg::page_coverage(root, page);
    if (todo_out) {
      const int n = write_todo(root, pc);
      if (n) std::cerr << "figures: " << n << " sentences of " << page << " on its todo list\n";
      pc = fg::page_coverage(root, page);
    }
    for (size_t i = 0; i < pc.sentences.size(); ++i) {
      const auto& s = pc.sentences[i];
      const auto& c = pc.covers[i];
      if (!list && (!c.by.empty() || c.todo)) continue;
      std::cout << page << ":" << s.line << ": "
                << (!c.by.empty() ? "covered by " + c.by
                    : c.todo      ? std::string("TODO")
                                  : std::string("UNCOVERED"))
                << " [" << (s.number ? "number " : "") << (s.comparison ? "comparison " : "")
                << (s.cause ? "cause" : "") << "] " << s.text << "\n";
    }
    for (const auto& p : pc.problems) std::cerr << p << "\n";
    const int n = static_cast<int>(pc.sentences.size());
    std::cerr << page << ": " << n << " sentences state something: " << pc.covered() << " covered, "
              << pc.todo() << " on the todo list, " << pc.uncovered() << " uncovered\n";
    total += n, covered += pc.covered(), todo += pc.todo(), uncovered += pc.uncovered();
    problems += static_cast<int>(pc.problems.size());
  }
  const double pct = total ? 100.0 * covered / total : 100.0;
  std::cerr << "claims: " << pages.size() << " pages, " << total << " sentences that state something, "
            << covered << " covered (" << std::fixed << std::setprecision(1) << pct << " %), " << todo
            << " to do, " << uncovered << " uncovered, " << problems << " problems\n";
  return uncovered || problems ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"figures: the numbers the pages print, tied to the recordings by docs/claims/"};
  std::string mode, root = WORKBOOK_ROOT;
  app.add_option("mode", mode, "check, generate, update or claims")
      ->required()
      ->check(CLI::IsMember({"check", "generate", "update", "claims"}));
  std::vector<std::string> files;
  app.add_option("pages", files, "claims: the pages to report (default: every page the coverage reads)");
  app.add_option("--root", root, "the repository root")->check(CLI::ExistingDirectory)->capture_default_str();
  app.footer(
      "Modes:\n"
      "  check     quotes in their pages, figures by \"ref\"/\"key\" on their recordings, quoted blocks,\n"
      "            pictures, no NAME.src.md left; writes nothing, exit 1 on a problem\n"
      "  generate  write the quoted blocks and pictures that differ; check the figures\n"
      "  update    also rewrite each figure that moved, in the page and its claims (after a re-record)\n"
      "  claims    sentence coverage of the pages by the claims files (docs/claims/todo/ the backlog)\n"
      "See docs/claims/README.md.");
  bool list = false, todo_out = false;
  app.add_flag("--list", list, "claims: print every sentence that states something, with what covers it");
  app.add_flag("--write-todo", todo_out,
               "claims: write each page's uncovered sentences to docs/claims/todo/ (the backlog)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help exits 0; a bad command line 2
  }
  if (mode == "claims") return claims_report(root, files, list, todo_out);
  if (!files.empty()) {
    std::cerr << "figures " << mode << ": takes no files (it reads every claims file under docs/claims/)\n";
    return 2;
  }
  const fg::Mode m = mode == "check"    ? fg::Mode::Check
                     : mode == "update" ? fg::Mode::Update
                                        : fg::Mode::Generate;
  // The pictures first: some figures are read from a picture (its titles), so a picture redrawn
  // from a new recording must be on disk before those figures are read (tests/test_docs.cpp
  // fails on the other order).
  const int pictures = pictures_pass(root, m != fg::Mode::Check);
  fg::ClaimsPass pass;
  try {
    pass = fg::claims_pass(root, m);
  } catch (const std::exception& e) {
    std::cerr << "figures: " << e.what() << "\n";
    return 2;
  }
  for (const auto& c : pass.changes) std::cout << c << "\n";
  for (const auto& p : pass.problems) std::cerr << p << "\n";
  for (const auto& w : pass.written) std::cerr << "figures: wrote " << w << "\n";
  const int left = leftovers(root);
  std::cerr << "figures: " << pass.quotes << " quotes, " << pass.figures << " figures by ref, "
            << pass.key_figures << " by key (" << pass.key_only
            << " more recomputed by tests/test_claims.cpp only), " << pass.blocks << " quoted blocks; "
            << pass.changes.size() << (m == fg::Mode::Update ? " rewritten, " : " differ, ")
            << pass.problems.size() << " problems"
            << (left ? ", " + std::to_string(left) + " leftover markers or sources" : "")
            << (pictures ? ", " + std::to_string(pictures) + " pictures off their recordings" : "") << "\n";
  return pass.problems.empty() && !left && !pictures ? 0 : 1;
}
