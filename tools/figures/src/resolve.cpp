// References to recordings (FILE#SELECTOR) and the values they point at: see figures.hpp.
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
#include "util.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace wb::figures {
using namespace detail;
namespace {

std::map<std::string, std::string> keyvals(std::string_view sel) {
  std::map<std::string, std::string> kv;
  for (const auto& part : split(sel, ';')) {
    auto eq = part.find('=');
    if (eq == std::string::npos) throw FigureError("selector part without '=': " + part);
    kv[trim(part.substr(0, eq))] = trim(part.substr(eq + 1));
  }
  return kv;
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
  } else if (ends("%") || ends("x") || ends("×")) {
    cell.resize(cell.size() - (ends("×") ? std::string_view("×").size() : 1));
  }
  cell = trim(cell);
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
  const Event& e = *hits[static_cast<size_t>(nth - 1)];
  const std::string value = kv.count("value") ? kv.at("value") : "dur";
  if (value == "cbid") {
    if (e.cbid < 0) throw FigureError("event '" + it->second + "' #" + std::to_string(nth) + " has no cbid");
    return static_cast<double>(e.cbid);
  }
  if (value != "dur") throw FigureError("a trace selector's value= is dur or cbid, not '" + value + "'");
  return static_cast<double>(e.dur_ns) / 1e3;
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

double resolve_json_file(const fs::path& p, const std::string& sel) {
  json doc;
  try {
    doc = json::parse(slurp(p));
  } catch (const json::exception& e) {
    throw FigureError(p.string() + ": " + e.what());
  }
  const bool facts = doc.is_object() && doc.contains("facts");
  return resolve_json(doc, sel, facts);
}

double resolve_regex(const std::string& text, const std::string& pattern, const std::string& file) {
  std::regex re;
  try {
    re = std::regex(pattern);
  } catch (const std::regex_error& e) {
    throw FigureError("bad regex '" + pattern + "': " + e.what());
  }
  std::smatch m;
  if (!std::regex_search(text, m, re) || m.size() < 2)
    throw FigureError("regex '" + pattern + "' does not match " + file);
  return parse_cell(m[1].str(), "re=" + pattern);
}

// The cells of a Markdown table row ("| a | b |" -> {"a", "b"}); an escaped \| stays in its cell.
std::vector<std::string> markdown_cells(std::string_view line) {
  std::string t = trim(line);
  if (starts_with(t, "|")) t.erase(0, 1);
  if (ends_with(t, "|") && !ends_with(t, "\\|")) t.pop_back();
  std::vector<std::string> cells;
  std::string cur;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '|' && (i == 0 || t[i - 1] != '\\')) {
      cells.push_back(trim(cur));
      cur.clear();
    } else {
      cur += t[i];
    }
  }
  cells.push_back(trim(cur));
  return cells;
}

bool is_delimiter_row(const std::vector<std::string>& cells) {
  static const std::regex delim(R"(:?-+:?)");
  return std::all_of(cells.begin(), cells.end(),
                     [](const std::string& c) { return std::regex_match(c, delim); });
}

// A cell of a Markdown table: "row=NAME;col=HEADER" (the first cell is NAME) or
// "HEADER=VALUE;...;col=HEADER" (every named cell matches); the first such row of any table.
double resolve_markdown_table(const std::string& text, std::map<std::string, std::string> kv) {
  if (!kv.count("col")) throw FigureError("a Markdown table selector needs col=");
  const std::string col = kv["col"];
  kv.erase("col");
  if (kv.empty()) throw FigureError("a Markdown table selector needs row= or HEADER=VALUE");
  std::vector<std::string> lines = split(text, '\n'), header;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (!starts_with(trim(lines[i]), "|")) continue;
    if (is_delimiter_row(markdown_cells(lines[i + 1]))) {
      header = markdown_cells(lines[i++]);
      continue;
    }
    if (header.empty()) continue;
    const std::vector<std::string> cells = markdown_cells(lines[i]);
    auto cell = [&](const std::string& name) -> const std::string* {
      if (name == "row") return cells.empty() ? nullptr : &cells[0];
      auto h = std::find(header.begin(), header.end(), name);
      size_t c = static_cast<size_t>(h - header.begin());
      return h == header.end() || c >= cells.size() ? nullptr : &cells[c];
    };
    bool match = true;
    for (const auto& [k, v] : kv) match = match && cell(k) && *cell(k) == v;
    if (!match) continue;
    if (!cell(col)) throw FigureError("no column '" + col + "'");
    return parse_cell(*cell(col), col);
  }
  throw FigureError("no table row matches the selector");
}

}  // namespace

double resolve(const fs::path& root, std::string_view ref_text) {
  Ref ref = parse_ref(ref_text);
  fs::path p = source_path(root, ref.file);
  if (!fs::exists(p)) throw FigureError("missing recording " + p.lexically_relative(root).string());
  const std::string name = p.filename().string();
  double v = 0;
  if (starts_with(ref.sel, "event="))
    v = resolve_trace(p, keyvals(ref.sel));
  else if (ends_with(name, ".json"))
    v = resolve_json_file(p, ref.sel);
  else if (starts_with(ref.sel, "re="))
    v = resolve_regex(slurp(p), ref.sel.substr(3), ref.file);
  else if (ends_with(name, ".md"))
    v = resolve_markdown_table(slurp(p), keyvals(ref.sel));
  else
    v = resolve_table(slurp(p), keyvals(ref.sel));
  return v * ref.scale;
}

}  // namespace wb::figures
