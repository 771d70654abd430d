// What every exercise program includes: the tensor type, the handful of ops the exercises use,
// wb::Annotation, and ex::Exercise / ex::Run -- a thin layer over the chapter harness
// (wb::Chapter / wb::Run in workbook/chapter.hpp) with the same flags and the same outputs.
//
// This header includes only what an exercise needs (ATen's tensor and the ops below); the layer
// over the harness (exercise.cpp) is compiled once, as is the harness (wb_torch). The build
// precompiles LibTorch's <torch/types.h>, which holds every ATen op, once for all programs
// (cmake/WorkbookPch.cmake), so an exercise compiles in a few seconds. Need another op? Add its
// header, e.g. #include <ATen/ops/relu.h>; <torch/torch.h> (the nn/optim/data frontend) works
// too, at ~15 s more per compile.
//
//   int main(int argc, char** argv) {
//     ex::Exercise e{"ex09_1_example", "An example"};
//     e.defaults().size = 256;
//     return e.main(argc, argv, [](ex::Run& run) {
//       auto x = torch::randn({run.size(), run.size()}, run.options());
//       torch::Tensor y;
//       run.profile([&] { wb::Annotation a("matmul_add"); y = torch::matmul(x, x); });
//       run.answer("my_answer", 42);
//     });
//   }
//
// Per-learner variation: with --student NAME the program runs that learner's own variation of
// the exercise (size, schedule, and the values the task asks about; `exercise show ID --student
// NAME` lists them), picked from the name by exercises.json's "vary". The checker runs the same.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/ops/add.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/zeros.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "workbook/profiler.hpp"  // wb::Annotation, wb::synchronize_device

// torch::matmul, torch::randn, torch::kCUDA ... as in the chapters: <torch/torch.h> does the same.
namespace torch {
using namespace at;  // NOLINT
}

namespace wb {
class Run;
}

namespace ex {

// What an exercise sets before the flags are read. The flags (--size, --schedule, --sort-by)
// still override these when given, exactly as in the chapters.
struct Defaults {
  int64_t size = 64;               // N of the N x N matrices
  int64_t cpu_size = 0;            // N when the run lands on a CPU (0: same as `size`)
  std::string schedule = "1,1,3";  // profiler schedule W,WU,A[,R]
  std::string sort_by;             // table order; "": cuda_time_total on a GPU, cpu_time_total on a CPU
  // false: print the table but not the lesson report (it is still saved in lessons.txt), for
  // exercises that ask what the report would otherwise say outright.
  bool show_lessons = true;
  // Optional: the schedule as a function of the steps to keep (ProfilerStep#first and the
  // count), called with this learner's target_first / target_count when the exercise varies them.
  std::function<std::string(int64_t first, int64_t count)> schedule_for_steps;
};

// What the report needs to know about the workload (napkin math, lesson facts).
struct Workload {
  int64_t batch = 1;                      // leading batch axis B of (B, N, N) inputs
  std::string annotation = "matmul_add";  // the record_function range the lessons look into
  bool profile_memory = false;            // record every allocation and free (chapter 08)
};

class Run {
 public:
  // `quiet`: the learner's --quiet; `hide_lessons`: Defaults::show_lessons == false;
  // `student` and `variation`: --student and what it picked ({} when nothing varies).
  // `exercise`: the program's name (the key of the harness's references, reference.hpp);
  // `run_token`: the one-time token `exercise check` handed the program ("" when run by hand),
  // written into trace.json's top level ("workbook_run_token").
  Run(wb::Run& harness, bool quiet, bool hide_lessons, std::string student, std::string variation_json,
      std::string exercise = "", std::string run_token = "");
  ~Run();
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  int64_t size() const;
  bool on_cuda() const;
  // This learner's value of a varied key (exercises.json "vary"), or `fallback` when the
  // exercise does not vary it.
  int64_t varied(const std::string& key, int64_t fallback) const;
  double varied_number(const std::string& key, double fallback) const;
  at::TensorOptions options() const;  // this run's device and dtype (bf16 on a GPU, fp32 on a CPU)
  const std::filesystem::path& out() const;

  // Stops with a clear message (exit 2) when this run is not on a GPU: for exercises whose
  // subject only exists there (CUDA graphs).
  void require_cuda(const std::string& what) const;

  // Runs `step` under the profiler, one ProfilerStep per call, for every step of the schedule;
  // then writes trace.json, table.txt, lessons.txt/json and timeline.svg into out() and prints
  // the table and the lessons -- what a chapter does.
  void profile(const std::function<void()>& step, const Workload& w = {});

  // After profile(): the median duration of the GEMM in the recorded steps, in microseconds --
  // the GEMM kernels on a GPU, the aten::mm/bmm/addmm ops on a CPU.
  double gemm_median_us() const;
  // The same samples, every one, in the order they ran (microseconds).
  std::vector<double> gemm_samples_us() const;
  // The same samples in one line: count, min, max.
  std::string gemm_summary() const;
  // How many times profile() ran the step (every step of the schedule, recorded or not).
  int steps_run() const;
  // A value the checker needs to judge an answer (run.json "reference"), e.g. one step's sum.
  void reference(const std::string& key, double value);
  // The workload's result, handed to the harness after profile(): the harness verifies it
  // against its own reference of the exercise (reference.hpp) and saves the verdict in
  // run.json "values"; the checker requires the values the exercise lists.
  void result(const std::string& key, const at::Tensor& value);
  // The same for a list of numbers (e.g. a curve of one value per step).
  void result(const std::string& key, const std::vector<double>& values);

  // An answer for the checker, saved in out()/answer.json when the program ends.
  template <class T>
  void answer(const std::string& key, const T& value) {
    if constexpr (std::is_same_v<T, bool>) {
      answer_bool(key, value);
    } else if constexpr (std::is_integral_v<T>) {
      answer_int(key, static_cast<int64_t>(value));
    } else if constexpr (std::is_floating_point_v<T>) {
      answer_number(key, static_cast<double>(value));
    } else {
      answer_text(key, std::string(value));
    }
  }

  // Text that is part of the exercise (stdout); silenced by --quiet.
  void say(const std::string& text) const;

  // The chapter harness underneath (include workbook/chapter.hpp to use it).
  wb::Run& harness() { return h_; }

  // Writes answer.json and run.json (what ran: size, batch, device) into out(). Called by
  // Exercise::main after the body; a program never needs to call it.
  void finish();

 private:
  void answer_int(const std::string& key, int64_t v);
  void answer_number(const std::string& key, double v);
  void answer_text(const std::string& key, const std::string& v);
  void answer_bool(const std::string& key, bool v);

  struct State;
  wb::Run& h_;
  std::unique_ptr<State> s_;
};

class Exercise {
 public:
  // `name` is the program's name and its default --out folder (out/<name>).
  Exercise(std::string name, std::string title);
  Defaults& defaults() { return defaults_; }

  // Parses the chapter flags, picks the device, runs `body`, saves the answers. Exit codes as
  // in the chapters: 0 ran, 1 error, 2 bad flags.
  int main(int argc, char** argv, const std::function<void(Run&)>& body);

 private:
  std::string name_, title_;
  Defaults defaults_;
};

}  // namespace ex
