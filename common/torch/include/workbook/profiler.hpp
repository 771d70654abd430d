// torch.profiler.profile, in C++ (LibTorch + Kineto).
//
//   wb::Profiler prof({.schedule = wb::Schedule::parse("1,1,3")});
//   prof.start();
//   for (int i = 0; i < 5; ++i) {
//     { wb::Annotation a("matmul_add"); y = at::add(at::matmul(x, w), b); }
//     prof.step();
//   }
//   prof.stop();
//   prof.results().back().save_chrome_trace("trace.json");
//
// Same semantics as Python:
//   * schedule wait/warmup/active/repeat (schedule.hpp), steps numbered from 0;
//   * a "ProfilerStep#N" user scope wraps each step, N = the global step number;
//   * prepareProfiler at the start of warmup -- and always before enableProfiler, even with
//     warmup = 0 (enabling an unprepared Kineto segfaults);
//   * enableProfiler at the start of the active phase;
//   * at the end of each cycle: synchronize the device first, then disableProfiler, so the
//     last kernels are in the trace (this is the cudaDeviceSynchronize at the end of the window).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "workbook/schedule.hpp"
#include "workbook/trace.hpp"

namespace torch::autograd::profiler {
struct ProfilerResult;
}
namespace at {
class RecordFunction;
}

namespace wb {

// The result of one profiling cycle (one RECORD_AND_SAVE).
struct CycleResult {
  int cycle = 0;        // 0-based
  int first_step = -1;  // global step numbers recorded in this cycle
  int last_step = -1;
  // The model built from the in-memory events (what key_averages() sees). Built on first use,
  // like Python's lazy function events, so the profiled loop never pays for it.
  const Trace& trace() const;

  // Writes the Chrome trace (open it in https://ui.perfetto.dev) atomically: a temp file in the
  // same folder, renamed into place, so an interrupted run never leaves half a file.
  // Kineto can serialize a result only once; a second call throws.
  // Kineto's exporter reads the CUPTI buffers of its session, which the next profiling session
  // reuses: a result saved after another session started shows its kernels at ts 0, dur 0.
  // So when any wb::Profiler prepares a new session, every unsaved result is first written
  // ("parked") to a temp file, and this call moves that file into place.
  void save_chrome_trace(const std::filesystem::path& path);

  struct Export;  // the result's serialization state, shared with the process-wide registry

 private:
  friend class Profiler;
  std::shared_ptr<Export> export_;
  mutable std::shared_ptr<Trace> trace_;
};

struct ProfilerOptions {
  Schedule schedule{1, 1, 3, 1, 0};
  // CPU is always recorded; CUDA when this is true and a CUDA device is present.
  bool cuda = true;
  bool record_shapes = false;
  // Python's with_flops: FLOPs of mm/addmm/bmm/baddbmm/mul/add/conv2d by torch's formula
  // (implies record_shapes, as in Python). The saved trace says so ("with_flops": 1), and the
  // table then shows Python's "Total FLOPs" column. profile_memory is not offered: the table
  // tool cannot yet show its memory columns faithfully.
  bool with_flops = false;
  // Called when a cycle's result is complete (Python's on_trace_ready).
  std::function<void(CycleResult&)> on_trace_ready;
};

class Profiler {
 public:
  explicit Profiler(ProfilerOptions opts);
  ~Profiler();  // stops if still running (no exceptions escape)
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  void start();
  void step();
  void stop();

  int step_num() const { return step_num_; }
  ProfilerAction current_action() const { return action_; }
  bool cuda_enabled() const { return cuda_; }
  std::vector<CycleResult>& results() { return results_; }

 private:
  void apply(const Transition& t, ProfilerAction prev, ProfilerAction next);
  void prepare();
  void enable();
  void disable_and_collect();
  void open_step_scope();
  void close_step_scope();

  ProfilerOptions opts_;
  bool cuda_ = false;
  bool running_ = false;  // between start() and stop()
  bool prepared_ = false;
  bool enabled_ = false;
  int step_num_ = 0;
  int cycle_first_step_ = -1;
  int last_closed_step_ = -1;
  ProfilerAction action_ = ProfilerAction::None;
  std::unique_ptr<at::RecordFunction> step_scope_;
  std::string step_name_;
  std::vector<CycleResult> results_;
  std::unique_ptr<CycleResult> pending_;
};

// record_function("name"): an RAII user annotation (shows as `user_annotation` on the CPU lane
// and as `gpu_user_annotation` over the kernels it launched).
class Annotation {
 public:
  explicit Annotation(std::string name);
  ~Annotation();
  Annotation(const Annotation&) = delete;
  Annotation& operator=(const Annotation&) = delete;

 private:
  std::string name_;
  std::unique_ptr<at::RecordFunction> rf_;
};

// Builds the shared model from a LibTorch profiler result (same events Python's
// key_averages() reads). Kernel footprints come from each event's Kineto metadata when present.
Trace trace_from_result(const torch::autograd::profiler::ProfilerResult& result);

// True when LibTorch sees a CUDA device.
bool cuda_available();
// Blocks until the current CUDA device is idle (no-op without CUDA).
void synchronize_device();

}  // namespace wb
