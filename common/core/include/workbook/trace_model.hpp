// Derived views over a Trace: CPU lanes with call trees, GPU lanes, launch links, steps.
// Built once (O(n log n)); every lesson check, `inspect` and the SVG read the trace through it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "workbook/trace.hpp"

namespace wb {

using EventIdx = std::size_t;  // index into Trace::events

struct CpuLane {
  int64_t pid = 0, tid = 0;
  std::vector<EventIdx> events;  // CPU events of this thread, by start (ties: longer first)
  std::vector<EventIdx> roots;   // top-level events (not contained in another)
};

struct GpuLane {
  int64_t device = 0, stream = 0;
  std::vector<EventIdx> events;  // kernels, memcpys, memsets on this stream, by start
};

struct StepWindow {
  int number = -1;     // N of ProfilerStep#N
  EventIdx event = 0;  // the CPU-side user annotation
  int64_t start_ns = 0, end_ns = 0;
};

class TraceModel {
 public:
  explicit TraceModel(const Trace& trace);  // the Trace must outlive the model

  const Trace& trace() const { return *trace_; }
  const Event& at(EventIdx i) const { return trace_->events[i]; }

  const std::vector<CpuLane>& cpu_lanes() const { return cpu_lanes_; }
  const std::vector<GpuLane>& gpu_lanes() const { return gpu_lanes_; }
  const std::vector<StepWindow>& steps() const { return steps_; }  // sorted by number

  // Call tree (CPU events only: ops, annotations, runtime and driver calls).
  std::optional<EventIdx> parent(EventIdx i) const;
  const std::vector<EventIdx>& children(EventIdx i) const;  // by start

  // Launch links:  CPU op --External id--> runtime/driver call --correlation--> device work.
  std::optional<EventIdx> launcher(EventIdx device_event) const;  // runtime/driver call
  std::vector<EventIdx> launched(EventIdx runtime_event) const;   // device events it launched
  std::optional<EventIdx> op_of(EventIdx event) const;  // CPU op owning a runtime call / device event

  // All events with this exact name, in start order.
  std::vector<EventIdx> find(std::string_view name) const;
  // The CPU-side user annotations (Kind::UserAnnotation) with this name, in start order: find()
  // restricted to them, without a pass over every event (the facts ask for it many times).
  std::vector<EventIdx> find_annotations(std::string_view name) const;
  // The step window that contains time t (CPU side), if any.
  const StepWindow* step_at(int64_t t_ns) const;

 private:
  const Trace* trace_;
  std::vector<CpuLane> cpu_lanes_;
  std::vector<GpuLane> gpu_lanes_;
  std::vector<StepWindow> steps_;
  std::vector<std::size_t> steps_by_start_;  // indices into steps_, by start (step_at)
  std::vector<EventIdx> annotations_;        // every Kind::UserAnnotation, by start (stable)
  std::vector<std::optional<EventIdx>> parent_;
  std::vector<std::vector<EventIdx>> children_;
  std::vector<std::optional<EventIdx>> launcher_;
  std::vector<std::vector<EventIdx>> launched_;
  std::vector<std::optional<EventIdx>> op_of_;
};

}  // namespace wb
