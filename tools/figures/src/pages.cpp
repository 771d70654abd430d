// The pages a learner reads, and the anchors their headings define (figures.hpp).
#include <algorithm>
#include <cctype>
#include <map>

#include "util.hpp"
#include "workbook/figures.hpp"

namespace fs = std::filesystem;

namespace wb::figures {
using namespace detail;
namespace {

bool is_source(const fs::path& p) { return ends_with(p.filename().string(), ".src.md"); }

// The Markdown files a learner reads (sources == false) or the NAME.src.md twins an old branch
// could bring back (sources == true): the top README, each chapter's README, and every file of
// that kind under docs/, exercises/ and solutions/, sorted.
std::vector<fs::path> markdown_files(const fs::path& root, bool sources) {
  const char* readme = sources ? "README.src.md" : "README.md";
  std::vector<fs::path> out;
  if (fs::exists(root / readme)) out.push_back(root / readme);
  if (fs::is_directory(root / "chapters"))
    for (const auto& d : fs::directory_iterator(root / "chapters"))
      if (d.is_directory() && fs::exists(d.path() / readme)) out.push_back(d.path() / readme);
  for (const char* dir : {"docs", "exercises", "solutions"}) {
    if (!fs::is_directory(root / dir)) continue;
    for (const auto& f : fs::recursive_directory_iterator(root / dir))
      if (f.is_regular_file() && f.path().extension() == ".md" && is_source(f.path()) == sources)
        out.push_back(f.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<fs::path> pages(const fs::path& root) { return markdown_files(root, false); }

std::vector<fs::path> leftover_sources(const fs::path& root) { return markdown_files(root, true); }

std::string github_anchor(std::string_view heading) {
  std::string out;
  for (size_t i = 0; i < heading.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(heading[i]);
    if (c >= 0x80) {  // non-ASCII: kept (GitHub keeps letters; good enough for our headings)
      out += static_cast<char>(c);
    } else if (std::isalnum(c) || c == '-' || c == '_') {
      out += static_cast<char>(std::tolower(c));
    } else if (c == ' ') {
      out += '-';
    }
  }
  return out;
}

std::vector<std::string> anchors(std::string_view markdown) {
  std::vector<std::string> out;
  std::map<std::string, int> seen;
  bool in_code = false;
  for (const auto& raw : split(markdown, '\n')) {
    std::string t = trim(raw);
    if (t.rfind("```", 0) == 0) in_code = !in_code;
    if (in_code || t.empty() || t[0] != '#') continue;
    size_t h = t.find_first_not_of('#');
    if (h == std::string::npos || h > 6 || t[h] != ' ') continue;
    std::string text = trim(t.substr(h));
    // inline markup GitHub drops from the anchor: backticks, emphasis
    text.erase(std::remove_if(text.begin(), text.end(), [](char c) { return c == '`' || c == '*'; }),
               text.end());
    std::string a = github_anchor(text);
    int n = seen[a]++;
    out.push_back(n ? a + "-" + std::to_string(n) : a);
  }
  return out;
}

}  // namespace wb::figures
