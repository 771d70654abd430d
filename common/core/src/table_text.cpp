#include "workbook/table_text.hpp"

#include <algorithm>

namespace wb {

namespace {

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(' ');
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(' ') - b + 1));
}

bool is_separator(std::string_view line) {
  return !line.empty() && line[0] == '-' && line.find_first_not_of("- ") == std::string_view::npos;
}

// "Self CPU time total: 271.705us", "Self CUDA time total: 8.415us".
bool is_footer(std::string_view line) {
  const auto colon = line.find(": ");
  return colon != std::string_view::npos && colon >= 10 && line.substr(colon - 10, 10) == "time total";
}

// The lines of `text`, without their '\n' (and a '\r' before it).
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    pos = nl + 1;
  }
  return lines;
}

std::vector<std::pair<size_t, size_t>> dash_runs(std::string_view line) {
  std::vector<std::pair<size_t, size_t>> runs;
  for (size_t b = 0; (b = line.find('-', b)) != std::string_view::npos;) {
    const size_t e = std::min(line.find(' ', b), line.size());
    runs.emplace_back(b, e - b);
    b = e;
  }
  return runs;
}

// Split at runs of two or more spaces.
std::vector<std::string> header_cells(std::string_view line) {
  std::vector<std::string> cells;
  for (size_t b = line.find_first_not_of(' '); b != std::string_view::npos;
       b = line.find_first_not_of(' ', b)) {
    const size_t e = std::min(line.find("  ", b), line.size());
    cells.push_back(trim(line.substr(b, e - b)));
    b = e;
  }
  return cells;
}

}  // namespace

size_t TableText::column(std::string_view name) const {
  return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
}

std::vector<TableText> parse_table_texts(std::string_view text) {
  const std::vector<std::string_view> lines = split_lines(text);
  std::vector<TableText> tables;
  for (size_t i = 0; i + 2 < lines.size(); ++i) {
    if (!is_separator(lines[i]) || is_separator(lines[i + 1]) || !is_separator(lines[i + 2])) continue;
    TableText t;
    t.columns = dash_runs(lines[i]);
    t.header = header_cells(lines[i + 1]);
    if (t.header.size() != t.columns.size())
      throw TableTextError("line " + std::to_string(i + 2) + ": the header has " +
                           std::to_string(t.header.size()) + " columns, its dashed line " +
                           std::to_string(t.columns.size()));
    size_t k = i + 3;
    for (; k < lines.size() && !is_separator(lines[k]); ++k) {
      const std::string_view line = lines[k];
      if (trim(line).empty()) continue;
      std::vector<std::string> cells;
      for (size_t c = 0; c < t.columns.size(); ++c) {
        const size_t b = c == 0 ? 0 : t.columns[c].first;
        const size_t e = c + 1 < t.columns.size() ? t.columns[c + 1].first : line.size();
        cells.push_back(b < line.size() ? trim(line.substr(b, e - b)) : "");
      }
      t.rows.push_back(std::move(cells));
      t.row_lines.push_back(static_cast<int>(k + 1));
    }
    if (k < lines.size()) ++k;  // the closing separator
    for (; k < lines.size() && is_footer(lines[k]); ++k) t.footers.emplace_back(lines[k]);
    tables.push_back(std::move(t));
    i = k - 1;
  }
  return tables;
}

TableText parse_table_text(std::string_view text) {
  std::vector<TableText> tables = parse_table_texts(text);
  if (tables.empty()) throw TableTextError("not a profiler table (no dashed header block)");
  return std::move(tables.front());
}

}  // namespace wb
