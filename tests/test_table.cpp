// The key_averages table against hand-built event sets (what each column means) and against
// Python's own tables for the same traces (tests/data/table, made by generate.py there).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "workbook/table.hpp"
#include "workbook/table_text.hpp"
#include "workbook/trace_reader.hpp"

using Catch::Matchers::ContainsSubstring;
using wb::Event;
using wb::Kind;
using wb::TableRow;
using wb::Trace;

namespace {

// ---- building synthetic traces (times in microseconds, to read like the table) ------------

constexpr int64_t kUs = 1000;

Event ev(Kind kind, std::string name, double start_us, double dur_us, int64_t id = 0, int64_t linked_id = 0,
         int64_t tid = 1) {
  Event e;
  e.kind = kind;
  e.category = std::string(wb::kind_name(kind));
  e.name = std::move(name);
  e.start_ns = static_cast<int64_t>(std::llround(start_us * kUs));
  e.dur_ns = static_cast<int64_t>(std::llround(dur_us * kUs));
  e.pid = e.on_device() ? 0 : 100;  // device 0 / process 100
  e.tid = e.on_device() ? 7 : tid;  // stream 7 / thread tid
  e.id = id;
  e.linked_id = linked_id;
  return e;
}
Event op(std::string name, double start, double dur, int64_t id = 0, int64_t tid = 1) {
  return ev(Kind::CpuOp, std::move(name), start, dur, id, 0, tid);
}
Event annotation(std::string name, double start, double dur, int64_t id = 0) {
  return ev(Kind::UserAnnotation, std::move(name), start, dur, id);
}

// key_averages of a trace holding just these events.
std::vector<TableRow> averages(std::vector<Event> events) {
  Trace t;
  t.events = std::move(events);
  return wb::key_averages(t);
}

const TableRow& row(const std::vector<TableRow>& rows, const std::string& key, bool on_device = false) {
  for (const auto& r : rows)
    if (r.key == key && r.on_device == on_device) return r;
  throw std::runtime_error("no row " + key);
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, s.find_last_not_of(' ') - b + 1);
}

wb::TableText parse_table(const std::string& text) { return wb::parse_table_text(text); }

// Names of the body rows, in order.
std::vector<std::string> keys(const std::string& table) {
  std::vector<std::string> out;
  for (const auto& t : wb::parse_table_texts(table))  // "" (no rows): no table
    for (const auto& r : t.rows) out.push_back(r[0]);
  return out;
}

// The workload of the lessons, one step, with a GPU: step > matmul_add > matmul > mm > launch.
Trace gpu_step() {
  Trace t;
  t.events = {
      annotation("ProfilerStep#2", 0, 100, 1),
      annotation("matmul_add", 10, 80, 2),
      op("aten::matmul", 20, 40, 3),
      op("aten::mm", 25, 30, 4),
      ev(Kind::Driver, "cuLaunchKernelEx", 40, 10, 500, 4),
      op("aten::add", 65, 20, 5),
      ev(Kind::Runtime, "cudaLaunchKernel", 70, 10, 501, 5),
      ev(Kind::Kernel, "gemm_kernel", 55, 6, 500, 4),
      ev(Kind::Kernel, "add_kernel", 85, 2, 501, 5),
      ev(Kind::GpuUserAnnotation, "matmul_add", 50, 40, 0, 2),
  };
  return t;
}

}  // namespace

// ---- the numbers ----------------------------------------------------------------------------

TEST_CASE("self time is total minus the direct children's total", "[core][table][common][cpu]") {
  const auto rows =
      averages({annotation("ProfilerStep#1", 0, 100, 1), annotation("matmul_add", 10, 80, 2),
                op("aten::matmul", 20, 40, 3), op("aten::mm", 25, 30, 4), op("aten::add", 65, 20, 5)});
  REQUIRE(rows.size() == 5);
  CHECK(row(rows, "ProfilerStep*").self_cpu_ns == 20 * kUs);  // 100 - 80
  CHECK(row(rows, "ProfilerStep*").cpu_total_ns == 100 * kUs);
  CHECK(row(rows, "matmul_add").self_cpu_ns == 20 * kUs);    // 80 - 40 - 20
  CHECK(row(rows, "aten::matmul").self_cpu_ns == 10 * kUs);  // 40 - 30, not minus grandchildren
  CHECK(row(rows, "aten::mm").self_cpu_ns == 30 * kUs);
  // The self times add up to the root's total: every microsecond is counted once.
  int64_t self_sum = 0;
  for (const auto& r : rows) self_sum += r.self_cpu_ns;
  CHECK(self_sum == 100 * kUs);
}

TEST_CASE("nesting is per thread and needs full containment", "[core][table][common][cpu]") {
  const auto rows =
      averages({op("outer", 0, 100, 1, /*tid=*/1), op("other_thread", 10, 20, 2, /*tid=*/2),
                op("overlaps_end", 90, 20, 3, /*tid=*/1), op("inside", 20, 10, 4, /*tid=*/1),
                op("first", 0, 10, 5, /*tid=*/3), op("starts_at_its_end", 10, 5, 6, /*tid=*/3)});
  CHECK(row(rows, "outer").self_cpu_ns == 90 * kUs);  // only "inside" is its child
  CHECK(row(rows, "other_thread").self_cpu_ns == 20 * kUs);
  CHECK(row(rows, "overlaps_end").self_cpu_ns == 20 * kUs);
  CHECK(row(rows, "first").self_cpu_ns == 10 * kUs);
  CHECK(row(rows, "starts_at_its_end").self_cpu_ns == 5 * kUs);
}

TEST_CASE("device time goes to the op whose id the kernel links to", "[core][table][common][cpu]") {
  const auto rows = wb::key_averages(gpu_step());
  CHECK(row(rows, "aten::mm").self_device_ns == 6 * kUs);
  CHECK(row(rows, "aten::mm").device_total_ns == 6 * kUs);
  CHECK(row(rows, "aten::matmul").self_device_ns == 0);  // launched nothing itself
  CHECK(row(rows, "aten::matmul").device_total_ns == 6 * kUs);
  CHECK(row(rows, "ProfilerStep*").device_total_ns == 8 * kUs);
  CHECK(row(rows, "matmul_add").device_total_ns == 8 * kUs);  // its GPU twin is not added
  CHECK(row(rows, "gemm_kernel", true).self_device_ns == 6 * kUs);
  CHECK(row(rows, "gemm_kernel", true).cpu_total_ns == 0);
  // The launch call is a CPU child of aten::mm: mm's self CPU excludes it.
  CHECK(row(rows, "aten::mm").self_cpu_ns == 20 * kUs);
  CHECK(row(rows, "cuLaunchKernelEx").self_device_ns == 0);
}

TEST_CASE("a launch call recorded on another thread id still nests under its op",
          "[core][table][common][cpu]") {
  Trace t = gpu_step();
  for (auto& e : t.events)
    if (e.kind == Kind::Driver) e.tid = 99;
  CHECK(row(wb::key_averages(t), "aten::mm").self_cpu_ns == 20 * kUs);
}

TEST_CASE("the GPU-side annotation is its own row, Self CUDA % over 100 like Python",
          "[core][table][common][cpu]") {
  const auto rows = wb::key_averages(gpu_step());
  const auto& gpu = row(rows, "matmul_add", true);
  CHECK(gpu.is_user_annotation);
  CHECK(gpu.self_device_ns == 40 * kUs);
  CHECK(row(rows, "matmul_add", false).cpu_total_ns == 80 * kUs);
  // Denominator: kernels only (8 us); the 40 us annotation row shows 500%.
  const std::string table = wb::format_table(rows, {"cuda_time_total", -1, 55});
  CHECK_THAT(table, ContainsSubstring("500.00%"));
  CHECK_THAT(table, ContainsSubstring("Self CUDA time total: 8.000us\n"));
}

TEST_CASE("rows group by name, device side and annotation flag", "[core][table][common][cpu]") {
  const auto rows = averages({annotation("ProfilerStep#1", 0, 10, 1), annotation("ProfilerStep#2", 20, 10, 2),
                              annotation("x", 40, 5, 3), op("x", 50, 5, 4), op("x", 60, 5, 5)});
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].key == "ProfilerStep*");
  CHECK(rows[0].calls == 2);
  CHECK((rows[1].key == "x" && rows[1].is_user_annotation && rows[1].calls == 1));
  CHECK((rows[2].key == "x" && !rows[2].is_user_annotation && rows[2].calls == 2));
}

TEST_CASE("what Python leaves out of the table", "[core][table][common][cpu]") {
  Trace t;
  t.events = {op("aten::mul", 0, 10, 1),
              op("aten::is_leaf", 1, 1, 2),
              op("profiler::_record_function_enter_new", 2, 1, 3),
              op("aten::_version", 3, 1, 4),
              ev(Kind::Instant, "[memory]", 4, 0),
              ev(Kind::Trace, "PyTorch Profiler (0)", 0, 20),
              ev(Kind::Instant, "Iteration Start: PyTorch Profiler", 0, 0)};
  Event py = op("<built-in method mul>", 0, 10);
  py.kind = Kind::Other;
  py.category = "python_function";
  Event buffer = op("Activity Buffer Request", 12, 3);  // CUPTI overhead: Python keeps it
  buffer.kind = Kind::Other;
  buffer.category = "overhead";
  t.events.push_back(py);
  t.events.push_back(buffer);
  const auto rows = wb::key_averages(t);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].key == "aten::mul");
  CHECK(rows[0].self_cpu_ns == 10 * kUs);  // filtered children do not count as children
  CHECK(rows[1].key == "Activity Buffer Request");
  CHECK(rows[1].self_cpu_ns == 3 * kUs);
  CHECK(wb::is_filtered_name("aten::output_nr"));
  CHECK_FALSE(wb::is_filtered_name("aten::add"));
}

TEST_CASE("a same-name only child is merged into its parent, as Python does", "[core][table][common][cpu]") {
  const auto rows =
      averages({annotation("dup", 0, 10, 1), annotation("dup", 1, 8, 2), op("aten::mul", 2, 4, 3),
                annotation("pair", 20, 10, 4), annotation("pair", 21, 3, 5), op("aten::add", 25, 4, 6)});
  CHECK(row(rows, "dup").calls == 1);
  CHECK(row(rows, "dup").self_cpu_ns == 6 * kUs);  // 10 - 4: the merged child's self time too
  CHECK(row(rows, "pair").calls == 2);             // two children: no merge
}

TEST_CASE("async events have a total but no self time", "[core][table][common][cpu]") {
  std::vector<Event> events = {op("outer", 0, 10, 1), op("async_op", 2, 4, 2)};
  events[1].is_async = true;
  const auto rows = averages(events);
  CHECK(row(rows, "outer").self_cpu_ns == 10 * kUs);
  CHECK(row(rows, "async_op").self_cpu_ns == 0);
  CHECK(row(rows, "async_op").cpu_total_ns == 4 * kUs);
  CHECK(row(rows, "async_op").is_async);
}

// ---- the text --------------------------------------------------------------------------------

TEST_CASE("times and shares are formatted like Python", "[core][table][common][cpu]") {
  CHECK(wb::format_time_us(0) == "0.000us");
  CHECK(wb::format_time_us(999.999) == "999.999us");
  CHECK(wb::format_time_us(999.9996) == "1000.000us");  // the unit is chosen before rounding
  CHECK(wb::format_time_us(1000) == "1.000ms");
  CHECK(wb::format_time_us(123456.7) == "123.457ms");
  CHECK(wb::format_time_us(999999) == "999.999ms");
  CHECK(wb::format_time_us(1e6) == "1.000s");
  CHECK(wb::format_time_us(12.5e6) == "12.500s");
  CHECK(wb::format_time_share(1, 3) == "33.33%");
  CHECK(wb::format_time_share(2, 1) == "200.00%");
  CHECK(wb::format_time_share(0, 0) == "NaN");
}

TEST_CASE("a whole CPU table, byte for byte", "[core][table][common][cpu]") {
  Trace t;
  t.events = {annotation("ProfilerStep#1", 0, 100, 1), op("aten::mm", 10, 50, 2), op("aten::add", 70, 20, 3),
              op("aten::add", 95, 2.5, 4)};
  const std::string expected =
      "-----------------  ------------  ------------  ------------  ------------  ------------  ------------ "
      " \n"
      "             Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls "
      " \n"
      "-----------------  ------------  ------------  ------------  ------------  ------------  ------------ "
      " \n"
      "    ProfilerStep*        27.50%      27.500us       100.00%     100.000us     100.000us             1 "
      " \n"
      "         aten::mm        50.00%      50.000us        50.00%      50.000us      50.000us             1 "
      " \n"
      "        aten::add        22.50%      22.500us        22.50%      22.500us      11.250us             2 "
      " \n"
      "-----------------  ------------  ------------  ------------  ------------  ------------  ------------ "
      " \n"
      "Self CPU time total: 100.000us\n";
  CHECK(wb::key_averages_table(t) == expected);
}

TEST_CASE("CUDA columns and footer appear only with device time", "[core][table][common][cpu]") {
  const std::string gpu = wb::key_averages_table(gpu_step());
  CHECK_THAT(gpu, ContainsSubstring("   Self CUDA   Self CUDA %    CUDA total  CUDA time avg"));
  CHECK_THAT(gpu, ContainsSubstring("Self CUDA time total: 8.000us"));
  Trace cpu;
  cpu.events = {op("aten::mm", 0, 5, 1)};
  const std::string table = wb::key_averages_table(cpu);
  CHECK_THAT(table, !ContainsSubstring("CUDA"));
  CHECK(wb::format_table({}) == "");
}

TEST_CASE("sort keys, ties in first-seen order, row limit", "[core][table][common][cpu]") {
  const auto rows = wb::key_averages(gpu_step());
  using V = std::vector<std::string>;
  CHECK(keys(wb::format_table(rows, {"cpu_time_total", 3, 55})) ==
        V{"ProfilerStep*", "matmul_add", "aten::matmul"});
  CHECK(keys(wb::format_table(rows, {"self_cuda_time_total", 4, 55})) ==
        V{"matmul_add", "aten::mm", "gemm_kernel", "aten::add"});
  CHECK(keys(wb::format_table(rows, {"device_time_total", 2, 55})) == V{"matmul_add", "ProfilerStep*"});
  // Self CPU: ProfilerStep*, matmul_add and aten::mm tie at 20 us and keep first-seen order.
  CHECK(keys(wb::format_table(rows, {"self_cpu_time_total", 3, 55})) ==
        V{"ProfilerStep*", "matmul_add", "aten::mm"});
  CHECK(keys(wb::format_table(rows, {"count", -1, 55})).size() == rows.size());
  CHECK(keys(wb::format_table(rows, {"count", 0, 55})).empty());
  // "" keeps key_averages order: first seen by start time.
  CHECK(keys(wb::format_table(rows, {"", 2, 55})) == V{"ProfilerStep*", "matmul_add"});
}

TEST_CASE("an unknown sort key is refused with the accepted ones", "[core][table][common][cpu]") {
  const auto rows = wb::key_averages(gpu_step());
  CHECK_THROWS_AS(wb::format_table(rows, {"cpu_times", -1, 55}), std::invalid_argument);
  CHECK_NOTHROW(wb::format_table(rows, {"cpu_time", -1, 55}));  // the average: Python accepts it
  CHECK_THROWS_WITH(wb::format_table(rows, {"total", -1, 55}),
                    ContainsSubstring("cpu_time_total, cuda_time_total, self_cpu_time_total, "
                                      "self_cuda_time_total, count"));
  CHECK_THROWS_AS(wb::format_table(rows, {"count", -1, 2}), std::invalid_argument);
}

TEST_CASE("long names are cut to the column with ...", "[core][table][common][cpu]") {
  const std::string n51(51, 'a'), n52(52, 'b'), n60(60, 'c');
  Trace t;
  t.events = {op(n51, 0, 3, 1), op(n52, 10, 2, 2), op(n60, 20, 1, 3)};
  const auto names = keys(wb::key_averages_table(t));
  REQUIRE(names.size() == 3);
  CHECK(names[0] == n51);
  CHECK(names[1] == n52 + "...");  // Python's >= : nothing cut, "..." added
  CHECK(names[2] == std::string(52, 'c') + "...");
  // The name column is as wide as the longest name + 4, at most 55.
  Trace small;
  small.events = {op("aten::mm", 0, 1, 1)};
  CHECK(wb::key_averages_table(small).rfind(std::string(12, '-') + "  ", 0) == 0);
  CHECK(wb::key_averages_table(t).rfind(std::string(55, '-') + "  ", 0) == 0);
}

// ---- golden: Python's tables for real traces ---------------------------------------------------

namespace {

const std::string kData = std::string(WORKBOOK_ROOT) + "/tests/data/table/";

// The fixture through the workbook's reader (which undoes Kineto's 1 ns padding of GPU-side
// annotations, so the golden comparison is exact).
Trace load_fixture(const std::string& path) { return wb::read_trace(path); }

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path + " (run generate.py)");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "12.345us" / "1.234ms" / "1.234s" -> microseconds, and the size of the last printed digit.
bool parse_time(const std::string& s, double& us, double& resolution) {
  const auto unit = s.find_first_not_of("0123456789.-");
  if (unit == 0 || unit == std::string::npos) return false;
  const std::string u = s.substr(unit);
  const double scale = u == "us" ? 1 : u == "ms" ? 1e3 : u == "s" ? 1e6 : 0;
  if (scale == 0) return false;
  us = std::stod(s.substr(0, unit)) * scale;
  resolution = 0.001 * scale;
  return true;
}

// Python's table vs ours: byte for byte. The table keeps Python's float microseconds next to its
// integer nanoseconds and prints those (table.hpp), so a value on a rounding boundary (an average
// of 3.0735 us) rounds as Python's does and every golden in tests/data/table matches exactly.
// Returns what differs, cell by cell where the layout agrees; empty = identical text.
std::vector<std::string> compare_tables(const std::string& python, const std::string& ours) {
  const wb::TableText a = parse_table(python), b = parse_table(ours);
  std::vector<std::string> diffs;
  if (a.header != b.header) diffs.push_back("headers differ");
  if (a.rows.size() != b.rows.size())
    diffs.push_back("row count: python " + std::to_string(a.rows.size()) + " vs ours " +
                    std::to_string(b.rows.size()));
  for (size_t r = 0; r < std::min(a.rows.size(), b.rows.size()) && a.header == b.header; ++r) {
    const std::string where = "row " + std::to_string(r + 1) + " (" + a.rows[r][0] + ")";
    for (size_t c = 0; c < a.header.size(); ++c)
      if (a.rows[r][c] != b.rows[r][c])
        diffs.push_back(where + " " + a.header[c] + ": python '" + a.rows[r][c] + "' vs ours '" +
                        b.rows[r][c] + "'");
  }
  if (a.footers.size() != b.footers.size()) diffs.push_back("footer count differs");
  for (size_t f = 0; f < std::min(a.footers.size(), b.footers.size()); ++f)
    if (a.footers[f] != b.footers[f])
      diffs.push_back("footer '" + a.footers[f] + "' vs '" + b.footers[f] + "'");
  if (diffs.empty() && python != ours) diffs.push_back("same cells, but the text differs (spacing or lines)");
  return diffs;
}

struct Golden {
  std::string trace, table, sort_by;
  int row_limit;
};
const Golden kGolden[] = {
    {"cpu_trace.json", "cpu_by_cpu_time_total.txt", "cpu_time_total", -1},
    {"cpu_trace.json", "cpu_by_count.txt", "count", -1},
    {"cpu_trace.json", "cpu_by_self_cpu_time_total_top8.txt", "self_cpu_time_total", 8},
    {"cuda_trace.json", "cuda_by_cuda_time_total.txt", "cuda_time_total", -1},
    {"cuda_trace.json", "cuda_by_self_cuda_time_total_top10.txt", "self_cuda_time_total", 10},
    {"cuda_trace.json", "cuda_by_count.txt", "count", -1},
    {"cuda_cold_trace.json", "cuda_cold_by_cpu_time_total.txt", "cpu_time_total", -1},
};

// Rewrites one cell of a table in place (right-aligned in the same span), to make a wrong
// table from a right one.
std::string with_cell(const std::string& text, const std::string& row_name, const std::string& header,
                      std::string value) {
  const wb::TableText t = parse_table(text);
  const auto& spans = t.columns;
  const size_t col = t.column(header);
  REQUIRE(col < spans.size());
  const auto [begin, width] = spans[col];
  if (value.size() < width) value.insert(0, width - value.size(), ' ');
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.rfind("---", 0) != 0 && trim(line.substr(0, spans[0].second)) == row_name)
      line.replace(begin, width, value);
    out += line + "\n";
  }
  return out;
}

std::string cell(const std::string& text, const std::string& row_name, const std::string& header) {
  const wb::TableText t = parse_table(text);
  const size_t col = t.column(header);
  for (const auto& r : t.rows)
    if (r[0] == row_name && col < r.size()) return r[col];
  return "";
}

}  // namespace

TEST_CASE("our table matches Python's for the same trace", "[core][table][golden][common][cpu]") {
  for (const auto& g : kGolden) {
    INFO(g.table);
    const Trace trace = load_fixture(kData + g.trace);
    const std::string python = read_text(kData + g.table);
    const std::string ours = wb::key_averages_table(trace, {g.sort_by, g.row_limit, 55});
    const auto diffs = compare_tables(python, ours);
    for (const auto& d : diffs) UNSCOPED_INFO(d);
    CHECK(diffs.empty());
    CHECK(parse_table(ours).rows.size() > 5);  // a real table, not two empty ones
  }
}

TEST_CASE("the golden comparison catches a wrong table", "[core][table][golden][common][cpu]") {
  const Trace trace = load_fixture(kData + "cuda_trace.json");
  const std::string python = read_text(kData + "cuda_by_cuda_time_total.txt");
  const std::string ours = wb::key_averages_table(trace, {"cuda_time_total", -1, 55});
  REQUIRE(compare_tables(python, ours).empty());

  // One call more on one row.
  CHECK_FALSE(compare_tables(with_cell(python, "aten::mm", "# of Calls", "10"), ours).empty());
  // A renamed row.
  CHECK_FALSE(compare_tables(with_cell(python, "aten::mm", "Name", "aten::bmm"), ours).empty());
  // A time off by 5 us, a share off by 0.05 points.
  CHECK_FALSE(compare_tables(with_cell(python, "aten::mm", "CPU total", "999.000us"), ours).empty());
  CHECK_FALSE(compare_tables(with_cell(python, "aten::mm", "Self CUDA %", "50.84%"), ours).empty());
  // Rows in another order, a row missing, a footer changed.
  CHECK_FALSE(compare_tables(python, wb::key_averages_table(trace, {"count", -1, 55})).empty());
  CHECK_FALSE(compare_tables(python, wb::key_averages_table(trace, {"cuda_time_total", 10, 55})).empty());
  std::string footer = python;
  const size_t at = footer.find("Self CUDA time total: ");
  footer.replace(at, footer.find('\n', at) - at, "Self CUDA time total: 1.000ms");
  CHECK_FALSE(compare_tables(footer, ours).empty());
  // No tolerance: a time one unit off in its last digit is a difference too.
  const std::string mm_total = cell(python, "aten::mm", "CPU total");
  INFO("aten::mm CPU total " << mm_total);
  double us = 0, res = 0;
  REQUIRE(parse_time(mm_total, us, res));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3fus", us + res);
  CHECK_FALSE(compare_tables(with_cell(python, "aten::mm", "CPU total", buf), ours).empty());
}
