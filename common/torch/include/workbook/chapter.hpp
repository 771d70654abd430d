// What every chapter program shares: its flags, their validation (before any work), device and
// dtype selection, and the outputs (table.txt, trace.json, timeline.svg, lessons) written
// atomically into --out. The profiled loop is the chapter's own, in sight, as in Python
// (chapters/01_cold_64/main.cpp is the whole of one):
//
//   int main(int argc, char** argv) {
//     wb::Chapter ch{"01_cold_64", "Chapter 01: a cold 64x64 matmul + add, profiled"};
//     return ch.main(argc, argv, [](wb::Run& run) {
//       auto x = torch::randn({64, 64}, run.options());  // --size, --device, --dtype
//       ...
//       wb::ProfilerOptions opts;
//       opts.schedule = run.schedule();  // --schedule W,WU,A
//       opts.cuda = run.on_cuda();
//       wb::Profiler prof(opts);
//       prof.start();
//       for (int i = 0; i < run.schedule().total_steps(); ++i) {
//         { wb::Annotation a("matmul_add"); ... }
//         prof.step();
//         run.stop_if_interrupted();  // Ctrl-C: stop here, before any output is written
//       }
//       prof.stop();
//       // table.txt, trace.json, timeline.svg, lessons; the exit code: 0, 3 under --check when a
//       // lesson fails (or --compare finds a difference)
//       return run.exit_code(run.report(prof.results().back()));
//     });
//   }
#pragma once

#include <torch/types.h>  // Device, ScalarType, TensorOptions: not the whole C++ frontend

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "workbook/across.hpp"
#include "workbook/fs_util.hpp"
#include "workbook/lessons.hpp"
#include "workbook/napkin.hpp"
#include "workbook/profiler.hpp"
#include "workbook/schedule.hpp"
#include "workbook/trace_model.hpp"

namespace CLI {
class App;  // CLI11 (<CLI/CLI.hpp>): only chapter.cpp and code that adds flags include it
}

namespace wb {

// A bad flag or an impossible request: printed with the flag's name, exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A default --size that depends on the device (chapters 04, 05: 4096 on a GPU, 1024 on a CPU,
// where 4096 in fp32 takes seconds per step). wb::Chapter applies it after parsing the flags,
// unless --size was given; `cpu_why` is said when the CPU size was picked.
struct SizeForDevice {
  int64_t gpu = 0, cpu = 0;  // 0: no device-dependent default (ChapterConfig::size holds)
  std::string cpu_why;       // e.g. "2*1024^3 = 2.1 GFLOP per step in fp32"
};

struct ChapterConfig {
  int64_t size = 64;
  SizeForDevice size_for_device;
  int64_t batch = 1;  // leading axis B of x, w, b (chapter 03 adds --batch): the memory check counts B*N*N
  std::string dtype = "auto";   // auto | bf16 | fp16 | fp32
  std::string device = "auto";  // auto | cpu | cuda
  std::string schedule = "1,1,3,1";
  int warmup_iters = 0;       // untimed iterations a chapter runs before profiling (--warmup-iters)
  std::filesystem::path out;  // default: out/<chapter name>
  std::string sort_by = "";   // default: cuda_time_total on GPU, cpu_time_total on CPU
  int row_limit = 15;
  int threads = 0;       // LibTorch intra-op CPU threads; 0 = LibTorch's default
  bool quiet = false;    // print less (tests, scripts)
  bool check = false;    // exit 3 when a lesson's pattern does not hold
  bool compare = false;  // compare with expected_output/<platform>/<chapter>
  std::string platform;  // override for --compare ("" = from the trace)
  std::filesystem::path expected_root = "expected_output";
  std::string experiment;       // --experiment NAME ("": the chapter's default run)
  std::string variant = "all";  // --variant NAME (Chapter::variants): all, or one variant
};

// A flag that stands for one --variant (chapter 06: --no-bias = --variant no_bias).
struct VariantShortcut {
  std::string flag;     // "--no-bias"
  std::string variant;  // "no_bias"
  std::string help;     // "only the variant without bias"
};

// An experiment: the same workload under another schedule, to show one effect the default run
// hides (chapter 01's truly cold window, chapter 02's profiler start-up, chapter 04's twenty
// samples). `--experiment NAME` runs it; it reports into --out/NAME/, is judged by the lesson
// spec "<chapter>/NAME", compared with expected_output/<platform>/<chapter>/NAME/, and recorded
// by ./workbook record next to the default run.
struct Experiment {
  std::string name;      // "cold"
  std::string schedule;  // "0,0,3"
  std::string what;      // one line for --help
};

// A second profiled run the lessons compare a run with (chapter 03: the 2-D workload next to
// the batched one), saved next to trace.json as `file`.
struct ReferenceRun {
  CycleResult* cycle = nullptr;  // none: no reference (or `saved`)
  std::string file = "trace_reference.json";
  std::string label = "reference";
  // Or a trace already saved by this run (chapter 07: the eager variant's), read from there
  // when `cycle` is null; the lessons record its path relative to this report's folder.
  std::filesystem::path saved;
};

// What the report needs beyond the flags: what the trace cannot tell (the annotation to look
// into, the problem for napkin math and % of peak), and where a variant's report goes.
struct ReportOptions {
  std::string annotation = "matmul_add";
  // The problem the lessons judge (napkin math, throughput): n = 0 means the square --size
  // problem, batch 1 (chapter 03 sets its batch, chapters 06-07 m, k, n). dtype_bytes is always
  // the run's.
  Problem problem;
  // The napkin math printed before the table, given the device's name; empty: napkin_math.
  std::function<std::string(const std::string& device_name)> napkin;
  // For a chapter that profiles several variants of one workload (chapters 05-07): report into
  // --out/<variant>/, judge with the lesson spec "<chapter>/<variant>", and --compare with
  // expected_output/<platform>/<chapter>/<variant>/. Empty: the chapter's own folder and spec.
  std::string variant;
  ReferenceRun reference;
};

// What a chapter run produced (paths under --out, and the verdicts), and the trace as the
// harness read it back from disk with its model, so a chapter never re-reads trace.json.
// `model` refers into `trace_data`: keep the RunOutputs (or both pointers) alive while using it.
struct RunOutputs {
  std::filesystem::path trace, table, lessons_txt, lessons_json, svg;
  std::shared_ptr<const Trace> trace_data;
  std::shared_ptr<const TraceModel> model;
  int lessons_passed = 0, lessons_failed = 0, lessons_not_applicable = 0;
  bool lessons_ok = true;  // no lesson failed and the spec's minimum passed (n/a is not a pass)
  bool compared = false, compare_ok = true;
};

class Run;

class Chapter {
 public:
  Chapter(std::string name, std::string title);
  ~Chapter();
  Chapter(const Chapter&) = delete;
  Chapter& operator=(const Chapter&) = delete;

  const std::string& name() const { return name_; }
  ChapterConfig& defaults() { return cfg_; }
  // The CLI11 app, so a chapter can add its own flags before main() parses (include
  // <CLI/CLI.hpp> to use it; the header is kept out of this one, where it would cost every
  // chapter ~4 s of compile time).
  CLI::App& app() { return *app_; }
  // Declares an experiment (see Experiment); main() adds --experiment and --list-experiments.
  void experiment(std::string name, std::string schedule, std::string what);
  // Declares the variants of a chapter that profiles one workload several ways (chapters
  // 05-07): main() adds --variant (all, or one of `names`; `help` is its line in --help) and
  // each shortcut's flag. Run::wants() says which to build, Run::refuse() refuses one asked for
  // by name that cannot run here.
  void variants(std::vector<std::string> names, std::string help,
                std::vector<VariantShortcut> shortcuts = {});

  // Parses and validates flags (exit 2 on error, 0 for --help), prepares --out, picks the
  // device, then runs `body`. Errors thrown by `body` are reported cleanly (exit 1).
  // Ctrl-C (SIGINT) or SIGTERM stops the run between two steps, before report() writes
  // anything, so the files already in --out stay as they were (exit 128 + signal: 130, 143).
  int main(int argc, char** argv, const std::function<int(Run&)>& body);

 private:
  void add_declared_flags(bool& list_experiments);

  std::string name_, title_;
  ChapterConfig cfg_;
  std::unique_ptr<CLI::App> app_;
  std::vector<Experiment> experiments_;
  std::vector<std::string> variants_;
  std::string variant_help_;
  std::vector<VariantShortcut> variant_shortcuts_;
};

class Run {
 public:
  Run(const Chapter& ch, ChapterConfig cfg);

  const ChapterConfig& config() const { return cfg_; }
  int64_t size() const { return cfg_.size; }
  bool on_cuda() const { return device_.is_cuda(); }
  torch::Device device() const { return device_; }
  torch::ScalarType dtype() const { return dtype_; }
  std::string dtype_name() const;
  int dtype_bytes() const;
  torch::TensorOptions options() const { return torch::TensorOptions().device(device_).dtype(dtype_); }
  const Schedule& schedule() const { return schedule_; }
  const std::filesystem::path& out() const { return cfg_.out; }
  const std::string& experiment() const { return cfg_.experiment; }  // "": the default run
  // Chapter::variants: whether this run builds and profiles the variant `name` (--variant all
  // or NAME), and, for one asked for by name that cannot run here (`why_not` non-empty), a
  // UsageError "--variant NAME: why_not" (exit 2) before any work.
  bool wants(const std::string& name) const { return cfg_.variant == "all" || cfg_.variant == name; }
  void refuse(const std::string& name, const std::string& why_not) const;

  // Call once per step of a profiled loop: after Ctrl-C (SIGINT) or SIGTERM it throws, which
  // unwinds the profiler cleanly and leaves --out as it was (Chapter::main exits 130 or 143).
  void stop_if_interrupted() const;

  // Writes into --out (each file atomically, under a lock on the folder):
  //   trace.json    the Chrome trace (Perfetto)
  //   table.txt     key_averages().table(), from the in-memory events, as Python prints it
  //   lessons.txt / lessons.json   this chapter's lesson checks on the trace read back from disk
  //   timeline.svg  a picture of the profiled steps
  // and prints the napkin math, the table, the lessons and where to look next.
  RunOutputs report(CycleResult& cycle, const ReportOptions& ro = {});

  // The exit code main() should return after report(): 0, or 3 with --check when a lesson
  // failed, fewer passed than the spec requires, or --compare found a difference.
  int exit_code(const RunOutputs& o) const;

  // For a chapter with variants (each reported with ReportOptions::variant): the lessons
  // across them (wb::check_across), written to --out/comparison.txt and comparison.json,
  // printed, and with --compare compared with the recorded comparison.json. Returns the exit
  // code: 0, or 3 with --check when a lesson failed or --compare found a difference.
  // `problem` names what the runs computed in the report's header when it is not the N x N
  // product of --size (chapter 11: "1b, batch 1, 512-token prompt"); "": "N=<size>".
  int report_across(const std::vector<VariantRun>& runs, const std::string& annotation = "matmul_add",
                    const std::string& problem = "");

  // For text that is part of the lesson (stdout); silenced by --quiet.
  void say(const std::string& text) const;

 private:
  // --compare: the report in `dir` against expected_output/<platform>/<key>/; prints the result.
  bool compare_with_recording(const std::filesystem::path& dir, const std::string& key,
                              const FactOptions& fo) const;

  const Chapter& ch_;
  ChapterConfig cfg_;
  Schedule schedule_;
  torch::Device device_{torch::kCPU};
  torch::ScalarType dtype_ = torch::kFloat;
  std::optional<DirLock> lock_;  // --out, for the whole run: a second run there stops at once
};

}  // namespace wb
