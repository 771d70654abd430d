// torch.profiler.profile, in C++ (LibTorch + Kineto). #include <workbook/profiler_all.hpp>
// gives this and everything the docs use with it.
//
//   wb::ProfilerOptions opts;
//   opts.schedule = wb::Schedule::parse("1,1,3,1");
//   wb::Profiler prof(opts);
//   prof.start();
//   for (int i = 0; i < 5; ++i) {
//     { wb::Annotation a("matmul_add"); y = at::add(at::matmul(x, w), b); }
//     prof.step();
//   }
//   prof.stop();
//   prof.results().back().save_chrome_trace("trace.json");
//
// Same semantics as Python:
//   * schedule wait/warmup/active/repeat/skip_first (schedule.hpp), steps numbered from 0;
//   * a "ProfilerStep#N" user scope wraps each step, N = the global step number;
//   * prepareProfiler at the start of warmup -- and always before enableProfiler, even with
//     warmup = 0 (enabling an unprepared Kineto segfaults);
//   * enableProfiler at the start of the active phase;
//   * at the end of each cycle: synchronize the device first, then disableProfiler, so the
//     last kernels are in the trace (this is the cudaDeviceSynchronize at the end of the window).
// Where Python fails loudly, so does this: a loop too short for its schedule warns at stop(),
// asking for a result that does not exist throws NoProfileResult (never undefined behaviour),
// and a save that fails leaves the result saveable.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
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
  // Steps of this cycle that a step() call closed: whole loop iterations. The step the loop's
  // last step() opens is closed by stop() with nothing in it, so with repeat = 0 the last cycle
  // can be only that (an empty ProfilerStep#N; Python does the same): whole_steps == 0.
  int whole_steps = 0;
  // The model built from the in-memory events (what key_averages() sees). Built on first use,
  // like Python's lazy function events, so the profiled loop never pays for it.
  const Trace& trace() const;

  // Writes the Chrome trace (open it in https://ui.perfetto.dev) atomically: a temp file in the
  // same folder, renamed into place, so an interrupted run never leaves half a file. A path
  // ending in ".gz" is gzipped (as Python's export_chrome_trace does).
  // The folder is created when missing; when it cannot be, the error names it and nothing is
  // lost. Kineto can serialize a result only once, so the first save serializes it into a temp
  // file ("parks" it) and moves that file into place: a save that fails keeps the parked file,
  // and the next call (to a good path) writes it. After a save that succeeded, another throws,
  // naming where the trace went.
  // Kineto's exporter reads the CUPTI buffers of its session, which the next profiling session
  // reuses: a result saved after another session started shows its kernels at ts 0, dur 0.
  // So when any wb::Profiler prepares a new session, every unsaved result is parked first.
  void save_chrome_trace(const std::filesystem::path& path);
  // Where the trace was saved; empty until a save succeeded.
  std::filesystem::path saved_path() const;

  struct Export;  // the result's serialization state, shared with the process-wide registry

 private:
  friend class Profiler;
  std::shared_ptr<Export> export_;
  mutable std::shared_ptr<Trace> trace_;
};

// Thrown when a result is asked for that does not exist (results().back() after a loop too short
// for its schedule, an index past the last cycle). The message says why there is none.
struct NoProfileResult : std::out_of_range {
  using std::out_of_range::out_of_range;
};

// A Profiler's results: one CycleResult per completed cycle, in order. A std::vector whose
// element access is checked: back(), front(), operator[] and at() throw NoProfileResult, with
// the steps run and the steps the schedule needs, instead of reading past the end (Python
// raises where std::vector::back() on an empty vector is undefined behaviour: a segfault).
class CycleResults : public std::vector<CycleResult> {
 public:
  CycleResult& back() { return (*this)[size() - 1]; }  // empty: size() - 1 is past the end
  const CycleResult& back() const { return at(size() - 1); }
  CycleResult& front() { return (*this)[0]; }
  const CycleResult& front() const { return at(0); }
  CycleResult& operator[](size_t i) { return std::vector<CycleResult>::operator[](checked(i)); }
  const CycleResult& operator[](size_t i) const { return std::vector<CycleResult>::operator[](checked(i)); }
  CycleResult& at(size_t i) { return (*this)[i]; }
  const CycleResult& at(size_t i) const { return (*this)[i]; }
  // The last cycle that recorded a whole step (CycleResult::whole_steps > 0): with repeat = 0,
  // results().back() can be an empty trailing cycle, as in Python. Throws NoProfileResult when
  // no cycle recorded one.
  CycleResult& last_nonempty();
  // Why there is no result (set by Profiler::stop when no cycle completed); "" otherwise.
  const std::string& why_empty() const { return why_empty_; }

 private:
  friend class Profiler;
  size_t checked(size_t i) const;  // i, or throws NoProfileResult
  std::string why_empty_;
};

struct ProfilerOptions {
  // Not Python's default: profile() without a schedule records every step from start to stop;
  // ProfilerOptions{} skips one step, warms up one and records three, once (the chapters' window).
  // To record every step of an N-step loop as Python does: Schedule{0, 0, N, 1}.
  Schedule schedule{1, 1, 3, 1, 0};
  // CPU is always recorded; CUDA when this is true and a CUDA device is present.
  bool cuda = true;
  bool record_shapes = false;
  // Python's with_flops: FLOPs of mm/addmm/bmm/baddbmm/mul/add/conv2d by torch's formula
  // (implies record_shapes, as in Python). The saved trace says so ("with_flops": 1), and the
  // table then shows Python's "Total FLOPs" column.
  bool with_flops = false;
  // Python's with_stack: where each op was called from. From C++ that is the TorchScript call
  // stack of the ops a scripted or traced module runs (the model's source lines, as TorchScript
  // kept them); plain C++ code has none recorded. As Python's with_stack=True with
  // experimental_config=_ExperimentalConfig(verbose=True): without verbose Python keeps no
  // stack per op, and its table shows none. Event::stack carries it, in memory and in the saved
  // trace ("Call stack"); key_averages' group_by_stack_n and `table --group-by-stack-n` read it.
  bool with_stack = false;
  // Python's profile_memory: every allocation and free of the CPU allocator and of the CUDA
  // caching allocator while the profiler records, as a "[memory]" instant event (its bytes,
  // < 0 for a free, and the allocator's totals after it: "Total Allocated", "Total Reserved").
  // The saved trace says so ("profile_memory": 1); the table then shows Python's CPU Mem /
  // Self CPU Mem (and CUDA Mem / Self CUDA Mem) columns, `timeline` a memory lane, and
  // `inspect` the peak and where it is.
  bool profile_memory = false;
  // Called when a cycle's result is complete (Python's on_trace_ready), e.g.
  // wb::tensorboard_trace_handler("traces") to write each cycle's trace as it completes.
  std::function<void(CycleResult&)> on_trace_ready;
};

// Python's torch.profiler.tensorboard_trace_handler: an on_trace_ready handler that saves each
// cycle's Chrome trace into `dir` (created when missing) as
// "<worker_name>.<time in ns>.pt.trace.json[.gz]", worker_name defaulting to
// "<hostname>_<pid>", as Python names them (TensorBoard's profiler plugin and Perfetto read them).
std::function<void(CycleResult&)> tensorboard_trace_handler(const std::filesystem::path& dir,
                                                            std::string worker_name = "",
                                                            bool use_gzip = false);

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
  // One per completed cycle. Element access is checked (CycleResults); when stop() finds no
  // completed cycle it warns, naming the steps run and the steps the schedule needs.
  CycleResults& results() { return results_; }

 private:
  void apply(const Transition& t, ProfilerAction prev, ProfilerAction next);
  void prepare();
  void enable();
  void disable_and_collect();
  void open_step_scope();
  void close_step_scope();
  std::string why_no_result() const;

  ProfilerOptions opts_;
  bool cuda_ = false;
  bool running_ = false;  // between start() and stop()
  bool prepared_ = false;
  bool enabled_ = false;
  int step_num_ = 0;
  int cycle_first_step_ = -1;
  int last_closed_step_ = -1;
  bool stopping_ = false;  // inside stop(): the open step is closed with no loop iteration in it
  ProfilerAction action_ = ProfilerAction::None;
  std::unique_ptr<at::RecordFunction> step_scope_;
  std::string step_name_;
  CycleResults results_;
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
// The current CUDA device's name ("" without CUDA or a device), read before any work.
std::string cuda_device_name();
// Bytes a new allocation can get, and where that figure comes from (`source`): on the GPU its
// free memory (cudaMemGetInfo); on the host MemAvailable (free pages without /proc), lowered to a
// cgroup v2 limit (containers) when there is one. Negative when unknown.
double bytes_available(bool cuda, std::string& source);

}  // namespace wb
