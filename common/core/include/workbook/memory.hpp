// profile_memory's records (Event::memory) as the timeline and the lessons read them: the
// allocator's totals over time, per device, with their peak, and each allocation paired with its
// free. Torch-free, like trace.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workbook/trace.hpp"

namespace wb {

struct MemoryPoint {
  int64_t t_ns = 0;       // the record's time (Event::start_ns)
  int64_t bytes = 0;      // what it allocated (< 0: freed)
  int64_t allocated = 0;  // the allocator's "Total Allocated" right after it
  int64_t reserved = 0;   // "Total Reserved" (0 on the CPU: no cache)
  size_t event = 0;       // index in Trace::events
};

// One allocator's records in time order: the CUDA caching allocator of one GPU, or the CPU's.
struct MemorySeries {
  int device_type = 0;  // c10::DeviceType: 0 CPU, 1 CUDA
  int device_id = -1;
  std::vector<MemoryPoint> points;
  size_t peak = 0;            // index in points of the highest `allocated` (the first such)
  bool has_reserved = false;  // some point has reserved > 0 (a caching allocator)
  bool on_device() const { return device_type != 0 && device_type != 2 && device_type != 5; }
  std::string label() const;  // "CUDA 0", "CPU"
  int64_t peak_allocated() const { return points.empty() ? 0 : points[peak].allocated; }
  // `allocated` just before time t (the last point before it; 0 before the first).
  int64_t allocated_before(int64_t t_ns) const;
};

// Every allocator's series; device ones first, then the CPU's. A record without its totals (the
// live result's events) gets a running sum of its series' bytes instead.
std::vector<MemorySeries> memory_series(const Trace& trace);
// The series the lessons and the timeline show: the device's with the highest peak, else the
// CPU's; nullptr when the trace has no record.
const MemorySeries* main_memory_series(const std::vector<MemorySeries>& all);

// One allocation and, when the trace holds it, its free (the next record of the same device and
// address with the opposite bytes).
struct Allocation {
  size_t alloc_event = 0;
  std::optional<size_t> free_event;
  int64_t bytes = 0;
  int64_t start_ns = 0, end_ns = -1;  // end: the free's time, -1 when not freed in the trace
  int device_type = 0;
  bool freed() const { return free_event.has_value(); }
};
// In allocation order.
std::vector<Allocation> allocation_lifetimes(const Trace& trace);

}  // namespace wb
