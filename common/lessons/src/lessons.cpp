// The lesson facts' list (see lessons.hpp). Each fact is one function that measures it and says
// where the numbers came from (facts_*.cpp, one family per file), and one row of view_facts()
// below: its id, title, why a CPU-only trace has nothing to measure, and what its default
// pattern's verdict means. The default patterns are in common/lessons/data/cheatsheet.json, the
// chapters' in chapters/NN_name/lessons.json. ViewFact::fn (fact_view.cpp) does the rest, the
// same for every fact: start, the CPU-only check, the measurement, then judge or say why not.
#include "workbook/lessons.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "fact_view.hpp"

namespace wb {

using nlohmann::json;
using namespace lessons_detail;

// ---- registry -----------------------------------------------------------------------------
namespace lessons_detail {
// The one list of facts, in teaching order: id, title, why a CPU-only trace has nothing to
// measure ("": the measurement decides), the measurement, and the explanation when the default
// pattern holds / fails (none: the measurement writes its own). compute_fact(id, ...)
// computes one; inspect and check_lessons build one View and hand it to every fact (it sorts
// all device work: worth doing once on a 100 MB trace).
const std::vector<ViewFact>& view_facts() {
  static const std::vector<ViewFact> kFacts = [] {
    std::vector<ViewFact> facts = {
        {"overhead_bound",
         "Overhead-bound vs compute-bound",
         "",
         measure_overhead_bound,
         {"the CPU spends far longer issuing work than the GPU spends doing it: overhead-bound "
          "(bigger work or fewer launches help)",
          "the GPU's time is not small next to the CPU's: the device does real work (compute- or "
          "memory-bound), though CPU overhead may still show"}},
        {"step_widths",
         "ProfilerStep widths (cold start)",
         "",
         measure_step_widths,
         {"the first recorded step pays one-time costs (cold start, profiler start-up)",
          "steps take similar time: nothing one-time left in the window"}},
        {"dead_window",
         "Dead window: annotation start to its first op",
         "",
         measure_dead_window,
         {"the first call does one-time setup before any op starts (library handles, heuristics, lazy "
          "loading)",
          "no one-time setup visible before the first op"}},
        {"dispatch_chain", "Dispatch chain: annotation down to kernels", "", measure_dispatch_chain, {}},
        {"launch_path",
         "Launch path per kernel and occupancy queries",
         "CPU-only trace: nothing was launched",
         measure_launch_path,
         {"an occupancy query before a launch marks a heavy kernel whose launch is sized at run time "
          "(on Hopper: first call only)",
          "launches go straight out: no run-time occupancy sizing"}},
        {"copies_next_to_launch",
         "Copies and memsets next to a kernel launch",
         "CPU-only trace: no device copies",
         measure_copies_next_to_launch,
         {}},
        {"kernel_footprint",
         "Kernel footprint: registers, shared memory, grid, block",
         "CPU-only trace: no kernels",
         measure_kernel_footprint,
         {}},
        {"launch_latency",
         "Launch-to-start latency (CPU running ahead)",
         "CPU-only trace: nothing was launched",
         measure_launch_latency,
         {"each step's kernels wait longer than the last step's: the CPU runs ahead and the launch "
          "queue fills (the GPU is the bottleneck)",
          "kernels start soon after their launch: the GPU keeps up with the CPU"}},
        {"end_sync",
         "End-of-window synchronization",
         "CPU-only trace: no device to wait for",
         measure_end_sync,
         {"the wait is mostly idle GPU: it costs round-trip and flush time, not work",
          "the CPU waits for queued GPU work to drain: the GPU is behind"}},
        {"kernel_durations",
         "Kernel duration distribution",
         "CPU-only trace: no kernels",
         measure_kernel_durations,
         {"the same kernel on the same data ran slower at times (clocks, power, other work): read the "
          "distribution, not the mean",
          "each kernel runs in a steady time"}},
        {"profiler_artefacts",
         "Profiler artefacts and one-time setup",
         "",
         measure_profiler_artefacts,
         {"these run once per process or are the profiler's own work: keep them out of what you "
          "measure (warm up first)",
          "the window holds only the workload"}},
        {"throughput", "Achieved throughput vs the device's peak", "", measure_throughput, {}},
        {"hot_ops",
         "Calls per step (hot loops)",
         "",
         measure_hot_ops,
         {"a row with many calls per step is a hot loop: its per-call overhead adds up",
          "every op runs a handful of times per step"}},
        {"compile_markers", "torch.compile markers", "", measure_compile_markers, {}},
        {"step_cpu",
         "CPU time per step, and where it goes",
         "",
         measure_step_cpu,
         {"most of the step's CPU time is spent outside its aten ops",
          "the step's CPU time is mostly its aten ops and their launches"}},
        {"kernel_gaps",
         "GPU idle between the kernels of each step",
         "CPU-only trace: no kernels",
         measure_kernel_gaps,
         {"one step's kernels wait longer for each other: look for a profiler event (Activity Buffer "
          "Request) or one-time work in that step",
          "the GPU idles about as long in every step"}},
        {"cpu_shares",
         "Where a CPU step's time goes",
         "",
         measure_cpu_shares,
         {"the arithmetic is the step: the run is compute-bound",
          "a visible share of the step is dispatch and allocation: the work is small for the per-call "
          "overhead",
          "the arithmetic is the step: the run is compute-bound",
          "a visible share of the step runs no compute op: dispatch, allocation and the code between "
          "the ops; bigger work per op amortizes it"}},
        {"batch_chain", "A batch axis in the dispatch chain (vs the 2-D run)", "", measure_batch_chain, {}},
        {"view_ops", "Metadata ops (views) launch nothing", "", measure_view_ops, {}},
        {"work_per_step", "Ops and kernels per step", "", measure_work_per_step, {}},
        {"gemm_tiles",
         "GEMM kernels: same FLOPs, different tiles",
         "CPU-only trace: no GEMM kernels to compare",
         measure_gemm_tiles,
         {}},
        {"pointwise_traffic",
         "Pointwise traffic: gelu + mul vs one fused kernel",
         "",
         measure_pointwise_traffic,
         {}},
        {"fusion_pays",
         "Fusion pays: the fused kernel's time vs eager's gelu + mul",
         "CPU-only trace: no pointwise kernels to time",
         measure_fusion_pays,
         {}},
        {"pointwise_bytes_bound",
         "Pointwise bytes: the most HBM could have moved in the kernels' time",
         "CPU-only trace: no pointwise kernels to time",
         measure_pointwise_bytes_bound,
         {}},
        {"runner_waits",
         "Waits per step: the CPU blocked on the GPU",
         "CPU-only trace: no CUDA calls to wait in",
         measure_runner_waits,
         {}},
    };
    // profile_memory (facts_memory.cpp)
    for (const auto& f : memory_view_facts()) facts.push_back(f);
    return facts;
  }();
  return kFacts;
}

Fact compute_fact(std::string_view id, const View& v, const FactOptions& o) {
  for (const auto& fi : view_facts())
    if (fi.id == id) return fi.fn(v, o);
  std::string ids;
  for (const auto& fi : view_facts()) ids += (ids.empty() ? "" : ", ") + std::string(fi.id);
  throw std::invalid_argument(fmt::format("unknown lesson fact '{}' (known: {})", id, ids));
}
}  // namespace lessons_detail

const std::vector<FactInfo>& all_facts() {
  static const std::vector<FactInfo> kFacts = [] {
    std::vector<FactInfo> out;
    for (const auto& fi : view_facts()) out.push_back({fi.id, fi.title});
    return out;
  }();
  return kFacts;
}

Fact compute_fact(std::string_view id, const TraceModel& m, const FactOptions& o) {
  return lessons_detail::compute_fact(id, View(m), o);
}

}  // namespace wb
