// figures check|update [FILE...] [--root DIR]: the figures the workbook's Markdown quotes,
// checked against (or rewritten from) the recordings in expected_output/ and docs/.
//   check   exit 0 when every marked figure agrees with its recording at the printed
//           precision and (chapter READMEs) no figure is unbacked; 1 otherwise
//   update  rewrite the marked numbers and quoted blocks from the recordings, print each change
// With no FILE: chapters/*/README.md, README.md and docs/*.md. See include/workbook/figures.hpp.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "workbook/figures.hpp"
#include "workbook/fs_util.hpp"

namespace fs = std::filesystem;
namespace fg = wb::figures;

int main(int argc, char** argv) {
  CLI::App app{"figures: README figures tied to the recordings they quote"};
  std::string mode, root = WORKBOOK_ROOT;
  std::vector<std::string> files;
  bool strict = false;
  app.add_option("mode", mode, "check or update")->required()->check(CLI::IsMember({"check", "update"}));
  app.add_option("files", files, "Markdown files (default: chapters/*/README.md, README.md, docs/*.md)");
  app.add_option("--root", root, "the repository root")->check(CLI::ExistingDirectory);
  app.add_flag("--require-marks", strict, "every number-with-unit in FILEs must be sourced or labelled");
  CLI11_PARSE(app, argc, argv);

  std::vector<fg::FileSet> set;
  if (files.empty()) set = fg::default_files(root);
  for (const auto& f : files) {
    if (!fs::exists(f)) {
      std::cerr << "figures: no such file " << f << "\n";
      return 2;
    }
    set.push_back({f, strict});
  }
  int problems = 0, changes = 0, sourced = 0, labelled = 0, blocks = 0;
  for (const auto& fsx : set) {
    std::ifstream in(fsx.path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    std::string text = s.str();
    fg::Options o;
    o.update = mode == "update";
    o.require_marks = fsx.require_marks;
    fg::Result r = fg::process(root, text, o);
    std::string name = fs::relative(fsx.path, root).string();
    if (name.rfind("..", 0) == 0) name = fsx.path.string();
    for (const auto& c : r.changes)
      std::cout << name << ":" << c.line << ": " << c.old_text << " -> " << c.new_text << "  [" << c.ref
                << "]" << (o.update ? "" : " (differs)") << "\n";
    for (const auto& p : r.problems) std::cerr << name << ":" << p.line << ": " << p.message << "\n";
    if (o.update && !r.changes.empty()) wb::write_file_atomic(fsx.path, text);
    problems += static_cast<int>(r.problems.size());
    changes += static_cast<int>(r.changes.size());
    sourced += r.sourced;
    labelled += r.labelled;
    blocks += r.blocks;
  }
  std::cerr << "figures: " << set.size() << " files, " << sourced << " sourced figures, " << blocks
            << " quoted blocks, " << labelled << " labelled; " << changes
            << (mode == "update" ? " rewritten" : " differ") << ", " << problems << " problems\n";
  return problems ? 1 : 0;
}
