// A launch census on CUPTI's callback API: how many kernel launches, graph launches, copies,
// memsets, occupancy queries and synchronizations the CPU issued per step -- counted at the API
// call itself, independent of Kineto and of its trace.
//
//   wb::LaunchCensus census;          // subscribes to CUPTI (throws wb::CensusError)
//   census.discard();                 // forget calls made so far (setup, synchronize)
//   for (int i = 0; i < 10; ++i) { step(); census.step(); }
//   auto per_step = census.steps();   // one ApiCounts per step: {"cudaLaunchKernel": 1, ...}
//
// One subscriber per process. CUPTI lets only one client subscribe to callbacks at a time, and
// LibTorch's Kineto (torch 2.11) subscribes the first time a profiler is prepared and keeps the
// subscription for the life of the process (unless TEARDOWN_CUPTI=1). So:
//   * before the first profiler in the process: works (the census unsubscribes when destroyed,
//     leaving CUPTI free for Kineto);
//   * after a profiler ran: cuptiSubscribe fails with CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
//     and the census throws CensusError{Conflict} saying so -- never wrong counts;
//   * while a census is alive, never start a profiler: Kineto's own subscription would fail
//     and the trace would lose its GPU lane;
//   * in a process of its own: always works.
// Built without CUPTI (a CPU-only LibTorch) or run without a CUDA device, the census is
// unavailable and says why (unavailable_reason(), CensusError{Unavailable}).
//
// The helpers below the class are torch- and CUDA-free: they name and classify API calls and
// count the same calls in a Kineto trace, so the two can be compared anywhere.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "workbook/trace_model.hpp"

namespace wb {

// API name (as Kineto spells it: "cudaLaunchKernel", "cuLaunchKernelEx") -> calls.
using ApiCounts = std::map<std::string, int64_t>;

struct CensusError : std::runtime_error {
  enum class Code {
    Unavailable,  // no CUPTI in this build, or no CUDA device
    Conflict,     // another CUPTI subscriber holds the callback API (Kineto, Nsight, ...)
    Failed,       // any other CUPTI error
  };
  CensusError(Code c, const std::string& what) : std::runtime_error(what), code(c) {}
  Code code;
};

class LaunchCensus {
 public:
  LaunchCensus();   // subscribes to the runtime and driver API domains; throws CensusError
  ~LaunchCensus();  // unsubscribes (CUPTI is free again for Kineto)
  LaunchCensus(const LaunchCensus&) = delete;
  LaunchCensus& operator=(const LaunchCensus&) = delete;

  // Forgets the calls counted since the last step() (or since construction).
  void discard();
  // Closes the current step: the calls counted since the last step()/discard() become one entry
  // of steps().
  void step();
  std::vector<ApiCounts> steps() const;
  // Driver calls made from inside a runtime call (cudaLaunchKernel -> cuLaunchKernel ...): the
  // runtime's own plumbing, kept out of steps() as Kineto keeps them out of the trace.
  ApiCounts nested() const;

  // "" when a census can run in this process; otherwise why not ("no CUDA device: ...",
  // "built without CUPTI"). Does not subscribe, so it cannot tell about a conflict.
  static std::string unavailable_reason();

  struct State;  // the callback's counters (defined in the .cpp)

 private:
  std::unique_ptr<State> state_;
};

// ---- naming and classes (torch- and CUDA-free) -------------------------------------------

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel"; "__cudaLaunchKernel_ptsz_v13000" ->
// "cudaLaunchKernel_ptsz" (CUDA 13's internal entry point counts as the public call).
std::string api_base_name(std::string_view cupti_name);

enum class ApiClass {
  KernelLaunch,  // cudaLaunchKernel*, cudaLaunchCooperativeKernel*, cuLaunchKernel*, ...
  GraphLaunch,   // cudaGraphLaunch, cuGraphLaunch
  Memcpy,        // cudaMemcpy*, cuMemcpy*
  Memset,        // cudaMemset*, cuMemset*
  Occupancy,     // cudaOccupancy*, cuOccupancy*
  Sync,          // *Synchronize: device, stream, event, context
  Other,
};
constexpr int kApiClassCount = 7;
std::string_view api_class_name(ApiClass c);  // "kernel launches", "graph launches", ...
ApiClass classify_api(std::string_view name);

// Calls per class.
struct ClassCounts {
  int64_t n[kApiClassCount] = {};
  int64_t operator[](ApiClass c) const { return n[static_cast<int>(c)]; }
  int64_t& operator[](ApiClass c) { return n[static_cast<int>(c)]; }
  bool operator==(const ClassCounts& o) const;
};
ClassCounts by_class(const ApiCounts& calls);

// The calls a Kineto trace keeps: every runtime call, and of the driver calls only the kernel
// launches (Kineto drops the rest of the driver domain). Use it on census counts before
// comparing them with a trace.
ApiCounts kineto_visible(const ApiCounts& calls);

// Runtime and driver calls of a Kineto trace, one ApiCounts per ProfilerStep window (in step
// order). Calls outside every step (the end-of-window cudaDeviceSynchronize) are not counted.
std::vector<ApiCounts> trace_api_counts(const TraceModel& m);

// The typical step: per class, wb::median over steps, rounded down. Empty input -> zeros.
ClassCounts median_step(const std::vector<ApiCounts>& steps);
// The typical count of one API name per step (wb::median over steps, rounded down).
int64_t median_calls(const std::vector<ApiCounts>& steps, const std::string& name);

}  // namespace wb
