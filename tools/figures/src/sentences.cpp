// Sentences that state something and the claims that cover them (include/workbook/sentences.hpp).
#include "workbook/sentences.hpp"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "util.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace wb::figures {

namespace {

using detail::starts_with;
using detail::trim;

std::string collapse(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (space) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// Cuts a block (a paragraph, a list item, a lesson text) into sentences.
void cut(const std::string& block, int line, std::vector<Sentence>& out) {
  static const std::regex marker(R"(^\s*([-*+]|\d+\.)\s+)");  // a list item's marker is not a sentence
  const std::string text =
      std::regex_replace(collapse(block), marker, "", std::regex_constants::format_first_only);
  static const std::vector<std::string> kAbbrev = {"e.g.", "i.e.", "vs.", "cf.", "approx.", "etc."};
  size_t b = 0;
  int tick = 0;  // inside a `code span`
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '`') tick ^= 1;
    if (tick || (text[i] != '.' && text[i] != '!' && text[i] != '?')) continue;
    if (i + 1 < text.size() && text[i + 1] != ' ') continue;
    bool abbrev = false;
    for (const auto& a : kAbbrev)
      if (i + 1 >= a.size() && text.compare(i + 1 - a.size(), a.size(), a) == 0) abbrev = true;
    if (abbrev) continue;
    Sentence s{line, trim(text.substr(b, i + 1 - b))};
    if (!s.text.empty()) out.push_back(s);
    b = i + 1;
  }
  Sentence s{line, trim(text.substr(b))};
  if (!s.text.empty()) out.push_back(s);
}

bool is_table_rule(const std::string& t) {
  if (t.empty() || t[0] != '|') return false;
  return t.find_first_not_of("|-: ") == std::string::npos;
}

bool is_item_start(const std::string& t) {
  static const std::regex item(R"(^(\s*)([-*+]|\d+\.)\s)");
  return std::regex_search(t, item);
}

}  // namespace

namespace {
// HTML comments out, every run of white space one space; `where` (when given) gets, for each
// character of the result, its offset in `text`.
std::string normalize(const std::string& text, std::vector<size_t>* where) {
  std::string out;
  if (where) where->clear();
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 4, "<!--") == 0) {
      const size_t end = text.find("-->", i + 4);
      i = end == std::string::npos ? text.size() : end + 3;
      continue;
    }
    const char c = text[i++];
    const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
    if (where) where->push_back(i - 1);
  }
  return out;
}
}  // namespace

std::string normalized(const std::string& text) { return normalize(text, nullptr); }

std::string normalized_with_map(const std::string& text, std::vector<size_t>& where) {
  return normalize(text, &where);
}

void classify(Sentence& s) {
  // Numbers: a digit outside code spans, link targets and names that carry digits.
  std::string t = std::regex_replace(s.text, std::regex("`[^`]*`"), " ");
  t = std::regex_replace(t, std::regex(R"(\]\([^)]*\))"), "]");
  t = std::regex_replace(t, std::regex(R"(\b([Cc]hapters?|[Ii]ssues?|[Pp]arts?|ex)\s?[0-9][0-9.]*)"), " ");
  t = std::regex_replace(t, std::regex(R"(\b[A-Za-z_]+[0-9][A-Za-z0-9_]*\b)"), " ");  // sm90, H200, A100
  t = std::regex_replace(t, std::regex(R"(\b[0-9]{2}_[a-z_0-9]+)"), " ");             // 05_compiled_addmm
  s.number = std::any_of(t.begin(), t.end(), [](unsigned char c) { return std::isdigit(c); });
  static const std::regex comparison(
      R"(\b(more|less|fewer|faster|slower|same|even|only|never|always|every|than|most|least|higher|lower|above|below|twice|half)\b)",
      std::regex::icase);
  static const std::regex cause(
      R"(\b(because|since|so that|therefore|hence|thus|due to|causes?|caused|which is why)\b)",
      std::regex::icase);
  s.comparison = std::regex_search(t, comparison);
  s.cause = std::regex_search(t, cause);
}

std::vector<Sentence> markdown_sentences(const std::string& markdown) {
  std::vector<Sentence> out;
  std::istringstream in(markdown);
  std::string line, block, last_item_line;
  int n = 0, block_line = 0;
  bool fence = false, comment = false, indented_code = false, after_blank = true;
  auto flush = [&] {
    if (!trim(block).empty()) cut(block, block_line, out);
    block.clear();
  };
  while (std::getline(in, line)) {
    ++n;
    const std::string t = trim(line);
    if (comment) {
      if (t.find("-->") != std::string::npos) comment = false;
      continue;
    }
    if (starts_with(t, "```")) {
      flush();
      fence = !fence;
      continue;
    }
    if (fence) continue;
    if (starts_with(t, "<!--")) {
      flush();
      if (t.find("-->") == std::string::npos) comment = true;
      continue;
    }
    if (indented_code) {  // an indented code block runs to the next blank line
      if (t.empty()) indented_code = false, after_blank = true;
      continue;
    }
    if (t.empty() || starts_with(t, "#")) {
      flush();
      after_blank = t.empty();
      continue;
    }
    // An indented code block: four spaces after a blank line, outside a list item.
    if (after_blank && block.empty() && starts_with(line, "    ") && !is_item_start(line) &&
        (out.empty() || !is_item_start(last_item_line))) {
      indented_code = true;
      continue;
    }
    after_blank = false;
    if (t[0] == '|') {
      flush();
      if (is_table_rule(t)) {
        // the header row above is not a statement
        if (!out.empty() && out.back().line == n - 1 && out.back().text[0] == '|') out.pop_back();
        continue;
      }
      out.push_back({n, collapse(t)});
      continue;
    }
    if (is_item_start(line))
      flush(), last_item_line = line;
    else if (block.empty())
      last_item_line.clear();
    if (block.empty()) block_line = n;
    block += line + "\n";
  }
  flush();
  for (auto& s : out) classify(s);
  return out;
}

std::vector<Sentence> lesson_text_sentences(const std::string& json_text) {
  std::vector<Sentence> out;
  const json doc = json::parse(json_text);
  std::vector<const json*> stack{&doc};
  while (!stack.empty()) {
    const json* j = stack.back();
    stack.pop_back();
    if (j->is_object()) {
      for (auto it = j->begin(); it != j->end(); ++it) {
        if ((it.key() == "why" || it.key() == "meaning") && it->is_string())
          cut(it->get<std::string>(), 0, out);
        else
          stack.push_back(&*it);
      }
    } else if (j->is_array()) {
      for (auto it = j->rbegin(); it != j->rend(); ++it) stack.push_back(&*it);
    }
  }
  for (auto& s : out) classify(s);
  return out;
}

int PageCoverage::covered() const {
  return static_cast<int>(
      std::count_if(covers.begin(), covers.end(), [](const Cover& c) { return !c.by.empty(); }));
}
int PageCoverage::todo() const {
  return static_cast<int>(
      std::count_if(covers.begin(), covers.end(), [](const Cover& c) { return c.by.empty() && c.todo; }));
}
int PageCoverage::uncovered() const {
  return static_cast<int>(
      std::count_if(covers.begin(), covers.end(), [](const Cover& c) { return c.by.empty() && !c.todo; }));
}

std::vector<std::string> coverage_pages(const fs::path& root) {
  std::vector<std::string> pages;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root / "chapters"))
    if (e.is_directory()) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const auto& d : dirs) {
    const std::string name = "chapters/" + d.filename().string();
    if (fs::exists(d / "README.md")) pages.push_back(name + "/README.md");
    if (fs::exists(d / "lessons.json")) pages.push_back(name + "/lessons.json");
  }
  pages.push_back("docs/instructors.md");
  pages.push_back("docs/performance.md");
  return pages;
}

PageCoverage page_coverage_of(const std::string& page, const std::string& text,
                              const std::vector<std::string>& claims_files_json) {
  PageCoverage pc;
  pc.page = page;
  const bool lessons = detail::ends_with(page, ".json");
  std::string body = text;
  if (page == "docs/instructors.md") {  // the answer key: from its heading to the next "## "
    const size_t key = text.find("## Answer key");
    if (key == std::string::npos) {
      pc.problems.push_back(page + ": no '## Answer key' heading");
      body.clear();
    } else {
      const size_t next = text.find("\n## ", key + 3);
      // keep the lines above as blank lines, so line numbers stay the page's
      body = std::string(
                 static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(key), '\n')),
                 '\n') +
             text.substr(key, next == std::string::npos ? std::string::npos : next - key);
    }
  }
  std::vector<Sentence> all;
  try {
    all = lessons ? lesson_text_sentences(text) : markdown_sentences(body);
  } catch (const std::exception& e) {
    pc.problems.push_back(page + ": " + e.what());
  }
  // Spans in the normalized page. A lessons.json's strings are found in its raw text.
  const std::string norm = normalized(text);
  size_t cursor = 0;
  for (auto& s : all) {
    if (!s.states()) continue;
    const std::string ns = normalized(s.text);
    size_t at = norm.find(ns, lessons ? 0 : cursor);
    if (at == std::string::npos) at = norm.find(ns);
    s.begin = at;
    s.end = at == std::string::npos ? at : at + ns.size();
    if (at != std::string::npos && !lessons) cursor = at;
    pc.sentences.push_back(s);
  }
  pc.covers.assign(pc.sentences.size(), {});

  struct Quote {
    std::string by, text;
  };
  std::vector<Quote> quotes;
  std::vector<Quote> sections;  // {by, heading text}: a bench section's sentences
  std::vector<std::string> todos;
  for (const auto& file : claims_files_json) {
    const json doc = json::parse(file);
    if (doc.value("page", "") != page) continue;
    const std::string name = doc.value("__file", "");
    if (doc.contains("claims"))
      for (size_t i = 0; i < doc["claims"].size(); ++i)
        quotes.push_back({name + "claims[" + std::to_string(i) + "]", doc["claims"][i].value("quote", "")});
    if (doc.contains("sources"))
      for (size_t i = 0; i < doc["sources"].size(); ++i) {
        const json& s = doc["sources"][i];
        const std::string by = name + "sources[" + std::to_string(i) + "] (" + s.value("source", "?") + ")";
        if (s.contains("section"))
          sections.push_back({by + " section", s.value("section", "")});
        else
          quotes.push_back({by, s.value("quote", "")});
      }
    if (doc.contains("todo"))
      for (const auto& t : doc["todo"]) todos.push_back(normalized(t.get<std::string>()));
  }
  for (const auto& q : quotes) {
    const std::string nq = normalized(q.text);
    if (nq.empty()) continue;
    for (size_t from = 0;;) {
      const size_t at = norm.find(nq, from);
      if (at == std::string::npos) break;
      const size_t qe = at + nq.size();
      for (size_t i = 0; i < pc.sentences.size(); ++i) {
        const Sentence& s = pc.sentences[i];
        if (s.begin == std::string::npos || !pc.covers[i].by.empty()) continue;
        const size_t lo = std::max(at, s.begin), hi = std::min(qe, s.end);
        const size_t overlap = hi > lo ? hi - lo : 0;
        const size_t need = std::min<size_t>({12, nq.size(), s.end - s.begin});
        if (overlap >= need) pc.covers[i].by = q.by;
      }
      from = at + 1;
    }
  }
  // A section source: every sentence under that heading (to the next heading of its level or
  // above) that names no recording. A sentence that says what a recording shows needs a claim.
  static const std::regex names_recording(R"(recording|expected_output|\bh200/|\bcpu/[0-9])");
  for (const auto& sec : sections) {
    size_t level = 0;
    while (level < sec.text.size() && sec.text[level] == '#') ++level;
    if (level < 2) {
      pc.problems.push_back(page + ": section \"" + sec.text + "\": write it with its ## or ###");
      continue;
    }
    const size_t at = norm.find(normalized(sec.text) + " ");
    if (at == std::string::npos) {
      pc.problems.push_back(page + ": no heading \"" + sec.text + "\"");
      continue;
    }
    size_t end = std::string::npos;
    for (size_t l = 2; l <= level; ++l) {
      const size_t e = norm.find(" " + std::string(l, '#') + " ", at + sec.text.size());
      end = std::min(end, e);
    }
    for (size_t i = 0; i < pc.sentences.size(); ++i) {
      const Sentence& s = pc.sentences[i];
      if (!pc.covers[i].by.empty() || s.begin == std::string::npos || s.begin < at || s.begin >= end)
        continue;
      if (std::regex_search(s.text, names_recording)) continue;
      pc.covers[i].by = sec.by;
    }
  }
  std::vector<bool> todo_used(todos.size(), false);
  for (size_t i = 0; i < pc.sentences.size(); ++i) {
    const std::string ns = normalized(pc.sentences[i].text);
    for (size_t t = 0; t < todos.size(); ++t)
      if (!todos[t].empty() && starts_with(ns, todos[t])) {
        todo_used[t] = true;
        if (pc.covers[i].by.empty())
          pc.covers[i].todo = true;
        else
          pc.problems.push_back(page + ": todo \"" + todos[t] + "\" is covered by " + pc.covers[i].by +
                                ": take it off the list");
      }
  }
  for (size_t t = 0; t < todos.size(); ++t)
    if (!todo_used[t])
      pc.problems.push_back(page + ": todo \"" + todos[t] + "\" starts no sentence that states something");
  return pc;
}

PageCoverage page_coverage(const fs::path& root, const std::string& page) {
  std::vector<std::string> files;
  std::vector<fs::path> paths;
  for (const fs::path& dir : {root / "docs" / "claims", root / "docs" / "claims" / "todo"})
    if (fs::is_directory(dir))
      for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".json") paths.push_back(e.path());
  std::sort(paths.begin(), paths.end());
  for (const auto& p : paths) {
    json j = json::parse(detail::slurp(p));
    j["__file"] = fs::relative(p, root).generic_string() + ": ";
    files.push_back(j.dump());
  }
  if (!fs::exists(root / page)) {
    PageCoverage pc;
    pc.page = page;
    pc.problems.push_back("no page " + page);
    return pc;
  }
  return page_coverage_of(page, detail::slurp(root / page), files);
}

}  // namespace wb::figures
