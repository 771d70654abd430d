// Reading a key_averages table back from its text: ours (table.hpp) or Python's, in a table.txt
// or among other lines of a program's stdout. The one parser of that layout in the workbook
// (compare, figures and the golden tests read tables with it):
//
//   -------------  ------------  ...   separator: one dash run per column, each cell is
//            Name    Self CPU %  ...   right-aligned in its run and followed by two spaces
//   -------------  ------------  ...
//   aten::mm             40.32%  ...   rows: cut where the columns start (each cell runs to
//   ...                                the next column's start, so a value one or two
//   -------------  ------------  ...   characters wider than its dashes still reads whole)
//   Self CPU time total: 271.705us     footers: "... time total: VALUE" lines
//
// A header cell may be wider than its dashes ("CUDA time avg" is 13 in a 12 column, in Python
// too) and push the header cells after it right, so the header is split at runs of two or more
// spaces instead of by position.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wb {

struct TableTextError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TableText {
  std::vector<std::string> header;                 // "Name", "Self CPU %", ..., "# of Calls"
  std::vector<std::vector<std::string>> rows;      // trimmed cells, one per header column
  std::vector<int> row_lines;                      // each row's line number in the text (1-based)
  std::vector<std::string> footers;                // "Self CPU time total: 271.705us", ...
  std::vector<std::pair<size_t, size_t>> columns;  // (begin, width) of each dash run
  // The index of `name` in header, or header.size() when there is no such column.
  size_t column(std::string_view name) const;
};

// Every table in `text`, in order (a program's stdout may print several, between other
// lines); none: empty. Throws TableTextError when a table's header has another number of
// columns than its separator.
std::vector<TableText> parse_table_texts(std::string_view text);

// The first table in `text`. Throws TableTextError ("not a profiler table (no dashed header
// block)") when there is none.
TableText parse_table_text(std::string_view text);

}  // namespace wb
