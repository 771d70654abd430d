// What every chapter program shares: its flags, their validation (before any work), device and
// dtype selection, the profiled loop, and the outputs (table.txt, trace.json, timeline.svg,
// lessons) written atomically into --out.
//
// A chapter's main.cpp stays short:
//
//   int main(int argc, char** argv) {
//     wb::Chapter ch{"01_cold_64", "Cold 64x64: reading the table and the trace"};
//     return ch.main(argc, argv, [&](wb::Run& run) {
//       auto x = torch::randn({run.size, run.size}, run.options());
//       ...
//       auto cycle = run.profile([&] { wb::Annotation a("matmul_add"); ... });
//       run.report(cycle);
//       return 0;
//     });
//   }
#pragma once

#include <CLI/CLI.hpp>
#include <torch/types.h>  // Device, ScalarType, TensorOptions: not the whole C++ frontend

#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "workbook/fs_util.hpp"
#include "workbook/lessons.hpp"
#include "workbook/profiler.hpp"
#include "workbook/schedule.hpp"

namespace wb {

// A bad flag or an impossible request: printed with the flag's name, exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ChapterConfig {
  int64_t size = 64;
  int64_t batch = 1;               // leading axis of x, w, b; the memory check counts batch*N*N
  std::string dtype = "auto";      // auto | bf16 | fp16 | fp32
  std::string device = "auto";     // auto | cpu | cuda
  std::string schedule = "1,1,3,1";
  std::filesystem::path out;       // default: out/<chapter name>
  std::string sort_by = "";        // default: cuda_time_total on GPU, cpu_time_total on CPU
  int row_limit = 15;
  int threads = 0;                 // LibTorch intra-op CPU threads; 0 = LibTorch's default
  bool quiet = false;              // print less (tests, scripts)
  bool check = false;              // exit 3 when a lesson's pattern does not hold
  bool compare = false;            // compare with expected_output/<platform>/<chapter>
  std::string platform;            // override for --compare ("" = from the trace)
  std::filesystem::path expected_root = "expected_output";
};

// What the report needs beyond the flags: the problem the trace cannot tell (for napkin math
// and % of peak), and what the timeline picture should call out.
struct ReportOptions {
  int64_t batch = 1;
  std::string annotation = "matmul_add";
  std::string title;               // picture title; default "<chapter> on <device>"
  // For a chapter that profiles several variants of one workload (chapter 05): report into
  // --out/<variant>/, judge with the lesson spec "<chapter>/<variant>", and --compare with
  // expected_output/<platform>/<chapter>/<variant>/. Empty: the chapter's own folder and spec.
  std::string variant;
};

// What a chapter run produced (paths under --out, and the verdicts).
struct RunOutputs {
  std::filesystem::path trace, table, lessons_txt, lessons_json, svg;
  int lessons_passed = 0, lessons_failed = 0, lessons_not_applicable = 0;
  bool compared = false, compare_ok = true;
};

class Run;

// The back-of-the-envelope numbers every chapter prints before its measurements: FLOPs, bytes,
// arithmetic intensity and the time the device's peak rates would allow.
std::string napkin_math(const Problem& p, const std::string& device_name);

class Chapter {
 public:
  Chapter(std::string name, std::string title);

  const std::string& name() const { return name_; }
  ChapterConfig& defaults() { return cfg_; }
  // The CLI11 app, so a chapter can add its own flags before main() parses.
  CLI::App& app() { return app_; }

  // Parses and validates flags (exit 2 on error, 0 for --help), prepares --out, picks the
  // device, then runs `body`. Errors thrown by `body` are reported cleanly (exit 1).
  // Ctrl-C (SIGINT) or SIGTERM stops the run between two steps, before report() writes
  // anything, so the files already in --out stay as they were (exit 128 + signal: 130, 143).
  int main(int argc, char** argv, const std::function<int(Run&)>& body);

 private:
  std::string name_, title_;
  ChapterConfig cfg_;
  CLI::App app_;
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

  // Runs `step` schedule.total_steps() times under the profiler (one ProfilerStep each) and
  // returns the last cycle's result. repeat=0 schedules run one cycle.
  CycleResult profile(const std::function<void()>& step);

  // Writes into --out (each file atomically, under a lock on the folder):
  //   trace.json    the Chrome trace (Perfetto)
  //   table.txt     key_averages().table(), from the in-memory events, as Python prints it
  //   lessons.txt / lessons.json   this chapter's lesson checks on the trace read back from disk
  //   timeline.svg  a picture of the profiled steps
  // and prints the napkin math, the table, the lessons and where to look next.
  RunOutputs report(CycleResult& cycle, const ReportOptions& ro = {});

  // The exit code main() should return after report(): 0, or 3 with --check when a lesson
  // failed or --compare found a difference.
  int exit_code(const RunOutputs& o) const;

  // For text that is part of the lesson (stdout); silenced by --quiet.
  void say(const std::string& text) const;

 private:
  const Chapter& ch_;
  ChapterConfig cfg_;
  Schedule schedule_;
  torch::Device device_{torch::kCPU};
  torch::ScalarType dtype_ = torch::kFloat;
  std::optional<DirLock> lock_;    // --out, for the whole run: a second run there stops at once
};

}  // namespace wb
