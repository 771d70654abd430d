// The one trace model every part of the workbook shares: the table, the lesson checks,
// `inspect`, the SVG timeline and the comparison with expected output.
//
// It can be filled two ways:
//   * from a Kineto Chrome-trace JSON file (ours or Python's)  -> read_trace()   (trace_reader.hpp)
//   * from the in-memory profiler result (LibTorch)           -> trace_from_result() (profiler.hpp)
//
// This header is torch-free on purpose: code that only reads traces compiles in seconds.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wb {

// What an event is. Mirrors the Chrome trace "cat" values Kineto writes.
enum class Kind {
  CpuOp,              // "cpu_op":   aten::mm, aten::add, ...
  UserAnnotation,     // "user_annotation": record_function / ProfilerStep#N (CPU side)
  GpuUserAnnotation,  // "gpu_user_annotation": the same annotation projected on the GPU lane
  Runtime,            // "cuda_runtime": cudaLaunchKernel, cudaMemcpyAsync, cudaDeviceSynchronize, ...
  Driver,             // "cuda_driver":  cuLaunchKernelEx, ...
  Kernel,             // "kernel"
  Memcpy,             // "gpu_memcpy"
  Memset,             // "gpu_memset"
  Instant,            // ph "i" events (e.g. profiler markers)
  Trace,              // "Trace": the span of the whole capture (PyTorch Profiler (0))
  Other,              // anything else ("overhead", "python_function", ...): kept, never dropped
};

std::string_view kind_name(Kind k);             // "cpu_op", "kernel", ...
Kind kind_from_category(std::string_view cat);  // unknown -> Kind::Other

// Launch configuration and footprint of a kernel, as Kineto records them in "args".
struct KernelInfo {
  int registers_per_thread = -1;  // -1: not recorded
  int64_t shared_memory = -1;     // bytes (static + dynamic), -1: not recorded
  std::array<int, 3> grid{0, 0, 0};
  std::array<int, 3> block{0, 0, 0};
  double blocks_per_sm = -1;
  double warps_per_sm = -1;
};

// One allocation or free that the caching allocator (or the CPU allocator) reported while the
// profiler ran with profile_memory: Kineto's "[memory]" instant event and its args. Event::bytes
// holds "Bytes" (positive: allocated, negative: freed).
struct MemoryRecord {
  int64_t total_allocated =
      -1;  // "Total Allocated": bytes in use on that device after this record (-1: unknown)
  int64_t total_reserved = -1;  // "Total Reserved": bytes the caching allocator holds (CPU: 0; -1: unknown)
  int64_t addr = 0;             // "Addr": the block's address (pairs an allocation with its free)
  int device_type = -1;         // "Device Type": c10::DeviceType (0 CPU, 1 CUDA, 2 MKLDNN, 5 IDEEP, ...)
  int device_id = -1;           // "Device Id": -1 for the CPU
  // Python's split (profiler.py _cpu_memory_usage / _device_memory_usage): which column it counts in.
  bool on_cpu() const { return device_type == 0 || device_type == 2 || device_type == 5; }
  bool on_device() const {
    return device_type == 1 || device_type == 6 || device_type == 12 || device_type == 20;
  }
};

struct Event {
  std::string name;
  Kind kind = Kind::Other;
  std::string category;  // the raw "cat" string (so unknown categories survive)
  int64_t start_ns = 0;  // relative to Trace::base_ns
  int64_t dur_ns = 0;    // 0 for instants
  int64_t pid = 0;       // CPU: process id;  device events: device index
  int64_t tid = 0;       // CPU: thread id;   device events: stream id
  // Correlation, as KinetoEvent and the Chrome trace carry it:
  //   CPU op / annotation : id = its own correlation ("External id" in the JSON), linked_id = 0
  //   runtime / driver    : id = CUPTI "correlation",  linked_id = "External id" of the CPU op it ran in
  //   kernel / memcpy / memset: id = CUPTI "correlation" (same as its launch call), linked_id = "External id"
  int64_t id = 0;
  int64_t linked_id = 0;
  bool is_async = false;
  std::optional<KernelInfo> kernel;  // kernels only, when the trace recorded it
  int64_t bytes = -1;                // memcpy / memset payload, -1: not recorded
  // Runtime / driver calls: CUPTI's callback id ("cbid"; cupti_runtime_cbid.h names them), the
  // one clue to a call Kineto names "INVALID" (chapter 01's cold run). -1: not recorded.
  int64_t cbid = -1;
  // record_shapes: the op's input shapes as Python's table prints them (str(input_shapes):
  // "[[64, 64], [], [128]]"; a non-tensor input, or a list of tensors, is "[]"). "": not recorded.
  std::string input_shapes;
  // FLOPs of the op, by torch's formula (op_flops in rules.hpp) from the recorded input shapes;
  // 0 when the op has no formula or no shapes were recorded.
  int64_t flops = 0;
  // record_shapes: the element type of the op's first tensor input as the trace's "Input type"
  // records it ("float", "c10::BFloat16", "c10::Half", "double"), kept for the ops with a FLOPs
  // formula (what a FLOP/s figure is judged against). "": not recorded.
  std::string input_dtype;
  // with_stack: where the op was called from, innermost frame first (KinetoEvent::stack(); in a
  // saved trace its "Call stack", which Kineto writes when the profile was verbose), without the
  // frames Python's table leaves out (keep_stack_entry, rules.hpp). Empty: none recorded.
  std::vector<std::string> stack;
  // Autograd's bookkeeping, as Kineto records it ("Sequence number", "Fwd thread id"): an op's
  // sequence number (-1: none), and for a backward node (scope BACKWARD_FUNCTION) the forward
  // thread's id (0: not a backward node). Python gives backward ops the stack of the forward op
  // with the same sequence number through these.
  int64_t sequence_nr = -1;
  int64_t fwd_thread_id = 0;
  // profile_memory: a "[memory]" instant's record (then `bytes` is its "Bytes"). Empty otherwise.
  std::optional<MemoryRecord> memory;

  int64_t end_ns() const { return start_ns + dur_ns; }
  // True for events that ran on an accelerator (Self CUDA time in the table).
  bool on_device() const {
    return kind == Kind::Kernel || kind == Kind::Memcpy || kind == Kind::Memset ||
           kind == Kind::GpuUserAnnotation;
  }
  bool is_user_annotation() const { return kind == Kind::UserAnnotation || kind == Kind::GpuUserAnnotation; }
};

// What the trace says about the device, from Kineto's "deviceProperties".
struct DeviceProperties {
  int id = 0;
  std::string name;  // "NVIDIA H200"
  int compute_major = 0, compute_minor = 0;
  int64_t total_global_mem = 0;
  int num_sms = 0;
};

struct Trace {
  std::vector<Event> events;  // in file order (not sorted)
  int64_t base_ns = 0;        // absolute time of start_ns == 0 (baseTimeNanoseconds)
  std::string source;         // file path, or "<profiler result>"
  std::vector<DeviceProperties> devices;
  // How the trace was recorded, from the metadata torch.profiler (and wb::Profiler) write at the
  // top level: "record_shapes": 1, "with_flops": 1, "profile_memory": 1, "with_stack": 1.
  bool record_shapes = false, with_flops = false, profile_memory = false, with_stack = false;
  // Whether any event is a profile_memory record (Event::memory).
  bool has_memory_records() const {
    for (const auto& e : events)
      if (e.memory) return true;
    return false;
  }
  bool has_device_activity() const {
    for (const auto& e : events)
      if (e.on_device() && e.kind != Kind::GpuUserAnnotation) return true;
    return false;
  }
};

}  // namespace wb
