// figures generate|check|update [SOURCE...] [--root DIR]: the pages generated from Markdown
// sources (NAME.src.md -> NAME.md) and the figures they quote from the recordings in
// expected_output/ and docs/. `./workbook docs` runs it. See include/workbook/figures.hpp.
//   generate  write each page from its source; refuses (exit 1, nothing written) while a figure
//             differs from its recording or is unbacked
//   check     every figure agrees with its recording at the printed precision, every page is what
//             its source generates, no page holds a <!--fig marker; exit 1 otherwise
//   update    rewrite the sources' figures from the recordings, then write the pages
//   claims    the sentences of the chapter READMEs, the chapters' lesson texts, the answer key and
//             docs/performance.md that state a number, a comparison or a cause, and for each the
//             claim or source (docs/claims/*.json) that covers it (include/workbook/sentences.hpp);
//             --list prints every one; exit 1 while one is neither covered nor on its page's
//             todo list, or a todo entry is stale
// The pictures drawn from the recordings (include/workbook/pictures.hpp) go with the pages:
// generate and update write each one that differs from what its recording draws, check fails on
// one that differs.
// A bad placeholder (syntax, unknown label, a reference that resolves to nothing) exits 2 naming
// FILE:LINE, before anything is written. Every file is written atomically.
#include <CLI/CLI.hpp>

#include <fstream>
#include <algorithm>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <iostream>
#include <sstream>

#include "workbook/figures.hpp"
#include "workbook/fs_util.hpp"
#include "workbook/pictures.hpp"
#include "workbook/sentences.hpp"

namespace fs = std::filesystem;
namespace fg = wb::figures;

namespace {

struct Done {
  fg::FileSet file;
  std::string name;          // as printed: relative to the root
  std::string source, page;  // the source after the update; the page it generates
  fg::Result result;
};

using wb::read_file;

std::string shown(const fs::path& p, const fs::path& root) {
  std::string name = fs::relative(p, root).string();
  return name.rfind("..", 0) == 0 ? p.string() : name;
}

Done run_one(const fg::FileSet& f, const std::string& root, bool update) {
  Done d{f, shown(f.path, root), read_file(f.path), {}, {}};
  fg::Options o;
  o.update = update;
  o.require_marks = f.require_marks;
  o.source_name = f.path.filename().string();
  d.result = fg::process(root, d.source, o);
  d.page = d.result.page;
  for (const auto& c : d.result.changes)
    std::cout << d.name << ":" << c.line << ": " << c.old_text << " -> " << c.new_text << "  [" << c.ref
              << "]" << (update ? "" : " (differs)") << "\n";
  for (const auto& p : d.result.problems) std::cerr << d.name << ":" << p.line << ": " << p.message << "\n";
  return d;
}

// check: the pages on disk are what the sources generate; no plain page holds a figure marker.
int stale_pages(const std::vector<Done>& done, const std::vector<fs::path>& plain, const fs::path& root) {
  int n = 0;
  for (const auto& d : done) {
    const fs::path page = fg::page_of(d.file.path);
    const std::string have = fs::exists(page) ? read_file(page) : std::string();
    if (have == d.page) continue;
    ++n;
    std::cerr << shown(page, root) << ":" << fg::first_difference(have, d.page) << ": differs from what "
              << d.file.path.filename().string() << " generates: run ./workbook docs\n";
  }
  for (const auto& p : plain) {
    const std::string text = read_file(p);
    const size_t at = text.find("<!--fig");
    if (at == std::string::npos) continue;
    ++n;
    std::cerr << shown(p, root) << ":"
              << 1 + std::count(text.begin(), text.begin() + static_cast<long>(at), '\n')
              << ": a <!--fig marker: write the page as NAME.src.md with {{...}} placeholders\n";
  }
  return n;
}

int write_all(const std::vector<Done>& done, bool update, const fs::path& root) {
  int written = 0;
  for (const auto& d : done) {
    const fs::path page = fg::page_of(d.file.path);
    if (update && !d.result.changes.empty()) wb::write_file_atomic(d.file.path, d.source);
    if (fs::exists(page) && read_file(page) == d.page) continue;
    wb::write_file_atomic(page, d.page);
    std::cerr << "figures: wrote " << shown(page, root) << "\n";
    ++written;
  }
  return written;
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
                << " its recording: run ./workbook docs --update\n";
      ++bad;
      continue;
    }
    fs::create_directories(file.parent_path());
    wb::write_file_atomic(file, drawn);
    std::cerr << "figures: drew " << pic.file << "\n";
  }
  return bad;
}

std::vector<fs::path> plain_pages(const fs::path& root) {
  std::vector<fs::path> plain;
  for (const auto& p : fg::pages(root))
    if (!fs::exists(p.parent_path() / (p.stem().string() + ".src.md"))) plain.push_back(p);
  return plain;
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
  CLI::App app{"figures: pages generated from Markdown sources, their figures tied to the recordings"};
  std::string mode, root = WORKBOOK_ROOT;
  std::vector<std::string> files;
  bool strict = false;
  app.add_option("mode", mode, "generate, check, update or claims")
      ->required()
      ->check(CLI::IsMember({"generate", "check", "update", "claims"}));
  app.add_option("sources", files, "NAME.src.md files (default: every source of the workbook)");
  app.add_option("--root", root, "the repository root")->check(CLI::ExistingDirectory);
  app.add_flag("--require-marks", strict,
               "every number-with-unit in the SOURCEs must be a placeholder or labelled");
  bool list = false, todo_out = false;
  app.add_flag("--list", list, "claims: print every sentence that states something, with what covers it");
  app.add_flag("--write-todo", todo_out,
               "claims: write each page's uncovered sentences to docs/claims/todo/ (the backlog)");
  CLI11_PARSE(app, argc, argv);
  if (mode == "claims") return claims_report(root, files, list, todo_out);

  std::vector<fg::FileSet> set = files.empty() ? fg::default_files(root) : std::vector<fg::FileSet>{};
  for (const auto& f : files) {
    if (!fs::exists(f) || !fg::is_source(f)) {
      std::cerr << "figures: " << f << (fs::exists(f) ? " is not a NAME.src.md source" : ": no such file")
                << "\n";
      return 2;
    }
    set.push_back({f, strict});
  }
  std::vector<Done> done;
  int bad = 0, problems = 0, changes = 0, sourced = 0, labelled = 0, blocks = 0;
  for (const auto& f : set) {
    done.push_back(run_one(f, root, mode == "update"));
    const fg::Result& r = done.back().result;
    for (const auto& p : r.problems) (p.bad ? bad : problems) += 1;
    changes += static_cast<int>(r.changes.size());
    sourced += r.sourced, labelled += r.labelled, blocks += r.blocks;
  }
  const std::vector<fs::path> plain = files.empty() ? plain_pages(root) : std::vector<fs::path>{};
  const int stale = bad == 0 && mode == "check" ? stale_pages(done, plain, root) : 0;
  const int written =
      bad == 0 && problems == 0 && mode != "check" ? write_all(done, mode == "update", root) : 0;
  const int pictures = files.empty() && bad == 0 ? pictures_pass(root, mode != "check" && problems == 0) : 0;
  std::cerr << "figures: " << set.size() << " sources, " << sourced << " sourced figures, " << blocks
            << " quoted files, " << labelled << " labelled; " << changes
            << (mode == "update" ? " rewritten, " : " differ, ") << bad << " bad placeholders, " << problems
            << " problems" << (mode == "check" ? ", " + std::to_string(stale) + " stale pages" : "")
            << (mode != "check" ? ", " + std::to_string(written) + " pages written" : "")
            << (pictures ? ", " + std::to_string(pictures) + " pictures off their recordings" : "") << "\n";
  if (bad) {
    std::cerr << "figures: bad placeholders (see above); nothing written\n";
    return 2;
  }
  if (problems && mode != "check")
    std::cerr << "figures: nothing written; fix the sources (or take the recorded values: ./workbook docs "
                 "--update)\n";
  return problems || stale || pictures ? 1 : 0;
}
