#include "workbook/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "workbook/fs_util.hpp"
#include "workbook/peaks.hpp"
#include "workbook/table.hpp"
#include "workbook/table_text.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace wb {

namespace {

constexpr std::uintmax_t kMaxTextBytes = 64u << 20;  // tables and lessons.json are small

std::string read_text(const fs::path& p) {
  std::error_code ec;
  const auto size = fs::file_size(p, ec);
  if (ec) throw CompareError(fmt::format("{}: cannot read: {}", p.string(), ec.message()));
  if (size > kMaxTextBytes)
    throw CompareError(fmt::format("{}: {} bytes is too large for this file", p.string(), size));
  try {
    return read_file(p);
  } catch (const std::runtime_error&) {
    throw CompareError(fmt::format("{}: cannot open", p.string()));
  }
}

// One side of the comparison: its lessons (judged by the chapter spec) and table.
struct Side {
  std::optional<LessonsReport> lessons;
  std::optional<std::vector<TableLine>> table;
  std::optional<Trace> trace;
};

// Loads a folder the way a chapter writes it. `who` names the side in messages.
Side load_side(const fs::path& dir, const std::string& chapter, const FactOptions& defaults,
               const std::string& who) {
  Side s;
  if (!fs::is_directory(dir))
    throw CompareError(fmt::format("{}: {} folder does not exist", dir.string(), who));
  const fs::path trace_file = find_trace_file(dir);
  const fs::path lessons_file = dir / "lessons.json";
  const fs::path table_file = dir / "table.txt";
  if (trace_file.empty() && !fs::exists(lessons_file) && !fs::exists(table_file))
    throw CompareError(
        fmt::format("{}: {} has no trace.json[.gz], lessons.json or table.txt", dir.string(), who));
  std::optional<LessonsReport> recorded;
  if (fs::exists(lessons_file)) {
    try {
      recorded = lessons_from_json(json::parse(read_text(lessons_file)));
    } catch (const std::exception& e) {  // json::parse_error or a report missing fields
      throw CompareError(
          fmt::format("{}: {} lessons.json is corrupt: {}", lessons_file.string(), who, e.what()));
    }
  }
  if (!trace_file.empty()) {
    try {
      s.trace = read_trace(trace_file);
    } catch (const TraceError& e) {
      throw CompareError(fmt::format("{} trace is unreadable: {}", who, e.what()));
    }
    // Judge both sides with today's spec, on the problem size the run recorded.
    const LessonSpec* spec = find_lesson_spec(chapter);
    if (spec) {
      FactOptions o = recorded ? recorded->options : defaults;
      if (defaults.problem.n > 0 && !recorded) o.problem = defaults.problem;
      const TraceModel m(*s.trace);
      // A run compared with a second one (chapter 03) keeps that trace next to its own.
      std::optional<Trace> ref_trace;
      std::optional<TraceModel> ref_model;
      // The recorder gzips big traces: look for the .gz too.
      fs::path ref_file = o.reference_file.empty() ? fs::path() : dir / o.reference_file;
      if (!ref_file.empty() && !fs::exists(ref_file) && fs::exists(ref_file.string() + ".gz"))
        ref_file += ".gz";
      if (!ref_file.empty() && !fs::exists(ref_file))
        throw CompareError(fmt::format("{}: {} names the reference trace {}, which is missing", dir.string(),
                                       who, o.reference_file));
      if (!ref_file.empty()) {
        try {
          ref_trace = read_trace(ref_file);
        } catch (const TraceError& e) {
          throw CompareError(fmt::format("{} reference trace is unreadable: {}", who, e.what()));
        }
        ref_model.emplace(*ref_trace);
        o.reference = &*ref_model;
      }
      s.lessons = check_lessons(m, *spec, o);
    }
  }
  if (!s.lessons && recorded) s.lessons = std::move(recorded);
  if (fs::exists(table_file)) s.table = parse_table_calls(read_text(table_file), table_file.string());
  return s;
}

std::string join_names(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string calls_text(int64_t c) { return c < 0 ? "-" : std::to_string(c); }

std::string row_state(const TableDiffRow& t) {
  const bool one_side = t.learner_calls < 0 || t.reference_calls < 0;
  const bool drained = !t.same() && t.launched_known();
  std::string s = t.same() ? "ok"
                  : drained && t.learner_launched == t.reference_launched
                      ? fmt::format("ok, {} launched in each window", t.learner_launched)
                  : t.matches() ? fmt::format(
                                      "ok, within {:.0f}% or 1 call: GPU work or a CUDA call whose "
                                      "count depends on timing",
                                      100 * kTimingCallTolerance)
                  : one_side ? (t.learner_calls < 0 ? "only in reference" : "only in yours")
                             : "calls differ";
  if (drained && t.learner_launched != t.reference_launched)
    s += fmt::format(" ({} against {} launched in the window)", t.learner_launched, t.reference_launched);
  if (drained && (t.learner_launched != t.learner_calls || t.reference_launched != t.reference_calls))
    s += "; the rest ran for launches made before the window opened (a warm-up replay still draining)";
  if (one_side && t.matches())
    s += t.learner_calls < 0 ? "; none in your trace" : "; none in the reference's trace";
  if (!t.learner_name.empty()) s += "; yours names it '" + t.learner_name + "'";
  if (t.learner_below_cut) s += "; below your table's cut, counted in your trace";
  if (t.reference_below_cut) s += "; below the reference table's cut, counted in its trace";
  return s;
}

// Every row of a side's trace as its table would name it (cut to the Name column), with its
// calls; the rows its table shows are taken out, so what is left is below the table's cut.
struct FullRow {
  std::string name;
  int64_t calls = 0;
  bool timing = false;  // device work or a CUDA API call (TableDiffRow::timing_dependent)
  bool used = false;
  int64_t launched = -1;  // device rows: the calls whose launch is in the trace (else -1)
};

// The trace without the device work whose launch call is not in it: a CUDA graph replay (or any
// launch) made before the window opened can still be running when it opens, and how much of it
// the trace (and so the table) holds depends on how far the GPU trailed the CPU. What was
// launched inside the window does not.
Trace launched_only(const Trace& t) {
  std::set<int64_t> launches;  // CUPTI correlation ids of the runtime and driver calls
  for (const Event& e : t.events)
    if (e.kind == Kind::Runtime || e.kind == Kind::Driver) launches.insert(e.id);
  Trace out = t;
  out.events.erase(
      std::remove_if(out.events.begin(), out.events.end(),
                     [&](const Event& e) {
                       return (e.kind == Kind::Kernel || e.kind == Kind::Memcpy || e.kind == Kind::Memset) &&
                              !launches.count(e.id);
                     }),
      out.events.end());
  return out;
}

// A side's rows as its trace holds them: every row of the trace as its table would name it (cut
// to the Name column), with its calls; the rows its table shows are marked used, so what is left
// is below the table's cut. `shown_launched[i]` is the launched count of the table's line i
// (-1 where it is no device row, or its name and calls are not the trace's).
struct TraceRows {
  std::vector<FullRow> rows;
  std::vector<int64_t> shown_launched;
};
TraceRows rows_of_trace(const Side& s) {
  TraceRows out;
  if (s.table) out.shown_launched.assign(s.table->size(), -1);
  if (!s.trace) return out;
  std::vector<FullRow>& rows = out.rows;
  const int width = TableOptions{}.max_name_width;  // the chapters' table.txt: the default
  std::set<std::string> api;                        // CUDA runtime and driver calls, as the table names them
  for (const Event& e : s.trace->events)
    if (e.kind == Kind::Runtime || e.kind == Kind::Driver) api.insert(table_name_cell(e.name, width));
  std::map<std::string, int64_t> launched;  // a device row's key -> its calls launched in the trace
  for (const TableRow& r : key_averages(launched_only(*s.trace)))
    if (r.on_device) launched[r.key] += r.calls;
  for (const TableRow& r : key_averages(*s.trace)) {
    std::string name = table_name_cell(r.key, width);
    const bool timing = r.on_device || api.count(name) > 0;
    const auto l = launched.find(r.key);
    rows.push_back({std::move(name), r.calls, timing, false,
                    r.on_device ? (l == launched.end() ? 0 : l->second) : int64_t{-1}});
  }
  if (s.table)
    for (size_t i = 0; i < s.table->size(); ++i)
      for (FullRow& f : rows)
        if (!f.used && f.name == (*s.table)[i].name && f.calls == (*s.table)[i].calls) {
          f.used = true;
          out.shown_launched[i] = f.launched;
          break;
        }
  return out;
}

// Kineto labels a memset or memcpy by its memory kinds: "Memset (Device)", "Memset (Unknown)",
// "Memcpy HtoD (Pageable -> Device)". The same copy may carry another label in another run.
std::string copy_family(const std::string& name) {
  if (name.rfind("Memset (", 0) != 0 && name.rfind("Memcpy ", 0) != 0) return "";
  return name.substr(0, name.find(" ("));
}

// Of the rows still free, the one named `name` (or, with `family`, of the same copy family)
// whose calls are closest to `calls`; nullopt if none.
template <class Row, class IsFree, class NameOf>
std::optional<size_t> closest(const std::vector<Row>& rows, IsFree is_free, const std::string& name,
                              int64_t calls, bool family, NameOf name_of) {
  std::optional<size_t> best;
  const std::string fam = family ? copy_family(name) : "";
  if (family && fam.empty()) return best;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!is_free(i)) continue;
    const std::string& n = name_of(rows[i]);
    if (family ? copy_family(n) != fam : n != name) continue;
    const int64_t c = rows[i].calls;
    if (!best || std::llabs(c - calls) < std::llabs(rows[*best].calls - calls)) best = i;
  }
  return best;
}

// The table comparison: names and call counts. A reference row pairs with your row of the same
// name (of several, the closest count), else with one of the same memset/memcpy family, else
// with the row of that name below your table's cut; your rows left over likewise look below the
// reference's cut.
std::vector<TableDiffRow> compare_tables(const Side& mine, const Side& ref) {
  std::vector<TableDiffRow> out;
  const auto& yours = *mine.table;
  std::vector<bool> used(yours.size(), false);
  TraceRows mine_trace = rows_of_trace(mine), ref_trace = rows_of_trace(ref);
  std::vector<FullRow>&mine_rest = mine_trace.rows, &ref_rest = ref_trace.rows;
  // A device row that one side lacks was launched 0 times there, when that side was traced.
  auto absent = [](TableDiffRow& row) {
    if (row.learner_calls < 0 && row.learner_traced && row.reference_launched >= 0) row.learner_launched = 0;
    if (row.reference_calls < 0 && row.reference_traced && row.learner_launched >= 0)
      row.reference_launched = 0;
  };
  auto line_name = [](const TableLine& l) -> const std::string& { return l.name; };
  auto full_name = [](const FullRow& f) -> const std::string& { return f.name; };
  auto your_free = [&](size_t i) { return !used[i]; };
  auto mine_free = [&](size_t i) { return !mine_rest[i].used; };
  auto ref_free = [&](size_t i) { return !ref_rest[i].used; };
  auto is_timing = [&](const std::string& name) {
    for (const auto* v : {&mine_rest, &ref_rest})
      for (const auto& f : *v)
        if (f.name == name && f.timing) return true;
    return false;
  };
  for (size_t j = 0; j < ref.table->size(); ++j) {
    const TableLine& want = (*ref.table)[j];
    TableDiffRow row{want.name, -1, want.calls};
    row.reference_launched = ref_trace.shown_launched[j];
    auto i = closest(yours, your_free, want.name, want.calls, false, line_name);
    if (!i) {
      if ((i = closest(yours, your_free, want.name, want.calls, true, line_name)))
        row.learner_name = yours[*i].name;
    }
    if (i) {
      used[*i] = true;
      row.learner_calls = yours[*i].calls;
      row.learner_launched = mine_trace.shown_launched[*i];
    } else if (auto f = closest(mine_rest, mine_free, want.name, want.calls, false, full_name)) {
      mine_rest[*f].used = true;
      row.learner_calls = mine_rest[*f].calls;
      row.learner_launched = mine_rest[*f].launched;
      row.learner_below_cut = true;
    }
    row.timing_dependent = is_timing(want.name);
    row.learner_traced = mine.trace.has_value();
    absent(row);
    out.push_back(std::move(row));
  }
  for (size_t i = 0; i < yours.size(); ++i) {
    if (used[i]) continue;
    TableDiffRow row{yours[i].name, yours[i].calls, -1};
    row.learner_launched = mine_trace.shown_launched[i];
    if (auto f = closest(ref_rest, ref_free, yours[i].name, yours[i].calls, false, full_name)) {
      ref_rest[*f].used = true;
      row.reference_calls = ref_rest[*f].calls;
      row.reference_launched = ref_rest[*f].launched;
      row.reference_below_cut = true;
    }
    row.timing_dependent = is_timing(yours[i].name);
    row.reference_traced = ref.trace.has_value();
    absent(row);
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace

std::vector<TableLine> parse_table_calls(std::string_view text, const std::string& source) {
  TableText t;
  try {
    t = parse_table_text(text);
  } catch (const TableTextError& e) {
    throw CompareError(fmt::format("{}: {}", source, e.what()));
  }
  const size_t calls_col = t.column("# of Calls");
  if (t.header.empty() || t.header.front() != "Name" || calls_col == t.header.size())
    throw CompareError(fmt::format("{}: table header lacks 'Name' or '# of Calls'", source));
  std::vector<TableLine> rows;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    TableLine row{t.rows[r].front(), 0};
    const std::string& calls = t.rows[r][calls_col];
    const auto res = std::from_chars(calls.data(), calls.data() + calls.size(), row.calls);
    if (calls.empty() || res.ec != std::errc() || res.ptr != calls.data() + calls.size())
      throw CompareError(
          fmt::format("{}: line {}: '# of Calls' is '{}', not a number", source, t.row_lines[r], calls));
    rows.push_back(std::move(row));
  }
  return rows;
}

int CompareReport::lessons_agree() const {
  return static_cast<int>(
      std::count_if(lessons.begin(), lessons.end(), [](const LessonDiffRow& l) { return l.agree(); }));
}
bool TableDiffRow::matches() const {
  if (same()) return true;
  if (!timing_dependent) return false;
  // A row only on one side counts as 0 calls on the other when that side's trace has none.
  int64_t mine = learner_calls < 0 && learner_traced ? 0 : learner_calls;
  int64_t ref = reference_calls < 0 && reference_traced ? 0 : reference_calls;
  if (launched_known()) {  // device work: only what each window launched
    mine = learner_launched;
    ref = reference_launched;
  }
  if (mine < 0 || ref < 0) return false;
  const int64_t most = std::max(mine, ref);
  const double allowed = std::max(1.0, kTimingCallTolerance * static_cast<double>(most));
  return static_cast<double>(std::llabs(mine - ref)) <= allowed;
}

int CompareReport::table_same() const {
  return static_cast<int>(
      std::count_if(table.begin(), table.end(), [](const TableDiffRow& t) { return t.matches(); }));
}
bool CompareReport::ok() const {
  return lessons_agree() == static_cast<int>(lessons.size()) &&
         table_same() == static_cast<int>(table.size());
}

std::string detect_platform(const Trace& t) {
  // Kineto lists the machine's GPUs in deviceProperties even when the run stayed on the CPU
  // (--device cpu on a GPU machine): what ran decides, not what was installed.
  if (!t.has_device_activity()) return "cpu";
  return t.devices.empty() ? "unknown-gpu" : platform_key(t.devices.front().name);
}

fs::path find_trace_file(const fs::path& dir) {
  for (const char* name : {"trace.json", "trace.json.gz"})
    if (fs::is_regular_file(dir / name)) return dir / name;
  return {};
}

namespace {
// ROOT/PLATFORM/CHAPTER, or a CompareError that lists the platforms that were recorded.
fs::path reference_dir(const fs::path& root, const std::string& platform, const std::string& platform_reason,
                       const std::string& chapter) {
  const fs::path dir = root / platform / chapter;
  if (fs::is_directory(dir)) return dir;
  std::vector<std::string> have;
  std::error_code ec;
  for (const auto& d : fs::directory_iterator(root, ec))
    if (d.is_directory()) have.push_back(d.path().filename().string());
  std::sort(have.begin(), have.end());
  throw CompareError(fmt::format(
      "no reference output for platform '{}' ({}) and chapter '{}': {} does not exist "
      "(platforms recorded: {})",
      platform, platform_reason, chapter, dir.string(), have.empty() ? "none" : join_names(have)));
}

bool has_run_files(const fs::path& dir) {
  return !find_trace_file(dir).empty() || fs::exists(dir / "lessons.json") || fs::exists(dir / "table.txt");
}
}  // namespace

fs::path check_reference(const std::string& chapter, const std::string& platform,
                         const std::string& platform_reason, const fs::path& expected_root) {
  const fs::path dir = reference_dir(expected_root, platform, platform_reason, chapter);
  // The chapter's own files, and those of its variants (chapter 05: one subfolder each).
  std::vector<fs::path> sides;
  if (has_run_files(dir)) sides.push_back(dir);
  std::error_code ec;
  for (const auto& d : fs::directory_iterator(dir, ec))
    if (d.is_directory() && has_run_files(d.path())) sides.push_back(d.path());
  if (sides.empty())
    throw CompareError(
        fmt::format("{}: the reference has no trace.json[.gz], lessons.json or "
                    "table.txt (nor a variant folder with them)",
                    dir.string()));
  for (const fs::path& side : sides) {
    const std::string key = side == dir ? chapter : chapter + "/" + side.filename().string();
    load_side(side, key, FactOptions{}, "the reference");
  }
  return dir;
}

std::vector<LessonDiffRow> compare_lessons(const LessonsReport& mine, const LessonsReport& ref) {
  // Matched by position within each fact id (a spec may judge a fact twice).
  std::vector<LessonDiffRow> rows;
  std::vector<bool> used(ref.facts.size(), false);
  for (const auto& f : mine.facts) {
    LessonDiffRow row{
        f.id, f.title, f.pattern.text, f.value, "(not in reference)", f.status, Status::NotApplicable};
    for (size_t i = 0; i < ref.facts.size(); ++i) {
      const Fact& g = ref.facts[i];
      if (used[i] || g.id != f.id) continue;
      used[i] = true;
      row.reference_value = g.value;
      row.reference = g.status;
      break;
    }
    rows.push_back(std::move(row));
  }
  for (size_t i = 0; i < ref.facts.size(); ++i)
    if (!used[i]) {
      const Fact& g = ref.facts[i];
      rows.push_back(
          {g.id, g.title, g.pattern.text, "(not in your run)", g.value, Status::NotApplicable, g.status});
    }
  return rows;
}

CompareReport compare_across(const LessonsReport& mine, const std::string& chapter,
                             const std::string& platform, const std::string& platform_reason,
                             const fs::path& expected_root) {
  CompareReport r;
  r.chapter = chapter + " (across variants)";
  r.platform = platform;
  r.platform_reason = platform_reason;
  r.expected_dir = reference_dir(expected_root, platform, platform_reason, chapter);
  const fs::path file = r.expected_dir / "comparison.json";
  if (!fs::exists(file)) {
    r.notes.push_back(file.string() + " does not exist: no lessons across variants to compare with");
    return r;
  }
  LessonsReport ref;
  try {
    ref = lessons_from_json(json::parse(read_text(file)));
  } catch (const std::exception& e) {
    throw CompareError(
        fmt::format("{}: the reference comparison.json is corrupt: {}", file.string(), e.what()));
  }
  r.lessons = compare_lessons(mine, ref);
  r.notes.push_back("lessons across variants only: each variant's table is compared in its own folder");
  return r;
}

CompareReport compare_run(const fs::path& run_dir, const CompareOptions& o) {
  if (o.chapter.empty()) throw CompareError("compare: no chapter given");
  CompareReport r;
  r.chapter = o.chapter;
  r.run_dir = run_dir;
  Side mine = load_side(run_dir, o.chapter, o.facts, "your run's");

  if (!o.platform.empty()) {
    r.platform = o.platform;
    r.platform_reason = "chosen by you";
  } else if (mine.trace) {
    r.platform = detect_platform(*mine.trace);
    r.platform_reason = r.platform == "cpu"           ? "from the trace: no GPU activity"
                        : mine.trace->devices.empty() ? "from the trace: GPU without deviceProperties"
                                                      : "from the trace: " + mine.trace->devices.front().name;
  } else {
    throw CompareError(
        fmt::format("{}: no trace.json to tell the platform from; name one "
                    "(e.g. h200, cpu)",
                    run_dir.string()));
  }
  r.expected_dir = reference_dir(o.expected_root, r.platform, r.platform_reason, o.chapter);
  Side ref = load_side(r.expected_dir, o.chapter, o.facts, "the reference");

  if (mine.lessons && ref.lessons) {
    r.lessons = compare_lessons(*mine.lessons, *ref.lessons);
  } else {
    r.notes.push_back(mine.lessons ? "the reference has no lessons (no trace, no lessons.json)"
                                   : "your run has no lessons (no trace, no lessons.json, or an "
                                     "unknown chapter)");
  }

  if (mine.table && ref.table) {
    r.table = compare_tables(mine, ref);
  } else {
    r.notes.push_back(mine.table ? "the reference has no table.txt" : "your run has no table.txt");
  }
  return r;
}

std::string render_compare(const CompareReport& r, Format f) {
  if (f == Format::Json) {
    json lessons = json::array(), table = json::array();
    for (const auto& l : r.lessons)
      lessons.push_back({{"fact", l.fact},
                         {"title", l.title},
                         {"pattern", l.pattern},
                         {"yours", {{"value", l.learner_value}, {"status", status_name(l.learner)}}},
                         {"reference", {{"value", l.reference_value}, {"status", status_name(l.reference)}}},
                         {"agree", l.agree()}});
    for (const auto& t : r.table)
      table.push_back({{"name", t.name},
                       {"yours", t.learner_calls},
                       {"reference", t.reference_calls},
                       {"yours_launched", t.learner_launched},
                       {"reference_launched", t.reference_launched},
                       {"matches", t.matches()},
                       {"state", row_state(t)}});
    return json{{"chapter", r.chapter},
                {"platform", r.platform},
                {"platform_reason", r.platform_reason},
                {"run_dir", r.run_dir.string()},
                {"expected_dir", r.expected_dir.string()},
                {"lessons", lessons},
                {"table", table},
                {"notes", r.notes},
                {"ok", r.ok()}}
               .dump(2) +
           "\n";
  }
  const bool md = f == Format::Markdown;
  std::string out;
  const std::string head = fmt::format("Compare {} with {} (platform {}, {})", r.run_dir.string(),
                                       r.expected_dir.string(), r.platform, r.platform_reason);
  out += md ? "# " + head +
                  "\n\n## Lessons\n\n| Lesson | Yours | Reference | Same verdict |\n|---|---|---|---|\n"
            : head + "\n\nLessons (yours vs reference; each judged by the chapter's pattern):\n";
  for (const auto& l : r.lessons) {
    if (md) {
      out += fmt::format("| {} | {} {} | {} {} | {} |\n", l.title, status_mark(l.learner), l.learner_value,
                         status_mark(l.reference), l.reference_value, l.agree() ? "yes" : "**no**");
    } else {
      out += fmt::format(
          "  [{}] {}\n      expected:  {}\n      yours:     {:<4}  {}\n"
          "      reference: {:<4}  {}\n",
          l.agree() ? "same" : "DIFF", l.title, l.pattern, status_mark(l.learner), l.learner_value,
          status_mark(l.reference), l.reference_value);
    }
  }
  out += md ? "\n## Table (times masked)\n\n| Name | Yours | Reference | |\n|---|---:|---:|---|\n"
            : "\nTable (times masked: names and # of Calls):\n";
  if (!md) out += fmt::format("  {:<56} {:>6} {:>10}\n", "Name", "yours", "reference");
  for (const auto& t : r.table)
    out += md ? fmt::format("| `{}` | {} | {} | {} |\n", t.name, calls_text(t.learner_calls),
                            calls_text(t.reference_calls), row_state(t))
              : fmt::format("  {:<56} {:>6} {:>10}  {}\n", t.name, calls_text(t.learner_calls),
                            calls_text(t.reference_calls), row_state(t));
  for (const auto& n : r.notes) out += (md ? "\n> " : "\nnote: ") + n + "\n";
  out += fmt::format("\n{}lessons: {}/{} with the same verdict; table: {}/{} rows match\n",
                     md ? "**Summary:** " : "Summary: ", r.lessons_agree(), r.lessons.size(), r.table_same(),
                     r.table.size());
  return out;
}

}  // namespace wb
