// The `table` tool against Python: tests/data/python holds traces recorded by torch.profiler
// (a transformer block's training step, backward on a second thread; make_fixtures.py) and the
// tables Python printed for them, for every sort key, with and without group_by_input_shape.
// Ours must be the same bytes, from the saved trace alone.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <filesystem>
#include <set>
#include <nlohmann/json.hpp>
#include <string>

#include "gunzip.hpp"  // gunzip_file
#include "process.hpp"
#include "workbook/table.hpp"
#include "workbook/table_text.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;

namespace {

const fs::path kData = fs::path(WORKBOOK_ROOT) / "tests/data/python";

struct Case {
  std::string key;  // "<sort_by>|<row_limit>|<max_name_width>|<group_by_input_shape>"
  wb::TableOptions opts;
  wb::GroupOptions group;
  std::string python;
};

std::vector<Case> cases(const std::string& rec) {
  const auto doc = nlohmann::json::parse(gunzip_file(kData / (rec + ".tables.json.gz")));
  std::vector<Case> out;
  for (const auto& [key, text] : doc.at("tables").items()) {
    Case c;
    c.key = key;
    const auto a = key.find('|'), b = key.find('|', a + 1), d = key.find('|', b + 1);
    c.opts.sort_by = key.substr(0, a);
    c.opts.row_limit = std::stoi(key.substr(a + 1, b - a - 1));
    c.opts.max_name_width = std::stoi(key.substr(b + 1, d - b - 1));
    c.group.group_by_input_shape = key.substr(d + 1) == "1";
    c.python = text.get<std::string>();
    out.push_back(std::move(c));
  }
  return out;
}

// The first line where two texts differ, for the failure message.
std::string first_difference(const std::string& a, const std::string& b) {
  size_t line = 1, start = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i] != b[i]) {
      return "line " + std::to_string(line) + ":\n  python: " + a.substr(start, a.find('\n', start) - start) +
             "\n  ours:   " + b.substr(start, b.find('\n', start) - start);
    }
    if (a[i] == '\n') ++line, start = i + 1;
  }
  return a.size() == b.size()
             ? ""
             : "lengths differ: " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
}

}  // namespace

TEST_CASE("table: Python's bytes for every sort key, with shapes and FLOPs", "[tools][cpu][table]") {
  const wb::Trace trace = wb::read_trace(kData / "cpu_shapes_flops.json.gz");
  CHECK(trace.record_shapes);
  CHECK(trace.with_flops);
  const auto all = cases("cpu_shapes_flops");
  // Every sort key Python accepts, by itself and grouped by input shape, plus the limit cases.
  REQUIRE(all.size() >= 2 * 18);
  int grouped = 0;
  for (const Case& c : all) {
    INFO(c.key << "\n" << first_difference(c.python, wb::key_averages_table(trace, c.opts, c.group)));
    CHECK(wb::key_averages_table(trace, c.opts, c.group) == c.python);
    grouped += c.group.group_by_input_shape;
  }
  CHECK(grouped >= 18);
  // What the fixture shows: the FLOPs column and the Input Shapes column, as Python names them.
  const std::string by_shape = wb::key_averages_table(trace, {"flops", -1, 55}, {true});
  CHECK_THAT(by_shape, ContainsSubstring("Input Shapes"));
  CHECK_THAT(by_shape, ContainsSubstring("Total KFLOPs"));
  CHECK_THAT(by_shape, ContainsSubstring("[[128, 64], [4, 32], [], [], []]"));  // aten::embedding
}

TEST_CASE("table: Python's bytes on a trace without shapes or FLOPs", "[tools][cpu][table]") {
  const wb::Trace trace = wb::read_trace(kData / "cpu_plain.json.gz");
  CHECK_FALSE(trace.record_shapes);
  CHECK_FALSE(trace.with_flops);
  for (const Case& c : cases("cpu_plain")) {
    INFO(c.key << "\n" << first_difference(c.python, wb::key_averages_table(trace, c.opts, c.group)));
    CHECK(wb::key_averages_table(trace, c.opts, c.group) == c.python);
    CHECK(c.python.find("FLOPs") == std::string::npos);
  }
}

TEST_CASE("table: the training trace has its backward on a second thread", "[tools][cpu][table]") {
  // The fixture is only a hard case if it is one: autograd ops on threads other than the one
  // that ran the forward (the one holding ProfilerStep#N).
  const wb::Trace trace = wb::read_trace(kData / "cpu_shapes_flops.json.gz");
  int64_t step_tid = -1;
  for (const auto& e : trace.events)
    if (e.name.rfind("ProfilerStep#", 0) == 0) step_tid = e.tid;
  int backward_elsewhere = 0;
  for (const auto& e : trace.events)
    if (e.name.rfind("autograd::engine::evaluate_function", 0) == 0 && e.tid != step_tid)
      ++backward_elsewhere;
  CHECK(backward_elsewhere > 10);
}

TEST_CASE("table: the comparison fails on a trace that differs by one nanosecond", "[tools][cpu][table]") {
  // Byte equality is a check that can fail: one op 1 ns longer moves a printed digit.
  wb::Trace trace = wb::read_trace(kData / "cpu_plain.json.gz");
  const auto all = cases("cpu_plain");
  const Case& c = all.front();
  for (auto& e : trace.events)
    if (e.name == "aten::gelu_backward") e.dur_ns += 1;  // 3 calls, 585.298us: the total moves by 3 ns
  bool any_differs = false;
  for (const Case& k : all) any_differs |= wb::key_averages_table(trace, k.opts, k.group) != k.python;
  CHECK(any_differs);
  (void)c;
}

TEST_CASE("table: an average on a rounding boundary rounds as Python's does", "[tools][cpu][table]") {
  // The case from the issue: 48 calls whose exact mean is 8.6635us. Python sums float
  // microseconds (end_us - start_us per call, in start order), gets 8.663499999999999 and prints
  // 8.663us; rounding the exact nanoseconds (415848 / 48 = 8663.5 ns -> 8.664us) prints 8.664us,
  // as the C++ table once did. Python's text below was printed by torch 2.11's own code:
  //   from torch.autograd.profiler_util import FunctionEvent, EventList
  //   evs = [FunctionEvent(id=i + 1, name="aten::boundary", thread=1, start_us=i * 20000 / 1000,
  //                        end_us=(i * 20000 + (8663, 8664)[i % 2]) / 1000,
  //                        device_type=DeviceType.CPU, stack=[]) for i in range(48)]
  //   el = EventList(evs); el._build_tree(); el.key_averages().table(sort_by="cpu_time_total", row_limit=100)
  wb::Trace trace;
  int64_t sum_ns = 0;
  for (int i = 0; i < 48; ++i) {
    wb::Event e;
    e.name = "aten::boundary";
    e.kind = wb::Kind::CpuOp;
    e.category = "cpu_op";
    e.pid = e.tid = 1;
    e.id = i + 1;
    e.start_ns = int64_t{i} * 20000;
    e.dur_ns = i % 2 ? 8664 : 8663;
    sum_ns += e.dur_ns;
    trace.events.push_back(e);
  }
  REQUIRE(sum_ns == 415848);
  REQUIRE(sum_ns * 2 == 48 * 17327);  // the exact mean, 8663.5 ns, sits on the boundary
  // Naive rounding gives the other digit: that is what this test tells apart.
  CHECK(wb::format_time_us(static_cast<double>(sum_ns) / 48 / 1000.0) == "8.664us");
  CHECK(wb::format_time_us(static_cast<double>(sum_ns) / 1000.0 / 48) == "8.664us");

  const auto rows = wb::key_averages(trace);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].calls == 48);
  CHECK(rows[0].cpu_total_ns == 415848);
  CHECK(wb::format_time_us(rows[0].cpu_total_us / static_cast<double>(rows[0].calls)) == "8.663us");

  const std::string python =
      "------------------  ------------  ------------  ------------  ------------  ------------  "
      "------------  \n"
      "              Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of "
      "Calls  \n"
      "------------------  ------------  ------------  ------------  ------------  ------------  "
      "------------  \n"
      "    aten::boundary       100.00%     415.848us       100.00%     415.848us       8.663us            "
      "48  \n"
      "------------------  ------------  ------------  ------------  ------------  ------------  "
      "------------  \n"
      "Self CPU time total: 415.848us\n";
  const std::string ours = wb::key_averages_table(trace, {"cpu_time_total", 100, 55});
  INFO(first_difference(python, ours));
  CHECK(ours == python);
}

TEST_CASE("table: the command line prints the same bytes and refuses bad flags", "[tools][cpu][table]") {
  if (!fs::exists(proc::bin("table"))) SKIP("table not built");
  const std::string trace = (kData / "cpu_shapes_flops.json.gz").string();
  for (const Case& c : cases("cpu_shapes_flops")) {
    if (c.opts.sort_by != "self_cpu_time_total" && c.opts.sort_by != "cuda_time") continue;
    std::vector<std::string> args = {trace,
                                     "--sort-by",
                                     c.opts.sort_by,
                                     "--row-limit",
                                     std::to_string(c.opts.row_limit),
                                     "--max-name-width",
                                     std::to_string(c.opts.max_name_width)};
    if (c.group.group_by_input_shape) args.push_back("--group-by-input-shape");
    const auto r = proc::run(proc::bin("table"), args, 60);
    INFO(c.key << "\n" << r.err);
    CHECK(r.code == 0);
    CHECK(r.out == c.python);
  }
  const auto bad_sort = proc::run(proc::bin("table"), {trace, "--sort-by", "speed"}, 60);
  CHECK(bad_sort.code == 2);
  CHECK_THAT(bad_sort.err, ContainsSubstring("--sort-by"));
  CHECK_THAT(bad_sort.err, ContainsSubstring("self_cpu_time_total"));
  CHECK(proc::run(proc::bin("table"), {trace, "--max-name-width", "3"}, 60).code == 2);
  CHECK(proc::run(proc::bin("table"), {trace, "--row-limit", "-2"}, 60).code == 2);
}

TEST_CASE("table: Python's bytes on the GPU recordings (H200)", "[tools][table][cpu]") {
  // Recorded on the H200 with torch.profiler (make_fixtures.py --device cuda, run by
  // scripts/gpu/record_h200.sh test with FIXTURES=1, or scripts/gpu/python_fixtures.sh tools).
  for (const std::string rec : {"cuda_shapes_flops", "cuda_plain"}) {
    REQUIRE(fs::exists(kData / (rec + ".json.gz")));
    REQUIRE(fs::exists(kData / (rec + ".tables.json.gz")));
    const wb::Trace trace = wb::read_trace(kData / (rec + ".json.gz"));
    CHECK(trace.has_device_activity());
    for (const Case& c : cases(rec)) {
      INFO(rec << " " << c.key << "\n"
               << first_difference(c.python, wb::key_averages_table(trace, c.opts, c.group)));
      CHECK(wb::key_averages_table(trace, c.opts, c.group) == c.python);
    }
  }
}

// ---- group_by_stack_n (with_stack), on user-shaped traces ----------------------------------
namespace {
// make_user_fixtures.py's tables: "<sort_by>|<row_limit>|<group_by_stack_n>".
std::vector<Case> stack_cases(const std::string& rec) {
  const auto doc = nlohmann::json::parse(gunzip_file(kData / (rec + ".tables.json.gz")));
  std::vector<Case> out;
  for (const auto& [key, text] : doc.at("tables").items()) {
    Case c;
    c.key = key;
    const auto a = key.find('|'), b = key.find('|', a + 1);
    c.opts.sort_by = key.substr(0, a);
    c.opts.row_limit = std::stoi(key.substr(a + 1, b - a - 1));
    c.group.group_by_stack_n = std::stoi(key.substr(b + 1));
    c.python = text.get<std::string>();
    out.push_back(std::move(c));
  }
  return out;
}

void check_stack_tables(const std::string& rec, bool with_source = true) {
  const wb::Trace trace = wb::read_trace(kData / (rec + ".json.gz"));
  CHECK(trace.with_stack);
  const auto all = stack_cases(rec);
  REQUIRE(all.size() >= 5);
  int sources = 0;
  for (const Case& c : all) {
    const std::string ours = wb::key_averages_table(trace, c.opts, c.group);
    INFO(rec << " " << c.key << "\n" << first_difference(c.python, ours));
    CHECK(ours == c.python);
    sources += c.python.find("Source Location") != std::string::npos;
  }
  if (with_source)
    CHECK(sources >= 4);  // the fixture is what it claims: Python printed stacks
  else
    CHECK(sources == 0);
}
}  // namespace

TEST_CASE("table --group-by-stack-n: Python's bytes on an MLP and a ConvNet training step (CPU)",
          "[tools][cpu][table]") {
  // make_user_fixtures.py: torch.profiler(with_stack=True) on a user's training loops.
  check_stack_tables("cpu_mlp_stack");
  check_stack_tables("cpu_convnet_stack");
  // with_stack without verbose: Python keeps no stack per op and prints no Source Location.
  check_stack_tables("cpu_mlp_stack_plain", false);
}

TEST_CASE("table --group-by-stack-n: Python's bytes on the H200 recordings", "[tools][cpu][table]") {
  // Recorded by scripts/gpu/python_fixtures.sh user; skipped until those files are committed.
  if (!fs::exists(kData / "cuda_mlp_stack.tables.json.gz")) SKIP("no H200 with_stack fixture yet");
  check_stack_tables("cuda_mlp_stack");
  check_stack_tables("cuda_convnet_stack");
  check_stack_tables("cuda_mlp_stack_plain", false);
}

TEST_CASE("table --group-by-stack-n: the command line", "[tools][cpu][table]") {
  if (!fs::exists(proc::bin("table"))) SKIP("table not built");
  const std::string trace = (kData / "cpu_convnet_stack.json.gz").string();
  for (const Case& c : stack_cases("cpu_convnet_stack")) {
    if (c.opts.sort_by.empty()) continue;  // "" (no sorting) is the library's; the flag wants a key
    const auto r =
        proc::run(proc::bin("table"),
                  {trace, "--sort-by", c.opts.sort_by, "--row-limit", std::to_string(c.opts.row_limit),
                   "--group-by-stack-n", std::to_string(c.group.group_by_stack_n)},
                  60);
    INFO(c.key << "\n" << r.err);
    CHECK(r.code == 0);
    CHECK(r.out == c.python);
  }
  CHECK(proc::run(proc::bin("table"), {trace, "--group-by-stack-n", "-1"}, 60).code == 2);
  // A trace without with_stack: the same table as Python's (no Source Location), and a note.
  const auto plain =
      proc::run(proc::bin("table"), {(kData / "cpu_plain.json.gz").string(), "--group-by-stack-n", "3"}, 60);
  CHECK(plain.code == 0);
  CHECK_THAT(plain.err, ContainsSubstring("with_stack"));
  CHECK(plain.out.find("Source Location") == std::string::npos);
}

// ---- profile_memory's columns ----------------------------------------------------------------
// make_memory_fixtures.py: a training step (forward, backward, AdamW) recorded with
// profile_memory=True, and Python's tables for every sort key (the four memory ones included),
// with and without group_by_input_shape. Every <rec>.tables.json.gz in tests/data/python whose
// name holds "_memory" is checked: the CPU ones recorded here, the CUDA ones (cuda_memory*) by
// scripts/gpu/python_fixtures.sh memory on the H200.
TEST_CASE("table: Python's memory columns, byte for byte, on every profile_memory fixture",
          "[tools][cpu][table][memory]") {
  std::vector<std::string> recs;
  for (const auto& f : fs::directory_iterator(kData)) {
    const std::string name = f.path().filename().string();
    const std::string suffix = ".tables.json.gz";
    if (name.find("_memory") != std::string::npos && name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      recs.push_back(name.substr(0, name.size() - suffix.size()));
  }
  std::sort(recs.begin(), recs.end());
  INFO("fixtures: " << recs.size());
  // The two CPU recordings and the two H200 ones (tests/data/python/cuda_memory.PROVENANCE.txt);
  // a missing one is a failure, not a pass.
  REQUIRE(recs.size() >= 4);
  REQUIRE(std::count_if(recs.begin(), recs.end(),
                        [](const std::string& r) { return r.rfind("cuda", 0) == 0; }) >= 2);
  for (const std::string& rec : recs) {
    const wb::Trace trace = wb::read_trace(kData / (rec + ".json.gz"));
    CHECK(trace.profile_memory);
    CHECK(trace.has_memory_records());
    const bool cuda = rec.rfind("cuda", 0) == 0;
    CHECK(trace.has_device_activity() == cuda);
    const auto all = cases(rec);
    REQUIRE(all.size() >= 19);
    std::set<std::string> keys;
    bool negative_self = false, gigabytes = false, device_columns = false;
    for (const Case& c : all) {
      const std::string ours = wb::key_averages_table(trace, c.opts, c.group);
      INFO(rec << " " << c.key << "\n" << first_difference(c.python, ours));
      CHECK(ours == c.python);
      keys.insert(c.opts.sort_by);
      // What the fixture must exercise, read from Python's own text.
      REQUIRE_THAT(c.python, ContainsSubstring("Self CPU Mem"));
      negative_self |= c.python.find(" -") != std::string::npos;
      gigabytes |= c.python.find(" GB ") != std::string::npos;
      device_columns |= c.python.find("Self CUDA Mem") != std::string::npos;
    }
    for (const char* k :
         {"cpu_memory_usage", "self_cpu_memory_usage", "cuda_memory_usage", "self_cuda_memory_usage"})
      CHECK(keys.count(k) == 1);
    CHECK(negative_self);
    CHECK(gigabytes);
    CHECK(device_columns == cuda);
  }
}

TEST_CASE("table: memory formatting and sorting as Python's", "[tools][cpu][table][memory]") {
  CHECK(wb::format_memory(0) == "0 B");
  CHECK(wb::format_memory(-12) == "-12 B");
  CHECK(wb::format_memory(1023) == "1023 B");
  CHECK(wb::format_memory(1024) == "1.00 KB");
  CHECK(wb::format_memory(-6144) == "-6.00 KB");
  CHECK(wb::format_memory(50331648) == "48.00 MB");
  CHECK(wb::format_memory(-1258291200) == "-1.17 GB");
  // The sort keys order rows by bytes: the largest self CPU memory first, negatives last.
  const wb::Trace trace = wb::read_trace(kData / "cpu_memory.json.gz");
  const auto rows = wb::key_averages(trace);
  wb::TableOptions o;
  o.sort_by = "self_cpu_memory_usage";
  o.profile_memory = true;
  const wb::TableText t = wb::parse_table_text(wb::format_table(rows, o));
  REQUIRE(t.rows.size() > 5);
  CHECK(t.rows.front()[0] == "aten::empty");  // the 400 MB buffers
  CHECK(t.rows.back()[0] == "drop_buffer");   // frees them: -1.17 GB
  // Without profile_memory the columns stay away (a trace recorded without it).
  o.profile_memory = false;
  CHECK(wb::format_table(rows, o).find("CPU Mem") == std::string::npos);
}

TEST_CASE("table: the command line prints the memory columns without a note", "[tools][cpu][table][memory]") {
  const std::string trace = (kData / "cpu_memory.json.gz").string();
  const auto r = proc::run(
      proc::bin("table"),
      {trace, "--sort-by", "self_cpu_memory_usage", "--row-limit", "10", "--max-name-width", "30"}, 120);
  CHECK(r.code == 0);
  CHECK(r.err.find("not reproduced") == std::string::npos);
  const auto doc = nlohmann::json::parse(gunzip_file(kData / "cpu_memory.tables.json.gz"));
  CHECK(r.out == doc.at("tables").at("self_cpu_memory_usage|10|30|0").get<std::string>());
}
