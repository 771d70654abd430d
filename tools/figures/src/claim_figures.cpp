// The claims files' figures and quoted blocks: checked against the recordings, rewritten from
// them (include/workbook/claim_figures.hpp).
#include "workbook/claim_figures.hpp"

#include <algorithm>
#include <iostream>
#include <map>
#include <regex>

#include <nlohmann/json.hpp>

#include "util.hpp"
#include "workbook/lessons.hpp"  // cheatsheet_markdown()
#include "workbook/sentences.hpp"

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace wb::figures {
using namespace detail;

namespace {

// A claims file as the files are written: one entry of "claims", "sources", "files" a line.
std::string inline_json(const ojson& v) {
  if (v.is_object()) {
    std::string s = "{";
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      s += (first ? "" : ", ") + ojson(it.key()).dump() + ": " + inline_json(it.value());
      first = false;
    }
    return s + "}";
  }
  if (v.is_array()) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + inline_json(v[i]);
    return s + "]";
  }
  return v.dump();
}

std::string claims_file_text(const ojson& doc) {
  std::string s = "{\n";
  bool first = true;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    s += std::string(first ? "" : ",\n") + "  " + ojson(it.key()).dump() + ": ";
    first = false;
    const ojson& v = it.value();
    const bool rows = v.is_array() && !v.empty() &&
                      std::all_of(v.begin(), v.end(), [](const ojson& e) { return e.is_object(); });
    if (!rows) {
      s += inline_json(v);
      continue;
    }
    s += "[\n";
    for (size_t i = 0; i < v.size(); ++i) s += "    " + inline_json(v[i]) + (i + 1 < v.size() ? ",\n" : "\n");
    s += "  ]";
  }
  return s + "\n}\n";
}

struct ClaimsFile {
  fs::path path;
  ojson doc;
  bool dirty = false;
};

std::vector<ClaimsFile> claims_files(const fs::path& root) {
  std::vector<ClaimsFile> out;
  const fs::path dir = root / "docs" / "claims";
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".json") out.push_back({e.path(), {}, false});
  std::sort(out.begin(), out.end(), [](const ClaimsFile& a, const ClaimsFile& b) { return a.path < b.path; });
  for (auto& f : out) {
    try {
      f.doc = ojson::parse(slurp(f.path));
    } catch (const ojson::exception& e) {
      throw FigureError(f.path.string() + ": " + e.what());
    }
  }
  return out;
}

int line_of(const std::string& raw, size_t at) {
  return 1 + static_cast<int>(
                 std::count(raw.begin(), raw.begin() + static_cast<long>(std::min(at, raw.size())), '\n'));
}

// Where `printed` stands as a whole number in norm[from, to): not inside a longer number.
size_t find_number(const std::string& norm, const std::string& printed, size_t from, size_t to) {
  auto digit = [&](size_t i) { return i < norm.size() && std::isdigit(static_cast<unsigned char>(norm[i])); };
  auto sep = [&](size_t i) { return i < norm.size() && (norm[i] == '.' || norm[i] == ','); };
  for (size_t at = norm.find(printed, from); at != std::string::npos && at + printed.size() <= to;
       at = norm.find(printed, at + 1)) {
    const size_t end = at + printed.size();
    const bool before = at > 0 && (digit(at - 1) || (at > 1 && sep(at - 1) && digit(at - 2)));
    const bool after = digit(end) || (sep(end) && digit(end + 1));
    if (!before && !after) return at;
  }
  return std::string::npos;
}

// The reference of a claim's figure by "key" in its recording's lessons.json (comparison.json
// for the lessons across variants); "" when the claim names no recording and fact, or a "spec"
// or "reference" that the recorded file was not judged with.
std::string key_reference(const fs::path& root, const ojson& c, const std::string& key) {
  const std::string rec = c.value("recording", ""), id = c.value("lesson", c.value("fact", ""));
  if (rec.empty() || id.empty() || key.empty() || key[0] != '/' || c.contains("spec") ||
      c.contains("reference") || key.find_first_of("[]#") != std::string::npos)
    return "";
  for (const char* file : {"lessons.json", "comparison.json"})
    if (fs::exists(source_path(root, rec + "/" + file)))
      return rec + "/" + file + "#/facts[id=" + id + "]/data" + key;
  return "";
}

struct Edit {
  size_t begin, end;  // in the normalized page
  std::string text;
};

// The lines of a block a "files" entry ties, and what they must be.
struct Block {
  size_t begin = 0, end = 0;  // raw offsets of the lines (end: after the last line's newline or text)
  bool found = false;
};

// From raw offset `from`: the content lines of the next fenced code block (fence = true), or the
// next run of table lines (fence = false).
Block find_block(const std::string& raw, size_t from, bool fence) {
  Block b;
  size_t pos = raw.find('\n', from);
  if (pos == std::string::npos) return b;
  ++pos;
  while (pos < raw.size()) {
    const size_t eol = raw.find('\n', pos);
    const std::string line = trim(raw.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos));
    const size_t next = eol == std::string::npos ? raw.size() : eol + 1;
    if (fence && (starts_with(line, "```") || starts_with(line, "~~~"))) {
      b.begin = next;
      for (size_t p = next; p < raw.size();) {
        const size_t e = raw.find('\n', p);
        const std::string l = trim(raw.substr(p, e == std::string::npos ? std::string::npos : e - p));
        if (starts_with(l, "```") || starts_with(l, "~~~")) {
          b.end = p, b.found = true;
          return b;
        }
        if (e == std::string::npos) break;
        p = e + 1;
      }
      return b;
    }
    if (!fence && starts_with(line, "|")) {
      b.begin = pos;
      size_t p = pos;
      while (p < raw.size()) {
        const size_t e = raw.find('\n', p);
        const std::string l = trim(raw.substr(p, e == std::string::npos ? std::string::npos : e - p));
        if (!starts_with(l, "|")) break;
        p = e == std::string::npos ? raw.size() : e + 1;
      }
      b.end = p, b.found = true;
      return b;
    }
    pos = next;
  }
  return b;
}

std::string block_text(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

void blocks_pass(const fs::path& root, const std::string& page, std::vector<ClaimsFile*>& docs, Mode mode,
                 ClaimsPass& out) {
  const fs::path file = root / page;
  std::string raw = slurp(file);
  bool changed = false;
  for (ClaimsFile* cf : docs) {
    if (!cf->doc.contains("files")) continue;
    for (const auto& e : cf->doc["files"]) {
      const std::string quote = normalized(e.value("quote", ""));
      std::vector<size_t> where;
      const std::string norm = normalized_with_map(raw, where);
      const size_t at = quote.empty() ? std::string::npos : norm.find(quote);
      if (at == std::string::npos) {
        out.problems.push_back(page + ": no longer says \"" + quote + "\" (a files entry of " +
                               cf->path.filename().string() + ")");
        continue;
      }
      ++out.blocks;
      std::vector<std::string> want;
      std::string what;
      if (e.contains("file")) {
        what = e["file"].get<std::string>();
        try {
          want = file_lines(slurp(source_path(root, what)));
        } catch (const FigureError& x) {
          out.problems.push_back(page + ": " + x.what() + " [" + what + "]");
          continue;
        }
      } else if (e.value("table", "") == "cheatsheet") {
        what = "the cheatsheet table";
        want = split(cheatsheet_markdown(), '\n');
        while (!want.empty() && trim(want.back()).empty()) want.pop_back();
      } else {
        out.problems.push_back(cf->path.filename().string() +
                               ": a files entry names a \"file\" or \"table\": \"cheatsheet\"");
        continue;
      }
      const Block b = find_block(raw, where[at + quote.size() - 1], e.contains("file"));
      if (!b.found) {
        out.problems.push_back(page + ": no block after \"" + quote + "\" (" + what + ")");
        continue;
      }
      const std::string have = raw.substr(b.begin, b.end - b.begin), should = block_text(want);
      if (have == should) continue;
      if (mode == Mode::Check) {
        out.problems.push_back(page + ":" + std::to_string(line_of(raw, b.begin)) + ": the block after \"" +
                               quote + "\" is not " + what + ": run figures generate");
        continue;
      }
      raw.replace(b.begin, b.end - b.begin, should);
      changed = true;
      out.changes.push_back(page + ":" + std::to_string(line_of(raw, b.begin)) + ": the block after \"" +
                            quote + "\" rewritten from " + what);
    }
  }
  if (changed) {
    write_file_atomic(file, raw);
    out.written.push_back(page);
  }
}

// Every number-with-unit of the page's prose (fenced code and whole-line comments aside) lies in
// a span a claim's figure or a source's quote backs; each one that does not is a problem.
void unbacked_figures(const std::string& raw, const std::vector<size_t>& where,
                      const std::vector<std::pair<size_t, size_t>>& backed, const std::string& page,
                      ClaimsPass& out) {
  std::vector<size_t> norm_of(raw.size() + 1, std::string::npos);
  for (size_t i = 0; i < where.size(); ++i) norm_of[where[i]] = i;
  static const std::regex numre(R"(\d[\d,]*(?:\.\d+)?)");
  bool fence = false;
  int lineno = 0;
  for (size_t b = 0; b < raw.size();) {
    const size_t e = std::min(raw.find('\n', b), raw.size());
    const std::string line = raw.substr(b, e - b);
    ++lineno;
    const std::string t = trim(line);
    if (starts_with(t, "```") || starts_with(t, "~~~")) fence = !fence;
    if (!fence && !starts_with(t, "```") && !starts_with(t, "~~~") &&
        !(starts_with(t, "<!--") && ends_with(t, "-->")))
      for (auto m = std::sregex_iterator(line.begin(), line.end(), figure_re()); m != std::sregex_iterator();
           ++m) {
        const std::string group = (*m)[2].str();
        const size_t g = static_cast<size_t>(m->position(2));
        for (auto n = std::sregex_iterator(group.begin(), group.end(), numre); n != std::sregex_iterator();
             ++n) {
          const size_t nb = norm_of[b + g + static_cast<size_t>(n->position(0))],
                       ne = norm_of[b + g + static_cast<size_t>(n->position(0) + n->length(0)) - 1];
          bool ok = nb == std::string::npos;  // inside a comment
          for (const auto& [lo, hi] : backed) ok = ok || (lo <= nb && ne < hi);
          if (!ok)
            out.problems.push_back(page + ":" + std::to_string(lineno) + ": unbacked figure '" + n->str() +
                                   " " + (*m)[4].str() +
                                   "': tie it with a claim's figure or a source (docs/claims/README.md)");
        }
      }
    b = e + 1;
  }
}

void page_pass(const fs::path& root, const std::string& page, std::vector<ClaimsFile*>& docs, Mode mode,
               ClaimsPass& out) {
  const fs::path file = root / page;
  if (!fs::exists(file)) {
    out.problems.push_back("no page " + page + " (named by " + docs.front()->path.filename().string() + ")");
    return;
  }
  const std::string raw = slurp(file);
  std::vector<size_t> where;
  const std::string norm = normalized_with_map(raw, where);
  std::vector<Edit> edits;
  std::vector<std::pair<size_t, size_t>>
      backed;  // spans of the normalized page: a claim's figure, a source's quote
  for (ClaimsFile* cf : docs) {
    for (const char* kind : {"claims", "sources"}) {
      if (!cf->doc.contains(kind)) continue;
      for (size_t i = 0; i < cf->doc[kind].size(); ++i) {
        ojson& c = cf->doc[kind][i];
        if (!c.contains("quote")) continue;  // a section source
        const std::string where_c = cf->path.filename().string() + " " + kind + "[" + std::to_string(i) + "]";
        const std::string quote = normalized(c.value("quote", ""));
        ++out.quotes;
        const size_t at = quote.empty() ? std::string::npos : norm.find(quote);
        if (at == std::string::npos) {
          out.problems.push_back(page + ": no longer says \"" + quote + "\" (" + where_c + ")");
          continue;
        }
        if (std::string(kind) == "sources")
          for (size_t k = at; k != std::string::npos; k = norm.find(quote, k + 1))
            backed.push_back({k, k + quote.size()});
        if (!c.contains("figures")) continue;
        size_t cursor = at;
        const size_t qend = at + quote.size();
        for (auto& fig : c["figures"]) {
          const std::string printed = fig.value("printed", "");
          std::string ref;
          double value = 0;
          if (fig.contains("ref")) {
            ++out.figures;
            ref = fig["ref"].get<std::string>();
            try {
              value = resolve(root, ref) * fig.value("scale", 1.0);
            } catch (const std::exception& e) {
              out.problems.push_back(page + ": " + e.what() + " [" + ref + "] (" + where_c + ")");
              continue;
            }
          } else {
            // A figure by "key": the fact's data as the recording's lessons.json (or
            // comparison.json) holds it. A fact that file does not hold, or one judged with another
            // "spec" or a "reference" run, is recomputed by tests/test_claims.cpp only.
            ref = key_reference(root, c, fig.value("key", ""));
            if (ref.empty()) {
              ++out.key_only;
              continue;
            }
            ++out.key_figures;
            try {
              value = resolve(root, ref) * fig.value("scale", 1.0);
            } catch (const std::exception&) {
              --out.key_figures, ++out.key_only;
              continue;
            }
          }
          size_t pos = find_number(norm, printed, cursor, qend);
          if (pos == std::string::npos) pos = find_number(norm, printed, at, qend);
          if (pos != std::string::npos) cursor = pos + printed.size(), backed.push_back({pos, cursor});
          if (pos == std::string::npos)
            out.problems.push_back(page + ": the quote \"" + quote + "\" does not print " + printed + " (" +
                                   where_c + ")");
          std::string digits = printed;
          const bool plus = !digits.empty() && digits[0] == '+';
          if (plus) digits.erase(0, 1);
          bool ok = false;
          try {
            ok = agrees(digits, value);
          } catch (const std::exception&) {
            out.problems.push_back(page + ": '" + printed + "' is not a number (" + where_c + ")");
            continue;
          }
          if (ok) continue;
          const std::string now = (plus && value >= 0 ? "+" : "") + format_like(value, digits);
          const int line = pos == std::string::npos ? line_of(raw, where[at]) : line_of(raw, where[pos]);
          out.changes.push_back(page + ":" + std::to_string(line) + ": " + printed + " -> " + now + "  [" +
                                ref + "]" + (mode == Mode::Update ? "" : " (differs)"));
          if (mode != Mode::Update) {
            out.problems.push_back(page + ":" + std::to_string(line) + ": prints " + printed +
                                   " but the recording says " + now + " (" + std::to_string(value) + ") at " +
                                   ref + " (" + where_c + "): run figures update");
            continue;
          }
          if (pos == std::string::npos) continue;  // said above
          edits.push_back({pos, pos + printed.size(), now});
          fig["printed"] = now;
          cf->dirty = true;
        }
      }
    }
  }
  // A claims file with "every_figure": true (chapters 01-07's READMEs): every number followed by
  // a unit on the page is backed.
  if (std::any_of(docs.begin(), docs.end(),
                  [](const ClaimsFile* f) { return f->doc.value("every_figure", false); }))
    unbacked_figures(raw, where, backed, page, out);
  if (!edits.empty()) {
    std::sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
    std::vector<Edit> unique;
    for (const auto& e : edits) {
      if (!unique.empty() && e.begin < unique.back().end) {
        if (e.begin != unique.back().begin || e.text != unique.back().text)
          out.problems.push_back(page + ": two claims rewrite the same number differently (" +
                                 unique.back().text + ", " + e.text + ")");
        continue;
      }
      unique.push_back(e);
    }
    std::string now = raw;
    for (auto it = unique.rbegin(); it != unique.rend(); ++it)
      now.replace(where[it->begin], where[it->end - 1] + 1 - where[it->begin], it->text);
    // Every quote of the page that holds a rewritten number says the new one.
    for (ClaimsFile* cf : docs)
      for (const char* kind : {"claims", "sources", "files"}) {
        if (!cf->doc.contains(kind)) continue;
        for (auto& c : cf->doc[kind]) {
          if (!c.contains("quote")) continue;
          std::string quote = normalized(c["quote"].get<std::string>());
          const size_t at = quote.empty() ? std::string::npos : norm.find(quote);
          if (at == std::string::npos) continue;
          bool touched = false;
          for (auto it = unique.rbegin(); it != unique.rend(); ++it)
            if (it->begin >= at && it->end <= at + quote.size()) {
              quote.replace(it->begin - at, it->end - it->begin, it->text);
              touched = true;
            }
          if (touched) c["quote"] = quote, cf->dirty = true;
        }
      }
    write_file_atomic(file, now);
    out.written.push_back(page);
  }
  blocks_pass(root, page, docs, mode, out);
}

}  // namespace

ClaimsPass claims_pass(const fs::path& root, Mode mode) {
  ClaimsPass out;
  std::vector<ClaimsFile> files = claims_files(root);
  std::map<std::string, std::vector<ClaimsFile*>> by_page;
  for (auto& f : files) by_page[f.doc.value("page", "")].push_back(&f);
  for (auto& [page, docs] : by_page) {
    if (page.empty()) {
      out.problems.push_back(docs.front()->path.string() + ": no \"page\"");
      continue;
    }
    page_pass(root, page, docs, mode, out);
  }
  for (auto& f : files)
    if (f.dirty) {
      write_file_atomic(f.path, claims_file_text(f.doc));
      out.written.push_back(fs::relative(f.path, root).generic_string());
    }
  return out;
}

}  // namespace wb::figures
