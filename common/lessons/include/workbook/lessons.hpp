// Lesson facts: the things the workbook teaches you to read in a trace, measured from any
// Kineto trace and checked against a stated pattern.
//
//   wb::Trace t = wb::read_trace("out/01_cold_64/trace.json");
//   wb::TraceModel m(t);
//   wb::Fact f = wb::compute_fact("overhead_bound", m);  // measured + its default pattern
//   std::cout << f.value << "  " << status_name(f.status) << "\n";
//
//   wb::LessonsReport r = wb::check_lessons(m, *wb::find_lesson_spec("01_cold_64"), {});
//   std::cout << wb::render_lessons(r, wb::Format::Markdown);
//
// Every fact carries
//   * what was measured: `value` (one line for people) and `data` (JSON numbers for machines),
//   * a pattern: a stated condition on `data`, and whether it holds (Pass / Fail), or why it
//     cannot be judged on this trace (NotApplicable: e.g. a GPU fact on a CPU-only trace),
//   * evidence: the events, times and steps the value came from, so a reader can find them.
// Each fact is judged by its default pattern, the cheatsheet's symptom, written once in the
// fact's registry entry beside its measurement (common/lessons/src/facts_*.cpp; e.g. "Self CUDA total < 0.1 x
// Self CPU total: overhead-bound"); the fact's code has no threshold of its own, and its explanation reads
// that verdict. A chapter's spec states the pattern it expects (ch04 expects the opposite: compute-bound) and
// `apply_pattern` re-judges the fact.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "workbook/trace_model.hpp"

namespace wb {

enum class Status { Pass, Fail, NotApplicable };
std::string_view status_name(Status s);  // "pass", "fail", "not_applicable" (lessons.json)
std::string_view status_mark(Status s);  // "PASS", "FAIL", "n/a" (lessons.txt, the tools' text)

enum class Format { Text, Markdown, Json };

// One machine-checkable condition on a fact's data:  data[key] <op> value.
struct Condition {
  enum class Op { Lt, Le, Gt, Ge, Eq, Ne, Contains, NotContains };
  // Where a condition means something. A condition outside its scope is skipped; a pattern
  // whose every condition is skipped is NotApplicable.
  enum class Scope {
    Any,     // every trace
    Gpu,     // traces with device activity
    Hopper,  // compute capability 9.x (H100/H200): nvjet kernels, cuLaunchKernelEx, tile shapes
    Cpu,     // traces without device activity (a chapter's CPU edition)
  };
  std::string key;  // JSON pointer into Fact::data, e.g. "/cuda_cpu_ratio", "/gemm/grid"
  Op op = Op::Eq;
  nlohmann::json value;
  Scope scope = Scope::Any;
  // > 0: judged only when the run's problem size N is this (tile shapes, % of peak and the
  // overhead ratio depend on it); other sizes skip the condition.
  int64_t only_n = 0;
  // Non-empty: a device-specific expectation, judged only on a GPU whose trace matches it:
  // "sm_90" (compute capability 9.0) or a GPU name ("H200", "A100": whole words of the recorded
  // device name). Elsewhere it is skipped and the lesson's verdict says it judged relations only
  // there (scope Hopper is the same for compute capability 9.x).
  std::string device;
  // Contains / NotContains: on a string, substring; on an array, any element (or any
  // element's substring, for strings) matches.
};

struct Pattern {
  std::string text;            // the stated expectation, e.g. "Self CUDA total < 0.1 x Self CPU total"
  std::string why;             // why this tolerance (what the reference machines showed)
  std::vector<Condition> all;  // all must hold
};

struct Fact {
  std::string id;                                  // "overhead_bound"
  std::string title;                               // "Overhead-bound vs compute-bound"
  std::string value;                               // the measurement in one line
  nlohmann::json data = nlohmann::json::object();  // the same, machine-readable
  Status status = Status::NotApplicable;
  Pattern pattern;                    // what `status` judges
  std::string explanation;            // one line: what the value means, or why the fact is not applicable
  std::string verdict;                // one line: which condition held or failed, with the numbers
  std::vector<std::string> evidence;  // "aten::mm in ProfilerStep#2 @ 12.3 us: ..."
  std::string detail;                 // optional multi-line text (a tree, a distribution table)
  bool measured = false;              // false: the trace lacks what this fact needs (status stays N/A)
  // Where the default rule was seen to hold, when that depends on the device ("": everywhere).
  // `inspect` adds it to a "no", so that a rule which holds only elsewhere does not read as a
  // finding. Not in lessons.json (chapter verdicts are judged per device already).
  std::string devices;
};

// What the trace cannot say and the caller knows: the problem that ran, for napkin math and
// throughput. Build one with a named constructor, Problem::square(n, batch, dtype_bytes) or
// Problem::gemm(m, k, n, dtype_bytes), or set its fields by name: it is not an aggregate, so a
// positional Problem{64, 1, 2} does not compile (which number was which?).
struct Problem {
  Problem() {}  // user-provided: no positional aggregate initialisation
  static Problem square(int64_t n, int64_t batch, int dtype_bytes) {
    Problem p;
    p.n = n;
    p.batch = batch;
    p.dtype_bytes = dtype_bytes;
    return p;
  }
  // x [m, k] times a weight [k, n]: nn.Linear(in_features = k, out_features = n) on m rows.
  static Problem gemm(int64_t m, int64_t k, int64_t n, int dtype_bytes) {
    Problem p = square(n, 1, dtype_bytes);
    p.m = m;
    p.k = k;
    return p;
  }

  // The output's columns: N of the N x N matrices of a square product (m = k = 0), or the
  // weight's columns of a rectangular one (x [m, k] times a weight [k, n]). 0: unknown
  // (throughput -> not applicable).
  int64_t n = 0;
  int64_t batch = 1;    // leading batch dimension (bmm): batch products of the size above
  int dtype_bytes = 2;  // 2: bf16/fp16, 4: fp32
  // Rectangular products (chapters 06-07): x is m x k (nn.Linear(k, n) on m rows; the GeGLU
  // MLP: m tokens, k = dim, n = hidden). 0: a square product, m = k = n.
  int64_t m = 0, k = 0;
};

struct FactOptions {
  // The record_function range a lesson looks into. inspect_trace with "" finds them itself:
  // the top-level user annotations inside the steps (user_annotations below), judged each.
  std::string annotation = "matmul_add";
  Problem problem;
  // Outlier rule for kernel durations: slower than this x the median of the same kernel.
  double outlier_factor = 1.5;
  // A second run to compare with (chapter 03: the 2-D workload next to the batched one); facts
  // that compare two runs are not applicable without it.
  const TraceModel* reference = nullptr;
  std::string reference_label = "reference";
  std::string reference_file;  // where the reference trace is saved, next to trace.json ("": none)
  // Judge by the general rules only: a trace that is not a chapter's (inspect_trace decides,
  // see is_chapter_trace). The chapters' own facts (gelu + mul traffic, the 2-D reference run)
  // are left out, and the CPU split counts every kind of compute op (rules.hpp: classify_op),
  // not the chapters' GEMM + add.
  bool general = false;
};

// ---- the facts (each applies its default pattern) -------------------------------------
// One registry, in teaching order: each common/lessons/src/facts_*.cpp lists its facts (id, title,
// the measurement, the default pattern, the cheatsheet rows); lessons.cpp joins them. Ids: overhead_bound,
// step_widths, dead_window, dispatch_chain, launch_path, ... (all_facts() lists them; docs/cheatsheet.md
// explains each).
struct FactInfo {
  std::string_view id;
  std::string_view title;
};
const std::vector<FactInfo>& all_facts();
// docs/cheatsheet.md's table, written from the facts' registry (./workbook docs): a header,
// then each fact's cheatsheet rows in teaching order (pattern | in the table | in the trace |
// chapter | inspect rule), one line each, no trailing newline.
std::string cheatsheet_markdown();  // in teaching order
// Computes one fact by id; throws std::invalid_argument naming the known ids when unknown.
Fact compute_fact(std::string_view id, const TraceModel& m, const FactOptions& o = {});

// Re-judges a measured fact against another pattern (status, verdict, pattern). `problem`
// decides the conditions marked only_n (n == 0: unknown, judge them all).
Fact apply_pattern(Fact f, const Pattern& p, const Trace& trace, const Problem& problem = {});
// The value a pattern's condition reads at `key` (a JSON pointer, "/calls/aten::add") in the
// fact's data: null when the fact did not write it, 0 for a count under one of the fact's
// "zero_when_absent" parents (a count the trace never saw). Throws nlohmann::json::exception
// for a malformed key.
nlohmann::json fact_value(const Fact& f, const std::string& key);

// ---- chapter specs -------------------------------------------------------------------
struct Expectation {
  std::string fact;  // fact id
  Pattern pattern;
};

struct LessonSpec {
  std::string chapter;  // "01_cold_64", or "01_cold_64/cold" for an experiment or variant
  std::string title;
  Problem problem;  // what the chapter runs by default (callers override with real flags)
  std::vector<Expectation> expect;
  // A CPU-only run must pass at least this many lessons (GPU lessons are not applicable there).
  // A GPU run must pass at least one. Either way a run with zero passes is not a pass.
  int min_cpu_passes = 1;
};

// The chapters' specs: each chapter's chapters/NN_name/lessons.json, with the lessons several
// chapters share in common/lessons/data/lesson_specs.json, compiled into the library.
const std::vector<LessonSpec>& lesson_specs();
const LessonSpec* find_lesson_spec(std::string_view chapter);  // nullptr: unknown chapter
// Reads a specs file in that form (source names it in errors); throws SpecError
// (workbook/json_spec.hpp) saying where a broken one is broken.
std::vector<LessonSpec> parse_lesson_specs(std::string_view text, const std::string& source);
// The compiled-in form: the shared file ({"shared": {NAME: lesson}}) and one file per chapter
// ({"specs": [...]}, each entry that chapter or one of its runs, named by the file's folder).
struct SpecFile {
  std::string path;  // "chapters/01_cold_64/lessons.json": named in errors
  std::string_view text;
};
std::vector<LessonSpec> parse_lesson_spec_files(const SpecFile& shared,
                                                const std::vector<SpecFile>& chapters);

struct LessonsReport {
  std::string kind = "lessons";  // "lessons": a chapter's expectations; "inspect": cheatsheet
  std::string chapter;
  std::string title;
  std::string source;  // the trace's file
  std::string device;  // first device's name, or "CPU only"
  FactOptions options;
  std::vector<Fact> facts;
  int passed = 0, failed = 0, not_applicable = 0;
  int min_passes = 0;  // check_lessons: what the spec requires on this platform (>= 1)
  // No lesson failed and enough passed: n/a is not a pass.
  bool ok() const { return failed == 0 && passed >= min_passes; }
};

// Counts the facts' statuses into passed / failed / not_applicable: the one tally of verdicts
// (chapters, inspect, compare and the exercise checker all count with it).
void tally(LessonsReport& r);

// Computes each expected fact once and judges it against the chapter's patterns. A lesson that
// applies on this platform (some condition is in scope: GPU conditions on a GPU trace, ...) but
// could not be measured fails: not applicable is only for lessons about another platform.
LessonsReport check_lessons(const TraceModel& m, const LessonSpec& spec, const FactOptions& o);
// `inspect`: every fact with its default (cheatsheet) pattern. With o.annotation == "", the
// annotation facts (dead_window, dispatch_chain) are judged once per annotation found by
// user_annotations(). A failed pattern with conditions that this trace's device cannot judge
// (Hopper-only, GPU-only) says so in its verdict.
LessonsReport inspect_trace(const TraceModel& m, const FactOptions& o);

// A trace of one of the chapters' workloads: every user annotation at the top of its steps is
// one the chapters use (matmul_add, linear_fwd, mlp_fwd). inspect judges such a trace by every
// rule, as the chapters do; any other trace by the general rules only (FactOptions::general).
bool is_chapter_trace(const TraceModel& m);

// The user's annotations: names of record_function ranges at the top level inside the
// ProfilerSteps (their parent is a step; a trace without steps: top-level ranges), in order of
// first appearance. Profiler steps and the profiler's own ranges are not annotations.
std::vector<std::string> user_annotations(const TraceModel& m);

std::string render_lessons(const LessonsReport& r, Format f);
nlohmann::json to_json(const Fact& f);
nlohmann::json to_json(const LessonsReport& r);
// Reads back what to_json wrote (lessons.json). Throws std::runtime_error on a bad document.
LessonsReport lessons_from_json(const nlohmann::json& j);

}  // namespace wb
