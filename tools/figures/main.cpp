// figures generate|check|update [SOURCE...] [--root DIR]: the pages generated from Markdown
// sources (NAME.src.md -> NAME.md) and the figures they quote from the recordings in
// expected_output/ and docs/. `./workbook docs` runs it. See include/workbook/figures.hpp.
//   generate  write each page from its source; refuses (exit 1, nothing written) while a figure
//             differs from its recording or is unbacked
//   check     every figure agrees with its recording at the printed precision, every page is what
//             its source generates, no page holds a <!--fig marker; exit 1 otherwise
//   update    rewrite the sources' figures from the recordings, then write the pages
// A bad placeholder (syntax, unknown label, a reference that resolves to nothing) exits 2 naming
// FILE:LINE, before anything is written. Every file is written atomically.
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <sstream>

#include "workbook/figures.hpp"
#include "workbook/fs_util.hpp"

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

std::vector<fs::path> plain_pages(const fs::path& root) {
  std::vector<fs::path> plain;
  for (const auto& p : fg::pages(root))
    if (!fs::exists(p.parent_path() / (p.stem().string() + ".src.md"))) plain.push_back(p);
  return plain;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"figures: pages generated from Markdown sources, their figures tied to the recordings"};
  std::string mode, root = WORKBOOK_ROOT;
  std::vector<std::string> files;
  bool strict = false;
  app.add_option("mode", mode, "generate, check or update")
      ->required()
      ->check(CLI::IsMember({"generate", "check", "update"}));
  app.add_option("sources", files, "NAME.src.md files (default: every source of the workbook)");
  app.add_option("--root", root, "the repository root")->check(CLI::ExistingDirectory);
  app.add_flag("--require-marks", strict,
               "every number-with-unit in the SOURCEs must be a placeholder or labelled");
  CLI11_PARSE(app, argc, argv);

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
  std::cerr << "figures: " << set.size() << " sources, " << sourced << " sourced figures, " << blocks
            << " quoted files, " << labelled << " labelled; " << changes
            << (mode == "update" ? " rewritten, " : " differ, ") << bad << " bad placeholders, " << problems
            << " problems" << (mode == "check" ? ", " + std::to_string(stale) + " stale pages" : "")
            << (mode != "check" ? ", " + std::to_string(written) + " pages written" : "") << "\n";
  if (bad) {
    std::cerr << "figures: bad placeholders (see above); nothing written\n";
    return 2;
  }
  if (problems && mode != "check")
    std::cerr << "figures: nothing written; fix the sources (or take the recorded values: ./workbook docs "
                 "--update)\n";
  return problems || stale ? 1 : 0;
}
