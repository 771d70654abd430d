// Figures tied to recordings: see figures.hpp for the marker syntax.
#include "workbook/figures.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "workbook/table_text.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace wb::figures {
namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw FigureError("cannot read " + p.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t b = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.emplace_back(s.substr(b, i - b));
      b = i + 1;
    }
  return out;
}

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

std::map<std::string, std::string> keyvals(std::string_view sel) {
  std::map<std::string, std::string> kv;
  for (const auto& part : split(sel, ';')) {
    auto eq = part.find('=');
    if (eq == std::string::npos) throw FigureError("selector part without '=': " + part);
    kv[trim(part.substr(0, eq))] = trim(part.substr(eq + 1));
  }
  return kv;
}

// Where a reference's file lives: expected_output/<platform>/... or docs/...
fs::path source_path(const fs::path& root, const std::string& file) {
  if (file.find("..") != std::string::npos) throw FigureError("'..' in a source path: " + file);
  if (file.rfind("docs/", 0) == 0) return root / file;
  return root / "expected_output" / file;
}

double json_number(const json& j, const std::string& where) {
  if (j.is_number()) return j.get<double>();
  throw FigureError(where + " is not a number (" + std::string(j.type_name()) + ")");
}

std::string json_key(const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

double resolve_json(const json& doc, std::string sel, bool fact_shorthand) {
  if (sel.empty() || sel[0] != '/') {
    if (!fact_shorthand) throw FigureError("a JSON selector starts with '/': " + sel);
    auto slash = sel.find('/');
    std::string id = sel.substr(0, slash);
    sel = "/facts[id=" + id + "]" + (slash == std::string::npos ? "" : sel.substr(slash));
  }
  const json* cur = &doc;
  std::string path;
  for (const auto& seg : split(std::string_view(sel).substr(1), '/')) {
    std::string key = seg, pick;
    if (auto lb = seg.find('['); lb != std::string::npos && seg.back() == ']') {
      key = seg.substr(0, lb);
      pick = seg.substr(lb + 1, seg.size() - lb - 2);
    }
    path += "/" + seg;
    if (!key.empty()) {
      if (cur->is_array()) {
        char* end = nullptr;
        long idx = std::strtol(key.c_str(), &end, 10);
        if (*end || idx < 0 || static_cast<size_t>(idx) >= cur->size())
          throw FigureError("no element " + path);
        cur = &(*cur)[static_cast<size_t>(idx)];
      } else if (cur->is_object() && cur->contains(key)) {
        cur = &(*cur)[key];
      } else {
        throw FigureError("no element " + path);
      }
    }
    if (!pick.empty()) {
      auto eq = pick.find('=');
      if (eq == std::string::npos || !cur->is_array())
        throw FigureError("[field=value] needs an array: " + path);
      std::string f = pick.substr(0, eq), v = pick.substr(eq + 1);
      const json* found = nullptr;
      for (const auto& el : *cur)
        if (el.is_object() && el.contains(f) && json_key(el[f]) == v) {
          if (found) throw FigureError("more than one element matches " + path);
          found = &el;
        }
      if (!found) throw FigureError("no element matches " + path);
      cur = found;
    }
  }
  return json_number(*cur, sel);
}

double parse_cell(std::string cell, const std::string& where) {
  double scale = 1.0;
  auto ends = [&](std::string_view suf) {
    return cell.size() >= suf.size() && cell.compare(cell.size() - suf.size(), suf.size(), suf) == 0;
  };
  if (ends("us"))
    cell.resize(cell.size() - 2);
  else if (ends("ms")) {
    cell.resize(cell.size() - 2);
    scale = 1e3;
  } else if (ends("ns")) {
    cell.resize(cell.size() - 2);
    scale = 1e-3;
  } else if (ends("s")) {
    cell.resize(cell.size() - 1);
    scale = 1e6;
  } else if (ends("%"))
    cell.resize(cell.size() - 1);
  cell.erase(std::remove(cell.begin(), cell.end(), ','), cell.end());
  char* end = nullptr;
  double v = std::strtod(cell.c_str(), &end);
  if (cell.empty() || *end) throw FigureError(where + ": '" + cell + "' is not a number");
  return v * scale;
}

// A key_averages table (table.txt, or a table printed in stdout.txt): the nth row named `row`,
// its footers ("Self CPU time total: 297.272us") counting as rows, in the order of the text.
double resolve_table(const std::string& text, const std::map<std::string, std::string>& kv) {
  auto get = [&](const char* k) -> std::string {
    auto it = kv.find(k);
    return it == kv.end() ? std::string() : it->second;
  };
  std::string row = get("row"), col = get("col");
  int nth = get("nth").empty() ? 1 : std::stoi(get("nth"));
  if (row.empty()) throw FigureError("table selector needs row=");
  std::vector<TableText> tables;
  try {
    tables = parse_table_texts(text);
  } catch (const TableTextError& e) {
    throw FigureError(e.what());
  }
  int seen = 0;
  for (const TableText& t : tables) {
    for (const auto& cells : t.rows) {
      if (cells.front() != row || ++seen != nth) continue;
      if (col.empty()) throw FigureError("table selector needs col= for row " + row);
      const size_t c = t.column(col);
      if (c == t.header.size()) throw FigureError("no column '" + col + "'");
      return parse_cell(cells[c], row + "/" + col);
    }
    for (const std::string& footer : t.footers)
      if (footer.rfind(row + ":", 0) == 0 && ++seen == nth)
        return parse_cell(trim(footer.substr(row.size() + 1)), row);
  }
  throw FigureError("no row '" + row + "'" + (nth > 1 ? " #" + std::to_string(nth) : ""));
}

double resolve_trace(const fs::path& p, const std::map<std::string, std::string>& kv) {
  auto it = kv.find("event");
  if (it == kv.end()) throw FigureError("trace selector needs event=");
  int nth = kv.count("nth") ? std::stoi(kv.at("nth")) : 1;
  std::string on = kv.count("on") ? kv.at("on") : "";
  Trace t;
  try {
    t = read_trace(p);
  } catch (const std::exception& e) {
    throw FigureError(e.what());
  }
  std::vector<const Event*> hits;
  for (const auto& e : t.events)
    if (e.name == it->second && (on.empty() || (on == "gpu") == e.on_device())) hits.push_back(&e);
  std::sort(hits.begin(), hits.end(),
            [](const Event* a, const Event* b) { return a->start_ns < b->start_ns; });
  if (nth < 1 || static_cast<size_t>(nth) > hits.size())
    throw FigureError("no event '" + it->second + "' #" + std::to_string(nth) + " (" +
                      std::to_string(hits.size()) + " found)");
  return static_cast<double>(hits[static_cast<size_t>(nth - 1)]->dur_ns) / 1e3;
}

struct Ref {
  std::string file, sel;
  double scale = 1.0;
};

Ref parse_ref(std::string_view ref_text) {
  std::string r = trim(ref_text);
  Ref ref;
  static const std::regex mod(R"(\s+scale=([-+0-9.eE]+)$)");
  std::smatch m;
  if (std::regex_search(r, m, mod)) {
    ref.scale = std::stod(m[1].str());
    r = trim(r.substr(0, static_cast<size_t>(m.position(0))));
  }
  auto hash = r.find('#');
  if (hash == std::string::npos || hash == 0 || hash + 1 == r.size())
    throw FigureError("a reference is FILE#SELECTOR: '" + r + "'");
  ref.file = r.substr(0, hash);
  ref.sel = r.substr(hash + 1);
  return ref;
}

bool ends_with(const std::string& s, std::string_view suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

// ---- the Markdown side ---------------------------------------------------------------

constexpr std::string_view kOpen = "<!--fig";
const std::vector<std::string> kLabels = {"seed", "datasheet", "calc", "spec"};

struct Number {
  size_t begin = 0, end = 0;  // in the line
  std::string text;           // as printed ("1,365", "17.7")
};

// The number right before position `pos` (a unit in between is allowed).
std::optional<Number> number_before(const std::string& line, size_t pos) {
  static const std::regex re(R"((\d[\d,]*(?:\.\d+)?)(?: ?(?:[A-Za-z%/]|µ|×)+)?\**$)");
  std::smatch m;
  std::string head = line.substr(0, pos);
  if (!std::regex_search(head, m, re)) return std::nullopt;
  size_t b = static_cast<size_t>(m.position(1));
  if (b > 0 &&
      (std::isalnum(static_cast<unsigned char>(head[b - 1])) || head[b - 1] == '.' || head[b - 1] == '_'))
    return std::nullopt;  // "x64", "v1.2": not a figure on its own
  return Number{b, b + m.length(1), m[1].str()};
}

int decimals(const std::string& num) {
  auto dot = num.find('.');
  return dot == std::string::npos ? 0 : static_cast<int>(num.size() - dot - 1);
}

double to_double(std::string num) {
  num.erase(std::remove(num.begin(), num.end(), ','), num.end());
  return std::stod(num);
}

std::string format_like(double v, const std::string& like) {
  int d = decimals(like);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", d, v);
  std::string s = buf;
  if (like.find(',') == std::string::npos) return s;
  std::string sign = s[0] == '-' ? "-" : "";
  if (!sign.empty()) s.erase(0, 1);
  auto dot = s.find('.');
  std::string ip = s.substr(0, dot), fp = dot == std::string::npos ? "" : s.substr(dot);
  std::string grouped;
  for (size_t i = 0; i < ip.size(); ++i) {
    if (i > 0 && (ip.size() - i) % 3 == 0) grouped += ',';
    grouped += ip[i];
  }
  return sign + grouped + fp;
}

bool agrees(const std::string& printed, double value) {
  double tol = 0.5 * std::pow(10.0, -decimals(printed)) * (1 + 1e-9) + 1e-12;
  return std::fabs(to_double(printed) - value) <= tol;
}

// Numbers that must be backed: a number (or a range/list of them) followed by a unit.
const std::regex& figure_re() {
  static const std::regex re(
      R"((^|[^\w.#/-])((\d[\d,]*(?:\.\d+)?)(?:\s?(?:–|-|/|to|vs|→)\s?~?\d[\d,]*(?:\.\d+)?)*)\s?(ns|µs|us|ms|s|TFLOP/s|GFLOP/s|TB/s|GB/s|MB/s|KB|MB|GB|KiB|MiB|B|%|x|×)(?![A-Za-z0-9]))");
  return re;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines = split(text, '\n');
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += '\n';
    out += lines[i];
  }
  return out;
}

std::vector<std::string> file_lines(const std::string& text) {
  std::vector<std::string> v = split_lines(text);
  while (!v.empty() && trim(v.back()).empty()) v.pop_back();
  for (auto& l : v) {
    auto e = l.find_last_not_of(" \t\r");
    l = e == std::string::npos ? std::string() : l.substr(0, e + 1);
  }
  return v;
}

}  // namespace

double resolve(const fs::path& root, std::string_view ref_text) {
  Ref ref = parse_ref(ref_text);
  fs::path p = source_path(root, ref.file);
  if (!fs::exists(p)) throw FigureError("missing recording " + p.lexically_relative(root).string());
  double v = 0;
  std::string name = p.filename().string();
  if (ref.sel.rfind("event=", 0) == 0) {
    v = resolve_trace(p, keyvals(ref.sel));
  } else if (ends_with(name, ".json")) {
    json doc;
    try {
      doc = json::parse(slurp(p));
    } catch (const json::exception& e) {
      throw FigureError(p.string() + ": " + e.what());
    }
    bool facts = doc.is_object() && doc.contains("facts");
    v = resolve_json(doc, ref.sel, facts);
  } else if (ref.sel.rfind("re=", 0) == 0) {
    std::string text = slurp(p);
    std::regex re;
    try {
      re = std::regex(ref.sel.substr(3));
    } catch (const std::regex_error& e) {
      throw FigureError("bad regex '" + ref.sel.substr(3) + "': " + e.what());
    }
    std::smatch m;
    if (!std::regex_search(text, m, re) || m.size() < 2)
      throw FigureError("regex '" + ref.sel.substr(3) + "' does not match " + ref.file);
    v = parse_cell(m[1].str(), ref.sel);
  } else {
    v = resolve_table(slurp(p), keyvals(ref.sel));
  }
  return v * ref.scale;
}

Result process(const fs::path& root, std::string& text, const Options& opts) {
  Result res;
  std::vector<std::string> lines = split_lines(text);
  bool in_code = false, code_checked = false;
  std::optional<std::string> pending_block;  // a fig-block line waiting for its fence
  std::optional<std::string> passage_label;  // inside <!--fig label=X begin--> ... <!--fig end-->
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string& line = lines[i];
    const int lineno = static_cast<int>(i + 1);
    auto problem = [&](std::string msg) { res.problems.push_back({lineno, std::move(msg)}); };
    std::string t = trim(line);
    if (t.rfind("```", 0) == 0) {
      if (!in_code) {
        in_code = true;
        code_checked = false;
        if (pending_block) {
          // compare the block with the file it quotes
          size_t close = i + 1;
          while (close < lines.size() && trim(lines[close]).rfind("```", 0) != 0) ++close;
          if (close == lines.size()) {
            problem("unclosed code block");
            pending_block.reset();
            continue;
          }
          std::string want;
          try {
            fs::path p = source_path(root, *pending_block);
            if (!fs::exists(p)) throw FigureError("missing recording " + *pending_block);
            want = slurp(p);
          } catch (const FigureError& e) {
            problem(e.what());
            pending_block.reset();
            continue;
          }
          std::vector<std::string> have(lines.begin() + static_cast<long>(i) + 1,
                                        lines.begin() + static_cast<long>(close));
          std::vector<std::string> w = file_lines(want);
          std::string have_joined = join_lines(have);
          if (file_lines(have_joined) != w) {
            res.changes.push_back({lineno, "(code block)", "(" + *pending_block + ")", *pending_block});
            if (opts.update) {
              lines.erase(lines.begin() + static_cast<long>(i) + 1, lines.begin() + static_cast<long>(close));
              lines.insert(lines.begin() + static_cast<long>(i) + 1, w.begin(), w.end());
            } else {
              problem("code block differs from " + *pending_block);
            }
          }
          ++res.blocks;
          code_checked = true;
          pending_block.reset();
        }
      } else {
        in_code = false;
      }
      continue;
    }
    if (in_code) {
      if (!code_checked && opts.require_marks) {
        std::smatch m;
        if (std::regex_search(line, m, figure_re()))
          problem("figure '" + m[2].str() + m[4].str() +
                  "' in a code block that no <!--fig-block FILE--> line ties to a recording");
      }
      continue;
    }
    if (pending_block) {
      problem("<!--fig-block--> must be followed by a fenced code block");
      pending_block.reset();
    }
    if (t.rfind("<!--fig-block ", 0) == 0) {
      auto e = t.find("-->");
      if (e == std::string::npos) {
        problem("unterminated fig-block marker");
        continue;
      }
      pending_block = trim(t.substr(14, e - 14));
      continue;
    }

    // Markers on this line: bind each to the number before it, strip them to find the rest.
    std::string stripped;
    std::vector<std::pair<size_t, size_t>> covered;  // spans in `stripped` that are backed
    size_t pos = 0;
    std::vector<std::pair<size_t, size_t>> passage_spans;  // [begin, end) in stripped
    size_t passage_begin = 0;  // where an open passage starts in `stripped` (0: it began on an earlier line)
    while (true) {
      size_t at = line.find(kOpen, pos);
      if (at == std::string::npos || (at + kOpen.size() < line.size() && line[at + kOpen.size()] != ' ')) {
        if (at != std::string::npos) {  // "<!--fig-block" mid-line or similar
          problem("fig marker must be '<!--fig ...-->'");
        }
        stripped += line.substr(pos);
        break;
      }
      size_t close = line.find("-->", at);
      if (close == std::string::npos) {
        problem("unterminated <!--fig marker");
        stripped += line.substr(pos);
        break;
      }
      std::string spec = trim(line.substr(at + kOpen.size(), close - at - kOpen.size()));
      size_t before_len = stripped.size();
      stripped += line.substr(pos, at - pos);
      size_t next = close + 3;
      if (spec == "end") {
        if (!passage_label)
          problem("<!--fig end--> without a begin");
        else
          passage_spans.push_back({passage_begin, stripped.size()});
        passage_label.reset();
        passage_begin = 0;
        pos = next;
        continue;
      }
      if (spec.rfind("label=", 0) == 0) {
        auto words = split(spec.substr(6), ' ');
        std::string label = words[0];
        if (std::find(kLabels.begin(), kLabels.end(), label) == kLabels.end()) {
          problem("unknown label '" + label + "' (seed, datasheet, calc, spec)");
        } else if (words.size() > 1 && words[1] == "begin") {
          if (passage_label) problem("nested <!--fig label=... begin-->");
          passage_label = label;
          passage_begin = stripped.size();
          ++res.labelled;
        } else {
          auto num = number_before(line, at);
          if (!num)
            problem("label marker with no number before it");
          else {
            covered.push_back({before_len + (num->begin - pos), before_len + (num->end - pos)});
            ++res.labelled;
          }
        }
        pos = next;
        continue;
      }
      auto num = number_before(line, at);
      if (!num || num->begin < pos) {
        problem("marker '" + spec + "' has no number right before it");
        pos = next;
        continue;
      }
      covered.push_back({before_len + (num->begin - pos), before_len + (num->end - pos)});
      ++res.sourced;
      try {
        double v = resolve(root, spec);
        if (!agrees(num->text, v)) {
          std::string now = format_like(v, num->text);
          res.changes.push_back({lineno, num->text, now, spec});
          if (opts.update) {
            // rewrite in `line`: the stripped copy keeps the old text, which is fine (same span
            // role), but positions after it shift: rebuild from the new line on the next pass.
            line.replace(num->begin, num->end - num->begin, now);
            long delta = static_cast<long>(now.size()) - static_cast<long>(num->text.size());
            // fix the stripped text too so that the figure scan sees the new number
            stripped.replace(before_len + (num->begin - pos), num->text.size(), now);
            covered.back().second = static_cast<size_t>(static_cast<long>(covered.back().second) + delta);
            next = static_cast<size_t>(static_cast<long>(next) + delta);
          } else {
            problem("'" + num->text + "' but the recording says " + format_like(v, num->text) + " (" +
                    std::to_string(v) + ") at " + spec);
          }
        }
      } catch (const FigureError& e) {
        problem(std::string(e.what()) + " [" + spec + "]");
      } catch (const std::exception& e) {
        problem(std::string("bad marker: ") + e.what() + " [" + spec + "]");
      }
      pos = next;
    }
    if (passage_label) passage_spans.push_back({passage_begin, stripped.size()});
    if (!opts.require_marks) continue;
    // Every figure left on the line must be backed.
    auto it = std::sregex_iterator(stripped.begin(), stripped.end(), figure_re());
    for (; it != std::sregex_iterator(); ++it) {
      const auto& m = *it;
      size_t b = static_cast<size_t>(m.position(2)), e = b + static_cast<size_t>(m.length(2));
      // each number inside the match
      static const std::regex numre(R"(\d[\d,]*(?:\.\d+)?)");
      std::string group = m[2].str();
      for (auto n = std::sregex_iterator(group.begin(), group.end(), numre); n != std::sregex_iterator();
           ++n) {
        size_t nb = b + static_cast<size_t>(n->position(0)), ne = nb + static_cast<size_t>(n->length(0));
        bool ok = false;
        for (auto [cb, ce] : covered) ok = ok || (cb <= nb && ne <= ce);
        for (auto [pb, pe] : passage_spans) ok = ok || (pb <= nb && ne <= pe);
        if (!ok)
          problem("unbacked figure '" + stripped.substr(nb, e - nb) + m[4].str() +
                  "': add <!--fig SOURCE#SELECTOR--> or <!--fig label=...-->");
      }
    }
  }
  if (passage_label)
    res.problems.push_back(
        {static_cast<int>(lines.size()), "<!--fig label=... begin--> without <!--fig end-->"});
  if (pending_block) res.problems.push_back({static_cast<int>(lines.size()), "<!--fig-block--> at the end"});
  if (opts.update) text = join_lines(lines);
  return res;
}

std::vector<FileSet> default_files(const fs::path& root) {
  std::vector<FileSet> out;
  for (const auto& d : fs::directory_iterator(root / "chapters"))
    if (fs::exists(d.path() / "README.md")) out.push_back({d.path() / "README.md", true});
  // The top README's marked figures (its Performance table) are synced too; unmarked ones are
  // not required there.
  if (fs::exists(root / "README.md")) out.push_back({root / "README.md", false});
  for (const auto& f : fs::directory_iterator(root / "docs"))
    if (f.path().extension() == ".md") {
      std::string n = f.path().filename().string();
      out.push_back({f.path(), n == "glossary.md" || n == "cheatsheet.md"});
    }
  std::sort(out.begin(), out.end(), [](const FileSet& a, const FileSet& b) { return a.path < b.path; });
  return out;
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
