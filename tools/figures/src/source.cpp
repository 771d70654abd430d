// The Markdown side: a source's placeholders checked against the recordings, rewritten from
// them, and replaced by plain numbers in the generated page. See figures.hpp for the syntax.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <regex>

#include "util.hpp"
#include "workbook/figures.hpp"
#include "workbook/lessons.hpp"  // cheatsheet_markdown()

namespace fs = std::filesystem;

namespace wb::figures {
using namespace detail;
namespace {

const std::vector<std::string> kLabels = {"seed", "datasheet", "calc", "spec"};
bool is_label(const std::string& s) { return std::find(kLabels.begin(), kLabels.end(), s) != kLabels.end(); }

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += '\n';
    out += lines[i];
  }
  return out;
}

bool is_comment_line(const std::string& line) {
  const std::string t = trim(line);
  return starts_with(t, "<!--") && ends_with(t, "-->") && t.find("-->") == t.size() - 3;
}

bool is_fence(const std::string& line) {
  std::string t = trim(line);
  return starts_with(t, "```") || starts_with(t, "~~~");
}

// ---- one source, line by line ------------------------------------------------------------

using Span = std::pair<size_t, size_t>;  // [begin, end) in a page line

struct State {
  const fs::path& root;
  const Options& opts;
  Result res;
  std::vector<std::string> source_out, page_out;  // the source after update; the page
  std::optional<std::string> passage;             // the open {{#label}}
  int passage_line = 0;
  bool in_code = false;
  bool skip_blank = false;  // a dropped marker line stood after a blank line
  int lineno = 0;

  void problem(std::string msg, bool bad = false) { res.problems.push_back({lineno, std::move(msg), bad}); }
};

// What one line becomes: its page text, the spans of it that are backed.
struct LineOut {
  std::string source, page;
  std::vector<Span> covered;
  std::vector<std::pair<std::string, std::string>> figures;
  std::vector<std::string> labels;
  bool markers_only = true;  // nothing but passage markers and white space
};

// {{NUMBER REST}}: a figure. Appends its page text and rewrites the source text in update mode.
void figure(State& st, const std::string& body, LineOut& out) {
  static const std::regex head(R"((\d[\d,]*(?:\.\d+)?) +(.+))");
  std::smatch m;
  if (!std::regex_match(body, m, head)) {
    st.problem("bad placeholder '{{" + body + "}}': write {{NUMBER FILE#SELECTOR}}, {{NUMBER LABEL}}, " +
                   "{{#LABEL}} ... {{/LABEL}} or {{include FILE}}",
               true);
    out.source += "{{" + body + "}}";
    return;
  }
  std::string printed = m[1].str();
  const std::string rest = trim(m[2].str());
  if (is_label(rest)) {
    ++st.res.labelled;
    out.labels.push_back(rest);
  } else if (rest.find('#') == std::string::npos) {
    st.problem("unknown label '" + rest + "' (seed, datasheet, calc, spec) and not FILE#SELECTOR", true);
  } else {
    ++st.res.sourced;
    try {
      const double v = resolve(st.root, rest);
      if (!agrees(printed, v)) {
        const std::string now = format_like(v, printed);
        st.res.changes.push_back({st.lineno, printed, now, rest});
        if (st.opts.update)
          printed = now;
        else
          st.problem("'" + printed + "' but the recording says " + now + " (" + std::to_string(v) + ") at " +
                     rest);
      }
    } catch (const std::exception& e) {
      st.problem(std::string(e.what()) + " [" + rest + "]", true);
    }
  }
  out.source += "{{" + printed + " " + rest + "}}";
  if (!is_label(rest) && rest.find('#') != std::string::npos) out.figures.push_back({printed, rest});
  out.covered.push_back({out.page.size(), out.page.size() + printed.size()});
  out.page += printed;
  out.markers_only = false;
}

// {{#label}} or {{/label}}: opens or closes a labelled passage (no page text).
void passage_marker(State& st, const std::string& body, LineOut& out) {
  const std::string label = body.substr(1);
  out.source += "{{" + body + "}}";
  if (!is_label(label)) {
    st.problem("unknown label '" + label + "' (seed, datasheet, calc, spec)", true);
  } else if (body[0] == '#') {
    if (st.passage)
      st.problem("{{#" + label + "}} inside the passage opened on line " + std::to_string(st.passage_line),
                 true);
    st.passage = label;
    out.labels.push_back(label);
    st.passage_line = st.lineno;
    ++st.res.labelled;
  } else if (st.passage != label) {
    st.problem("{{/" + label + "}} closes no {{#" + label + "}}", true);
  } else {
    st.passage.reset();
  }
}

// Where the next placeholder starts at or after `pos`, skipping `code spans` on the line (a
// placeholder written in a code span is an example, shown as written).
size_t next_placeholder(const std::string& line, size_t pos) {
  while (true) {
    const size_t at = line.find("{{", pos), tick = line.find('`', pos);
    if (at == std::string::npos || tick == std::string::npos || at < tick) return at;
    const size_t run = line.find_first_not_of('`', tick),
                 n = (run == std::string::npos ? line.size() : run) - tick;
    const size_t close = line.find(std::string(n, '`'), tick + n);
    if (close == std::string::npos) return at;
    pos = close + n;
  }
}

// A prose line: its placeholders replaced. Returns the page text and the spans that are backed.
LineOut prose_line(State& st, const std::string& line) {
  LineOut out;
  if (st.passage) out.labels.push_back(*st.passage);
  const size_t passage_start = st.passage ? 0 : std::string::npos;
  size_t open_at = passage_start;  // where the open passage starts in out.page
  std::vector<Span> passages;
  size_t pos = 0;
  while (pos <= line.size()) {
    const size_t at = next_placeholder(line, pos);
    const std::string text = line.substr(pos, at == std::string::npos ? std::string::npos : at - pos);
    out.source += text;
    out.page += text;
    if (!trim(text).empty()) out.markers_only = false;
    if (at == std::string::npos) break;
    const size_t close = line.find("}}", at + 2);
    if (close == std::string::npos) {
      st.problem("unterminated placeholder '{{' (a placeholder ends with '}}' on the same line)", true);
      out.source += line.substr(at);
      out.page += line.substr(at);
      break;
    }
    const std::string body = trim(line.substr(at + 2, close - at - 2));
    pos = close + 2;
    if (body.find('|') != std::string::npos) {
      st.problem("'|' in placeholder '{{" + body + "}}' (it would split a table's cell)", true);
      out.source += "{{" + body + "}}";
      continue;
    }
    if (starts_with(body, "include ")) {
      st.problem("{{include FILE}} stands alone on a line inside a fenced code block", true);
      out.source += "{{" + body + "}}";
    } else if (!body.empty() && (body[0] == '#' || body[0] == '/')) {
      const bool was_open = st.passage.has_value();
      passage_marker(st, body, out);
      if (!was_open && st.passage) open_at = out.page.size();
      if (was_open && !st.passage) passages.push_back({open_at, out.page.size()});
    } else {
      figure(st, body, out);
    }
  }
  if (st.passage) passages.push_back({open_at == std::string::npos ? 0 : open_at, out.page.size()});
  out.covered.insert(out.covered.end(), passages.begin(), passages.end());
  return out;
}

// With require_marks: every number-with-unit on the page line must be covered.
void require_marks(State& st, const LineOut& out) {
  static const std::regex numre(R"(\d[\d,]*(?:\.\d+)?)");
  const std::string& p = out.page;
  for (auto it = std::sregex_iterator(p.begin(), p.end(), figure_re()); it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    const size_t b = static_cast<size_t>(m.position(2)), e = b + static_cast<size_t>(m.length(2));
    const std::string group = m[2].str();
    for (auto n = std::sregex_iterator(group.begin(), group.end(), numre); n != std::sregex_iterator(); ++n) {
      const size_t nb = b + static_cast<size_t>(n->position(0)), ne = nb + static_cast<size_t>(n->length(0));
      bool ok = false;
      for (auto [cb, ce] : out.covered) ok = ok || (cb <= nb && ne <= ce);
      if (!ok)
        st.problem("unbacked figure '" + p.substr(nb, e - nb) + m[4].str() +
                   "': write {{NUMBER FILE#SELECTOR}} or {{NUMBER LABEL}}");
    }
  }
}

// A line inside a fenced code block: {{include FILE}} alone on it quotes the file.
void code_line(State& st, const std::string& line) {
  const std::string t = trim(line);
  st.source_out.push_back(line);
  if (starts_with(t, "{{include ") && ends_with(t, "}}")) {
    const std::string file = trim(t.substr(10, t.size() - 12));
    try {
      const fs::path p = source_path(st.root, file);
      if (!fs::exists(p)) throw FigureError("missing recording " + file);
      Placed pl;
      pl.page_line = static_cast<int>(st.page_out.size());
      pl.include = file;
      st.res.placed.push_back(pl);
      for (auto& l : file_lines(slurp(p))) st.page_out.push_back(l);
      ++st.res.blocks;
    } catch (const FigureError& e) {
      st.problem(std::string(e.what()) + " [include " + file + "]", true);
    }
    return;
  }
  st.page_out.push_back(line);
  std::smatch m;
  if (st.opts.require_marks && std::regex_search(line, m, figure_re()))
    st.problem("figure '" + m[2].str() + m[4].str() +
               "' in a code block: quote the recording with {{include FILE}} instead");
}

void one_line(State& st, const std::string& line) {
  if (is_fence(line)) {
    st.in_code = !st.in_code;
    st.source_out.push_back(line);
    st.page_out.push_back(line);
    st.skip_blank = false;
    return;
  }
  if (st.in_code) return code_line(st, line);
  if (trim(line) == "{{cheatsheet}}") {  // the lesson facts' cheatsheet table, from their registry
    st.source_out.push_back(line);
    Placed pl;
    pl.page_line = static_cast<int>(st.page_out.size());
    pl.cheatsheet = true;
    st.res.placed.push_back(pl);
    for (auto& l : split(cheatsheet_markdown(), '\n')) st.page_out.push_back(l);
    st.skip_blank = false;
    return;
  }
  LineOut out = prose_line(st, line);
  st.source_out.push_back(out.source);
  const bool blank = trim(line).empty();
  if (blank && st.skip_blank) {
    st.skip_blank = false;
    return;
  }
  st.skip_blank = false;
  // A line of passage markers only, or a whole-line HTML comment (a note for the source's
  // authors, such as a snippet check's <!-- snippet: FILE#NAME -->): not on the page.
  if (!blank && (out.markers_only || (is_comment_line(line) && !st.opts.keep_comments))) {
    st.skip_blank = st.page_out.empty() || trim(st.page_out.back()).empty();
    return;
  }
  if (st.opts.require_marks) require_marks(st, out);
  if (!out.figures.empty() || !out.labels.empty())
    st.res.placed.push_back(
        {static_cast<int>(st.page_out.size()), out.page, out.figures, out.labels, "", false});
  st.page_out.push_back(out.page);
}

std::vector<fs::path> chapter_dirs(const fs::path& root) {
  std::vector<fs::path> out;
  if (fs::is_directory(root / "chapters"))
    for (const auto& d : fs::directory_iterator(root / "chapters"))
      if (d.is_directory()) out.push_back(d.path());
  return out;
}

}  // namespace

std::string generated_line(std::string_view source_name) {
  return "<!-- generated from " + std::string(source_name) + " by ./workbook docs: edit that file -->";
}

Result process(const fs::path& root, std::string& source, const Options& opts) {
  State st{root, opts, {}, {}, {}, {}, 0, false, false, 0};
  const std::vector<std::string> lines = split(source, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    st.lineno = static_cast<int>(i + 1);
    one_line(st, lines[i]);
  }
  st.lineno = static_cast<int>(lines.size());
  if (st.passage)
    st.problem(
        "{{#" + *st.passage + "}} opened on line " + std::to_string(st.passage_line) + " is never closed",
        true);
  if (st.in_code) st.problem("unclosed code block", true);
  if (opts.update) source = join_lines(st.source_out);
  st.res.page = generated_line(opts.source_name) + "\n" + join_lines(st.page_out);
  return st.res;
}

fs::path page_of(const fs::path& source) {
  std::string n = source.filename().string();
  return source.parent_path() / (n.substr(0, n.size() - std::string_view(".src.md").size()) + ".md");
}

bool is_source(const fs::path& p) { return ends_with(p.filename().string(), ".src.md"); }

std::vector<FileSet> default_files(const fs::path& root) {
  std::vector<FileSet> out;
  if (fs::exists(root / "README.src.md")) out.push_back({root / "README.src.md", false});
  for (const auto& d : chapter_dirs(root))
    if (fs::exists(d / "README.src.md")) out.push_back({d / "README.src.md", true});
  for (const char* dir : {"docs", "exercises", "solutions"}) {
    if (!fs::is_directory(root / dir)) continue;
    for (const auto& f : fs::recursive_directory_iterator(root / dir))
      if (f.is_regular_file() && is_source(f.path())) out.push_back({f.path(), false});
  }
  std::sort(out.begin(), out.end(), [](const FileSet& a, const FileSet& b) { return a.path < b.path; });
  return out;
}

std::vector<fs::path> pages(const fs::path& root) {
  std::vector<fs::path> out;
  if (fs::exists(root / "README.md")) out.push_back(root / "README.md");
  for (const auto& d : chapter_dirs(root))
    if (fs::exists(d / "README.md")) out.push_back(d / "README.md");
  for (const char* dir : {"docs", "exercises", "solutions"}) {
    if (!fs::is_directory(root / dir)) continue;
    for (const auto& f : fs::recursive_directory_iterator(root / dir))
      if (f.is_regular_file() && f.path().extension() == ".md" && !is_source(f.path()))
        out.push_back(f.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

int first_difference(std::string_view a, std::string_view b) {
  const std::vector<std::string> x = split(a, '\n'), y = split(b, '\n');
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i)
    if (i >= x.size() || i >= y.size() || x[i] != y[i]) return static_cast<int>(i + 1);
  return 0;
}

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
